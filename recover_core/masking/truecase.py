"""The caseless path of entityTagger: restore capitals before NER.

spaCy's English models lean on capital letters: on Fisher-style text ("yeah i talked to
margaret yesterday") they miss most names. Rather than a second NER model, the text is
truecased first: a word is capitalised when the name and place lists know it and it is not
an everyday word, when news and Wikipedia write it capitalised, or when it sits in a name
slot ("my name is oluwaseun", "mr brown", "mark said"). The cased pipeline then runs on the
truecased copy. Only letters change case, so every character offset is the same in both and
the spans are read back from the original text. bench/ner_recall.py compares this with
spaCy on the lower-cased text and with the lists alone (docs/ner.md).
"""
from __future__ import annotations

import functools
import re

from recover_core import lexicons
from recover_core.masking.name_cues import AFTER, _everyday, slot_before
from recover_core.spans import words

_PRONOUN_I = re.compile(r"^i(?:['’](?:m|ll|d|ve))?$")


def is_caseless(text: str) -> bool:
    """True for text that carries no case: all lower-case (the pronoun "I" aside), or all
    upper-case (WSJ's transcripts). Text with any other capital letter is cased."""
    if not any(c.isalpha() for c in text):
        return False
    if not any(c.islower() for c in text):
        return True
    return not any(c.isupper() for w in words(text) if not _PRONOUN_I.match(w.text.lower()) for c in w.text)


@functools.lru_cache(maxsize=1)
def _proper_words() -> frozenset[str]:
    """Lower-case words that are names or places and, written alone, are not everyday words."""
    names = lexicons.first_names() | lexicons.world_first_names() | lexicons.last_names() | \
        lexicons.world_last_names() | lexicons.place_names()
    by_corpus = {w for w, (cap, low) in lexicons.case_counts().items() if cap >= 3 and cap >= 9 * low}
    return frozenset(w for w in names | by_corpus if len(w) > 1 and not _everyday(w))


@functools.lru_cache(maxsize=1)
def _surnames() -> frozenset[str]:
    return frozenset(w for w in lexicons.last_names() | lexicons.world_last_names()
                     if w not in lexicons.FUNCTION_WORDS)


@functools.lru_cache(maxsize=1)
def _any_name() -> frozenset[str]:
    return lexicons.first_names() | lexicons.world_first_names()


def truecase(text: str) -> str:
    """A copy of caseless ``text`` with names, places and the pronoun I capitalised, every
    other letter lower-case. Same length as ``text``: offsets carry over unchanged."""
    chars = list(text.lower()) if len(text.lower()) == len(text) else list(text)
    toks = words(text)
    low = [w.text.lower() for w in toks]
    proper, surnames, names = _proper_words(), _surnames(), _any_name()
    caps = [False] * len(toks)
    for i, t in enumerate(low):
        base = t[:-2] if t[-2:] in ("'s", "’s") and len(t) > 3 else t
        if _PRONOUN_I.match(t):
            caps[i] = True
        elif base in proper:
            caps[i] = True
        elif not base.isalpha() or base in lexicons.FUNCTION_WORDS:
            continue
        else:
            slot = slot_before(low[max(0, i - 3): i])
            before_said = i + 1 < len(low) and low[i + 1] in AFTER
            if slot == "title":
                caps[i] = True  # "mr brown"
            elif (slot or before_said) and base in names:
                caps[i] = True  # "thanks mark", "rose said"
            elif slot == "strong" and not _everyday(base):
                caps[i] = True  # "my name is oluwaseun"
    for i, w in enumerate(toks):
        # an everyday first name right before a surname that is clearly a name: "mark johnson"
        if not caps[i] and low[i] in names and i + 1 < len(toks) and caps[i + 1] and low[i + 1] in surnames:
            caps[i] = True
        if caps[i]:
            up = chars[w.start].upper()
            if len(up) == 1:
                chars[w.start] = up
    return "".join(chars)
