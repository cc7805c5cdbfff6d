"""Whole documents: cut into pieces the models take, and a name found once masked wherever
it recurs in the document.

A court judgment or a long transcript turn is far longer than one request to a filler may
be (``env.MAX_CHARS``, ``env.MAX_MASKS``): ``pieces`` cuts it at paragraph breaks, then at
sentence ends, into pieces of at most ``PIECE_CHARS`` characters, each with its offset in
the document, so spans found in a piece map back exactly.

The masker reads each piece alone, so a surname met alone ("Mr Lindqvist" three paragraphs
after "Mr Arvid Lindqvist"), a possessive ("Lindqvist's"), or a place named again in a piece
where the tagger missed it would stay. ``recurrences`` adds, for every span the masker found
anywhere in the document, each other mention of it: the whole span's text, and for a person
each of its name words, with the initials written right before it ("M. Wojtunik").
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

from recover_core.data import lexicons
from recover_core.data.lexicons import everyday
from recover_core.text.shapes import MONTHS
from recover_core.masking.name_cues import TITLES
from recover_core.masking.public_bodies import (INSTITUTION_WORDS, as_places, is_public_body, respondent_states,
                                                without_public_bodies, without_states)
from recover_core.masking.public_text import without_public_text
from recover_core.masking.mask import Masked
from recover_core.text.spans import Span, merge

# Short enough that a dense paragraph's masks stay well under env.MAX_MASKS, long enough that
# the fillers read whole sentences.
PIECE_CHARS = 800
_SENTENCE_END = re.compile(r"(?<=[.!?;:])[\"'’”)\]]*\s+")
# Labels whose other mentions are masked too. A plain masked word (MASK, NUMBER: vocabThres,
# allowList) is masked wherever it stands already; its recurrences need no search.
_REPEATED_KINDS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "NATIONALITY", "HEALTH", "OCCUPATION"})
# Initials of any alphabet's capitals, run together or hyphenated: "M. ", "C.A. ", "C.-H. ", "İ. ".
_UPPER = "A-ZÀ-ÖØ-ÞĀ-ſ"
_INITIALS = rf"(?:[{_UPPER}]\.(?:-|\s)?){{1,3}}"
# A title right before a name belongs to its mention ("Mr. Mustafa Dildar", "Dr Z. Necatigil"): TAB's
# experts mark it with the name, and a scorer reads "Mr." as a word. The substitute keeps it
# (pseudonyms.roles: titles stay), so it still gives the person's gender.
# A particle a tagger leaves out between the title and the name goes with them ("Mr St John Mitchard").
_TITLE_BEFORE = re.compile(r"(?<![\w.])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s"
                           r"(?:(?:St|Ste|Van|Von|De|Di|Du|Da|Le|La|El|Al|Ben|Bin|Abu|Mac|Mc)\.?\s)?$")
SOURCE = "document"


def pieces(text: str, limit: int = PIECE_CHARS) -> list[tuple[int, str]]:
    """(offset, piece) for every non-blank piece of ``text``: paragraphs, cut at sentence ends
    (and, for a sentence longer than ``limit``, at the last space before it) into pieces of at
    most ``limit`` characters. Each piece is stripped; its offset is where it starts in ``text``."""
    out: list[tuple[int, str]] = []
    for para in re.finditer(r"[^\n]+", text):
        start, body = para.start(), para.group()
        cuts = [0, *(m.end() for m in _SENTENCE_END.finditer(body)), len(body)]
        at = 0  # the start of the piece being packed, in ``body``
        for prev, nxt in zip(cuts, cuts[1:]):
            if nxt - at > limit and prev > at:  # this sentence would overflow the piece: close it
                _add(out, start + at, body[at:prev])
                at = prev
            while nxt - at > limit:  # one sentence longer than a piece: cut at a space
                space = body.rfind(" ", at + limit // 2, at + limit)
                cut = space if space > at else at + limit
                _add(out, start + at, body[at:cut])
                at = cut
        _add(out, start + at, body[at:])
    return out


def _add(out: list[tuple[int, str]], offset: int, piece: str) -> None:
    lead = len(piece) - len(piece.lstrip())
    if piece.strip():
        out.append((offset + lead, piece.strip()))


def recurrences(parts: Sequence[tuple[int, str]], found: Sequence[list[Span]]) -> list[list[Span]]:
    """Each piece's spans with every other mention in the document of what was found in any
    piece added (same label), where no span of the piece already covers it."""
    # The respondent State stays wherever the document names it (public_bodies.respondent_states).
    states = respondent_states([piece for _, piece in parts])
    found = [without_states(list(spans), states, piece) for (_, piece), spans in zip(parts, found)]
    by_word: dict[str, str] = {}  # a mention -> its label
    for (_, piece), spans in zip(parts, found):
        for label, whole in _mentions(piece, spans):
            if label not in _REPEATED_KINDS:
                continue
            if label == "PERSON":
                for w in _name_words(whole):
                    by_word.setdefault(w, "PERSON")
                    # in capitals in a heading or a case's title ("CASE OF KOWALCZYK v. POLAND")
                    by_word.setdefault(w.upper(), "PERSON")
            elif label == "OCCUPATION" and " " not in whole:
                continue  # "a lawyer" said of the applicant is no reason to mask every lawyer, counsel included
            elif len(whole) > 2 and not is_public_body(whole):  # "Uppsala District Court", never "Court" alone
                by_word.setdefault(whole, label)
                area = lexicons.admin_of(whole) if label in ("GPE", "LOC") else None
                if area:  # "the District of Kyrenia", then "Kyrenia" alone
                    by_word.setdefault(area[1], label)
    if not by_word:
        return [list(s) for s in found]
    people = {w for w, label in by_word.items() if label == "PERSON"}
    found = [as_persons(list(spans), people) for spans in found]
    # One pass over each piece: the longest mentions first, so "Arvid Lindqvist" is one span.
    # a hyphen matches either hyphen: "non-commissioned" as typed, "non‐commissioned" where the text had U+2011
    alternatives = "|".join(re.sub(r"\\-|\u2010", "[-\u2010]", re.escape(w)) for w in sorted(by_word, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w’'])(?:{_INITIALS})?(?:{alternatives})(?:['’]s)?(?![\w])")
    out = []
    for (_, piece), spans in zip(parts, found):
        extra = []
        for m in pattern.finditer(piece):
            a, b = m.start(), m.end()
            if any(s.start < b and a < s.end for s in spans):
                continue  # already masked (where it was found, or overlapping a span of the piece)
            core = re.sub(r"['’]s$", "", re.sub(rf"^{_INITIALS}", "", m.group()))
            label = by_word.get(core, by_word.get(core.replace("\u2010", "-"), by_word.get(core.replace("-", "\u2010"))))
            if label is not None:
                extra.append(Span(a, b, m.group(), label, SOURCE))
        # A place found in one piece is no place inside a public body's or a law's name elsewhere
        # ("arrived in the United Kingdom" masks neither "the United Kingdom Government" nor "United
        # Kingdom law"), nor in a citation (public_text.py).
        extra = without_public_text(piece, as_places(without_public_bodies(extra, piece), piece))
        out.append(with_initials(piece, without_states(merge([*spans, *extra]), states, piece)))
    return out


# A name word written with an apostrophe after a one- or two-letter prefix ("O’Brien",
# "D'Angelo", "N’Diaye"): taggers split it at the curly apostrophe and leave it out.
_APOSTROPHE_NAME = re.compile(r" ((?:[A-Z][a-z]?)['’][A-Z][\w-]+)")


_MONTH_NAMES = frozenset(MONTHS)


def _is_date_month(text: str, s: Span) -> bool:
    """A month name written as part of a date ("17 June 1999", "June 17", "June 1999"), which a
    tagger may read as a person ("released on 17 Shelly 1999")."""
    if s.text.lower() not in _MONTH_NAMES:
        return False
    return bool(re.search(r"\d(?:st|nd|rd|th)?(?: of)? $", text[max(0, s.start - 8):s.start]) or
                re.match(r",? \d", text[s.end:s.end + 3]))


def completed_names(text: str, spans: list[Span]) -> list[Span]:
    """Person spans widened to the initials right before them (``with_initials``) and to an
    apostrophe surname right after them ("Colin Joseph O’Brien"); a month in a date is never a
    person; a word the text names as a person elsewhere is a person here too ("Grace Okafor
    ... Grace paid": spaCy may read the second as an organisation)."""
    spans = [s for s in spans if not (s.label == "PERSON" and _is_date_month(text, s))]
    spans = _named_like_people(text, spans)
    spans = as_persons(spans, {w for s in spans if s.label == "PERSON" for w in _name_words(s.text, common=True)})
    out: list[Span] = []
    for s in with_initials(text, spans):
        if s.label == "PERSON":
            m = _APOSTROPHE_NAME.match(text, s.end)
            if m and not any(o.start < m.end() and s.end < o.end for o in spans if o is not s):
                s = replace(s, end=m.end(), text=text[s.start:m.end()])
        out.append(s)
    return out


# Words that make a name an organisation's even where it starts with a first name ("Grace
# Hospital", "Morgan Bank"): what companies and bodies call themselves.
_ORG_WORDS = INSTITUTION_WORDS | frozenset("""inc ltd llc plc corp corporation company co group bank hospital
    university college school academy church club party press news times airlines airways motors foods
    holdings foundation trust fund association society union centre center clinic hotel
    restaurant cafe store stores shop market media studios records team fc united city gmbh ag ab sa spa s.a bv nv oy
    asa sarl""".split()) | lexicons.FIRM_WORDS


def _named_like_people(text: str, spans: list[Span]) -> list[Span]:
    """An ORG mention of two or three capitalised words that starts with a first name and holds
    no organisation word ("Grace Okafor, 47, flew", which spaCy reads as an organisation) is a
    person: its substitute must be a person's name, the same as the name's other mentions."""
    out, i = list(spans), 0
    while i < len(out):
        j = i
        while j + 1 < len(out) and out[j + 1].label == out[i].label and not text[out[j].end:out[j + 1].start].strip():
            j += 1
        group = out[i:j + 1]
        if out[i].label == "ORG":
            words = text[group[0].start:group[-1].end].split()
            if 2 <= len(words) <= 3 and all(w[:1].isupper() for w in words) and \
                    words[0].lower() in lexicons.first_names() and not any(w.lower().strip(".,") in _ORG_WORDS for w in words):
                out[i:j + 1] = [replace(s, label="PERSON") for s in group]
        i = j + 1
    return out


def as_persons(spans: list[Span], person_words: set[str]) -> list[Span]:
    """Spans of another entity label made of nothing but a person's name words, relabelled
    PERSON: one person, one kind of substitute ("Solomon Inc." for a second "Grace" breaks it)."""
    if not person_words:
        return spans
    def named(s: Span) -> bool:
        words = _name_words(s.text, common=True)
        return bool(words) and len(words) == len(s.text.split()) and all(w in person_words for w in words)
    return [replace(s, label="PERSON") if s.label in _REPEATED_KINDS and s.label != "PERSON" and named(s) else s
            for s in spans]


def with_initials(piece: str, spans: list[Span]) -> list[Span]:
    """Each person span widened to the initials written right before it ("M. Wojtunik"),
    which a tagger leaves out and which, with the surname masked, would still point to the person."""
    out: list[Span] = []
    for s in spans:
        if s.label == "PERSON":
            m = re.search(rf"(?<![\w.]){_INITIALS}$", piece[: s.start])
            if m and m.end() > m.start() and out and out[-1].label == "PERSON" and out[-1].end > m.start() \
                    and out[-1].start >= m.start() - 8:
                # the tagger took the initial as a name of its own ("Dr [Z]. [Necatigil]"): one name
                prev = out.pop()
                s = replace(s, start=prev.start, text=piece[prev.start:s.end])
            elif m and m.end() > m.start() and not (out and out[-1].end > m.start()):
                s = replace(s, start=m.start(), text=piece[m.start():s.end])
            t = _TITLE_BEFORE.search(piece, max(0, s.start - 12), s.start)
            if t and not (out and out[-1].end > t.start()):
                s = replace(s, start=t.start(), text=piece[t.start():s.end])
        out.append(s)
    return out


def _mentions(piece: str, spans: Sequence[Span]) -> list[tuple[str, str]]:
    """(label, text) of each whole mention: a tagger gives one span per word, and words of one
    label with only spaces between them are one name."""
    out: list[tuple[str, int, int]] = []
    for s in spans:
        if out and out[-1][0] == s.label and not piece[out[-1][2]:s.start].strip():
            out[-1] = (s.label, out[-1][1], s.end)
        else:
            out.append((s.label, s.start, s.end))
    return [(label, piece[a:b]) for label, a, b in out]


def _name_words(name: str, common: bool = False) -> list[str]:
    """The words of a person's name that identify on their own: not titles, initials or
    everyday words ("Mr", "M.", "Rose" stays, "Mark" stays: both are names, "Will" is not)."""
    out = []
    for w in re.split(r"[\s]+", name):
        w = re.sub(r"['’]s$", "", w.strip(".,;:()"))
        low = w.lower()
        if len(w) < 3 or not w[:1].isupper() or low in TITLES or (not common and everyday(low)):
            continue
        out.append(w)
    return out


def joined(doc: str, parts: Sequence[tuple[int, str]], texts: Sequence[str]) -> tuple[str, list[int]]:
    """``doc`` with each piece (offset, text) replaced by its new text, and where each new text
    starts: what lies between pieces (line breaks, indentation) stays as it was."""
    out: list[str] = []
    starts, at, length = [], 0, 0
    for (off, piece), new in zip(parts, texts):
        out.append(doc[at:off])
        length += off - at
        starts.append(length)
        out.append(new)
        length += len(new)
        at = off + len(piece)
    out.append(doc[at:])
    return "".join(out), starts


def joined_masks(doc: str, parts: Sequence[tuple[int, str]], masked: Sequence[Masked]) -> Masked:
    """One document's masked pieces as one Masked, spans in the document's offsets and markers
    in the masked document's."""
    text, starts = joined(doc, parts, [m.masked for m in masked])
    spans = [replace(s, start=s.start + off, end=s.end + off) for m, (off, _) in zip(masked, parts) for s in m.spans]
    markers = [replace(s, start=s.start + at, end=s.end + at) for m, at in zip(masked, starts) for s in m.markers]
    return Masked(doc, text, spans, markers, sum(m.n_words for m in masked))
