"""A spoken stand-in for WSJ's test utterances: the grid's news test sentences (and separate
dev sentences for tuning the fusion weights) read aloud by offline TTS voices.

WSJ itself is licensed (LDC) and never installs here; news sentences are the closest open
text (newswire). Four voices take turns, so that no one synthesizer's accent decides a WER:
piper's neural "joe" (en_US), espeak-ng (en-us), and flite's "slt" and "rms". Synthetic
speech is cleaner than read WSJ speech, so absolute WERs are lower than Table 6's; the
comparisons between LMs are what carries over. Built into the cache, never committed; the
manifest records voice, text id and duration for every utterance.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recover_core.runtime import atomic
from recover_core.runtime import env
from recover_core.errors import RecoverError

VOICES = ("piper-joe", "espeak-ng-us", "flite-slt", "flite-rms")
DEV_SIZE = 100


def synthesize(text: str, voice: str) -> tuple[np.ndarray, int]:
    """Mono float32 samples and their rate (the voices live in recover_core.speech.voices)."""
    from recover_core.speech import voices

    if voice not in VOICES:
        raise RecoverError(f"Unknown voice {voice!r}; voices: {', '.join(VOICES)}.")
    return voices.synthesize(text, voice, vary=True)  # as the set was first built


@dataclass(frozen=True)
class Utterance:
    id: str
    split: str  # dev or test
    voice: str
    text_id: str  # sha1 of the sentence: the same id in the grid's test set
    text: str
    seconds: float
    path: str  # relative to the set's folder


def texts(dataset: str, max_train: int, max_test: int, dev_size: int = DEV_SIZE) -> dict[str, list[str]]:
    """test: the grid's test sentences; dev: train sentences the grid's LMs never see (those
    after the first ``max_train`` in the same hash order)."""
    from recover_core.data import corpora
    from recover_core.experiment.config import usable

    train, test = corpora.split(dataset)
    order = lambda s: hashlib.sha1(s.encode()).hexdigest()  # noqa: E731
    return {"dev": sorted(usable(train), key=order)[max_train:max_train + dev_size],
            "test": sorted(usable(test), key=order)[:max_test]}


def set_dir(dataset: str, max_train: int, max_test: int) -> Path:
    key = hashlib.sha1(json.dumps([dataset, max_train, max_test, DEV_SIZE, VOICES]).encode()).hexdigest()[:10]
    return env.cache_dir() / "speech" / f"{dataset}-{key}"


def load_manifest(folder: Path) -> list[Utterance]:
    path = folder / "manifest.jsonl"
    if not path.exists():
        raise RecoverError(f"No speech set in {folder}: build it with `python -m recover_core speech-set`.")
    return [Utterance(**json.loads(x)) for x in path.read_text().splitlines() if x.strip()]


def build(dataset: str = "news", max_train: int = 2000, max_test: int = 400, progress: bool = True) -> Path:
    """Synthesize every dev and test sentence (skipping files already there); the manifest is
    written last, so a set with a manifest is complete."""
    import soundfile as sf
    from tqdm import tqdm

    from recover_core.asr import audio
    from recover_core.asr.audio import SAMPLE_RATE

    folder = set_dir(dataset, max_train, max_test)
    if (folder / "manifest.jsonl").exists():
        return folder
    jobs = [(split, i, s) for split, sents in texts(dataset, max_train, max_test).items() for i, s in enumerate(sents)]
    rows = []
    for n, (split, i, sentence) in enumerate(tqdm(jobs, desc=f"speech-set {dataset}", unit="utt", disable=not progress)):
        voice = VOICES[n % len(VOICES)]
        uid = f"{split}-{i:04d}-{voice}"
        rel = f"{split}/{uid}.flac"
        path = folder / rel
        if not path.exists():
            samples, rate = synthesize(sentence, voice)
            audio.write(path, audio.resample(samples, rate, SAMPLE_RATE), SAMPLE_RATE)
        seconds = sf.info(path).duration
        rows.append(Utterance(uid, split, voice, hashlib.sha1(sentence.encode()).hexdigest()[:12], sentence,
                              round(seconds, 3), rel))
    atomic.write_text(folder / "manifest.jsonl", "".join(json.dumps(r.__dict__) + "\n" for r in rows))
    return folder
