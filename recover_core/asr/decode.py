"""Beam search over Whisper's decoder, batched across utterances, with optional shallow fusion.

It follows CTranslate2's search (which faster-whisper runs), so that with no LM the two give
the same transcripts (tests/test_asr.py): a prompt of <|startoftranscript|><|notimestamps|>,
Whisper's suppressed tokens (and a blank or an end at the first step), log-softmax after
suppression, 2K candidates per utterance per step, a hypothesis that ends within the top K is
finished, and an utterance stops when K have finished. The winner has the best score divided
by its length (length_penalty 1).

Fusion changes one thing: only the acoustic top-k tokens of a row are candidates, and the LM
adds its term to them (asr/fusion.py). Acoustic log-probabilities are kept apart, per token,
for the word confidences.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from recover_core.asr.fusion import Fusion
from recover_core.asr.whisper import Whisper


@dataclass(frozen=True)
class DecodeConfig:
    beam_size: int = 4
    lm_weight: float = 0.0  # λ; 0 is the recognizer alone
    word_bonus: float = 0.0  # β, added per word while the LM is fused
    fusion_top_k: int = 10  # the acoustic candidates per row that the LM scores
    max_new_tokens: int = 220  # Whisper's decoder holds 448 positions
    length_penalty: float = 1.0
    # An LM that rescores the n-best list (asr/rescore.py) sees the hypotheses of a wider
    # search: beam 4 leaves about 5 distinct texts per utterance, too few to choose among
    # (dev WER 13.1 -> 12.4% with SmolLM2, against 12.8 -> 11.1% at beam 8).
    rescore_beam: int = 8


@dataclass
class Hypothesis:
    tokens: list[int]  # text tokens only: no prompt, no <|endoftext|>
    token_logprobs: list[float]  # the recognizer's own log-probability of each token
    score: float  # fused and length-normalized: what the search ranked by


def _suppressed(w: Whisper, vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    always = torch.zeros(vocab_size, dtype=torch.bool)
    always[list(w.special.suppress)] = True
    always[w.special.eot + 1:] = True  # every special token: the transcript is text, then the end
    first = always.clone()
    first[list(w.special.suppress_begin)] = True
    return always, first


def beam_search(w: Whisper, encoder_out: torch.Tensor, cfg: DecodeConfig = DecodeConfig(),
                fusion: Fusion | None = None) -> list[Hypothesis]:
    """encoder_out: [B, 1500, d], the encoded 30 s windows. Returns the best hypothesis per utterance."""
    return [max(f, key=lambda hyp: hyp.score) if f else Hypothesis([], [], float("-inf"))
            for f in n_best(w, encoder_out, cfg, fusion)]


@torch.no_grad()
def n_best(w: Whisper, encoder_out: torch.Tensor, cfg: DecodeConfig = DecodeConfig(),
           fusion: Fusion | None = None) -> list[list[Hypothesis]]:
    """Every finished hypothesis per utterance (at least ``beam_size`` unless the search ran
    out of room), in the order they finished; an LM can rescore them (asr/rescore.py)."""
    B, K = encoder_out.shape[0], cfg.beam_size
    eot = w.special.eot
    model = w.model
    enc = encoder_out.repeat_interleave(K, dim=0)  # [B*K, 1500, d]: row b*K+j is beam j of utterance b
    from transformers.cache_utils import DynamicCache, EncoderDecoderCache

    cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
    prompt = torch.tensor(w.special.prompt).repeat(B * K, 1)  # [N, 2]
    h = model.model.decoder(input_ids=prompt, encoder_hidden_states=enc, past_key_values=cache,
                            use_cache=True).last_hidden_state[:, -1]  # [N, d]
    logits = model.proj_out(h)  # [N, V]
    always, first = _suppressed(w, logits.shape[-1])
    fuse = fusion is not None and cfg.lm_weight != 0.0
    state = fusion.start(B * K) if fuse else None
    k_cand = max(cfg.fusion_top_k, 2 * K) if fuse else 2 * K

    active = list(range(B))  # utterances still searching, in row-block order
    scores = torch.full((B, K), float("-inf"))
    scores[:, 0] = 0.0  # all beams start equal: expand only the first
    seqs: list[list[int]] = [[] for _ in range(B * K)]
    lps: list[list[float]] = [[] for _ in range(B * K)]
    finished: list[list[Hypothesis]] = [[] for _ in range(B)]

    def normalized(score: float, length: int) -> float:
        """CTranslate2's rule: the summed score (the end's log-prob included) over the number
        of text tokens (the end excluded); an empty transcript never wins."""
        if not length:
            return float("-inf")
        return score / (length ** cfg.length_penalty) if cfg.length_penalty else score

    for step in range(cfg.max_new_tokens):
        logits = logits.float().masked_fill(first if step == 0 else always, float("-inf"))
        acoustic = F.log_softmax(logits, dim=-1)  # [N, V]
        cand_lp, cand = acoustic.topk(k_cand, dim=-1)  # [N, k]
        fused = cand_lp + fusion.scores(state, cand) if fuse else cand_lp
        total = (scores.view(-1, 1) + fused).view(len(active), -1)  # [A, K*k]
        top, idx = total.topk(2 * K, dim=-1)  # [A, 2K]
        rows, toks, new_scores, new_seqs, new_lps, keep = [], [], [], [], [], []
        for a, b in enumerate(active):
            picked = 0
            for r in range(2 * K):
                row = a * K + int(idx[a, r]) // k_cand
                j = int(idx[a, r]) % k_cand
                tok, s = int(cand[row, j]), float(top[a, r])
                if tok == eot:
                    if r < K:  # an end outside the top K is not yet better than going on
                        finished[b].append(Hypothesis(seqs[row], lps[row], normalized(s, len(seqs[row]))))
                    continue
                rows.append(row), toks.append(tok), new_scores.append(s)
                new_seqs.append(seqs[row] + [tok]), new_lps.append(lps[row] + [float(cand_lp[row, j])])
                picked += 1
                if picked == K:
                    break
            keep.append(len(finished[b]) < K)
        # Utterances with K finished hypotheses leave the batch: their rows are dropped.
        still = [a for a, k in enumerate(keep) if k]
        if not still:
            break
        sel = [a * K + j for a in still for j in range(K)]
        rows_t = torch.tensor([rows[i] for i in sel])
        toks_t = torch.tensor([toks[i] for i in sel])
        scores = torch.tensor([new_scores[i] for i in sel]).view(len(still), K)
        seqs, lps = [new_seqs[i] for i in sel], [new_lps[i] for i in sel]
        # The self-attention cache follows each beam; the cross-attention cache (keys and values
        # of the audio, [N, h, 1500, d] per layer, the bulk of the memory) is the same for every
        # beam of an utterance, so it changes only when utterances leave.
        cache.self_attention_cache.reorder_cache(rows_t)
        if len(still) < len(active):
            leave = torch.tensor([a * K + j for a in still for j in range(K)])
            cache.cross_attention_cache.reorder_cache(leave)
            enc = enc.index_select(0, leave)
        active = [active[a] for a in still]
        if fuse:
            state = fusion.advance(state, rows_t, toks_t)
        h = model.model.decoder(input_ids=toks_t[:, None], encoder_hidden_states=enc, past_key_values=cache,
                                use_cache=True).last_hidden_state[:, -1]
        logits = model.proj_out(h)
    else:  # out of room: the alive hypotheses compete as they are
        for a, b in enumerate(active):
            for j in range(K):
                row = a * K + j
                finished[b].append(Hypothesis(seqs[row], lps[row], normalized(float(scores[a, j]), len(seqs[row]))))
    return finished
