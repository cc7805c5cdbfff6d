"""The Audio tab's "Obfuscate speech" logic, free of any UI: find, edit, render, show.

app.py only turns these into Gradio values. The clip and the plan (which hold the
original words) live in the user's session state for the edit step only, never on disk.
"""
from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from recover_core.errors import RecoverError
from recover_core.speech.obfuscate import SpeechObfuscator
from recover_core.speech.plan import MODES, SPEECH_ENGINE, SpeechSettings

if TYPE_CHECKING:
    from recover_core.asr.recognize import Recognizer
    from recover_core.speech.plan import Plan, Result

TECHNIQUES = ["entityTagger", "entityTagger (PERSON, GPE, ORG)", "vocabThres"]
FILLERS = ["mlm", "infill"]
TABLE_COLUMNS = ["#", "label", "original", "substitute", "start (s)", "end (s)", "recognizer p"]
CHECK_COLUMNS = ["#", "substitute", "substitute heard", "original heard", "click-free", "in output (s)"]
MAX_SUBSTITUTE = 60
# words, or a number as the engine writes one under protect="quasi" ("£190,000", "March 31, 2006", "12/03/1985")
_SUBSTITUTE_RE = re.compile(r"^[£$€]?[\w][\w .,'’/%-]*$")


# The clone's conversions the Audio tab offers: world (what --voice clone uses) and knn-cmn
# (nearer the speaker, heard less often: docs/speech_obfuscation.md)
TAB_CONVERSIONS = ("world", "knn-cmn")


def settings(technique: str, filler: str, mode: str, voice: str, conversion: str = "world",
             protect: str = "direct") -> SpeechSettings:
    """The tab's choices as settings; ``conversion`` applies to the clone voice and is ignored
    otherwise; ``protect="quasi"`` also finds dates, ages and sums said aloud."""
    types = ("PERSON", "GPE", "ORG") if "GPE" in technique else ("PERSON",)
    name = technique.split(" ")[0]
    if name not in ("entityTagger", "vocabThres") or filler not in FILLERS or mode not in MODES:
        raise RecoverError("Choose a technique, a filler and a mode from the lists.")
    engine = replace(SPEECH_ENGINE, technique=name, types=types if name == "entityTagger" else None, filler=filler,
                     protect=protect or "direct")
    if (conversion or "world") not in TAB_CONVERSIONS:
        raise RecoverError(f"Choose a conversion from the list: {', '.join(TAB_CONVERSIONS)}.")
    voice = voice or "auto"
    return SpeechSettings(engine=engine, mode=mode, voice=voice,
                          conversion=(conversion or "world") if voice == "clone" else "world").check()


@functools.lru_cache(maxsize=8)
def obfuscator(s: SpeechSettings, recognizer: "Recognizer") -> SpeechObfuscator:
    return SpeechObfuscator(s, recognizer)


def highlighted(plan: "Plan") -> dict:
    """The transcript with each private span marked "LABEL → substitute"."""
    words = plan.transcript.words
    text, ents = "", []
    for i, w in enumerate(words):
        if i:
            text += " "
        start = len(text)
        text += w.word
        for n, e in enumerate(plan.entities, 1):
            if e.first <= i < e.last:
                ents.append({"entity": f"{n}. {e.label} → {e.substitute}", "start": start, "end": len(text)})
    return {"text": text, "entities": ents}


def table(plan: "Plan") -> pd.DataFrame:
    rows = [(n, e.label, e.original, e.substitute, round(e.start, 2), round(e.end, 2), round(e.probability, 2))
            for n, e in enumerate(plan.entities, 1)]
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def apply_edits(plan: "Plan", edited) -> "Plan":
    """Substitutes as the user edited them in the table (other columns are ignored)."""
    if edited is None or not plan.entities:
        return plan
    df = edited if isinstance(edited, pd.DataFrame) else pd.DataFrame(edited["data"], columns=edited["headers"])
    if len(df) != len(plan.entities) or "substitute" not in df:
        raise RecoverError("The substitutes table no longer matches the names found: press \"Find names\" again.")
    for e, value in zip(plan.entities, df["substitute"].astype(str)):
        value = " ".join(value.split())
        if not value or len(value) > MAX_SUBSTITUTE or not _SUBSTITUTE_RE.match(value):
            raise RecoverError(f"Substitute {value[:20]!r}: use words or a number (letters, digits, spaces, "
                               ". , ' - / %, a currency sign first), "
                               f"at most {MAX_SUBSTITUTE} characters.")
        if value != e.substitute:  # a person's choice: no retry replaces it
            e.substitute, e.chosen = value, False
    return plan


def checks(result: "Result") -> pd.DataFrame:
    yes = {True: "yes", False: "no", None: "—"}
    rows = [(n, e.substitute if result.mode == "substitute" else result.mode, yes[e.substitute_heard],
             yes[e.original_heard], yes[e.click_free], f"{e.out_start:.2f}–{e.out_end:.2f}")
            for n, e in enumerate(result.entities, 1)]
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def verdict(result: "Result") -> str:
    if not result.entities:
        return "No private words found: **the output equals the input.**"
    conf = "—" if result.confidence is None else f"{result.confidence:.2f}"
    head = (f"**Confidence {conf}** (1 − WER of the second pass against the intended text; preiss2023) · "
            f"voice {result.voice or '—'}" + (f" (speaker F0 {result.speaker_f0:.0f} Hz)" if result.speaker_f0 else ""))
    if result.retries:
        kept = [str(n) for n, e in enumerate(result.entities, 1) if e.heard_first is False and e.substitute_heard]
        head += ("\n\nRendered again where the recognizer missed a substitute: " +
                 (f"span {', '.join(kept)} is now heard." if kept else "no better, so the first choice stands."))
    if result.needs_review:
        return head + "\n\n⚠️ **Needs review:** " + "; ".join(result.reasons) + "."
    return head + "\n\n✅ No review needed: every check passed."


def waveform(original: np.ndarray, result: "Result"):
    """Input and output waveforms (envelopes), with the replaced spans marked on both (a
    substitute's span holds the "to" or "at" said again with it)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=False, vertical_spacing=0.12,
                        subplot_titles=("original", f"output ({result.mode})"))
    for row, (x, spans) in enumerate(((original, [e.cut_edges(result.mode) for e in result.entities]),
                                      (result.samples, [(e.out_start, e.out_end) for e in result.entities])), 1):
        hop = max(1, len(x) // 2000)
        env = np.abs(x[: len(x) // hop * hop]).reshape(-1, hop).max(axis=1)
        t = np.arange(len(env)) * hop / result.rate
        for sign in (1, -1):  # the envelope, drawn above and below the axis in one colour
            fig.add_trace(go.Scatter(x=t, y=sign * env, mode="lines", line={"width": 1, "color": "#4c72b0"},
                                     showlegend=False), row=row, col=1)
        for n, (a, b) in enumerate(spans, 1):
            fig.add_vrect(x0=a, x1=b, fillcolor="orange", opacity=0.3, line_width=0, row=row, col=1,
                          annotation_text=str(n), annotation_position="top left")
    fig.update_layout(height=360, margin={"l": 40, "r": 10, "t": 30, "b": 30})
    fig.update_xaxes(title_text="seconds", row=2, col=1)
    return fig
