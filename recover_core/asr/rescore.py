"""Rescoring the recognizer's n-best list with an LM that has its own tokenizer (lm/pretrained.py).

Shallow fusion (fusion.py) needs the LM to share Whisper's token ids. A pretrained LM with
another vocabulary judges whole texts instead: every hypothesis the beam search finished is
scored as

    (acoustic log-probability + λ·log p_LM(text) + β·words) / text tokens

and the best wins. Dividing by the length is the search's own rule (decode.py,
length_penalty 1): without it the shortest hypothesis, which both models like, would win.
"""
from __future__ import annotations

from typing import Sequence

from recover_core.asr.decode import Hypothesis
from recover_core.asr.whisper import Whisper


def rescore(w: Whisper, n_best: Sequence[Sequence[Hypothesis]], lm, lm_weight: float, word_bonus: float,
            memo: dict[str, float] | None = None) -> list[Hypothesis]:
    """The best hypothesis per utterance by the fused score. ``memo`` keeps texts' LM scores
    between calls (tuning rescores one n-best list for many λ, β)."""
    memo = {} if memo is None else memo
    texts = [[w.token_text(h.tokens).strip() for h in hyps] for hyps in n_best]
    new = sorted({t for ts in texts for t in ts if t not in memo})
    memo.update(zip(new, lm.logprob(new)))
    out = []
    for hyps, ts in zip(n_best, texts):
        if not hyps:
            out.append(Hypothesis([], [], float("-inf")))
            continue

        def fused(i: int) -> float:
            h, n = hyps[i], max(len(hyps[i].tokens), 1)
            acoustic = h.score * n  # the search's score is the acoustic sum over the length
            return (acoustic + lm_weight * memo[ts[i]] + word_bonus * len(ts[i].split())) / n

        best = max(range(len(hyps)), key=fused)
        out.append(Hypothesis(hyps[best].tokens, hyps[best].token_logprobs, fused(best)))
    return out
