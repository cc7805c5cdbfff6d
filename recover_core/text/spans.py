"""Spans: the only interface between finding private words and replacing them.

A maskers returns spans; the masker's caller turns them into markers; a filler
replaces markers. Nothing else passes between those steps. Depends on nothing.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Sequence

# Words are letters with inner apostrophes/hyphens ("don't", "jean-luc"), or digit runs
# ("1999", "3.5"). Everything else (punctuation, spaces) is never masked on its own.
WORD_RE = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*|\d+(?:[.,]\d+)*", re.UNICODE)


# What a filler reads an identifier's marker as (obfuscator.filler_inputs): a plain mask that is
# never merged with its neighbours, since its substitute keeps the identifier's shape.
IDENTIFIER_MASK = "IDENTIFIER"
GENERIC_LABELS = frozenset({"MASK", "WORD", IDENTIFIER_MASK})

# The entity types of spaCy's English pipelines: entityTagger's labels, and its class markers.
ENTITY_LABELS = (
    "PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW",
    "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL",
)


class Labels:
    """The identifier kinds, as a live ordered set: the recognizer registry
    (``recover_core.recognizers``) adds a kind's label when a recognizer of it is added and
    takes it out when the last one goes. Everyone reads it in place (``label in
    IDENTIFIER_LABELS``), so a kind added at run time is an identifier everywhere at once:
    its marker, the filler reading it as a plain mask, its substitute from its operator."""

    def __init__(self, labels: Iterable[str]):
        self._labels: dict[str, None] = dict.fromkeys(labels)
        self.version = 0  # bumped on every change: what a compiled pattern of them is keyed by

    def add(self, label: str) -> None:
        if label not in self._labels:
            self._labels[label] = None
            self.version += 1

    def discard(self, label: str) -> None:
        if self._labels.pop(label, 0) is None:
            self.version += 1

    def __contains__(self, label: object) -> bool:
        return label in self._labels

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._labels))

    def __len__(self) -> int:
        return len(self._labels)

    def __add__(self, other: Iterable[str]) -> tuple[str, ...]:
        return (*self, *other)

    def __radd__(self, other: Iterable[str]) -> tuple[str, ...]:
        return (*other, *self)

    def __repr__(self) -> str:
        return f"Labels({', '.join(self)})"


class LivePattern:
    """A regular expression built from the current labels, compiled again only when they
    change: ``MARKER_RE`` must know a kind added after import ("[TAX_ID]")."""

    def __init__(self, build: Callable[[], str]):
        self._build = build
        self._at: int | None = None
        self._re: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._re is None or self._at != IDENTIFIER_LABELS.version:
            self._at = IDENTIFIER_LABELS.version
            self._re = re.compile(self._build())
        return self._re

    @property
    def pattern(self) -> str:
        return self.compiled.pattern

    def __getattr__(self, name: str):  # finditer, findall, search, sub, fullmatch, ...
        return getattr(self.compiled, name)


# Only the markers this project writes are markers: [MASK], and [PERSON], [NUMBER], ... with
# `--markers class`. Any other bracketed text ("[AEDT]", Fisher's "[laughter]") is the
# corpus's own and passes through verbatim: never masked, never filled.
# Identifiers: the built-in kinds (kinds/, each found by its recognizers and substituted in its
# own shape by its operator instead of by a filler), and any kind a user registers.
IDENTIFIER_LABELS = Labels((
    "CREDIT_CARD", "EMAIL", "PHONE", "IBAN", "IP_ADDRESS", "URL", "HANDLE", "ID_NUMBER", "DATE_OF_BIRTH",
    "ADDRESS", "POSTCODE", "SPOKEN_DIGITS",
))


def marker_labels() -> tuple[str, ...]:
    return ("MASK", "NUMBER", "WORD", *ENTITY_LABELS, *IDENTIFIER_LABELS)


MARKER_RE = LivePattern(lambda: r"\[(" + "|".join(marker_labels()) + r")\]")
# A text's own tag: one lowercase word in square brackets, as transcripts mark what is not
# speech ("[laughter]", "[vocalized-noise]", WSJ's "[door_slam]"), or a short acronym ("[AEDT]").
# Tags are kept as they are. Anything else in square brackets is text like any other, masked as
# any other: an editor's "[Mr Kowalski]", "[John Smith, phone 020 7946 0958]" or a conversion
# "[approx. EUR 138]" was kept verbatim while every bracketed span was a "tag".
TAG_RE = re.compile(r"\[(?:[a-z][a-z0-9_-]*|[A-Z]{2,5})\]")


def bracketed(text: str) -> list[tuple[int, int]]:
    """[start, end) of each tag of the text's own (``TAG_RE``; not our markers)."""
    return [(m.start(), m.end()) for m in TAG_RE.finditer(text) if not MARKER_RE.fullmatch(m.group())]


