"""Word times from Whisper's cross-attention (the method of openai/whisper's ``timing.py``,
which faster-whisper also runs): teacher-force the chosen tokens, take the attention of the
alignment heads over the audio frames, standardize and median-filter it, and align tokens to
frames with dynamic time warping (transformers' own helpers). A word starts where its first
token's path begins and ends where the next word's begins.

These times are coarse (±0.1 s is usual): the speech-obfuscation pipeline refines them
before it cuts audio.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from recover_core.asr.whisper import FRAMES_PER_SECOND, Whisper


@dataclass(frozen=True)
class Word:
    word: str
    start: float  # seconds from the start of the utterance
    end: float
    probability: float  # the recognizer's mean token probability over the word

    def to_dict(self) -> dict:
        return {"word": self.word, "start": round(self.start, 3), "end": round(self.end, 3),
                "probability": round(self.probability, 4)}


def split_words(w: Whisper, tokens: list[int]) -> list[list[int]]:
    """Tokens grouped into words: a piece that begins with a space begins a word; any other
    piece (the rest of a word, punctuation) joins the word before it."""
    words: list[list[int]] = []
    for t in tokens:
        piece = w.token_text([t])
        if not words or piece.startswith(" "):
            words.append([t])
        else:
            words[-1].append(t)
    return words


@torch.no_grad()
def word_times(w: Whisper, encoder_out: torch.Tensor, token_lists: list[list[int]], token_logprobs: list[list[float]],
               n_frames: list[int], medfilt_width: int = 7) -> list[list[Word]]:
    """encoder_out: [B, 1500, d]; n_frames: encoder frames that hold audio (50 per second)."""
    from transformers.models.whisper.generation_whisper import _dynamic_time_warping, _median_filter

    prompt, eot = w.special.prompt, w.special.eot
    seqs = [prompt + toks + [eot] for toks in token_lists]
    T = max(len(s) for s in seqs)
    ids = torch.tensor([s + [eot] * (T - len(s)) for s in seqs])  # [B, T]: causal, so padding after is harmless
    out = w.model.model.decoder(input_ids=ids, encoder_hidden_states=encoder_out, output_attentions=True)
    heads = w.special.alignment_heads
    results: list[list[Word]] = []
    for b, toks in enumerate(token_lists):
        if not toks:
            results.append([])
            continue
        frames = max(1, min(n_frames[b], encoder_out.shape[1]))
        L = len(seqs[b])
        att = torch.stack([out.cross_attentions[layer][b, head, :L, :frames] for layer, head in heads])  # [H, L, F]
        std, mean = torch.std_mean(att, dim=-2, keepdim=True, unbiased=False)
        att = _median_filter((att - mean) / std.clamp_min(1e-8), medfilt_width)
        matrix = att.mean(0)[len(prompt) - 1:-1]  # [len(toks)+1, F]: rows that predict each text token, and the end
        text_idx, time_idx = _dynamic_time_warping(-matrix.double().numpy())
        jumps = np.pad(np.diff(text_idx), (1, 0), constant_values=1).astype(bool)
        jump_times = time_idx[jumps] / FRAMES_PER_SECOND  # [len(toks)+1]: when each row's path begins
        words = split_words(w, toks)
        bounds = np.concatenate([[0], np.cumsum([len(x) for x in words])])
        probs = np.exp(np.asarray(token_logprobs[b], dtype=np.float64))
        row: list[Word] = []
        for i, piece in enumerate(words):
            s, e = int(bounds[i]), int(bounds[i + 1])
            start, end = float(jump_times[s]), float(jump_times[min(e, len(jump_times) - 1)])
            row.append(Word(w.token_text(piece).strip(), start, max(end, start), float(probs[s:e].mean())))
        results.append(row)
    return results
