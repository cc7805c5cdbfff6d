"""Which words may stand in for a masked word, by the mask's label.

Shared by every filler so that MLM and causal fillers obey the same rules:
whole words only, no function words or fragments, digits only for numbers,
and, as preiss2023 does, a substitute for a name must be a name.
"""
from __future__ import annotations

import functools
import re

from typing import Callable, Sequence

from recover_core.models import bundles
from recover_core.runtime.word_caches import word_cache
from recover_core.data import lexicons
from recover_core.filling.base import Candidate, surface
from recover_core.text.shapes import MONTHS, WEEKDAYS

# Given filled sentences with the substitute's [start, end) and the label it must carry (one
# for all, or one per sentence), says which ones a tagger reads as that label. Built from an
# NER pipeline by the caller.
TypeCheck = Callable[[Sequence[tuple[str, int, int]], "str | Sequence[str]"], list[bool]]

ALPHA_RE = re.compile(r"^[A-Za-z]+(?:['\-][A-Za-z]+)*$")
DIGITS_RE = re.compile(r"^\d+$")
PLACE_LABELS = {"GPE", "LOC"}
# `acceptable` already holds these to name, place and nationality lists: a tagger pass per
# candidate would add little and cost most of the fill's time (issue 11's profile: 80%).
LIST_CHECKED = {"PERSON", "NORP"} | PLACE_LABELS
# No list holds organisations or facilities, so the tagger decides; where it reads none of
# the candidates as the type, a stand-in is drawn (`fallback_word`): keeping the filler's
# words would put "Meeting" or "Final" where "Qantas" was.
DRAWN_WHEN_NONE = {"ORG", "FAC"}
# Words a masked language model offers after "the" that name no body: a legal form alone ("the
# Dev-Yol (Revolutionary Way)" became "the Inc.") or a prefix ("ex", "un").
_NO_BODY = frozenset("inc ltd llc plc co corp gmbh ag sa ab bv nv ex un non pre anti pro".split())
# Months and days: the census lists several as first names, but a substitute reads as a date.
CALENDAR = frozenset(MONTHS) | frozenset(WEEKDAYS)
# The tagger reads a substitute's type from the words around it; NER_CONTEXT words each side
# are plenty (spaCy's features span 4 tokens), and shorter texts tag faster.
NER_CONTEXT = 8
_CONTEXT_LEFT = re.compile(r"(?:\S+\s+){0,%d}\S*$" % NER_CONTEXT)
_CONTEXT_RIGHT = re.compile(r"^(?:\s*\S+){0,%d}" % NER_CONTEXT)


@functools.lru_cache(maxsize=1)
def _person_words() -> frozenset[str]:
    # Only the commonest surnames: further down the census list are many everyday
    # words ("eager", "young", "white") that read as words, not names. A surname that is
    # a frequent word only because it is a name ("Smith", "Jones", "Wilson": written
    # capitalised more often than not) is no everyday word, and stays.
    common = lexicons.top_words(3000)
    return lexicons.first_names() | frozenset(w for w in lexicons.last_names(1000)
                                              if w not in common or not lexicons.everyday(w))


def acceptable(word: str, label: str) -> bool:
    """May ``word`` replace a masked word labelled ``label``?"""
    if label == "NUMBER":
        return bool(DIGITS_RE.match(word))
    if not ALPHA_RE.match(word) or len(word) < 2:
        return False
    low = word.lower()
    if low in lexicons.FUNCTION_WORDS:
        return False
    if label == "PERSON":  # a name that is also a well-known place ("Lincoln") reads as the place,
        # one that is a nationality ("German") as a group, and a month or a day ("January",
        # "June", "Sunday": census first names all) as a date
        return (low in _person_words() and not lexicons.reads_as_place(low) and low not in lexicons.nationalities()
                and low not in CALENDAR)
    if label == "LOC" and low in lexicons.regions():  # a continent or a sea for "Middle East"
        return True
    if label in PLACE_LABELS:
        return low in lexicons.place_names() and _place_word(low)
    if label == "NORP":
        return low in lexicons.nationalities()
    if label in DRAWN_WHEN_NONE:  # "Medical" or "Later" for "Qantas" reads as a word, not a name
        return not lexicons.everyday(low) and low.rstrip(".") not in _NO_BODY
    return True


def could_become(text: str, label: str) -> bool:
    """Could a word that starts with ``text`` be ``acceptable`` for ``label``? False only
    where a list decides and none of its words starts so ("Kow" for a person: the census
    has no "Kowalski"): a causal filler need not grow such a word any further."""
    starts = _list_prefixes(label)
    return starts is None or text.lower() in starts


