"""Which words may stand in for a masked word, by the mask's label.

Shared by every filler so that MLM and causal fillers obey the same rules:
whole words only, no function words or fragments, digits only for numbers,
and, as preiss2023 does, a substitute for a name must be a name.
"""
from __future__ import annotations

import functools
import re

from typing import Callable, Sequence

from recover_core import lexicons
from recover_core.filling.base import Candidate, surface

# Given filled sentences with the substitute's [start, end) and the label it must carry,
# says which ones a tagger reads as that label. Built from an NER pipeline by the caller.
TypeCheck = Callable[[Sequence[tuple[str, int, int]], str], list[bool]]

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


def ner_type_check(nlp) -> TypeCheck:
    """A TypeCheck backed by a spaCy pipeline (preiss2023 checks substitutes against name
    lists; for organisations and nationalities there is no list, so the tagger decides)."""
    def check(filled: Sequence[tuple[str, int, int]], label: str) -> list[bool]:
        from recover_core import bundles

        # The filled sentences hold user text: spaCy must forget their words afterwards.
        with bundles.spacy_zone(nlp):
            return [any(e.label_ == label and e.start_char < end and start < e.end_char for e in doc.ents)
                    for (_, start, end), doc in zip(filled, nlp.pipe([t for t, _, _ in filled], batch_size=32))]
    return check


def same_type(cands: list[Candidate], left: str, right: str, label: str, initial: bool,
              check: TypeCheck) -> list[Candidate]:
    """Candidates the tagger reads as ``label`` between ``left`` and ``right``, scores
    renormalised; all of them unchanged if none is."""
    words = [surface(c.word, label, initial) for c in cands]
    ok = check([(left + w + right, len(left), len(left) + len(w)) for w in words], label)
    kept = [c for c, good in zip(cands, ok) if good]
    if not kept:
        return cands
    total = sum(c.score for c in kept)
    return [Candidate(c.word, c.score / total) for c in kept]
