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
from recover_core.spans import Span

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


def is_public_body(text: str) -> bool:
    """Whether ``text`` names a public body or a state as a whole: at least one institution
    word, and nothing but institution words, function words and country names."""
    words = [w.lower().rstrip("’'s") if w.lower().endswith(("’s", "'s")) else w.lower()
             for w in re.findall(r"[\w’'-]+", text)]
    if not any(w in INSTITUTION_WORDS for w in words):
        return False
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


_NAME_AROUND = re.compile(r"(?:[A-Z][\w’'-]*|of|the|for|and|on)(?: (?:[A-Z][\w’'-]*|of|the|for|and|on))*")


def _whole_name(text: str, span: Span) -> str:
    """The capitalised run of words (with "of", "the", "for" inside it) that holds the span."""
    for m in _NAME_AROUND.finditer(text, max(0, span.start - 80), min(len(text), span.end + 80)):
        if m.start() <= span.start and span.end <= m.end():
            return m.group().strip()
    return span.text
