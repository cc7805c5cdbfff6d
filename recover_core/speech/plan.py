"""The speech pipeline's settings and data model: what ``obfuscate.SpeechObfuscator`` is
set with (``SpeechSettings``, which holds the engine's ``Settings``), what ``find`` gives
(``Plan`` of ``Entity``) and what ``render`` gives (``Result``). The entities hold the
original words: memory only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from recover_core.text import validation
from recover_core.errors import RecoverError
from recover_core.filling.base import Filled
from recover_core.obfuscator import Settings
from recover_core.speech import voices
from recover_core.pseudonyms import Pseudonyms
from recover_core.text.spans import Span

if TYPE_CHECKING:  # torch loads with the recognizer, not on import (the app starts without it)
    from recover_core.asr.recognize import Transcript

MODES = ("substitute", "bleep", "silence")
VOICE_CHOICES = ("auto", "clone")  # besides the stock voices themselves
# world-f0: pitch only, the envelope left alone; knn: the speaker's own envelopes (convert.knn_envelopes)
CONVERSIONS = ("world", "world-contour", "world-f0", "knn", "knn-contour", "knn-cmn")
NEAR_S = 0.5  # how far from its place a word of the second pass still counts as "there"
# Short unstressed words the new voice says again with the substitute ("to Sarah", "Ross
# Johnston at"), where no punctuation parts them from the name. Spoken in one breath with
# the name, they have no quiet edge on its side: the cut either clips them or leaves a
# sliver, and the second pass then loses them ("send the report Sarah", "Ross Johnston,
# the station"). Said again whole, they are heard. Their outer edge is a /t/'s closure, a
# quiet place to cut; "and", "with" and "from" glide into the word beside them, and
# measured worse (docs/speech_obfuscation.md).
RESPOKEN = frozenset({"to", "at"})
# Quasi-identifiers said as numbers (kinds/spoken.py, under protect="quasi"): their substitute
# is spoken as a person says it (text/spoken.say_figures), their cut covers the whole spoken
# number (boundaries aligns figures as words), and the second pass reads them by value.
NUMBER_LABELS = frozenset({"EVENT_DATE", "DATE_OF_BIRTH", "AGE", "AMOUNT", "DURATION", "COUNT"})
DATE_LABELS = frozenset({"EVENT_DATE", "DATE_OF_BIRTH"})  # a four-digit number in them is a year


# The engine's settings speech runs with unless told otherwise (obfuscate-audio's and the app's):
# people's names only; the filler offers 50 candidates (Top-K draws among them, as text's),
# which the rules filter; preiss2023's choice, the engine's rules="preiss" (the filler's
# candidates first, checked against the name lists, a draw where none fits), where
# rules="ours" with choice="prior" would choose as text does by default; and identifiers
# (masking/identifiers.py: spoken digit strings "five five five one two", "double four",
# phone and card numbers), each replaced by a substitute of its shape, or bleeped, like a name.
SPEECH_ENGINE = Settings(types=("PERSON",), k=50, rules="preiss", choice="rank", identifiers=True)


@dataclass(frozen=True)
class SpeechSettings:
    """What ``obfuscate.SpeechObfuscator`` is set with: the engine's settings, which find and
    choose as text's do, and how the recording is rendered and checked."""

    engine: Settings = SPEECH_ENGINE
    mode: str = "substitute"
    # auto: the clearest stock voice in the speaker's register (voices.choose); clone: that
    # voice's insert converted toward the speaker's own voice (speech/convert.py); or one of voices.VOICES
    voice: str = "auto"
    # clone: how (CONVERSIONS, speech/convert.py): "world" moves pitch level and spread and the
    # spectral envelope; "knn" also pulls each frame's envelope toward the speaker's own frames;
    # "-contour" gives the insert the original name's pitch movement; "world-f0" pitch alone;
    # "knn-cmn" matches frames with each voice's mean cepstrum taken out, F0 by harvest
    conversion: str = "world"
    exclude_voices: tuple[str, ...] = ()  # voices auto never picks (the bench: the speaker's own)
    review_below: float = 0.8  # confidence (1 - WER of the second pass) under this: review
    unsure_below: float = 0.5  # a private word the recognizer heard with less probability: review
    second_pass: bool = True
    # A substitute the second pass does not hear is replaced by the rules' next choice and
    # the file rendered again, this many times at most (a voice and Whisper carry some
    # names badly: "Morrow" is written "Murrow"). The retry is kept only when it is better.
    retries: int = 1
    name_cues: bool = True  # add census names the tagger missed, from their context (speech/cues.py)
    respeak: bool = True  # substitute mode: say a RESPOKEN word next to a name again with the substitute

    def check(self) -> "SpeechSettings":
        self.engine.check()
        validation.check_choice("mode", self.mode, list(MODES))
        if self.voice not in VOICE_CHOICES:
            voices.check_voice(self.voice)
        validation.check_choice("conversion", self.conversion, list(CONVERSIONS))
        if self.conversion != "world" and self.voice != "clone":
            raise RecoverError(f"The conversion {self.conversion!r} moves a stock voice toward the speaker: it needs "
                               "voice 'clone' (--voice clone).")
        for v in self.exclude_voices:
            voices.check_voice(v)
        if not 0.0 <= self.review_below <= 1.0:
            raise RecoverError("The review threshold is a confidence between 0 and 1.")
        if not 0 <= self.retries <= 5:
            raise RecoverError("Retries: a number from 0 to 5.")
        return self


