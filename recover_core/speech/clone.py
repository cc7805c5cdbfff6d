"""The clone's side of one recording (``voice="clone"``, preiss2023's cloning step done offline):
the speaker's other speech, what the speaker is measured by, which stock voice to convert from
and the conversion itself (speech/convert.py). Each is computed on first need and kept across
the retries of a render.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from recover_core.asr.audio import SAMPLE_RATE, Audio
from recover_core.speech import convert, speaker

if TYPE_CHECKING:
    from recover_core.speech.plan import Plan, SpeechSettings


# The stock voices voice="clone" may convert from: espeak's female variant is left out, since
# the recognizer heard its names 30% of the time (docs/speech_obfuscation.md).
CLONE_BASES = ("flite-rms", "piper-joe", "flite-slt", "espeak-ng-us")
CLONE_SHORTLIST = 2  # knn-cmn converts and judges this many bases, the nearest the speaker unconverted
CHOICE_CHUNK_S = 1.0  # the speaker's other speech is dealt in turn into two halves, in chunks this long


def choice_halves(rest: np.ndarray, rate: int) -> tuple[np.ndarray, np.ndarray]:
    """The speaker's other speech dealt into two halves, alternate chunks of ``CHOICE_CHUNK_S``:
    ``conversion="knn-cmn"`` chooses its base voice by the first; the second is left for measuring the
    choice by what did not make it (bench/speech_obfuscation.py). Alternate chunks, so that
    each half hears the whole recording (its start and its end can differ in voice)."""
    n = max(1, int(CHOICE_CHUNK_S * rate))
    chunks = [rest[i:i + n] for i in range(0, len(rest), n)]
    return (np.concatenate(chunks[0::2]) if chunks else rest[:0],
            np.concatenate(chunks[1::2]) if len(chunks) > 1 else rest[:0])


class SpeakerCache:
    """What one recording's speaker is measured by, computed on first need and kept across
    retries: the speaker's other speech (the recording with every private span cut out, so
    no original name shapes the voice it is compared with or converted toward), its speaker
    embedding and its WORLD profile."""

    def __init__(self, clip: Audio, plan: Plan, settings: SpeechSettings):
        self.clip, self.plan, self.settings = clip, plan, settings
        self._rest: np.ndarray | None = None
        self._embedding: np.ndarray | None = None
        self._profile: convert.Profile | None = None
        self._choice: np.ndarray | None = None
        self.base: str | None = None  # knn-cmn: the stock voice chosen at the first render, kept for retries
        self._done: set[str] = set()

    def rest(self) -> np.ndarray:
        if self._rest is None:
            spans = [e.cut_edges("substitute") for e in self.plan.entities]
            self._rest = speaker.without(self.clip.samples, SAMPLE_RATE, spans)
        return self._rest

    def similarity(self, insert: np.ndarray, rate: int) -> float | None:
        """The insert's similarity to the speaker's other speech (None for an empty insert)."""
        reference = self.reference()
        return None if reference is None else speaker.similarity(speaker.embed(insert, rate), reference)

    def reference(self) -> np.ndarray | None:
        """The speaker embedding of the speaker's other speech; None without the encoder."""
        if not speaker.available():
            return None
        if "embedding" not in self._done:
            self._done.add("embedding")
            self._embedding = speaker.embed(self.rest(), SAMPLE_RATE)
        return self._embedding

    def base_voice(self, candidates: list[str]) -> str | None:
        """The stock voice nearest the speaker by the speaker encoder, to convert from: what
        conversion keeps of the source voice is still heard (measured: the best base differs
        by speaker, by up to 0.2 of similarity); None where the encoder is not installed."""
        reference = self.reference() if candidates else None
        return None if reference is None else speaker.nearest(reference, candidates)

    def choice_reference(self) -> np.ndarray | None:
        """The speaker embedding of the first of ``choice_halves``, which chooses the base
        voice; None without the encoder or with under 0.1 s of speech there."""
        if not speaker.available():
            return None
        if "choice" not in self._done:
            self._done.add("choice")
            self._choice = speaker.embed(choice_halves(self.rest(), SAMPLE_RATE)[0], SAMPLE_RATE)
        return self._choice

    def converted(self, audio: np.ndarray, rate: int, voice: str, start: float, end: float) -> np.ndarray:
        """The stock voice's insert moved toward the speaker; unchanged where either voice
        has too little voiced speech to measure."""
        method = self.settings.conversion
        if "profile" not in self._done:
            self._done.add("profile")
            self._profile = convert.profile(self.rest(), SAMPLE_RATE, harvest=method == "knn-cmn")
        source = convert.voice_profile(voice)
        if self._profile is None or source is None:
            return audio
        contour = None
        if method.endswith("-contour"):
            a, b = int(start * SAMPLE_RATE), int(end * SAMPLE_RATE)
            contour = convert.original_contour(self.clip.samples[a:b], SAMPLE_RATE)
        knn = "cmn" if method == "knn-cmn" else method.startswith("knn")
        return convert.convert(audio, rate, source, self._profile, contour, envelope=method != "world-f0", knn=knn)
