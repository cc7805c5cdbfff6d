"""What identifies no one stays: a state as a party, a court, a ministry, the Government.

TAB's legal experts leave "the Government", "the Court of Cassation", "the Republic of
Turkey" unmasked (NO_MASK): they name public bodies, not the person, and masking them costs
a reader the document's sense ("lodged with the Congress") for no privacy. A tagged
organisation or place is such a body when every word of it is an institution word, a
function word or a country's name; one word of anything else ("Uppsala District Court",
"Istanbul State Security Court") ties it to a place, and it is masked.
"""
from __future__ import annotations

import functools
import re

from recover_core import lexicons
from dataclasses import replace

from recover_core.spans import Span, merge

INSTITUTION_WORDS = frozenset("""court courts government governments republic ministry ministries commission
    convention cassation appeal appeals supreme constitutional state states federal national european human rights
    parliament assembly council chamber chambers grand high administrative prosecutor prosecutors prosecution general
    office justice interior defence defense foreign affairs union united nations kingdom federation committee tribunal
    ombudsman registry registrar secretariat agency agencies public service police army armed forces president
    presidency prime minister military senate congress judiciary judicial legislature bar attorney-general
    procurator procuracy inspectorate department directorate institute""".split())
FUNCTION_WORDS = frozenset("the of for and on in de".split())
# Only these labels name bodies; a person is never one.
LABELS = frozenset({"ORG", "GPE", "NORP", "LOC", "FAC"})


@functools.lru_cache(maxsize=1)
def _country_words() -> frozenset[str]:
    return frozenset(w.lower() for c in lexicons.geonames().countries for w in re.findall(r"[\w’'-]+", c))


@functools.lru_cache(maxsize=1)
def _country_names() -> frozenset[str]:
    return frozenset(c.lower() for c in lexicons.geonames().countries)


def _is_country(text: str) -> bool:
    low = re.sub(r"^the ", "", text.strip().lower())
    return low in _country_names() or low in ("united states of america", "usa", "uk", "britain", "great britain")


def is_public_body(text: str) -> bool:
    """Whether ``text`` names a public body or a state as a whole: at least one institution
    word, and nothing but institution words, function words and country names."""
    words = [w.lower().rstrip("’'s") if w.lower().endswith(("’s", "'s")) else w.lower()
             for w in re.findall(r"[\w’'-]+", text)]
    if not any(w in INSTITUTION_WORDS for w in words) or _is_country(text):
        return False  # "United States" is a country, not a body: masked as a place
    countries = _country_words()
    return all(w in INSTITUTION_WORDS or w in FUNCTION_WORDS or w in countries for w in words)


def without_public_bodies(spans: list[Span], text: str) -> list[Span]:
    """The spans less the public bodies, judged on the whole name the span belongs to: the
    tagger may give "Court of Cassation" as one span or as "Court" and "Cassation"."""
    out = []
    for s in spans:
        if s.label in LABELS and is_public_body(_whole_name(text, s)):
            continue
        out.append(s)
    return out


_TOKEN = re.compile(r"[\w’'/-]+|[^\w\s]")
_CONNECTIVES = frozenset({"of", "for", "de", "du", "la", "and"})  # inside a name: "Court of Appeal"
_EDGE_WORDS = frozenset({"the", "a", "an", "The", "A", "An"})
# A name's own-language form right after it: "Warsaw District Court (Sąd Rejonowy)".
_GLOSS = re.compile(r" \((?:[^\W\d_][\w’'-]*)(?: [\w’'-]+){0,4}\)")


def _name_word(tok: str) -> bool:
    return tok[:1].isupper() and tok[:1].isalpha()


def _whole_bounds(text: str, span: Span) -> tuple[int, int]:
    """Where the run of capitalised words (with "of", "for", "of the" inside it) that holds the
    span starts and ends: "the İzmir Public Prosecutor" -> "İzmir Public Prosecutor". "and"
    joins two names only where both sides go on capitalised ("Ministry of Labour and Social
    Policy"), never "the Prosecutor and the Court"."""
    lo, hi = max(0, span.start - 120), min(len(text), span.end + 120)
    toks = [(m.start() + lo, m.end() + lo, m.group()) for m in _TOKEN.finditer(text[lo:hi])]
    inside = [i for i, (a, b, _) in enumerate(toks) if a < span.end and span.start < b]
    if not inside:
        return span.start, span.end

    def joins(i: int, j: int) -> bool:  # tokens i and j (= i + 1) are one space apart, j part of a name
        if text[toks[i][1]:toks[j][0]] != " ":
            return False
        word = toks[j][2]
        if _name_word(word):
            return True
        if word == "the":  # "Court of the First Instance"
            return toks[i][2] == "of" if j > i else j + 1 < len(toks) and toks[j - 1][2] == "of"
        return word in _CONNECTIVES

    first, last = inside[0], inside[-1]
    while first > 0 and joins(first - 1, first) and (_name_word(toks[first - 1][2]) or toks[first - 1][2] in _CONNECTIVES
                                                   or toks[first - 1][2] == "the"):
        first -= 1
    while last + 1 < len(toks) and joins(last, last + 1):
        last += 1
    # Trim what cannot end a name: connectives, "the", and a sentence's capitalised "The".
    while first < last and (not _name_word(toks[first][2]) or toks[first][2] in _EDGE_WORDS):
        first += 1
    while last > first and not _name_word(toks[last][2]):
        last -= 1
    return min(toks[first][0], span.start), max(toks[last][1], span.end)


def _whole_name(text: str, span: Span) -> str:
    a, b = _whole_bounds(text, span)
    return text[a:b]


def whole_bodies(spans: list[Span], text: str) -> list[Span]:
    """Each organisation or facility widened to its whole name ("İzmir Public Prosecutor",
    "Warsaw District Court (Sąd Rejonowy)"), where the tagger masked a word of it: a court or
    an office tied to a place points to the person as a whole, and a name half masked
    ("[ORG] Public Prosecutor") still reads. Public bodies are gone before this."""
    out = []
    for s in spans:
        if s.label in ("ORG", "FAC"):
            a, b = _whole_bounds(text, s)
            gloss = _GLOSS.match(text, b)
            b = gloss.end() if gloss else b
            if len(text[a:b].split()) <= 10 and (a, b) != (s.start, s.end):
                s = replace(s, start=a, end=b, text=text[a:b])
        out.append(s)
    return merge(out)
