"""The recognizer end to end: audio in, transcripts with word times and confidences out.

Audio longer than one 30 s window (the CLI's case) is split at the quietest 20 ms in the last
five seconds before each 30 s mark, so that a cut rarely falls inside a word; each piece is
decoded on its own and the word times are shifted back onto the whole recording.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

from recover_core.asr.alignment import Word, word_times
from recover_core.asr.audio import SAMPLE_RATE, Audio, frame_rms, quietest
from recover_core.asr.decode import DecodeConfig, beam_search, n_best
from recover_core.asr.fusion import Fusion
from recover_core.asr.rescore import rescore
from recover_core.asr.whisper import FRAMES_PER_SECOND, WHISPER, WINDOW_SECONDS, Whisper, WhisperBundle
from recover_core.lm.model import TransformerLM
from recover_core.lm.pretrained import PretrainedLM

WINDOW = int(WINDOW_SECONDS * SAMPLE_RATE)
LM = TransformerLM | PretrainedLM  # fused token by token, or rescoring the n-best list
TAIL_S = 0.3  # loud audio after the last word worth decoding again (Recognizer.finish)


def loud_seconds(x: np.ndarray, whole: np.ndarray, floor_db: float = 30.0) -> float:
    """Seconds of ``x`` in 20 ms frames within ``floor_db`` of ``whole``'s loudest frame."""
    n = SAMPLE_RATE // 50
    peak = frame_rms(whole, n).max(initial=0.0)
    return float((frame_rms(x, n) >= peak * 10 ** (-floor_db / 20)).sum() * n / SAMPLE_RATE) if peak > 0 else 0.0


@dataclass
class Transcript:
    text: str
    words: list[Word] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"text": self.text, "words": [w.to_dict() for w in self.words], "seconds": round(self.seconds, 3)}


def split_long(samples: np.ndarray, search_seconds: float = 5.0) -> list[tuple[int, int]]:
    """(start, end) sample ranges of at most 30 s, each cut at the quietest 20 ms frame of
    the last ``search_seconds`` before the window's end."""
    frame = SAMPLE_RATE // 50
    spans, start, n = [], 0, len(samples)
    while n - start > WINDOW:
        cut = quietest(samples, start + WINDOW - int(search_seconds * SAMPLE_RATE), start + WINDOW, frame)
        spans.append((start, cut))
        start = cut
    spans.append((start, n))
    return spans