@dataclass
class Entity:
    first: int  # word indices [first, last) in the first-pass transcript
    last: int
    label: str
    original: str = field(repr=False)  # the private words: memory only, never in a repr or a log
    substitute: str
    start: float  # refined edges, seconds of the input
    end: float
    edges: str  # how they were found: aligned or energy
    probability: float  # the recognizer's lowest word probability inside the entity
    suffix: str = ""  # a clitic outside the entity but inside its last word ("'s")
    out_start: float = 0.0  # where the replacement lies in the output
    out_end: float = 0.0
    substitute_heard: bool | None = None
    original_heard: bool | None = None
    clicks: tuple[float, float] = (0.0, 0.0)  # splice.click_ratio at the entry and exit seams
    click_free: bool = True
    # the filler's, best first, as the engine let them out: no original, nor a word that sounds like one
    candidates: list[str] = field(default_factory=list, repr=False)
    chosen: bool = True  # the substitute is the rules' choice, not a person's edit: a retry may change it
    heard_first: bool | None = None  # substitute_heard before any retry
    unheard: tuple[str, ...] = ()  # the substitute's words the second pass missed
    lead: str = ""  # a RESPOKEN word just before the entity, said again with the substitute ("to")
    trail: str = ""  # ... and just after it ("at")
    cut: tuple[float, float] | None = None  # the substitute's cut, with lead and trail; None: (start, end)
    # cosine of the insert's speaker embedding to the speaker's other speech (speech/speaker.py);
    # None in bleep or silence mode, or where the encoder is not installed
    similarity: float | None = None
    # A number Whisper wrote in figures, as the speaker said it ("two thousand and ten" for
    # "2010", "march the twenty first" for "March 21"; boundaries.said_in, by the audio): the
    # substitute is said in that style. The original's words: memory only, never in a repr,
    # public() or a log. "" where there was nothing to choose (the figures say it all).
    said: str = field(default="", repr=False)

    def spoken(self) -> str:
        """What the voice says in substitute mode. A number's substitute, mostly in figures as
        Whisper wrote the original, is said as a person says it: a voice reads "14 March 1958"
        as "fourteen march one thousand nine hundred ...", and "£400,000" without its currency;
        a date in the style the speaker said the original in (``said``)."""
        sub = self.substitute
        if self.label in NUMBER_LABELS:
            from recover_core.text.spoken import say_figures

            sub = say_figures(sub, self.label, self.said)
        return " ".join(w for w in (self.lead, sub + self.suffix, self.trail) if w)

    def cut_edges(self, mode: str) -> tuple[float, float]:
        """Where the input is cut: a bleep or silence covers the entity alone."""
        return self.cut if mode == "substitute" and self.cut is not None else (self.start, self.end)

    def public(self, keep_originals: bool = False) -> dict:
        d = {"label": self.label, "substitute": self.substitute, "start": round(self.start, 3),
             "end": round(self.end, 3), "edges": self.edges, "asr_probability": round(self.probability, 3),
             "respoken": [w for w in (self.lead, self.trail) if w],
             "out_start": round(self.out_start, 3), "out_end": round(self.out_end, 3),
             "substitute_heard": self.substitute_heard, "substitute_heard_first_try": self.heard_first,
             "original_heard": self.original_heard,
             "click_ratios": [round(c, 2) for c in self.clicks], "click_free": self.click_free,
             "speaker_similarity": None if self.similarity is None else round(self.similarity, 3)}
        return {"original": self.original} | d if keep_originals else d


@dataclass
class Plan:
    transcript: Transcript = field(repr=False)  # the first pass: holds the original words (never in a repr)
    entities: list[Entity]
    pseudonyms: Pseudonyms | None = None
    # mapping keys (original words: never in a repr) first given a substitute here (a retry may change them)
    renewable: frozenset[str] = field(default=frozenset(), repr=False)
    # What a retry chooses from again (``Obfuscator.choose``): the engine's fills of the masked
    # transcript (filtered candidate lists) and the private spans of the transcript (originals).
    proposal: Filled | None = field(default=None, repr=False)
    spans: tuple[Span, ...] = field(default=(), repr=False)


@dataclass
class Result:
    plan: Plan
    samples: np.ndarray  # mono float32 at ``rate``, the recording's own rate
    rate: int
    mode: str
    voice: str | None  # the stock voice that spoke the inserts
    speaker_f0: float | None
    intended: str  # the first-pass transcript with every entity replaced: no original words
    second: Transcript | None = None
    wer: float | None = None
    cer: float | None = None
    confidence: float | None = None
    needs_review: bool = False
    reasons: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    retries: int = 0  # renders again with other substitutes (kept or not)
    conversion: str | None = None  # voice="clone": how the inserts were moved toward the speaker

    @property
    def entities(self) -> list[Entity]:
        return self.plan.entities

    def public(self, keep_originals: bool = False) -> dict:
        d = {"mode": self.mode, "voice": self.voice, "conversion": self.conversion,
             "speaker_f0": None if self.speaker_f0 is None else round(self.speaker_f0, 1),
             "entities": [e.public(keep_originals) for e in self.entities], "intended": self.intended,
             "second_pass": self.second.text if self.second else None,
             "wer": _r(self.wer), "cer": _r(self.cer), "confidence": _r(self.confidence),
             "needs_review": self.needs_review, "reasons": self.reasons, "retries": self.retries,
             "timings": {k: round(v, 3) for k, v in self.seconds.items()}}
        if keep_originals:
            d["transcript"] = self.plan.transcript.text
        return d


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
