"""Identifiers found in a text, and the pass that adds them to any technique.

``find(text)`` runs every recognizer of the registry (kinds/registry.py: the built-in kinds,
and any a user adds through ``recover_core.recognizers``) whose cheap prefilter the line passes (a digit, an "@",
a dot, a digit word) and keeps, of overlapping items, the strongest, then the longest.
``WithIdentifiers`` wraps a masking technique: its spans and the identifiers' are merged, an
identifier winning where they overlap (the whole card number is one CREDIT_CARD span, not four
NUMBER words). The engine wraps the technique only under ``rules="ours"``; vats2024's
procedure (``rules="paper"``, the grid) masks what the paper masked.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

from recover_core.data.lexicons import FUNCTION_WORDS
from recover_core.masking.base import Masker
from recover_core.masking.document import completed_names, recurrences
from recover_core.masking.public_bodies import as_places, whole_bodies, without_public_bodies
from recover_core.masking.public_text import without_public_text
from recover_core.masking.misread import (read_as_firms, read_as_places, read_as_titled_persons, split_joined_bodies,
                                          with_admin_areas, with_possessive_names, without_common_words,
                                          without_months)
from recover_core.kinds.base import Recognizer
from recover_core.kinds.registry import REGISTRY
from recover_core.kinds.ages import NUMBER_WORD_RE
from recover_core.kinds.spoken_digits import DIGIT_WORD_RE
from recover_core.text.spans import ENTITY_LABELS, IDENTIFIER_LABELS, Span

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
    if "digit" in f or NUMBER_WORD_RE.search(text):
        f.add("number")
    return f


def find(text: str, recognizers: tuple[Recognizer, ...] | None = None, protect: str = "direct") -> list[Span]:
    """The identifiers in ``text`` under a protection profile: sorted, not overlapping, each
    one span over the whole item."""
    if recognizers is None:
        recognizers = REGISTRY.running(protect)
    if len(text) > MAX_PIECE:
        out, at = [], 0
        while at < len(text):
            cut = min(len(text), at + MAX_PIECE)
            if cut < len(text):
                space = text.rfind(" ", at + MAX_PIECE // 2, cut)
                cut = space if space > at else cut
            out += [replace(s, start=s.start + at, end=s.end + at) for s in find(text[at:cut], recognizers, protect)]
            at = cut
        return out
    feats = _features(text)
    # A recognizer that needs nothing (a user's Pattern) runs on every line.
    found = [(r.strength, s) for r in recognizers if r.needs is None or r.needs in feats for s in r.find(text)]
    # A validated kind before one found by context alone, then the longest; among equals, the
    # registry's order (sorted is stable).
    kept: list[Span] = []
    for _, s in sorted(found, key=lambda x: (-x[0], -(x[1].end - x[1].start), x[1].start)):
        if not any(s.overlaps(k) for k in kept):
            kept.append(s)
    return sorted(kept, key=lambda s: s.start)


def merge_with(identifiers: list[Span], spans: list[Span]) -> list[Span]:
    """A technique's spans merged with identifier spans: an identifier wins where they meet.
    A technique's span reaching past an identifier inside a word widens it, so no letter is
    left out; its whole words beyond the identifier stay a span of their own ("IBAN" of an
    ORG "IBAN DE89"), so the identifier's substitute keeps the identifier's shape."""
    if not identifiers:
        return spans
    ids = list(identifiers)
    rest = []
    for s in spans:
        hit = sorted((i for i, x in enumerate(ids) if s.overlaps(x)), key=lambda i: ids[i].start)
        if not hit:
            rest.append(s)
            continue
        first, last = ids[hit[0]], ids[hit[-1]]
        if s.start < first.start:
            if _boundary(s.text[first.start - s.start - 1]):
                rest.append(_part(s, s.start, first.start))
            else:
                ids[hit[0]] = first = replace(first, start=s.start, text=s.text[: first.start - s.start] + first.text)
        if s.end > last.end:
            if _boundary(s.text[last.end - s.start]):
                rest.append(_part(s, last.end, s.end))
            else:
                ids[hit[-1]] = replace(last, end=s.end, text=last.text + s.text[last.end - s.start:])
        rest += [_part(s, ids[h].end, ids[k].start) for h, k in zip(hit, hit[1:])]
    return sorted([r for r in rest if r is not None] + ids, key=lambda s: s.start)


_JOINING = frozenset("for of and the in on to at by from with".split())
_JOINING_EDGES = re.compile(rf"^(?:(?:{'|'.join(sorted(_JOINING))}) )+|(?: (?:{'|'.join(sorted(_JOINING))}))+$")


def _boundary(c: str) -> bool:
    return c.isspace() or c in ",;:()"


def _part(s: Span, a: int, b: int) -> Span | None:
    """The words of span ``s`` in [a, b), without the spaces and punctuation at their edges;
    None where no letter or digit is left."""
    part = s.text[a - s.start: b - s.start]
    core = part.strip(" \t\n,;:()")
    # "Leeds City Council for" of "... Council for GBP 5,000": a joining word left at the edge
    # belongs to the sentence, and a substitute would take it away ("sued Sc Council GBP 6,253")
    core = _JOINING_EDGES.sub("", core)
    # and one left alone between two identifiers is no name ("discopathy and periarthritis", read as an
    # organisation, left "and" to become "keith inc.")
    if not any(c.isalnum() for c in core) or core in _JOINING:
        return None
    start = a + part.index(core)
    if core.count("(") > core.count(")") and part[part.index(core) + len(core):].startswith(")"):
        core += ")"  # a gloss in brackets stays whole: "District Court (Sąd Rejonowy)" left ")" after its substitute
    return replace(s, start=start, end=start + len(core), text=core)


# Words that name a kind of identifier: the tagger reads some as an organisation or a person
# ("IBAN DE89 …", "My SSN is …", "IP 192.168.1.23"), and a substitute for them ("Lincoln is
# 051-46-1502") hides nothing and garbles the sentence. The short ones only in capitals, as
# "Pin" or "Tin" may be a name.
KIND_WORDS = frozenset("""iban ssn dob d.o.b nhs nino vat cvv cvc bic swift mrn itin ein imei url email e-mail
    passport tel fax card expiry""".split())
KIND_ACRONYMS = frozenset("IP ID PIN ZIP SIN TIN DL NI MAC VIN GPS BTC".split())


# A card's network, right before its number ("my Amex is 3782 ..."): the card's substitute keeps
# the network's prefix, so the word hides nothing, and "my Slot is 3701 ..." read garbled.
# Only before digits: "she works at Visa" names an employer.
CARD_NETWORKS = frozenset("visa mastercard amex maestro discover diners jcb unionpay".split())
_DIGITS_SOON = re.compile(r"[^\n\d]{0,24}\d")


def names_a_kind(span: Span, text: str = "") -> bool:
    """Whether an entity span is only the name of an identifier's kind (with "my", "the"), or
    a card's network right before a number in ``text``."""
    if span.label not in ENTITY_LABELS:
        return False
    ws = [w.strip(".,:;#") for w in span.text.split()]
    kinds = [w for w in ws if w.lower() in KIND_WORDS or w in KIND_ACRONYMS]
    if not kinds and text and _DIGITS_SOON.match(text, span.end):
        kinds = [w for w in ws if w.lower() in CARD_NETWORKS]
    return bool(kinds) and all(w in kinds or w.lower() in FUNCTION_WORDS for w in ws)


