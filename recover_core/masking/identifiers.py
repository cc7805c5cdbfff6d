"""The registry of identifier recognizers, and the pass that adds them to any technique.

``find(text)`` runs every recognizer (``recognizers.py``) whose cheap prefilter the line
passes (a digit, an "@", a dot, a digit word) and keeps, of overlapping items, the longest.
``WithIdentifiers`` wraps a masking technique: its spans and the identifiers' are merged, an
identifier winning where they overlap (the whole card number is one CREDIT_CARD span, not four
NUMBER words). The engine wraps the technique only under ``rules="ours"``; vats2024's
procedure (``rules="paper"``, the grid) masks what the paper masked.
"""
from __future__ import annotations

import re
from dataclasses import replace

from recover_core.masking.base import Masker
from recover_core.masking.recognizers import (DIGIT_WORD_RE, Address, CreditCard, DateOfBirth, Email, Handle, Iban,
                                              IdNumber, IpAddress, NumberWithContext, Phone, Postcode, Recognizer,
                                              SpokenDigits, Ssn, Url)
from recover_core.spans import IDENTIFIER_LABELS, Span

# Order matters only for ties: of two items of the same extent, the earlier recognizer's label.
RECOGNIZERS: tuple[Recognizer, ...] = (
    Email(), Url(), Handle(), CreditCard(), Iban(), IpAddress(), Ssn(), Phone(), DateOfBirth(), Address(),
    Postcode(), IdNumber(), NumberWithContext(), SpokenDigits(),
)
# Longer lines are cut into pieces this long (at a space where there is one) so that no
# pattern sees more than this at once.
MAX_PIECE = 4000
_DOT = re.compile(r"\w\.\w")


def _features(text: str) -> set[str]:
    f = set()
    if any(c.isdigit() for c in text):
        f.add("digit")
    if "@" in text:
        f.add("@")
    if "://" in text or _DOT.search(text):
        f.add("dot")
    if DIGIT_WORD_RE.search(text):
        f.add("digitword")
    return f


def find(text: str, recognizers: tuple[Recognizer, ...] = RECOGNIZERS) -> list[Span]:
    """The identifiers in ``text``: sorted, not overlapping, each one span over the whole item."""
    if len(text) > MAX_PIECE:
        out, at = [], 0
        while at < len(text):
            cut = min(len(text), at + MAX_PIECE)
            if cut < len(text):
                space = text.rfind(" ", at + MAX_PIECE // 2, cut)
                cut = space if space > at else cut
            out += [replace(s, start=s.start + at, end=s.end + at) for s in find(text[at:cut], recognizers)]
            at = cut
        return out
    feats = _features(text)
    if not feats:
        return []
    found = [(r.strength, s) for r in recognizers if r.needs in feats for s in r.find(text)]
    # A validated kind before one found by context alone, then the longest; among equals, the
    # registry's order (sorted is stable).
    kept: list[Span] = []
    for _, s in sorted(found, key=lambda x: (-x[0], -(x[1].end - x[1].start), x[1].start)):
        if not any(s.overlaps(k) for k in kept):
            kept.append(s)
    return sorted(kept, key=lambda s: s.start)


def merge_with(identifiers: list[Span], spans: list[Span]) -> list[Span]:
    """A technique's spans merged with identifier spans: an identifier wins where they meet.
    A technique's span reaching past an identifier widens it, so no letter is left out."""
    if not identifiers:
        return spans
    ids = list(identifiers)
    rest = []
    for s in spans:
        hit = [i for i, x in enumerate(ids) if s.overlaps(x)]
        if not hit:
            rest.append(s)
            continue
        for i in hit:
            x = ids[i]
            if s.start < x.start or s.end > x.end:
                a, b = min(s.start, x.start), max(s.end, x.end)
                text = (s.text[: x.start - s.start] if s.start < x.start else "") + x.text + \
                       (s.text[x.end - s.start:] if s.end > x.end else "")
                ids[i] = replace(x, start=a, end=b, text=text)
    return sorted(rest + ids, key=lambda s: s.start)


def is_identifier(span: Span) -> bool:
    return span.label in IDENTIFIER_LABELS


class WithIdentifiers(Masker):
    """A technique plus the identifier recognizers; its name and keep-list are the technique's."""

    def __init__(self, inner: Masker):
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.keep = inner.keep

    def find(self, text: str) -> list[Span]:
        return merge_with(find(text), self.inner.find(text))

    def find_many(self, texts: list[str]) -> list[list[Span]]:
        return [merge_with(find(t), spans) for t, spans in zip(texts, self.inner.find_many(texts))]

    def __getattr__(self, attr: str):
        # The technique's own attributes (entityTagger's ``nlp``, ``path``) stay reachable.
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)
