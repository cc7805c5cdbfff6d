"""The live explorer's logic, free of any UI: mask one sentence, fill it in several ways.

app.py only converts these results to Gradio values.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from recover_core import bundles, validation
from recover_core.filling import DEFAULT_MODEL, KINDS, Filled, MaskInput, get_filler
from recover_core.filling.candidates import ner_type_check
from recover_core.masking import build, mask_text
from recover_core.masking.mask import Masked
from recover_core.pseudonyms import Pseudonyms, consistent
from recover_core.quality import originals_per_fill

TECHNIQUES = ["entityTagger", "vocabThres", "allowList", "allowList+entityTagger", "vocabThres+entityTagger"]


@dataclass(frozen=True)
class Column:
    """One side-by-side column: a filler kind, a method and a model."""

    kind: str  # "mlm" | "infill" | "instruct"
    method: str  # "top1" | "topk"

    @property
    def title(self) -> str:
        return f"{FILLER_TITLES[self.kind]} · {'Top-1' if self.method == 'top1' else 'Top-K'}"


FILLER_TITLES = {"mlm": "MLM", "infill": "Causal infill", "instruct": "LoRA-tuned LLM"}
# Fastest first, so the first column appears at once; Top-1 of all three, then Top-K.
COLUMNS = [Column(kind, method) for method in ("top1", "topk") for kind in ("mlm", "infill", "instruct")]
# The order the app fills them in: the fast MLM columns first (they show within a second
# while the causal ones run), then each causal filler's Top-1 and Top-K together (Top-K
# draws from the candidates Top-1 computed, so it follows at once), infill before the
# instruction-tuned filler, whose fallback is that very infill work (filling.memo reuses it).
_SPEED = {"mlm": 0, "infill": 1, "instruct": 2}
FILL_ORDER = sorted(range(len(COLUMNS)), key=lambda i: (_SPEED[COLUMNS[i].kind], COLUMNS[i].method))


def model_choices(kind: str) -> list[str]:
    """Models for a filler kind: the default first, then the usable ones (offline or hub)."""
    model_kind = KINDS[kind]
    usable = bundles.names(model_kind, available_only=True)
    ordered = usable + [n for n in bundles.names(model_kind) if n not in usable]
    first = default_model(kind)
    return [first] + [n for n in ordered if n != first]


def default_model(kind: str) -> str:
    """The filler's preferred model when it can be loaded here, else the first that can."""
    usable = bundles.names(KINDS[kind], available_only=True)
    preferred = DEFAULT_MODEL[kind]
    if preferred in usable:
        return preferred
    return usable[0] if usable else preferred


@functools.lru_cache(maxsize=16)
def _masker(technique: str, n: int, ner_model: str):
    # Built once per setting: a request masks and then needs the same masker's keep-list.
    validation.check_choice("masking technique", technique, TECHNIQUES)
    return build(technique, n=n, ner_model=ner_model)


def mask(text: str, technique: str, n: int, markers: str, ner_model: str = "spacy-md") -> Masked:
    return mask_text(text, _masker(technique, int(n), ner_model), "class" if markers == "class" else "mask")


def ner_path(text: str, technique: str) -> str:
    """For the status line: which entityTagger path the text took, or "" without entityTagger."""
    if "entityTagger" not in technique:
        return ""
    from recover_core.masking.truecase import is_caseless

    if is_caseless(text):
        return (" entityTagger: caseless path (the text has no capital letters, so names, places and "
                "the pronoun I were capitalised from word lists and context before NER).")
    return " entityTagger: cased path."


def check_fillable(masked: Masked) -> None:
    """Too many masks for one request get one clear message, before any filler runs."""
    validation.check_mask_count(len(masked.markers), what="masked sentence")


def keep_list(technique: str, n: int, ner_model: str = "spacy-md"):
    return _masker(technique, int(n), ner_model).keep


def fill(masked: Masked, column: Column, model: str, k: int, seed: int, keep,
         ner_model: str = "spacy-md") -> Filled:
    k = validation.check_k(k)
    check_fillable(masked)
    filler = get_filler(column.kind, model)
    filled = filler.fill([MaskInput(masked.masked, masked.markers)], method=column.method, k=k,
                         seed=int(seed), keep=keep, type_check=_zoned_type_check(ner_model))[0]
    # The originals are in memory for this request: one substitute per original, never shared,
    # names keep their gender, places their kind.
    per_fill = originals_per_fill(masked.original, masked.spans, filled)
    return consistent(filled, per_fill, Pseudonyms(f"{seed}:{column.kind}:{column.method}"))


def fallback_note(filled: Filled) -> str:
    """For a column's header: where the LLM's output was not used, and the infill filler's was."""
    if filled.fallback:
        return " · invalid output, filled by causal infill"
    n = sum(f.source == "infill" for f in filled.fills)
    return f" · {n} of {len(filled.fills)} masks filled by causal infill (no valid word from the LLM)" if n else ""


def _zoned_type_check(ner_model: str):
    """The tagger's type check, each call in a spaCy memory zone: the filled sentences it
    reads still hold the words that were not masked."""
    nlp = bundles.load_ner(ner_model)
    check = ner_type_check(nlp)

    def zoned(filled, label):
        with bundles.spacy_zone(nlp):
            return check(filled, label)
    return zoned
