"""The filling contract: masked text plus marker spans in, filled text plus candidates out.

A filler never sees the original words; it gets the keep-list (if any) as data.
"""
from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Sequence

from recover_core import validation
from recover_core.errors import RecoverError
from recover_core.spans import GENERIC_LABELS, Span

Method = Literal["top1", "topk"]
METHODS = ("top1", "topk")
DEFAULT_K = 10
MARKER_RE = re.compile(r"\[([A-Z][A-Z_]*)\]")


@dataclass(frozen=True)
class Candidate:
    word: str
    score: float  # the filler's probability for this word among its candidates


@dataclass
class Fill:
    start: int  # in the filled text
    end: int
    label: str
    word: str
    candidates: list[Candidate]
    fallback: bool = False  # no candidate passed the rules; the best one was used anyway


@dataclass
class Filled:
    text: str
    fills: list[Fill] = field(default_factory=list)
    fallback: str | None = None  # the filler that did the work instead (instruct -> "infill")


@dataclass
class MaskInput:
    """What a filler reads: text with markers, and where they are."""

    text: str
    markers: list[Span]

    @classmethod
    def parse(cls, text: str) -> "MaskInput":
        """Find [MASK] / [PERSON] / ... markers in already-masked text (CLI and UI input)."""
        text = validation.check_text(text, allow_markers=True, what="masked text")
        markers = [Span(m.start(), m.end(), m.group(), m.group(1)) for m in MARKER_RE.finditer(text)]
        if not markers:
            raise RecoverError("Nothing to fill: the text has no [MASK] (or [PERSON], ...) marker.")
        return cls(text, markers)


def merge_consecutive(item: MaskInput) -> MaskInput:
    """Markers separated only by spaces become one (vats2024 §4.2.4): 'Maria [MASK] [MASK]'
    is one masked name, and one substitute reads better than two."""
    merged: list[Span] = []
    for m in item.markers:
        if merged and not item.text[merged[-1].end : m.start].strip():
            last = merged[-1]
            label = last.label if last.label not in GENERIC_LABELS else m.label
            merged[-1] = Span(last.start, m.end, item.text[last.start : m.end], label)
        else:
            merged.append(m)
    return MaskInput(item.text, merged)


def choose(cands: Sequence[Candidate], method: Method, k: int, rng: random.Random,
           keep: frozenset[str] | None) -> tuple[int, bool]:
    """Index of the chosen candidate, and whether the keep-list forced a fallback.

    Top-1 takes the best. Top-K draws from the best K in proportion to their
    scores, and redraws while the word is on the keep-list (vats2024 §3.2)."""
    if not cands:
        raise ValueError("no candidates")
    if method == "top1":
        return 0, False
    pool = list(range(min(k, len(cands))))
    while pool:
        weights = [max(cands[i].score, 1e-12) for i in pool]
        i = rng.choices(pool, weights=weights)[0]
        if keep is None or cands[i].word.lower() not in keep:
            return i, False
        pool.remove(i)
    return 0, True


def rng_for(seed: int, item: int, mask: int) -> random.Random:
    # Seeded per (item, mask), so a result does not depend on batch size or order.
    return random.Random(f"{seed}:{item}:{mask}")


def surface(word: str, label: str, sentence_start: bool) -> str:
    """Case the substitute like the word it replaces: names capitalised, sentences too."""
    if label not in GENERIC_LABELS and label != "NUMBER" and word[:1].islower():
        word = word[:1].upper() + word[1:]
    if sentence_start:
        word = word[:1].upper() + word[1:]
    return word


def at_sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?\"“"


class Filler(ABC):
    """Fills every marker of a batch of sentences."""

    name: ClassVar[str]

    @abstractmethod
    def fill(self, items: Sequence[MaskInput], *, method: Method = "top1", k: int = DEFAULT_K,
             seed: int = 0, keep: frozenset[str] | None = None, first_id: int = 0,
             type_check=None) -> list[Filled]:
        """``first_id`` numbers items for seeding, so batches of a stream stay reproducible.
        ``type_check`` (candidates.TypeCheck) keeps entity substitutes of the masked type."""


def check_method(method: str) -> Method:
    return validation.check_choice("filling method", method, list(METHODS))  # type: ignore[return-value]
