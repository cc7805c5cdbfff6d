"""Transcripts already decoded, kept between asr-eval runs.

A Table 6 run decodes 400 utterances once per LM, about an hour on 2 cores. Kept per
utterance, a run that was cut off resumes where it stopped, a run on more utterances decodes
only the new ones, and a newly built LM costs only its own decoding. The recognizer's n-best
lists are kept too: an LM that rescores them (asr/rescore.py) then costs only its own
scoring of their texts, not the beam-8 search that was about half of each batch's time.

A transcript is looked up by what decides it: the audio's samples, the decoding settings,
and the LM (its card, rewritten whenever the LM is built or tuned). Bump VERSION when the
decoder's output for the same inputs can change.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np

from recover_core.runtime import atomic
from recover_core.asr import lms
from recover_core.asr.decode import DecodeConfig, Hypothesis

VERSION = 1


def audio_key(samples: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(samples, dtype=np.float32).tobytes()).hexdigest()[:20]


def config_key(name: str, cfg: DecodeConfig, recognizer: str) -> str:
    """``name`` may carry asr-eval's suffixes ("smollm2@0.2@0", "none@wide"): the LM is its first part."""
    lm = name.split("@")[0]
    card = None if lm == lms.NONE else lms.card_path(lm)
    stamp = "" if card is None else f"{card.stat().st_mtime_ns}:{card.read_text()}"
    blob = json.dumps([VERSION, recognizer, lm, stamp, dataclasses.asdict(cfg)], sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:20]


def nbest_key(cfg: DecodeConfig, recognizer: str) -> str:
    """The recognizer's own search: without an LM, λ, β and the fusion's top-k play no part."""
    alone = DecodeConfig(beam_size=cfg.beam_size, max_new_tokens=cfg.max_new_tokens,
                         length_penalty=cfg.length_penalty)
    return "nbest-" + config_key(lms.NONE, alone, recognizer)


def to_json(hyps: list[Hypothesis]) -> list:
    return [[h.tokens, h.token_logprobs, h.score] for h in hyps]


def from_json(kept: list) -> list[Hypothesis]:
    return [Hypothesis(list(t), list(lp), float(s)) for t, lp, s in kept]


class Store:
    """One JSON file per configuration, {audio key: text} (or an n-best list, as ``to_json``
    writes it), written whole after each batch. ``reuse=False`` decodes everything again and
    replaces what was kept."""

    def __init__(self, folder: Path, reuse: bool = True):
        self.folder, self.reuse = folder, reuse
        self._texts: dict[str, dict] = {}

    def _load(self, key: str) -> dict:
        if key not in self._texts:
            path = self.folder / f"{key}.json"
            try:
                self._texts[key] = json.loads(path.read_text()) if path.exists() else {}
            except ValueError:  # a file from a crash cannot exist (atomic writes); a hand-edited one is dropped
                self._texts[key] = {}
        return self._texts[key]

    def get(self, key: str, audio: str):
        return self._load(key).get(audio) if self.reuse else None

    def put(self, key: str, audios: list[str], texts: list) -> None:
        known = self._load(key)
        known.update(zip(audios, texts))
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic.write_text(self.folder / f"{key}.json", json.dumps(known))
