"""A place the tagger read as a person: "She lives in Izmir" came out PERSON, so the city was
replaced by a woman's name ("She lives in Pamela"). The span is still masked either way; what
changes is its label, and with it the kind of substitute it gets.
"""
from __future__ import annotations

import re
from dataclasses import replace

from recover_core.data import lexicons
from recover_core.text.spans import Span

# "in", "from", "near" before a single capitalised word: a place far more often than a person
# ("a letter from Anna" is why a first name must also read as a place, lexicons.reads_as_place).
_BEFORE = re.compile(r"\b(?:in|from|near)\s+$")


def read_as_places(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with a one-word PERSON span after "in", "from" or "near" that reads as a
    well-known place ("Izmir", "Lagos"; not "Mary", a distant town) labelled GPE."""
    out = []
    for s in spans:
        if (s.label == "PERSON" and " " not in s.text and _BEFORE.search(text[max(0, s.start - 12):s.start])
                and lexicons.reads_as_place(s.text)):
            s = replace(s, label="GPE")
        out.append(s)
    return out
