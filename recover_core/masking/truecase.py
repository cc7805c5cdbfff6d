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

from recover_core.data import lexicons
from recover_core.data.lexicons import everyday
from recover_core.masking.name_cues import (AFTER, NOT_ORGS, ORG_STOPS, PLACE_CUES, org_slot, org_slot_any_word,
                                           slot_before)
from recover_core.text.spans import Span, words

_PRONOUN_I = re.compile(r"^i(?:['’](?:m|ll|d|ve))?$")
# A word no English word list knows well (wordfreq rank past this, about Zipf 3) is, in
# caseless text, most often a name ("gazprom", "olumide"): it is capitalised and the NER
# decides what it is.
RARE_RANK = 30_000
COMMONEST = 1_500
AUXILIARIES = frozenset("""do does did can could will would shall should may might must don't doesn't didn't
    can't couldn't won't wouldn't shouldn't""".split())
# After a capitalised word, these start or end an organisation's name ("dangote cement").
ORG_WORDS = frozenset("""group bank corporation corp company co industries motors airlines airways
    university cement holdings limited ltd inc plc foundation institute hospital""".split())
# Words after which an everyday word that is also a name is more likely the name: the end of a
# phrase ("thanks mark", "talked to rose yesterday"), not a noun phrase ("rose petals").
PHRASE_END = frozenset("yesterday today tonight tomorrow again too yeah though now later".split())
# A subject's verb after an everyday word that is also a name ("grace is coming", "mark never
# listens") makes it the name, unless a determiner comes first ("the rose is red").
SUBJECT_VERBS = frozenset("is was has had never always goes went says said told asked called wants needed thinks".split())
# Where a place or a shop is named ("went to walmart"), a word that is no everyday word is
# capitalised even when wordfreq calls it common: news and Wikipedia rarely write it. "of"
# and "around" are left out: they precede too much else ("one of those", "around noon").
PLACE_PREPOSITIONS = PLACE_CUES - {"of", "around"}
# An organisation's name runs on after its cue ("works for lucas oil as ...", "my manager at
# seagate technology is ..."), up to this many words, until a function word, a verb or a form's
# next field ends it.
ORG_RUN = 4
# Shops whose name is an everyday word: in caseless text they are a store only where the
# context says so ("went to target", "at target", "target's prices"; not "hit the target").
STORES = frozenset("target".split())
# Verbs of going after which "to X" is a place ("went to target"), not an infinitive ("want to
# target young voters").
GOING = frozenset("go goes going went gone drive drives drove driving run ran walk walked head headed get got back trip".split())
# Before "at X": aiming, not a store ("aimed at target").
AIMING = frozenset("aim aims aimed aiming shoot shot fire fired point pointed look looked looking".split())
DETERMINERS = frozenset("the a an this that these those my your his her our their its some any every each no last next".split())


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
    return frozenset(w for w in names | by_corpus if len(w) > 1 and not everyday(w))


@functools.lru_cache(maxsize=1)
def _any_name() -> frozenset[str]:
    return lexicons.first_names() | lexicons.world_first_names()


def truecase(text: str) -> str:
    """A copy of caseless ``text`` with names, places and the pronoun I capitalised, every
    other letter lower-case. Same length as ``text``: offsets carry over unchanged."""
    return truecase_with_names(text)[0]


def truecase_with_names(text: str) -> tuple[str, list[Span]]:
    """The truecased copy, and PERSON spans for the words capitalised because their context
    makes them names ("drew and i", "that was mark's idea"): no list or model would call an
    everyday word a name at the start of a sentence, so these are passed on as found."""
    chars = list(text.lower()) if len(text.lower()) == len(text) else list(text)
    toks = words(text)
    low = [w.text.lower() for w in toks]
    caps: list[bool | str] = []
    for i in range(len(low)):
        caps.append(_capitalised(i, low, caps))
    for i in _full_names(low):  # "this is jim robo", "over to steve powers": both words a name
        caps[i] = caps[i + 1] = "name"
    for i, w in enumerate(toks):
        # an everyday first name right before a surname that is clearly a name: "mark johnson"
        if not caps[i] and low[i] in lexicons.first_names() and low[i] not in lexicons.FUNCTION_WORDS \
                and i + 1 < len(toks) and caps[i + 1] and low[i + 1] in lexicons.last_names() \
                and low[i + 1] not in _any_name():
            caps[i] = "name"
        if caps[i]:
            up = chars[w.start].upper()
            if len(up) == 1:
                chars[w.start] = up
    view = "".join(chars)
    names = []
    for w, c in zip(toks, caps):
        if c == "store":
            t = w.text[:-2] if w.text[-2:] in ("'s", "’s") and len(w.text) > 3 else w.text
            names.append(Span(w.start, w.start + len(t), view[w.start: w.start + len(t)], "ORG", "truecase"))
        if c == "name":
            t = w.text[:-2] if w.text[-2:] in ("'s", "’s") and len(w.text) > 3 else w.text
            names.append(Span(w.start, w.start + len(t), view[w.start: w.start + len(t)], "PERSON", "truecase"))
    return view, names