@functools.lru_cache(maxsize=8)
def _list_prefixes(label: str) -> frozenset[str] | None:
    """Every beginning of every word on the list that ``acceptable`` holds ``label`` to, or
    None where no list decides."""
    if label == "PERSON":
        words = _person_words()
    elif label in PLACE_LABELS:
        words = lexicons.place_names() | (lexicons.regions() if label == "LOC" else frozenset())
    elif label == "NORP":
        words = lexicons.nationalities()
    else:
        return None
    return frozenset(w[:i] for w in words for i in range(1, len(w) + 1))


@word_cache(65536)
def _place_word(low: str) -> bool:
    """A place name that reads as a place: not an everyday word ("Best", "Retreat"), and a
    frequent English word only where it is a well-known place ("China", "Boston"; not
    "Airport" or "Republic", which are towns too)."""
    return not lexicons.everyday(low) and low not in lexicons.POLITY_WORDS and (
        low in lexicons.major_places() or low not in lexicons.top_words(20000))


def fallback_word(label: str, rng, group: str | None = None) -> str:
    """A substitute of the right type when the model offered none that passed the rules; a
    group (NORP) of ``group``'s kind (lexicons.GROUP_KINDS) where one is given."""
    if label == "NUMBER":
        return str(rng.randint(2, 99))
    if label == "PERSON":
        return rng.choice(lexicons.drawn_first_names()).capitalize()
    if label in PLACE_LABELS:  # a well-known place: a village's name sounds invented
        return rng.choice(_drawn_places()).capitalize()
    if label in ("ORG", "FAC"):
        surname = rng.choice(lexicons.drawn_surnames()).capitalize()
        return f"{surname} {rng.choice(lexicons.COMPANY_SUFFIXES if label == 'ORG' else lexicons.FACILITY_WORDS)}"
    if label == "NORP":
        return rng.choice(lexicons.GROUP_KINDS[group] if group else lexicons.NATIONALITIES)
    return "thing"


@functools.lru_cache(maxsize=1)
def _drawn_places() -> tuple[str, ...]:
    """Countries, US states and cities of a million people that read as places, not as words
    or people ("Rodriguez" is a city of 200,000), spelt in ASCII."""
    people = lexicons.first_names() | lexicons.last_names()
    return tuple(sorted(p for p in lexicons.well_known_places(1_000_000) & lexicons.place_names() - people
                        if p.isascii() and _place_word(p)))  # "Bogota", as English text (and TTS) has it


def ner_type_check(nlp) -> TypeCheck:
    """A TypeCheck backed by a spaCy pipeline (preiss2023 checks substitutes against name
    lists; for organisations and nationalities there is no list, so the tagger decides)."""
    def check(filled: Sequence[tuple[str, int, int]], label: str | Sequence[str]) -> list[bool]:
        labels = [label] * len(filled) if isinstance(label, str) else label
        # The filled sentences hold user text: spaCy must forget their words afterwards.
        with bundles.spacy_zone(nlp):
            docs = nlp.pipe([t for t, _, _ in filled], batch_size=64)
            return [any(e.label_ == lab and e.start_char < end and start < e.end_char for e in doc.ents)
                    for (_, start, end), lab, doc in zip(filled, labels, docs)]
    return check


def near(left: str, right: str) -> tuple[str, str]:
    """The last NER_CONTEXT words of ``left`` and the first of ``right`` (a word that
    touches the mask, such as "'s", stays whole)."""
    return _CONTEXT_LEFT.search(left).group(), _CONTEXT_RIGHT.match(right).group()


def same_type(cands: list[Candidate], left: str, right: str, label: str, initial: bool,
              check: TypeCheck) -> list[Candidate]:
    """Candidates the tagger reads as ``label`` between ``left`` and ``right``, scores
    renormalised; where none is, all of them unchanged, or none for an organisation or a
    facility (the caller draws one)."""
    return same_type_many([(cands, left, right, label, initial)], check)[0]


def same_type_many(asks: Sequence[tuple[list[Candidate], str, str, str, bool]],
                   check: TypeCheck) -> list[list[Candidate]]:
    """``same_type`` for many masks at once, in one tagger call: the tagger runs in larger
    batches, which is where its time goes (the same answers as one call per mask)."""
    filled, labels, sizes = [], [], []
    for cands, left, right, label, initial in asks:
        if label in LIST_CHECKED:
            sizes.append(0)
            continue
        left, right = near(left, right)
        for c in cands:
            w = surface(c.word, label, initial)
            filled.append((left + w + right, len(left), len(left) + len(w)))
            labels.append(label)
        sizes.append(len(cands))
    ok = check(filled, labels) if filled else []
    out, at = [], 0
    for (cands, _, _, label, _), n in zip(asks, sizes):
        if label in LIST_CHECKED:
            out.append(cands)
            continue
        kept = [c for c, good in zip(cands, ok[at : at + n]) if good]
        at += n
        total = sum(c.score for c in kept)
        out.append([Candidate(c.word, c.score / total) for c in kept] if kept
                   else [] if label in DRAWN_WHEN_NONE else cands)
    return out
