"""Names the tagger missed, found from their context (person names only).

Spoken-language transcripts are where spaCy's NER is weakest: the recognizer writes
"with carl and rose" in lower case, and a misheard word next to a name breaks the
pattern the tagger knows. Three cues add a word that is on the census name lists:

- **coordination**: joined by "and", "or" or a comma to a name already found
  ("carl and rose");
- **a title** before it ("Mrs. Gibbs", "doctor kim");
- **an address or introduction** before it ("my name is", "call", "ask", "tell", "meet",
  "thank"), when the word is capitalized and not an everyday word.

The lists decide what a name is, so the cost is a few false positives in ordinary speech;
``bench/speech_obfuscation.py`` measures them on the news sentences (``cue_false_positives``).
"""
from __future__ import annotations

import functools

from recover_core.data import lexicons
from recover_core.text.spans import Span, merge, words

JOINERS = {"and", "or", ","}
INTRODUCERS = {("my", "name", "is"), ("call",), ("ask",), ("tell",), ("meet",), ("thank",), ("thanks",),
               ("named",), ("called",)}
SOURCE = "nameCues"


@functools.lru_cache(maxsize=1)
def _names() -> frozenset[str]:
    return lexicons.first_names() | lexicons.last_names(5000)


def _is_name(word: str) -> bool:
    w = word.lower()
    return w in _names() and w not in lexicons.FUNCTION_WORDS and len(w) > 1


def find(text: str, found: list[Span]) -> list[Span]:
    """``found`` (the tagger's spans) plus the names the cues add, merged."""
    from recover_core.pseudonyms import TITLES

    toks = words(text)
    low = [t.text.lower() for t in toks]
    person = [any(s.start < t.end and t.start < s.end and s.label == "PERSON" for s in found) for t in toks]
    added: list[Span] = []
    for i, t in enumerate(toks):
        if person[i] or not _is_name(t.text):
            continue
        between_prev = text[toks[i - 1].end:t.start].strip() if i else ""
        between_next = text[t.end:toks[i + 1].start].strip() if i + 1 < len(toks) else ""
        joined = (i >= 2 and person[i - 2] and low[i - 1] in JOINERS) or \
                 (i >= 1 and person[i - 1] and between_prev == ",") or \
                 (i + 2 < len(toks) and person[i + 2] and low[i + 1] in JOINERS) or \
                 (i + 1 < len(toks) and person[i + 1] and between_next == ",")
        titled = i >= 1 and low[i - 1] in TITLES
        introduced = t.text[:1].isupper() and t.text.lower() not in lexicons.allow_list() and any(
            i >= len(p) and tuple(low[i - len(p):i]) == p for p in INTRODUCERS)
        if joined or titled or introduced:
            added.append(Span(t.start, t.end, t.text, "PERSON", SOURCE))
            person[i] = True
    return merge(list(found) + added) if added else list(found)
