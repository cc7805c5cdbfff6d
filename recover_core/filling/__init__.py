"""Filling methods (vats2024 §3.2): a filler kind plus a model, built once and cached."""
from __future__ import annotations

import functools
import sys
import threading
from pathlib import Path

from recover_core.models import bundles
from recover_core.runtime import env
from recover_core.errors import RecoverError
from recover_core.filling.base import DEFAULT_K, METHODS, Candidate, Fill, Filled, Filler, MaskInput

KINDS = {"mlm": "mlm", "infill": "causal", "instruct": "causal"}  # filler kind -> the model kind it runs on
# Offline, the MLM is the one trained here (issue 3); in a Space, the paper's BERT.
DEFAULT_MODEL = {"mlm": "minilm-mlm" if env.offline() else "bert-base-uncased", "infill": "smollm2-135m",
                 "instruct": "smollm2-fill"}


_FILLERS_LOCK = threading.RLock()


def get_filler(kind: str, model: str | None = None) -> Filler:
    """A filler, built once per (kind, model), even when two requests ask at the same moment."""
    with _FILLERS_LOCK:
        return _get_filler(kind, model)


def _clear_fillers() -> None:
    _get_filler.cache_clear()
    infill = sys.modules.get("recover_core.filling.infill")  # only if loaded: clearing imports nothing
    if infill is not None:
        infill._shared_fillers.cache_clear()


get_filler.cache_clear = _clear_fillers  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=8)
def _get_filler(kind: str, model: str | None = None) -> Filler:
    if kind not in KINDS:
        raise RecoverError(f"Unknown filler {kind!r}. Known: {', '.join(KINDS)}.")
    model = model or DEFAULT_MODEL[kind]
    if kind == "instruct" and (Path(model) / "adapter_config.json").exists():  # a finetune-llm OUT/adapter
        from recover_core.filling.instruct import InstructFiller

        return InstructFiller(model, infill=lambda m: get_filler("infill", m))
    bundle = bundles.get(model)
    if bundle.kind != KINDS[kind]:
        raise RecoverError(
            f"The {kind} filler needs a {KINDS[kind]} model; {model!r} is a {bundle.kind} model. "
            f"Try: {', '.join(bundles.names(KINDS[kind]))}.")
    bundle.source()  # raises a clear error before anything heavy is imported
    if kind == "mlm":
        from recover_core.filling.mlm import MLMFiller

        return MLMFiller(model)
    if kind == "instruct":
        from recover_core.filling.instruct import InstructFiller

        return InstructFiller(model, infill=lambda m: get_filler("infill", m))
    from recover_core.filling.infill import shared

    return shared(model)


__all__ = ["DEFAULT_K", "METHODS", "Candidate", "Fill", "Filled", "Filler", "MaskInput", "get_filler", "KINDS"]
