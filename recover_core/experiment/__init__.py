"""The full grid of vats2024 §4: dataset x masking x method -> obfuscated train set ->
adapted LM -> per-word perplexity on the clean test set, written as a tidy CSV.

    python -m recover_core experiment --config assets/experiments/cpu.toml

Every cell's result is saved (atomically) as soon as it is known, under the cache, so a
killed run picks up at the first unfinished cell; obfuscated corpora and the pretrained
LM are cached too. The CSV is rewritten from all finished cells at the end.

Methods: ``oracle``, ``baseline0``, ``baseline1`` (lm/train.py), and fillers written
``kind:model:top1|topk`` (``mlm:minilm-wiki:topk``, ``instruct:smollm2-fill:top1``, ...).
``mlm-ft:model:topk`` is vats2024's FT: the MLM is first fine-tuned on exactly the corpus
that ``mlm:model:topk`` produced for this cell (same seed), then it fills the masked corpus.
As in the paper, fillers see ``[MASK]`` only; a ``+typed`` method (``mlm:model:topk+typed``)
is ours: the filler is also told each mask's entity type. Every cell runs once per seed.
"""
from __future__ import annotations

from recover_core.experiment.config import (BASELINES, FT_KIND, MASK_FREE, TYPED, ExperimentConfig, MethodSpec,
                                            cells, check_config, dataset_split, load_config,
                                            read_json, settings_key, texts_digest, usable)

__all__ = ["BASELINES", "FT_KIND", "MASK_FREE", "TYPED", "ExperimentConfig", "MethodSpec", "Runner", "cells",
           "check_config", "dataset_split", "load_config", "read_json", "settings_key",
           "texts_digest", "usable"]


def __getattr__(name: str):
    # The runner (and through it the engine: spaCy, phonenumbers, python-stdnum) on first use,
    # so that the GPU-side jobs (lm_job, smollm2_job) import with torch, transformers and peft alone.
    if name == "Runner":
        from recover_core.experiment.runner import Runner

        return Runner
    raise AttributeError(f"module 'recover_core.experiment' has no attribute {name!r}")
