"""One utterance, several LMs: the Audio tab's comparison (vats2024 Table 6 for one file).

The audio is encoded once and decoded once per LM; each result is scored against the
reference as soon as it is ready, so a UI can show it while the next LM decodes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from recover_core.asr import audio as A
from recover_core.asr import lms, references, wer
from recover_core.errors import RecoverError

if TYPE_CHECKING:  # torch loads with the recognizer, not when the app starts
    from recover_core.asr.recognize import Recognizer

MAX_SECONDS = 30.0  # one Whisper window: longer audio belongs to the `transcribe` command


@dataclass
class LMResult:
    name: str
    text: str
    score: wer.Score
    seconds: float
    lm_weight: float
    word_bonus: float


def reference_text(typed: str | None, transcript_file: str | Path | None, audio_name: str) -> str:
    """The reference: the transcript file's line for this utterance id, else the typed text."""
    if transcript_file:
        text = references.for_audio(transcript_file, audio_name)
        return wer.check_reference(text, f"reference for {Path(audio_name).name.split('.')[0]!r}")
    _, text = references.parse_line((typed or "").strip())  # a pasted "TEXT (uttid)" line loses its id
    return wer.check_reference(text)


def check_lms(names: Sequence[str]) -> list[str]:
    if not names:
        raise RecoverError("Choose at least one LM (\"none\" is the recognizer alone).")
    for n in names:
        lms.card(n)  # a clear message for one that is not built here
    return list(names)


ENGINES = ("whisper-tiny.en", "emformer-rnnt")


def compare(recognizer: "Recognizer", clip: A.Audio, reference: str, names: Sequence[str],
            beam_size: int = 4, engine: str = ENGINES[0]) -> Iterator[LMResult]:
    if engine == "emformer-rnnt":  # the paper's recognizer: its n-best list, rescored by each LM
        from recover_core.asr import emformer

        nbest = emformer.nbest(clip.samples)
        for name in names:
            card, t0 = lms.card(name), time.perf_counter()
            text = emformer.rescore(nbest, lms.load(name), card.lm_weight, card.word_bonus)
            yield LMResult(name, text, wer.score([reference], [text]), time.perf_counter() - t0, card.lm_weight,
                           card.word_bonus)
        return
    if engine != ENGINES[0]:
        raise RecoverError(f"Unknown recognizer {engine!r}; choose {' or '.join(ENGINES)}.")
    from recover_core.asr.decode import DecodeConfig

    enc, frames = recognizer.encode([clip.samples])
    for name in names:
        card = lms.card(name)
        cfg = DecodeConfig(beam_size=beam_size, lm_weight=card.lm_weight, word_bonus=card.word_bonus)
        t0 = time.perf_counter()
        text, = recognizer.texts(enc, frames, cfg, lms.load(name))
        yield LMResult(name, text, wer.score([reference], [text]), time.perf_counter() - t0, cfg.lm_weight,
                       cfg.word_bonus)


def highlighted(result: LMResult) -> list[tuple[str, str | None]]:
    """(text, label) pairs for a highlighted transcript: normalized words, errors labelled
    S (the hypothesis word, with the reference's after an arrow), D (a reference word it
    missed) or I (a word it added)."""
    out: list[tuple[str, str | None]] = []
    for op, ref, hyp in result.score.alignment[0]:
        if op == "equal":
            out.append((hyp + " ", None))
        elif op == "substitute":
            out.append((f"{hyp} (→{ref}) ", "S"))
        elif op == "delete":
            out.append((f"[{ref}] ", "D"))
        else:
            out.append((hyp + " ", "I"))
    return out


def chart(results: Sequence[LMResult]):
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[r.name for r in results], y=[r.score.wer for r in results],
                           text=[f"{r.score.wer:.1f}%" for r in results], textposition="outside",
                           marker_color=["#888" if r.name == lms.NONE else "#4c78a8" for r in results]))
    top = max([r.score.wer for r in results] + [10.0])
    fig.update_layout(title="WER per LM (this utterance)", yaxis_title="WER (%)", xaxis_title="LM fused",
                      yaxis_range=[0, top * 1.2], height=320, margin=dict(t=40, b=40, l=50, r=10))
    return fig
