"""Which words may stand in for a masked word, by the mask's label.

Shared by every filler so that MLM and causal fillers obey the same rules:
whole words only, no function words or fragments, digits only for numbers,
and, as preiss2023 does, a substitute for a name must be a name.
"""
from __future__ import annotations

import functools
import re

from recover_core import lexicons

ALPHA_RE = re.compile(r"^[A-Za-z]+(?:['\-][A-Za-z]+)*$")
DIGITS_RE = re.compile(r"^\d+$")
PLACE_LABELS = {"GPE", "LOC"}


@functools.lru_cache(maxsize=1)
def _person_words() -> frozenset[str]:
    # Only the commonest surnames: further down the census list are many everyday
    # words ("eager", "young", "white") that read as words, not names.
    common = lexicons.top_words(3000)
    return lexicons.first_names() | frozenset(w for w in lexicons.last_names(1000) if w not in common)


def acceptable(word: str, label: str) -> bool:
    """May ``word`` replace a masked word labelled ``label``?"""
    if label == "NUMBER":
        return bool(DIGITS_RE.match(word))
    if not ALPHA_RE.match(word) or len(word) < 2:
        return False
    low = word.lower()
    if low in lexicons.FUNCTION_WORDS:
        return False
    if label == "PERSON":
        return low in _person_words()
    if label in PLACE_LABELS:
        return low in lexicons.place_names()
    return True


def fallback_word(label: str, rng) -> str:
    """A substitute of the right type when the model offered none that passed the rules."""
    if label == "NUMBER":
        return str(rng.randint(2, 99))
    if label == "PERSON":
        return rng.choice(sorted(lexicons.first_names())).capitalize()
    if label in PLACE_LABELS:
        return rng.choice(sorted(lexicons.place_names())).capitalize()
    return "thing"
