"""Names found by their slot in the sentence, not by a list: "my name is X", "Dr. X",
"thanks X", "X said". A capitalised word no list knows (Oluwaseun, Xiaoling) in such a
slot is a person's name. bench/ner_recall.py measures what this finds and what it costs
in false positives.
"""
from __future__ import annotations

import functools

from recover_core.data import lexicons
from recover_core.data.lexicons import everyday
from recover_core.text.spans import Span, words

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
    "thanks", "thank you", "thanks so much", "thank you so much", "bye", "happy birthday", "ask", "tell", "told", "met", "meet", "see", "seen",
    "saw", "with", "and",
    "according to", "talked to", "talking to", "talk to", "spoke to", "speak to", "speaking to", "visit", "visited",
))
# Only titles and introductions make a slot on their own; the others need the word to be
# unknown to the everyday vocabulary ("with Emeka" yes, "with Google" too, "with Friday" no).
STRONG_BEFORE = frozenset({("name", "is"), ("name's",), ("named",), ("call", "me"), ("this", "is"), ("i'm",),
                           ("according", "to")})
POSSESSIVES = frozenset("my your his her our their".split())
GREETINGS = frozenset({("hi",), ("hey",), ("hello",), ("dear",), ("thanks",), ("thank", "you"), ("bye",),
                       ("happy", "birthday"), ("thanks", "so", "much"), ("thank", "you", "so", "much")})
AFTER = frozenset("said says told asked wrote replied texted called".split())
# "said goodbye to X", "sent the file to X": a verb of saying or giving, then up to two words,
# then "to": the one spoken or given to is a person.
SAID_TO = frozenset("said say says explained mentioned wrote sent gave handed passed introduced".split())
# Words before an organisation's name ("works at Accenture", "joined Unilever", "shopping at
# target"); each a word sequence, matched lower-case like BEFORE.
ORG_BEFORE = tuple(tuple(c.split()) for c in (
    "works at", "work at", "worked at", "working at", "works for", "work for", "worked for", "working for",
    "job at", "joined", "employed by", "hired by", "shares of", "shares in", "stock of", "ceo of",
    "shop at", "shops at", "shopping at", "shopped at", "bought it at", "bought them at", "got it at",
    "employer", "employed at", "manager at", "boss at", "colleague at", "colleagues at", "intern at",
))
# After these cues the name may be an everyday word ("works for exact solutions", "shopping at
# target"); after the others ("joined") an everyday word is more often no name ("joined forces").
ORG_BEFORE_ANY_WORD = frozenset(c for c in ORG_BEFORE if c[-1] in ("at", "for", "by", "employer", "of", "in"))
# Everyday words that follow those cues and name no organisation ("works at home", "joined in").
NOT_ORGS = frozenset("""home night school work church noon lunch dinner breakfast least first last once all
    weekends weekend times nights days hours night-time christmas us them him her me you people
    free years months weeks ago today tonight tomorrow yesterday now then here there college university
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december easter one two three four five six seven eight nine ten
    eleven twelve twenty thirty forty fifty hundred half""".split())
# Words that end an organisation's name in text without punctuation: verbs and adverbs that
# follow it ("my manager at dollar tree is ..."), and the fields of a form ("employer red fox
# tavern city ...").
ORG_STOPS = frozenset("""is was are were has had have will would can could should said says told asked called
    wrote replied texted never always also still just again too yeah though later every each since
    city town country state address street phone email date name title position zip postcode""".split())
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


def said_to(prev: list[str]) -> bool:
    """Do the lower-cased words ``prev`` end with "said [one or two words] to"?"""
    return len(prev) >= 2 and prev[-1] == "to" and any(p in SAID_TO for p in prev[-4:-1])


def org_slot(prev: list[str]) -> bool:
    """Do the lower-cased words ``prev`` end with an organisation cue ("works at")?"""
    return any(tuple(prev[-len(cue):]) == cue for cue in ORG_BEFORE)


def org_slot_any_word(prev: list[str]) -> bool:
    """Do the lower-cased words ``prev`` end with a cue after which even an everyday word names
    an organisation ("works for exact solutions")?"""
    return any(tuple(prev[-len(cue):]) == cue for cue in ORG_BEFORE_ANY_WORD)


@functools.lru_cache(maxsize=1)
def known_first_names() -> frozenset[str]:
    """Census first names, and the world's where they are not everyday words ("An", "Bao")."""
    world = {w for w in lexicons.world_first_names() if len(w) > 2 and not everyday(w)}
    return lexicons.first_names() | frozenset(world)