class Recognizer:
    """Whisper tiny.en with beam search and, when given an LM, shallow fusion (our
    TransformerLMs, which share Whisper's tokens) or n-best rescoring (a PretrainedLM)."""

    def __init__(self, bundle: WhisperBundle = WHISPER):
        self.bundle = bundle
        self._vocab: tuple[str, ...] | None = None

    @property
    def whisper(self) -> Whisper:
        return self.bundle.load()

    def fusion(self, lm: TransformerLM | None, lm_weight: float, word_bonus: float) -> Fusion | None:
        if lm is None or lm_weight == 0.0:
            return None
        w = self.whisper
        if self._vocab is None:
            self._vocab = tuple(w.tokenizer.id_to_token(i) for i in range(w.special.eot))
        return Fusion(lm, self._vocab, w.special.eot, lm_weight, word_bonus)

    @torch.no_grad()
    def encode(self, chunks: Sequence[np.ndarray]) -> tuple[torch.Tensor, list[int]]:
        """Encoder states [b, 1500, d] of up to 30 s chunks, and the frames that hold audio."""
        w = self.whisper
        feats = w.features(list(chunks), sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features  # [b, 80, 3000]
        frames = [int(np.ceil(len(c) / SAMPLE_RATE * FRAMES_PER_SECOND)) for c in chunks]
        return w.model.model.encoder(feats).last_hidden_state, frames

    @torch.no_grad()
    def decode(self, enc: torch.Tensor, frames: list[int], cfg: DecodeConfig = DecodeConfig(),
               lm: LM | None = None, times: bool = True,
               memo: dict[str, float] | None = None) -> list[tuple[list[int], list[Word]]]:
        """Tokens and timed words per encoded chunk; the same encoding can be decoded with
        several LMs (the Audio tab compares LMs on one utterance). ``times=False`` skips the
        word timing pass (a WER needs only the text). ``memo``: a rescoring LM's scores by text."""
        w = self.whisper
        if isinstance(lm, PretrainedLM) and cfg.lm_weight != 0.0:
            wide = dataclasses.replace(cfg, beam_size=max(cfg.beam_size, cfg.rescore_beam))
            hyps = rescore(w, n_best(w, enc, wide), lm, cfg.lm_weight, cfg.word_bonus, memo)
        else:
            hyps = beam_search(w, enc, cfg, self.fusion(lm, cfg.lm_weight, cfg.word_bonus))
        if not times:
            return [(h.tokens, []) for h in hyps]
        words = word_times(w, enc, [h.tokens for h in hyps], [h.token_logprobs for h in hyps], frames)
        return [(h.tokens, ws) for h, ws in zip(hyps, words)]

    def texts(self, enc: torch.Tensor, frames: list[int], cfg: DecodeConfig = DecodeConfig(),
              lm: LM | None = None, memo: dict[str, float] | None = None) -> list[str]:
        """Only the text per encoded chunk, as a WER needs it: no word timing pass."""
        return [self.whisper.token_text(tokens).strip()
                for tokens, _ in self.decode(enc, frames, cfg, lm, times=False, memo=memo)]

    def transcribe(self, audios: Sequence[Audio], cfg: DecodeConfig = DecodeConfig(), lm: LM | None = None,
                   batch_size: int = 8, on_batch: Callable[[int], None] | None = None,
                   finish: bool = False) -> list[Transcript]:
        """One transcript per audio, in order. ``on_batch(n)`` reports n pieces done.
        ``finish``: decode again any loud audio left after the last word (``finish``)."""
        w = self.whisper
        pieces = [(i, s, e) for i, a in enumerate(audios) for s, e in split_long(a.samples)]
        done: list[tuple[int, int, list[int], list[Word]]] = []
        for at in range(0, len(pieces), batch_size):
            batch = pieces[at:at + batch_size]
            enc, frames = self.encode([audios[i].samples[s:e] for i, s, e in batch])
            done += [(i, s, toks, ws) for (i, s, _), (toks, ws) in zip(batch, self.decode(enc, frames, cfg, lm))]
            if on_batch:
                on_batch(len(batch))
        out = [Transcript("", [], a.seconds) for a in audios]
        for i, s, tokens, ws in done:
            shift = s / SAMPLE_RATE
            text = w.token_text(tokens).strip()
            out[i].text = f"{out[i].text} {text}".strip()
            out[i].words += [Word(x.word, x.start + shift, x.end + shift, x.probability) for x in ws]
        if finish:
            out = [self.finish(a, t, cfg, lm) for a, t in zip(audios, out)]
        return out

    def finish(self, clip: Audio, t: Transcript, cfg: DecodeConfig = DecodeConfig(),
               lm: LM | None = None, rounds: int = 2) -> Transcript:
        """Whisper sometimes ends a transcript early: it picks the end of text while speech is
        still to come (after a change of voice, say). When more than ``TAIL_S`` of loud audio
        follows the last word, that tail is decoded on its own and appended, up to ``rounds``
        times. The speech-obfuscation pipeline uses it on both of its passes; WER runs
        (``asr-eval``, the Audio tab) do not, so their numbers are the recognizer's own."""
        for _ in range(rounds):
            start = int((t.words[-1].end if t.words else 0.0) * SAMPLE_RATE)
            if loud_seconds(clip.samples[start:], clip.samples) < TAIL_S:
                break
            tail = self.transcribe([Audio(clip.samples[start:], SAMPLE_RATE, 1)], cfg, lm)[0]
            if not tail.words:
                break
            shift = start / SAMPLE_RATE
            t = Transcript(f"{t.text} {tail.text}".strip(), t.words + [
                Word(x.word, x.start + shift, x.end + shift, x.probability) for x in tail.words], t.seconds)
        return t
