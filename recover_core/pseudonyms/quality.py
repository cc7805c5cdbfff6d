"""Annotation-free quality of substitutes.

- leak rate: the share of substitutes equal to the word they replace;
- same-type rate: for entity masks, the share of substitutes that NER tags with
  the original's entity type inside the filled sentence.
"""
from __future__ import annotations

from typing import Sequence

from recover_core.filling.base import Filled
from recover_core.text.spans import GENERIC_LABELS, IDENTIFIER_LABELS


def leaks(filled: Filled, originals: Sequence[str]) -> int:
    """How many fills equal their original (originals aligned with ``filled.fills``)."""
    return sum(f.word.lower() == o.lower() for f, o in zip(filled.fills, originals))


def same_type(filled: Sequence[Filled], nlp, by_label: dict | None = None) -> tuple[int, int]:
    """(entity fills tagged with their label, entity fills) over a batch.

    ``by_label``, if given, collects [hits, total] per label."""
    hit = total = 0
    for item, doc in zip(filled, nlp.pipe([f.text for f in filled], batch_size=64)):
        ents = [(e.start_char, e.end_char, e.label_) for e in doc.ents]
        for f in item.fills:
            if f.label in GENERIC_LABELS or f.label == "NUMBER":
                continue
            ok = any(s < f.end and f.start < e and lab == f.label for s, e, lab in ents)
            total += 1
            hit += ok
            if by_label is not None:
                counts = by_label.setdefault(f.label, [0, 0])
                counts[0] += ok
                counts[1] += 1
    return hit, total


def originals_per_fill(original: str, spans, filled: Filled) -> list[str]:
    """The original text under each fill, after consecutive masks were merged."""
    return [original[a:b] for a, b in original_spans(original, spans, filled)]


def original_spans(original: str, spans, filled: Filled) -> list[tuple[int, int]]:
    """[start, end) in ``original`` of the words under each fill (merged masks: one span)."""
    out, j = [], 0
    for _ in filled.fills:
        # A merged fill covers consecutive spans; gather them until the next fill's label run.
        group = [spans[j]]
        j += 1
        while j < len(spans) and not original[group[-1].end : spans[j].start].strip() and \
                group[-1].label not in IDENTIFIER_LABELS and spans[j].label not in IDENTIFIER_LABELS:
            group.append(spans[j])
            j += 1
        out.append((group[0].start, group[-1].end))
    return out