def org_cue_spans(text: str, source: str = "orgCue") -> list[Span]:
    """ORG spans for a run of up to four capitalised words after an organisation cue ("works
    at Berkshire Hathaway", "joined Unilever"), or after a person and "at" ("ask Keiko at
    Seagate Technology"), unless the run starts with a known first name ("joined Maria for
    lunch") or an everyday word that names no organisation."""
    toks = words(text)
    low = [w.text.lower() for w in toks]
    out: list[Span] = []
    for i, w in enumerate(toks):
        if not w.text[:1].isupper() or low[i] in NOT_ORGS or low[i] in ORG_STOPS \
                or low[i] in lexicons.FUNCTION_WORDS or low[i] in known_first_names():
            continue
        if not (org_slot(low[max(0, i - 3): i]) or (person_at(toks, i, text) and not everyday(low[i]))):
            continue
        run = [w]
        for n in toks[i + 1: i + 4]:
            if not n.text[:1].isupper() or text[run[-1].end: n.start] not in (" ", " & ") \
                    or n.text.lower() in ORG_STOPS or n.text.lower() in NOT_ORGS:
                break
            run.append(n)
        out += [Span(x.start, x.end, x.text, "ORG", source) for x in run]
    return out


def person_at(toks, i: int, text: str) -> bool:
    """Is word ``i`` of ``toks`` right after "at" that follows a capitalised word inside the
    sentence ("ask Keiko at Verizon", "Rauf at Lucas Oil"): a person at an organisation?"""
    if i < 3 or toks[i - 1].text.lower() != "at":
        return False
    p = toks[i - 2]
    return is_capitalised(p.text) and p.text.lower() not in lexicons.FUNCTION_WORDS \
        and text[p.end: toks[i - 1].start] == " " and text[toks[i - 3].end: p.start].strip() == ""


def before_org_at(toks, i: int, low: list[str], text: str) -> bool:
    """Is word ``i``, capitalised inside the sentence and no everyday word nor place, a person
    at an organisation: right before "at" and a capitalised word no everyday word ("Contact
    Yunqing at DuPont")?"""
    if i + 2 >= len(toks) or low[i + 1] != "at" or text[toks[i - 1].end: toks[i].start].strip() != "":
        return False
    w, org = low[i], toks[i + 2]
    return not everyday(w) and w not in lexicons.place_names() and org.text[:1].isupper() \
        and not everyday(low[i + 2]) and low[i + 2] not in NOT_ORGS and low[i + 2] not in lexicons.place_names()


def cue_spans(text: str, source: str = "nameCue") -> list[Span]:
    """PERSON spans for capitalised words in a name slot (the text's own case: entityTagger
    passes caseless text through truecase.py first, which capitalises such words)."""
    return [s for s, _ in cue_spans_strength(text, source)]


def cue_spans_strength(text: str, source: str = "nameCue") -> list[tuple[Span, bool]]:
    """cue_spans, each with whether its slot is strong enough to overrule the NER's label (a
    title, a relation, an introduction, a greeting, "said ... to"; not "with X" or "X said",
    which an organisation fills as well)."""
    toks = words(text)
    low = [w.text.lower() for w in toks]
    out: list[tuple[Span, bool]] = []
    for i, w in enumerate(toks):
        t = w.text[:-2] if w.text[-2:] in ("'s", "’s") and len(w.text) > 3 else w.text
        if not is_capitalised(t) or t.lower() in lexicons.FUNCTION_WORDS or "'" in t or "’" in t:
            continue  # "I'm told": not a name
        slot = slot_before(low[max(0, i - 3): i]) or ("said-to" if said_to(low[max(0, i - 4): i]) else None)
        after = i + 1 < len(toks) and low[i + 1] in AFTER and text[w.end: toks[i + 1].start].strip() == ""
        known_name = t.lower() in lexicons.first_names() or t.lower() in lexicons.world_first_names()
        if slot is None and not after and i and before_org_at(toks, i, low, text):
            out.append((Span(w.start, w.start + len(t), t, "PERSON", source), False))
            continue
        if slot in ("title", "relation") or (slot == "strong" and not everyday(t.lower())) or \
                ((slot in ("weak", "greeting", "said-to") or after) and (known_name or not everyday(t.lower()))):
            strong = slot in ("title", "relation", "strong", "greeting", "said-to")
            out.append((Span(w.start, w.start + len(t), t, "PERSON", source), strong))
            # The capitalised word after a name found this way is its surname ("Dr. Ngozi Okafor").
            if i + 1 < len(toks) and is_capitalised(toks[i + 1].text) and \
                    text[w.end: toks[i + 1].start].strip() == "":
                n = toks[i + 1]
                out.append((Span(n.start, n.end, n.text, "PERSON", source), strong))
    return out
