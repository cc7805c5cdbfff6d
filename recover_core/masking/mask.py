"""Turn found spans into markers, and count what was masked (vats2024 Table 2)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from recover_core.text import validation
from recover_core.masking.base import AllOf, Masker
from recover_core.masking.techniques import get, names
from recover_core.text.spans import Span, apply, merge, outside_brackets, shift, words, words_shared

MarkerStyle = Literal["mask", "class"]
MARKER = "[MASK]"


@dataclass
class Masked:
    """One sentence after masking. ``spans`` carry the original words: keep them in memory only."""

    original: str = field(repr=False)  # the private text: memory only, never in a repr or a log
    masked: str
    spans: list[Span] = field(repr=False)  # in ``original``'s coordinates, with the private words
    markers: list[Span]  # in ``masked``'s coordinates, text = the marker
    n_words: int

    def public(self) -> dict:
        """What may be written out: no original words."""
        return {
            "masked": self.masked,
            "masks": [{"start": m.start, "end": m.end, "label": m.label} for m in self.markers],
        }


class Union(Masker):
    """Several techniques at once: a word is masked if any of them masks it."""

    name = "+"

    def __init__(self, parts: list[Masker]):
        self.parts = parts
        lists = [p.keep for p in parts if p.keep is not None]
        # A substitute should avoid every list that would have kept it.
        self.keep = (lists[0] if len(lists) == 1 else AllOf(lists)) if lists else None
        self.name = "+".join(p.name for p in parts)

    def find(self, text: str) -> list[Span]:
        return merge(s for p in self.parts for s in p.find(text))

    def find_many(self, texts: list[str]) -> list[list[Span]]:
        found = [p.find_many(texts) for p in self.parts]
        return [merge(s for per in spans for s in per) for spans in zip(*found)]


def build(technique: str, *, n: int | None = None, ner_model: str | None = None,
          types: list[str] | None = None) -> Masker:
    """A masker from a name such as ``vocabThres`` or ``allowList+entityTagger``."""
    parts = []
    for part in technique.split("+"):
        validation.check_choice("masking technique", part.strip(), names())
        cls = get(part.strip())
        kwargs = {}
        if cls.name == "vocabThres" and n is not None:
            kwargs["n"] = n
        if cls.name == "entityTagger":
            if ner_model:
                kwargs["model"] = ner_model
            if types:
                kwargs["types"] = types
        parts.append(cls(**kwargs))
    return parts[0] if len(parts) == 1 else Union(parts)


def marker_for(span: Span, style: MarkerStyle) -> str:
    return MARKER if style == "mask" else f"[{span.label}]"


def render(text: str, spans: list[Span], style: MarkerStyle = "mask") -> Masked:
    """Markers for the found spans; the text's own bracketed tags ("[laughter]") are kept as they are."""
    spans = outside_brackets(text, spans)
    reps = [marker_for(s, style) for s in spans]
    return Masked(text, apply(text, spans, reps), list(spans), shift(spans, text, reps), len(words(text)))


def mask_text(text: str, masker: Masker, style: MarkerStyle = "mask") -> Masked:
    text = validation.check_text(text)
    return render(text, masker.find(text), style)


def mask_many(texts: list[str], masker: Masker, style: MarkerStyle = "mask") -> list[Masked]:
    """Batch masking; texts must already be validated (the CLI does it per line)."""
    with words_shared():
        return [render(t, s, style) for t, s in zip(texts, masker.find_many(texts))]


def mask_rate(results: list[Masked]) -> dict:
    """Share of words masked, overall and per label."""
    total = sum(r.n_words for r in results)
    masked = sum(len(r.spans) for r in results)
    by_label: dict[str, int] = {}
    for r in results:
        for s in r.spans:
            by_label[s.label] = by_label.get(s.label, 0) + 1
    return {
        "sentences": len(results),
        "words": total,
        "masked_words": masked,
        "mask_rate": masked / total if total else 0.0,
        "sentences_with_mask": sum(1 for r in results if r.spans),
        "by_label": dict(sorted(by_label.items(), key=lambda kv: -kv[1])),
    }
