"""WER as a metric of the grid: vats2024 Table 6, one row per (masking x method) adapted LM.

The grid keeps no adapted LM (one per cell and seed, tens of MB each), so a cell's WER is
taken while its LM is in memory, right after its perplexity. The spoken test set
(``speech-set``: the grid's own test sentences, read by four TTS voices) is encoded once per
run and every cell decodes the same encoder states with its LM fused, so a cell costs its
decoding only. The recognizer alone and the pretrained LM are decoded once per run, on the
same utterances (Table 6's first two rows).

Fusion weights: "adapted" for every adapted LM (Oracle included), "pretrained" for the
pretrained one, from assets/asr/fusion.json (``asr-eval --tune``, on dev utterances that
no grid LM sees).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from recover_core.asr import audio, wer
from recover_core.experiment import speech_set
from recover_core.asr.decode import DecodeConfig
from recover_core.experiment.config import fusion_weights, read_json
from recover_core.runtime import atomic

BATCH = 8
NO_LM, PRETRAINED = "ASR-without-LM", "Pre-Trained-LM"  # Table 6's row names


@dataclass(frozen=True)
class GridWER:
    dataset: str
    max_train: int
    max_test: int
    utterances: int

    @functools.cached_property
    def _set(self):
        """(recognizer, [(encoder states, frames)] per batch, references), built on first use."""
        from recover_core.asr.recognize import Recognizer

        folder = speech_set.set_dir(self.dataset, self.max_train, self.max_test)
        test = [r for r in speech_set.load_manifest(folder) if r.split == "test"][: self.utterances]
        rec = Recognizer()
        clips = [audio.load(folder / r.path) for r in test]
        encoded = [rec.encode([c.samples for c in clips[i:i + BATCH]]) for i in range(0, len(clips), BATCH)]
        return rec, encoded, [r.text for r in test]

    def score(self, lm, lm_weight: float = 0.0, word_bonus: float = 0.0) -> dict:
        """WER, CER and a 95% bootstrap interval over utterances of the recognizer with ``lm``
        fused (None: the recognizer alone), as a cell record's fields."""
        from recover_core.experiment.asr_eval import bootstrap, per_utterance

        rec, encoded, refs = self._set
        cfg = DecodeConfig(lm_weight=lm_weight if lm is not None else 0.0,
                           word_bonus=word_bonus if lm is not None else 0.0)
        hyps = [text for enc, frames in encoded for text in rec.texts(enc, frames, cfg, lm)]
        s = wer.score(refs, hyps)
        lo, hi = bootstrap(*per_utterance(s))
        return {"wer_percent": round(s.wer, 3), "cer_percent": round(s.cer, 3), "wer_ci95": [round(lo, 3), round(hi, 3)],
                "wer_utterances": len(refs), "lm_weight": cfg.lm_weight, "word_bonus": cfg.word_bonus}

    def note(self) -> str:
        """How the WER rows were measured, for the CSV's scale column."""
        return (f"WER on {self.utterances} spoken {self.dataset} test utterances (TTS voices "
                f"{'/'.join(speech_set.VOICES)}), Whisper tiny.en beam 4, LM fused (assets/asr/fusion.json)")


def reference(run) -> dict:
    """WER of the recognizer alone and with the pretrained LM fused, on the cells' utterances
    (Table 6's first two rows), cached beside the cells of ``run`` (an experiment.Runner)."""
    path = run.root / "cells" / "asr_reference.json"
    rec = read_json(path) if path.exists() else {}
    if rec.get("key") == run.key and rec.get(NO_LM, {}).get("wer_utterances") == run.cfg.wer_utterances:
        return rec
    rec = {"key": run.key, NO_LM: run.wer.score(None),
           PRETRAINED: run.wer.score(run.pretrained()[0], *fusion_weights("pretrained"))}
    atomic.write_text(path, json.dumps(rec))
    return rec


def rows(run, done: dict, common: dict) -> list[dict]:
    """Tidy wer_percent and cer_percent rows: the reference rows, then every finished cell of
    the WER dataset. Their scale names the WER setup, so the claims never pool them with
    ``asr-eval``'s rows, which come from another set of utterances."""
    common = {**common, "scale": f"{run.cfg.scale}; {run.wer.note()}"}
    path = run.root / "cells" / "asr_reference.json"
    ref = read_json(path) if path.exists() else {}
    found = [(("", name, ""), ref[name]) for name in (NO_LM, PRETRAINED) if ref.get("key") == run.key and name in ref]
    found += [((m, meth, seed), rec) for (d, m, meth, seed), rec in done.items()
              if d == run.wer.dataset and "wer_percent" in rec]
    return [{"dataset": run.wer.dataset, "masking": m, "method": meth, "metric": metric, "value": rec[metric],
             "seed": seed, **common} for (m, meth, seed), rec in found for metric in ("wer_percent", "cer_percent")]