# Where a call or a meeting hands the word to someone, the next two words are a full name even
# when the surname is an everyday word ("turn it over to steve powers", "this is sandy brown").
HANDOVER = tuple(tuple(c.split()) for c in (
    "this is", "name is", "name's", "i'm", "i am", "over to", "back to", "hand it to", "pass it to", "joined by",
    "joining me", "joining us", "joining me today", "with me is", "with me are", "with me today is", "me today is",
    "me today are", "welcome", "thank you", "thanks", "introduce", "comes from", "question from",
    "questions from", "line of", "hi", "hello", "good morning", "good afternoon", "good evening", "congratulations",
    "great question", "good question"))
# Weaker cues: a full name after them only where the phrase ends with it ("from rich anderson
# with morgan stanley", "and pat green our cfo"), not "from rich people" or "and may the".
LOOSE = frozenset({("from",), ("with",), ("and",), ("to",), ("ask",), ("told",), ("met",), ("call",), ("is",),
                   ("are",), ("me",), ("by",), ("okay",), ("ok",), ("so",), ("yes",), ("well",), ("right",),
                   ("sure",), ("alright",)})
# Words that end a name's phrase in a call: an employer, a role, a go-ahead.
AFTER_NAME = frozenset("""with from of at our the here who please go and will is has your for president chief
    ceo cfo coo cto vice head director senior analyst manager on to let mentioned noted added explained agreed
    confirmed""".split()) | AFTER | SUBJECT_VERBS
_NOT_SURNAME = frozenset("""not just also really very so too then there here now well yeah yes no okay ok um uh
    oh like you your yours one two three""".split())


def _full_names(low: list[str]) -> list[int]:
    """Indices i where words i and i + 1 of caseless ``low`` are a first name and a surname by
    their place in the call: a known first name right after a handover cue, then a word that
    may be a surname (the census lists it, or it is no everyday word), not a function word, not
    an auxiliary unless the phrase ends there ("over to gary may our cfo")."""
    firsts, lasts = lexicons.first_names(), lexicons.last_names()
    out = []
    for i in range(len(low) - 1):
        first, last = low[i], low[i + 1]
        modal = last in AUXILIARIES or last in AFTER or last in SUBJECT_VERBS
        if first not in firsts or first in lexicons.FUNCTION_WORDS or not last.isalpha() or len(last) < 3 \
                or (last in lexicons.FUNCTION_WORDS and not modal) or last in _NOT_SURNAME or last in PHRASE_END:
            continue
        if last not in lasts and everyday(last):
            continue
        prev = low[max(0, i - 4): i]
        nxt = low[i + 2] if i + 2 < len(low) else None
        ends = nxt is None or nxt in AFTER_NAME or nxt in PHRASE_END or nxt.endswith(("'s", "’s"))
        strong = any(tuple(prev[-len(c):]) == c for c in HANDOVER)
        # after a loose cue (the start of a line or turn is one: "garrett chambers mentioned ..."),
        # the first name must be no everyday word ("from rich people", "went to see kandis")
        loose = (not prev or (prev[-1],) in LOOSE) and not everyday(first)
        if modal:
            strong, loose = strong and ends, False  # "over to gary may our cfo", not "thanks bill will do"
        if strong or (loose and ends):
            out.append(i)
    return out


def _store_context(i: int, low: list[str], possessive: bool) -> bool:
    """Does the context make word ``i`` a store: after "at"/"from" (not after aiming) or a
    verb of going and "to", at the end of the phrase; or a possessive with no determiner or
    noun before it ("target's prices", not "the target's")?"""
    prev = low[i - 1] if i else None
    before = low[i - 2] if i > 1 else None
    nxt = low[i + 1] if i + 1 < len(low) else None
    if possessive:
        return prev is None or (prev in lexicons.FUNCTION_WORDS and prev not in DETERMINERS)
    ends = nxt is None or nxt in lexicons.FUNCTION_WORDS or nxt in PHRASE_END
    if prev in ("at", "from"):
        return ends and before not in AIMING
    return prev == "to" and before in GOING and ends


