"""Annotation-free quality of substitutes.

- leak rate: the share of substitutes equal to the word they replace;
- same-type rate: for entity masks, the share of substitutes that NER tags with
  the original's entity type inside the filled sentence;
- what no output may hold: a text's original words and how they sound (``without_originals``).
"""
from __future__ import annotations

from typing import AbstractSet, Iterable, Sequence

from recover_core.filling.base import Candidate, Filled
from recover_core.pseudonyms.names import bare, sound
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


def private_words(originals: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The words of a text's originals, and how each sounds: what no output may hold."""
    words = frozenset(w for o in originals for w in (bare(t) for t in o.split()) if w)
    return words, frozenset(k for k in map(sound, words) if k)


def without_originals(candidates: Iterable[Candidate],
                      private: tuple[tuple[AbstractSet[str], ...], tuple[AbstractSet[str], ...]]) -> tuple[Candidate, ...]:
    """A filler's candidate list with every original word, and every word that sounds like
    one, taken out: the list leaves the engine (CLI jsonl, ``public()``, the app's tables)
    and a filler may well have proposed the original it never saw. ``private``: sets of
    original words and sets of their sounds, read in place."""
    words, sounds = private
    if not any(words):
        return tuple(candidates)

    def held(w: str) -> bool:
        key = sound(w)
        return any(w in ws for ws in words) or bool(key) and any(key in ss for ss in sounds)
    return tuple(c for c in candidates if not any(held(w) for w in (bare(t) for t in c.word.split())))
