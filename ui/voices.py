"""The Audio tab's voice comparison, free of Gradio: one plan's substitutes spoken by the stock
voice (``voice="auto"``) and by the speaker's voice (``voice="clone"``, speech/convert.py), and
each insert's speaker similarity to the rest of the recording (speech/speaker.py). The table
shows substitutes only, never the original words."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pandas as pd

from recover_core.speech import demo as speech_demo

if TYPE_CHECKING:
    from recover_core.asr.recognize import Recognizer
    from recover_core.speech.plan import Plan, Result, SpeechSettings

COLUMNS = ["#", "label", "substitute", "similarity stock", "similarity clone"]
PENDING = "…"
SCALE = ("Similarity is the cosine of GE2E speaker embeddings, the insert against the speaker's other "
         "speech: 1 is the same voice; different speakers of one sex score about 0.6–0.75.")


def render(clip, plan: "Plan", edited, settings: "SpeechSettings", recognizer: "Recognizer", voice: str) -> "Result":
    """The plan's substitutes as the table shows them, spoken by ``voice``: no retry (every voice
    says the same words) and no second pass (the similarity needs none; the main render checked
    what is heard). The session's plan is left as it was: the render marks a copy."""
    conversion = settings.conversion if voice == "clone" else "world"  # a stock voice is not converted
    s = dataclasses.replace(settings, voice=voice, conversion=conversion, retries=0, second_pass=False)
    copy = dataclasses.replace(plan, entities=[dataclasses.replace(e) for e in plan.entities])
    return speech_demo.obfuscator(s, recognizer).render(clip, speech_demo.apply_edits(copy, edited))


def _sim(x: float | None) -> float | str:
    return "—" if x is None else round(float(x), 3)


def table(stock: "Result | None", clone: "Result | None" = None) -> pd.DataFrame:
    if stock is None:
        return pd.DataFrame([], columns=COLUMNS)
    clones = clone.entities if clone is not None else [None] * len(stock.entities)
    rows = [(n, e.label, e.substitute, _sim(e.similarity), PENDING if c is None else _sim(c.similarity))
            for n, (e, c) in enumerate(zip(stock.entities, clones), 1)]
    return pd.DataFrame(rows, columns=COLUMNS)


def _mean(r: "Result") -> str:
    values = [e.similarity for e in r.entities if e.similarity is not None]
    return f"mean similarity **{sum(values) / len(values):.3f}**" if values else "no similarity (encoder not installed)"


def note(stock: "Result", clone: "Result | None" = None) -> str:
    head = f"Stock voice ({stock.voice}): {_mean(stock)}"
    if clone is None:
        return head + " · the speaker's voice is being rendered…"
    took = sum(clone.seconds.values()) + sum(stock.seconds.values())
    return (f"{head} · speaker's voice ({clone.voice} moved toward the speaker, {clone.conversion}): "
            f"{_mean(clone)} · both rendered in {took:.1f} s. {SCALE}")
