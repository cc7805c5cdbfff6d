"""Filling methods (vats2024 §3.2): a filler kind plus a model, built once and cached."""
from __future__ import annotations

import functools

from recover_core import bundles
from recover_core.errors import RecoverError
from recover_core.filling.base import DEFAULT_K, METHODS, Candidate, Fill, Filled, Filler, MaskInput

KINDS = {"mlm": "mlm", "infill": "causal"}  # filler kind -> the model kind it runs on
DEFAULT_MODEL = {"mlm": "bert-base-uncased", "infill": "smollm2-135m"}


@functools.lru_cache(maxsize=8)
def get_filler(kind: str, model: str | None = None) -> Filler:
    if kind not in KINDS:
        raise RecoverError(f"Unknown filler {kind!r}. Known: {', '.join(KINDS)}.")
    model = model or DEFAULT_MODEL[kind]
    bundle = bundles.get(model)
    if bundle.kind != KINDS[kind]:
        raise RecoverError(
            f"The {kind} filler needs a {KINDS[kind]} model; {model!r} is a {bundle.kind} model. "
            f"Try: {', '.join(bundles.names(KINDS[kind]))}.")
    bundle.source()  # raises a clear error before anything heavy is imported
    if kind == "mlm":
        from recover_core.filling.mlm import MLMFiller

        return MLMFiller(model)
    from recover_core.filling.infill import InfillFiller

    return InfillFiller(model)


__all__ = ["DEFAULT_K", "METHODS", "Candidate", "Fill", "Filled", "Filler", "MaskInput", "get_filler", "KINDS"]
