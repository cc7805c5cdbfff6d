"""Names found by their slot in the sentence, not by a list: "my name is X", "Dr. X",
"thanks X", "X said". A capitalised word no list knows (Oluwaseun, Xiaoling) in such a
slot is a person's name. bench/ner_recall.py measures what this finds and what it costs
in false positives.
"""
from __future__ import annotations

from recover_core import lexicons
from recover_core.lexicons import everyday
from recover_core.spans import Span, words

# Words right before a name. Titles first; then introductions and greetings. Each entry is a
# word sequence, matched lower-case against the words just before the slot. These titles
# find names, so they include kin words a name follows ("aunt Mary"); pseudonyms.TITLES
# replace names, so they are the honorifics a surname follows ("Dr. Patel", "Senator Smith").
TITLES = frozenset("mr mrs ms miss mx dr prof professor sir madam aunt auntie uncle grandma grandpa".split())
# "my sister X", "her boyfriend X": a relation right before a word makes a name slot, as a
# title does, but the word must not be a function word ("my friend will come").
RELATIONS = frozenset("""sister brother husband wife friend boyfriend girlfriend son daughter cousin boss
    neighbor neighbour roommate mom dad mum mother father grandmother grandfather niece nephew partner
    fiance fiancee colleague coworker""".split())
BEFORE = tuple(tuple(c.split()) for c in (
    "name is", "name's", "named", "call me", "this is", "i'm", "hi", "hey", "hello", "dear",
    "thanks", "thank you", "bye", "happy birthday", "ask", "tell", "told", "met", "meet", "see", "seen",
    "saw", "with", "and",
    "according to", "talked to", "talking to", "talk to", "spoke to", "speak to", "speaking to", "visit", "visited",
))
# Only titles and introductions make a slot on their own; the others need the word to be
# unknown to the everyday vocabulary ("with Emeka" yes, "with Google" too, "with Friday" no).
STRONG_BEFORE = frozenset({("name", "is"), ("name's",), ("named",), ("call", "me"), ("this", "is"), ("i'm",),
                           ("according", "to")})
POSSESSIVES = frozenset("my your his her our their".split())
GREETINGS = frozenset({("hi",), ("hey",), ("hello",), ("dear",), ("thanks",), ("thank", "you"), ("bye",),
                       ("happy", "birthday")})
AFTER = frozenset("said says told asked wrote replied texted called".split())
# Words a place's name follows ("moved to Sydney", "a letter from Lodz").
PLACE_CUES = frozenset("in to from at near of around visit visited visiting outside".split())


def is_capitalised(word: str) -> bool:
    return len(word) > 1 and word[0].isupper() and word[1:].islower()


def slot_before(prev: list[str]) -> str | None:
    """'title', 'relation', 'strong', 'greeting' or 'weak' if the lower-cased words ``prev``
    end with a name cue."""
    if prev and prev[-1].rstrip(".") in TITLES:
        return "title"
    if len(prev) >= 2 and prev[-1] in RELATIONS and prev[-2] in POSSESSIVES:
        return "relation"
    for cue in BEFORE:
        if tuple(prev[-len(cue):]) == cue:
            return "strong" if cue in STRONG_BEFORE else "greeting" if cue in GREETINGS else "weak"
    return None


def cue_spans(text: str, source: str = "nameCue") -> list[Span]:
    """PERSON spans for capitalised words in a name slot (the text's own case: entityTagger
    passes caseless text through truecase.py first, which capitalises such words)."""
    toks = words(text)
    low = [w.text.lower() for w in toks]
    out: list[Span] = []
    for i, w in enumerate(toks):
        t = w.text[:-2] if w.text[-2:] in ("'s", "’s") and len(w.text) > 3 else w.text
        if not is_capitalised(t) or t.lower() in lexicons.FUNCTION_WORDS or "'" in t or "’" in t:
            continue  # "I'm told": not a name
        slot = slot_before(low[max(0, i - 3): i])
        after = i + 1 < len(toks) and low[i + 1] in AFTER and text[w.end: toks[i + 1].start].strip() == ""
        known_name = t.lower() in lexicons.first_names() or t.lower() in lexicons.world_first_names()
        if slot in ("title", "relation") or (slot == "strong" and not everyday(t.lower())) or \
                ((slot in ("weak", "greeting") or after) and (known_name or not everyday(t.lower()))):
            out.append(Span(w.start, w.start + len(t), t, "PERSON", source))
            # The capitalised word after a name found this way is its surname ("Dr. Ngozi Okafor").
            if i + 1 < len(toks) and is_capitalised(toks[i + 1].text) and \
                    text[w.end: toks[i + 1].start].strip() == "":
                n = toks[i + 1]
                out.append(Span(n.start, n.end, n.text, "PERSON", source))
    return out