def outside_brackets(text: str, spans: Iterable[Span]) -> list[Span]:
    """The spans that touch none of the text's own tags ("[laughter]")."""
    tags = bracketed(text)
    return [s for s in spans if not any(s.start < e and b < s.end for b, e in tags)]


@dataclass(frozen=True)
class Span:
    """A half-open character range [start, end) of ``text`` and why it is private."""

    start: int
    end: int
    text: str = field(repr=False)  # the original words: never printed, so a log or traceback keeps them out
    label: str = "MASK"  # entity type (PERSON, GPE, ...) or the technique's generic label
    source: str = ""  # which technique found it

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError(f"bad span [{self.start}, {self.end})")

    def overlaps(self, other: "Span") -> bool:
        return self.start < other.end and other.start < self.end


def words(text: str) -> tuple[Span, ...]:
    """Word tokens of ``text`` with their character offsets (shared within ``words_shared``)."""
    memo = _WORDS.get()
    if memo is None:
        return _words(text)
    got = memo.get(text)
    if got is None:
        got = memo[text] = _words(text)
    return got


def _words(text: str) -> tuple[Span, ...]:
    return tuple(Span(m.start(), m.end(), m.group(), "WORD") for m in WORD_RE.finditer(text))


# A masker's recognizers each split the same text into words, about eleven times a line, a
# twentieth of the default batch path's CPU. Within this block they split each text once. The
# texts are user text, so the memo lives only as long as the block (one batch), never after it.
_WORDS: contextvars.ContextVar[dict[str, tuple[Span, ...]] | None] = contextvars.ContextVar("words", default=None)


@contextlib.contextmanager
def words_shared() -> Iterator[None]:
    """Within the block, ``words`` splits each text once; the memo is gone when it ends."""
    if _WORDS.get() is not None:  # nested: the outer block's memo serves
        yield
        return
    token = _WORDS.set({})
    try:
        yield
    finally:
        _WORDS.reset(token)


def merge(spans: Iterable[Span]) -> list[Span]:
    """Sorted, non-overlapping spans: overlapping ones are united.

    Used to combine techniques: a word found by two of them is masked once, and
    a specific label (PERSON) wins over the generic one (MASK).
    """
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and s.start < out[-1].end:
            last = out[-1]
            if s.end > last.end:
                last = replace(last, end=s.end, text=last.text + s.text[last.end - s.start:])
            if last.label in GENERIC_LABELS and s.label not in GENERIC_LABELS:
                last = replace(last, label=s.label, source=s.source)
            out[-1] = last
            continue
        out.append(s)
    return out


def apply(text: str, spans: Sequence[Span], replacements: Sequence[str]) -> str:
    """Replace each span by its replacement, right to left so offsets stay valid."""
    if len(spans) != len(replacements):
        raise ValueError("one replacement per span")
    pairs = sorted(zip(spans, replacements), key=lambda p: p[0].start, reverse=True)
    for span, rep in pairs:
        text = text[: span.start] + rep + text[span.end :]
    return text


def shift(spans: Sequence[Span], text: str, replacements: Sequence[str]) -> list[Span]:
    """The spans' positions in ``apply(text, spans, replacements)``, carrying the new words."""
    out, delta = [], 0
    for span, rep in sorted(zip(spans, replacements), key=lambda p: p[0].start):
        start = span.start + delta
        out.append(replace(span, start=start, end=start + len(rep), text=rep))
        delta += len(rep) - (span.end - span.start)
    return out
