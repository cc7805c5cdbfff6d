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

import torch

from recover_core.asr.decode import Hypothesis
from recover_core.asr.whisper import Whisper


@torch.no_grad()
def text_logprobs(lm, texts: Sequence[str]) -> list[float]:
    """log p_LM(text) per text, for either LM family: a PretrainedLM scores with its own
    tokenizer; a TransformerLM with Whisper's BPE, from the sentence start, within its block."""
    if hasattr(lm, "logprob"):
        return lm.logprob(texts)
    from recover_core.lm import tokenizer as T

    tok, out = T.load(), []
    for text in texts:
        ids = tok.encode(text)[: lm.config.block_size + 1]
        x = torch.tensor([ids])
        logits, _ = lm(x[:, :-1])
        out.append(torch.log_softmax(logits.float(), -1).gather(2, x[:, 1:, None]).sum().item())
    return out


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