def _org_word(i: int, low: list[str], caps: list, base: str) -> str | bool:
    """"org" for a word of an organisation's name: the first word after an organisation cue
    ("works at accenture", "shopping at target", "works for exact solutions"; an everyday word
    too after "at", "for", "by", "employer"), or after a person and "at" when it is no everyday
    word ("ask rauf at verizon wireless"); and the words that follow it, up to ORG_RUN, until
    a function word, a verb or a form's next field."""
    if not base.replace("-", "").isalpha() or base in lexicons.FUNCTION_WORDS or base in NOT_ORGS or base in ORG_STOPS \
            or base in AUXILIARIES or base in PHRASE_END:
        return False
    if i and caps[i - 1] == "org":
        run = 1
        while run < i and caps[i - 1 - run] == "org":
            run += 1
        return "org" if run < ORG_RUN and not low[i - 1].endswith(("'s", "’s")) else False
    if len(base) <= 2:
        return False
    prev = low[max(0, i - 3): i]
    if org_slot(prev) and (not everyday(base) or org_slot_any_word(prev)):
        return "org"  # "works at accenture", "shopping at target"
    if i > 2 and low[i - 1] == "at" and caps[i - 2] and not _PRONOUN_I.match(low[i - 2]) \
            and low[i - 2] not in lexicons.FUNCTION_WORDS and not everyday(base):
        return "org"  # "ask rauf at verizon wireless"
    return False


def _capitalised(i: int, low: list[str], caps: list) -> bool | str:
    """Whether word ``i`` of the lower-cased words ``low`` is written with a capital, given
    the decisions ``caps`` for the words before it: "name" where only the context says so."""
    t = low[i]
    base = t[:-2] if t[-2:] in ("'s", "’s") and len(t) > 3 else t
    if _PRONOUN_I.match(t):
        return True
    if base in STORES and _store_context(i, low, base != t):
        return "store"
    org = _org_word(i, low, caps, base)
    if org:
        return org
    if base in _proper_words():
        return True
    names = _any_name()
    slot = slot_before(low[max(0, i - 3): i])
    nxt = low[i + 1] if i + 1 < len(low) else None
    prev = low[i - 1] if i else None
    if base in names and slot in ("strong", "greeting") and (nxt is None or nxt in PHRASE_END):
        return "name"  # "hi this is will" (a function word, but here a name)
    if not base.isalpha() or base in lexicons.FUNCTION_WORDS:
        return False
    if len(base) > 3 and lexicons.word_ranks().get(base, RARE_RANK) >= RARE_RANK and not everyday(base):
        return True  # "olumide", "novartis"
    if prev in PLACE_PREPOSITIONS and not everyday(base) and len(base) > 2:
        return True  # "went to walmart", "at costco": a shop or a town, for the NER to judge
    if base in ORG_WORDS and i > 0 and caps[i - 1] and not _PRONOUN_I.match(low[i - 1]):
        return True  # "Dangote cement" -> "Dangote Cement"
    if slot in ("title", "relation"):
        return "name"  # "mr brown", "my sister rose"
    if slot == "strong" and not everyday(base):
        return True  # "my name is oluwaseun"
    if base in names:
        phrase_end = nxt is None or nxt in lexicons.FUNCTION_WORDS or nxt in PHRASE_END or nxt in AFTER
        if nxt in AFTER or slot == "greeting":
            return "name"  # "rose said", "thanks bill"
        if slot and (phrase_end or not everyday(base)):
            return "name"  # "talked to rose yesterday"
        if prev not in DETERMINERS and (nxt in SUBJECT_VERBS or base != t or low[i + 1: i + 3] in (["and", "i"], ["and", "me"])):
            return "name"  # "so grace is coming", "that was mark's idea", "drew and i"
    # A surname after a first name, even an everyday word ("tiffany east"), where a name would
    # end the phrase; not a verb ("my sister enoch works", "dean fell asleep": "Works" and
    # "Fell" are census surnames) and none of the commonest words ("dion wait for me").
    ends = nxt is None or nxt in lexicons.FUNCTION_WORDS or nxt in PHRASE_END or nxt in AFTER or \
        nxt in SUBJECT_VERBS or base != t
    after_aux = i > 1 and low[i - 2] in AUXILIARIES  # "why did buster cancel": a verb follows the name
    if i > 0 and caps[i - 1] and prev in names and base in lexicons.last_names() and ends and not after_aux \
            and not (base.endswith("s") and everyday(base[:-1])) \
            and lexicons.word_ranks().get(base, RARE_RANK) >= COMMONEST:
        return "name"
    return False