_CAPITALS = re.compile(r"\b[A-Z]{3,}\b")
# A part of a building numbered after it ("to Ward 7", "in Room 214", "at Gate B12"): the tagger
# reads "Ward 7" as a person or an organisation, and "admitted to Mcgowan Group" hides nothing
# and garbles the note. After a title ("Mr Ward 3") it stays a name.
_NUMBERED_PLACES = frozenset("ward room bed bay floor level unit block gate platform building suite wing".split())
_NUMBERED_PLACE = re.compile(r"(?:^|(?<=\s))(?:to|in|on|at|the|of|from|into|onto|a) ((\w+) ([A-Z]?\d{1,4}[A-Z]?))\b",
                             re.I)


def without_numbered_places(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less the entity spans that only hold a numbered part of a building."""
    places = [(m.start(1), m.end(1)) for m in _NUMBERED_PLACE.finditer(text) if m.group(2).lower() in _NUMBERED_PLACES
              and m.group(2)[:1].isupper()]
    if not places:
        return spans
    return [s for s in spans if not (s.label in ENTITY_LABELS and any(a <= s.start and s.end <= b for a, b in places))]


def is_identifier(span: Span) -> bool:
    return span.label in IDENTIFIER_LABELS


class WithIdentifiers(Masker):
    """A technique as our rules read it: its spans less the public bodies, persons completed,
    and the identifier recognizers of the profile on top (``identifiers=False``: none, as the
    grid's typed cells ask). Its name and keep-list are the technique's."""

    def __init__(self, inner: Masker, protect: str = "direct", identifiers: bool = True):
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.keep = inner.keep
        self.protect = protect
        self.identifiers = identifiers

    def find(self, text: str) -> list[Span]:
        return self.find_many([text])[0]

    def find_many(self, texts: list[str]) -> list[list[Span]]:
        # The technique's spans less the public bodies ("the Government", "the Court of
        # Cassation": public_bodies.py), persons completed (an initial before, "O’Brien" after),
        # then the identifiers of the profile on top.
        # An organisation tied to a place ("the Beyoğlu Court of First Instance") is masked as
        # one whole name: half of it still points to the place, and TAB counts it direct.
        out = []
        for t, spans in zip(texts, self.inner.find_many(texts)):
            spans = without_numbered_places(t, [s for s in spans if not names_a_kind(s, t)])
            spans = read_as_places(t, without_months(t, read_as_titled_persons(t, without_common_words(t, spans))))
            spans = with_admin_areas(t, with_possessive_names(t, read_as_firms(t, spans)))
            spans = as_places(whole_bodies(completed_names(t, without_public_bodies(spans, t)), t), t)
            spans = split_joined_bodies(t, spans)  # after whole_bodies, which widens each over "and"
            # a name found once in the text is masked wherever else it stands in it in capitals,
            # as in a document ("CASE OF KOWALCZYK v. POLAND: Mr Jan Kowalczyk ..."); only on
            # texts with a word in capitals, as the search costs a tenth of masking a line
            if _CAPITALS.search(t):
                spans = recurrences([(0, t)], [spans])[0]
            spans = merge_with(find(t, protect=self.protect), spans) if self.identifiers else spans
            # what cites the law or heads a section stays, whoever found it (public_text.py)
            out.append(without_public_text(t, spans))
        return out

    def __getattr__(self, attr: str):
        # The technique's own attributes (entityTagger's ``nlp``, ``path``) stay reachable.
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)


def passed_identifiers(original: str, spans: Sequence[Span]) -> int:
    """How many identifiers in ``original`` the masked ``spans`` do not wholly cover."""
    ordered = sorted(spans, key=lambda s: s.start)
    n = 0
    for ident in find(original):
        at = ident.start  # walk the masked spans over the identifier: covered if they reach its end
        for s in ordered:
            if s.start <= at < s.end:
                at = s.end
        n += at < ident.end
    return n
