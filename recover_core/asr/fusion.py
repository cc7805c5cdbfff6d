"""Shallow fusion (vats2024 §4.2.2): a recover_core LM scores the recognizer's candidates.

At each decoding step the beam search adds, to the acoustic log-probability of each of the
recognizer's top-k text tokens, ``lm_weight * log p_LM(token | history) + word_bonus`` when
the token starts a word. The LM never scores timestamps or special tokens; when a hypothesis
ends, it scores the end of the sentence (<|endoftext|>, the same id in both vocabularies).

The LMs share Whisper's GPT-2 BPE (lm/tokenizer.py), so a token id means the same piece in
both. One seam remains: Whisper writes the first word with its leading space (" And") while
the LM learned sentences without one ("And"). The first token is scored and fed as its
space-less twin where the vocabulary has one, and as itself otherwise.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from recover_core.lm.model import TransformerLM


@dataclass
class LMState:
    logprobs: torch.Tensor  # [N, V_lm] next-token log-probs per row
    past: list  # the LM's key/value cache, one row per hypothesis
    position: int  # tokens fed so far (the same for every row: beams advance in step)


@functools.lru_cache(maxsize=2)
def vocab_maps(vocab: tuple[str, ...], eos_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Once per vocabulary: which pieces start a word [text+1], and each " word" piece's
    space-less twin (itself where there is none) [text+1]; the last entry is the end."""
    index = {piece: i for i, piece in enumerate(vocab)}
    word_start = torch.tensor([piece.startswith("Ġ") for piece in vocab] + [False], dtype=torch.bool)
    bare = torch.tensor([index.get(p[1:], i) if p.startswith("Ġ") else i for i, p in enumerate(vocab)] + [eos_id])
    return word_start, bare


class Fusion:
    """Scores candidates for rows of hypotheses and follows them as the beam reorders."""

    def __init__(self, lm: TransformerLM, vocab: tuple[str, ...], eos_id: int, lm_weight: float, word_bonus: float):
        self.lm, self.eos_id = lm.eval(), eos_id
        self.lm_weight, self.word_bonus = lm_weight, word_bonus
        self.limit = lm.config.block_size - 1  # the LM has no positions beyond its block
        self.text = len(vocab)  # ids below eos are text in both vocabularies
        self.word_start, self.bare = vocab_maps(vocab, eos_id)

    def start(self, rows: int) -> LMState:
        lp, past = self.lm.step(torch.full((rows,), self.eos_id, dtype=torch.long))
        return LMState(lp, past, 1)

    def scores(self, state: LMState | None, cand: torch.Tensor) -> torch.Tensor:
        """The fusion term for candidate ids cand [N, k] (text tokens or eos): [N, k]."""
        if state is None or state.position > self.limit:
            return torch.zeros(cand.shape, dtype=torch.float32)
        ids = cand.clamp(max=self.text)
        lm_ids = self.bare[ids] if state.position == 1 else ids
        lm_ids = torch.where(ids == self.text, self.eos_id, lm_ids)
        term = self.lm_weight * state.logprobs.gather(1, lm_ids)
        return term + self.word_bonus * self.word_start[ids].float()

    def advance(self, state: LMState | None, rows: torch.Tensor, tokens: torch.Tensor) -> LMState | None:
        """Follow the beam: row i of the new state continues row rows[i] with tokens[i]."""
        if state is None or state.position > self.limit:
            return state
        if state.position == self.limit:  # no room for another position: fusion stops here
            return LMState(state.logprobs, state.past, state.position + 1)
        fed = self.bare[tokens.clamp(max=self.text)] if state.position == 1 else tokens
        lp, past = self.lm.step(fed, TransformerLM.reorder(state.past, rows))
        return LMState(lp, past, state.position + 1)
