"""The live explorer's logic, free of any UI: mask one sentence, fill it in several ways.

app.py only converts these results to Gradio values.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from recover_core import bundles, validation
from recover_core.filling import DEFAULT_MODEL, Filled, MaskInput, get_filler
from recover_core.filling.candidates import ner_type_check
from recover_core.masking import build, mask_text
from recover_core.masking.mask import Masked

TECHNIQUES = ["entityTagger", "vocabThres", "allowList", "allowList+entityTagger", "vocabThres+entityTagger"]


@dataclass(frozen=True)
class Column:
    """One side-by-side column: a filler kind, a method and a model."""

    kind: str  # "mlm" | "infill"
    method: str  # "top1" | "topk"

    @property
    def title(self) -> str:
        return f"{'MLM' if self.kind == 'mlm' else 'Causal infill'} · {'Top-1' if self.method == 'top1' else 'Top-K'}"


COLUMNS = [Column("mlm", "top1"), Column("mlm", "topk"), Column("infill", "top1"), Column("infill", "topk")]


def model_choices(kind: str) -> list[str]:
    """Models for a filler kind, the usable ones (offline or hub) first."""
    model_kind = "mlm" if kind == "mlm" else "causal"
    usable = bundles.names(model_kind, available_only=True)
    return usable + [n for n in bundles.names(model_kind) if n not in usable]


def default_model(kind: str) -> str:
    choices = model_choices(kind)
    usable = bundles.names("mlm" if kind == "mlm" else "causal", available_only=True)
    return usable[0] if usable else (DEFAULT_MODEL[kind] if DEFAULT_MODEL[kind] in choices else choices[0])


@functools.lru_cache(maxsize=16)
def _masker(technique: str, n: int, ner_model: str):
    # Built once per setting: a request masks and then needs the same masker's keep-list.
    validation.check_choice("masking technique", technique, TECHNIQUES)
    return build(technique, n=n, ner_model=ner_model)


def mask(text: str, technique: str, n: int, markers: str, ner_model: str = "spacy-md") -> Masked:
    return mask_text(text, _masker(technique, int(n), ner_model), "class" if markers == "class" else "mask")


def keep_list(technique: str, n: int, ner_model: str = "spacy-md"):
    return _masker(technique, int(n), ner_model).keep


def fill(masked: Masked, column: Column, model: str, k: int, seed: int, keep,
         ner_model: str = "spacy-md") -> Filled:
    k = validation.check_k(k)
    filler = get_filler(column.kind, model)
    check = ner_type_check(bundles.load_ner(ner_model))
    return filler.fill([MaskInput(masked.masked, masked.markers)], method=column.method, k=k,
                       seed=int(seed), keep=keep, type_check=check)[0]
