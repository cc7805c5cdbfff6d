"""Facts about names: which gender a first name has (1990 US census), which names a draw
picks from and which a filler's candidate may be, whether a word of a name is a title, a
first name or a surname (preiss2023's rules), and how a word sounds."""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Sequence

from recover_core.runtime.word_caches import word_cache
from recover_core.data import lexicons
from recover_core.runtime.env import assets_dir
from recover_core.pseudonyms import reads

# A surname comes after these (preiss2023's rule), unless a possessive makes the title a
# relation ("his sister Mary"). Not name_cues.TITLES, which finds names ("grandma", "madam").
TITLES = frozenset("mr mrs ms miss mx dr doctor prof professor sir dame lady lord rev reverend fr father "
                   "sister brother capt captain sgt sergeant judge officer detective president senator "
                   "governor mayor uncle aunt".split())
POSSESSIVES = frozenset("my your his her our their its".split())
MALE_TITLES = frozenset("mr mister sir lord monsieur herr senor señor signor".split())
FEMALE_TITLES = frozenset("mrs ms miss madam madame lady dame mme frau senora señora signora".split())


def title_gender(word: str) -> str:
    """"m" or "f" for a title that says it ("Mr", "Mrs."), else ""."""
    t = bare(word).rstrip(".")
    return "m" if t in MALE_TITLES else "f" if t in FEMALE_TITLES else ""
GENDER_RATIO = 3.0
COMMON_FIRST = 1000  # random draws come from the commonest names: rare census names sound invented
COMMON_LAST = 1000
# A filler's first name is taken only among the commonest: its rarer favourites are famous
# one-offs that read as something else ("Moses", "Athena", "Apollo"). 600 names: about one
# person in 2,000 or more bears each. bench/fill_quality.py, multi set, seeds 0-2: same-type
# with the rules, Top-1 86.8% with all 2,000 -> 89.8% (1,000), 90.6% (600), 91.2% (300);
# Top-K 89.4 / 89.6 / 89.5 / 88.8%.
ACCEPT_FIRST = 600


@functools.lru_cache(maxsize=1)
def genders() -> dict[str, str]:
    """first name -> "m", "f", or "" (both lists, neither clearly)."""
    male, female = dict(lexicons.census("dist.male.first")), dict(lexicons.census("dist.female.first"))
    out = {}
    for name in male.keys() | female.keys():
        m, f = male.get(name, 0.0), female.get(name, 0.0)
        out[name] = "m" if m >= GENDER_RATIO * f else "f" if f >= GENDER_RATIO * m else ""
    return out


@functools.lru_cache(maxsize=1)
def _pools() -> dict[str, list[str]]:
    # Names that read as words ("love", "will") or as places ("Lincoln") are left out: lexicons.
    g = genders()
    firsts = list(lexicons.drawn_first_names()[: 2 * COMMON_FIRST])
    return {"first:m": [n for n in firsts if g[n] == "m"], "first:f": [n for n in firsts if g[n] == "f"],
            "first:": firsts, "last": list(lexicons.drawn_surnames()[:COMMON_LAST])}


@functools.lru_cache(maxsize=2)
def census_share(role: str) -> dict[str, float]:
    """Census share (percent of people) of each name in its slot, "first" or "last":
    "Williams" is a common surname and a rare first name, and each slot's prior must say so."""
    out: dict[str, float] = {}
    for file in ("dist.male.first", "dist.female.first") if role == "first" else ("dist.all.last",):
        for n, share in lexicons.census(file):
            out[n] = max(out.get(n, 0.0), share)
    return out


# A name that English text uses far more often than people bear it reads as someone or
# something in particular, or as a word: wordfreq's frequency per million words divided by
# the census percent of bearers is 630 for "Jesus", 570 "Clinton", 2,550 "Lincoln", 1,170
# "Christian", beside 39 "James", 77 "Smith", 244 "Lee" (short forms the census counts under
# the full name, "Tom", "Mike", and words, "Queen", "Savage", also score high). Such names
# are left out of the prior's draws: measured, not listed.
TEXT_FAME = 400

# A drawn name must also read as a person wherever it stands: many census names do not
# ("Julia", "Amber" and "Stanley" read as nothing, a place or a company to spaCy in plain
# sentences), and a substitute a tagger misreads changes the text's entities. So a name is
# drawn only if the masking NER (spaCy md) reads it as a person in every one of these
# sentences. It is a property of the name, measured once and committed (READ_FILE), so
# every machine and a Space draw from the same pool. Names md reads so read to other
# taggers too: in the first six of these sentences, en_core_web_sm (which no rule consults)
# reads names md read in all six as people 71-85% of the time, names md missed in three or
# more 30% (docs/measurements.md).
READ_CONTEXTS = {
    "first": ["{} said it would rain tomorrow.", "I talked to {} yesterday.", "Ask {} whether the report is ready.",
              "According to {}, the plan failed.", "{} and I went to the game.", "We had lunch with {} on Friday.",
              "{} thinks the bus will be late.", "Have you heard from {} since the party?",
              "The children waved at {}.", "Tell {} I called.", "{} was born in a small town.",
              "Nobody expected {} to win."],
    "last": ["{} told reporters the council would vote again.", "A lawyer for John {} declined to comment.",
             "Mary {} and her brother live nearby.", "The report was written by David {}.",
             "{} scored twice in the second half.", "Police said Sarah {} was questioned.", "Mr {} thanked the staff.",
             "Thomas {} will lead the team next year.", "The award went to Linda {}.", "{} said the deal was fair.",
             "We spoke with Karen {} about the house.", "I met Paul {} at the station."],
}
READ_FILE = "person_names_read.tsv"
PRIOR_LAST = 3000  # surnames measured: rarer ones beside a first name read as companies ("Bradley Murray")


def read_candidates() -> dict[str, tuple[str, ...]]:
    """The names READ_FILE measures, by slot: every census first name a draw may take
    (``lexicons.drawn_first_names`` unbounded) and the PRIOR_LAST commonest surnames."""
    return {"first": lexicons.drawn_first_names(None), "last": lexicons.drawn_surnames(PRIOR_LAST)}


def measure_reads(nlp, names: Sequence[str], slot: str) -> dict[str, int]:
    """In how many of ``READ_CONTEXTS[slot]`` ``nlp`` reads each name as a person."""
    return reads.count_reads(nlp, names, READ_CONTEXTS[slot], {"PERSON"})


def build_read_names(out: Path | None = None) -> Path:
    """Write assets/person_names_read.tsv with spaCy md (a minute; the file is committed)."""
    return reads.build_table(
        out or assets_dir() / READ_FILE, read_candidates(), measure_reads,
        contexts="recover_core.pseudonyms.names.READ_CONTEXTS", n=len(READ_CONTEXTS["first"]),
        what="census name as a person: slot, name, count. The prior draws only names read in all of them.",
        rebuild="from recover_core.pseudonyms.names import build_read_names; build_read_names()")


@functools.lru_cache(maxsize=1)
def read_as_person() -> dict[str, dict[str, int]]:
    """READ_FILE: slot ("first", "last") -> name -> contexts read as a person."""
    return {"first": {}, "last": {}} | reads.load_table(assets_dir() / READ_FILE)


@functools.lru_cache(maxsize=1)
def prior_pools() -> dict[str, list[str]]:
    """What a "prior" draw picks from, by slot and gender, most common first: the names the
    masking NER reads as a person in every READ_CONTEXTS sentence, less those text uses as
    someone or something in particular (``TEXT_FAME``)."""
    from wordfreq import word_frequency

    def plain(name: str, share: dict[str, float]) -> bool:
        return word_frequency(name, "en") * 1e6 / max(share.get(name, 0.0), 1e-4) < TEXT_FAME

    reads = read_as_person()
    slots = {slot: [n for n in names if reads[slot].get(n, 0) == len(READ_CONTEXTS[slot]) and plain(n, census_share(slot))]
             for slot, names in read_candidates().items()}
    g = genders()
    return {"first:m": [n for n in slots["first"] if g[n] == "m"], "first:f": [n for n in slots["first"] if g[n] == "f"],
            "first:": slots["first"], "last": slots["last"]}


@functools.lru_cache(maxsize=1)
def _pool_sets() -> dict[str, frozenset[str]]:
    return {k: frozenset(v) for k, v in _pools().items()}


@functools.lru_cache(maxsize=1)
def _accept_sets() -> dict[str, frozenset[str]]:
    common = frozenset(lexicons.drawn_first_names()[:ACCEPT_FIRST])
    return {k: v & common if k.startswith("first") else v for k, v in _pool_sets().items()}


# Metaphone keeps W, H and Y only before a vowel, so one glide splits names that sound alike
# ("Lewis" LWS, "Luis" LS; "Bryan" BRYN, "Brian" BRN). After the first letter they go; a
# first W or H is a consonant of its own ("William", "Henry").
_GLIDES = str.maketrans("", "", "WHY")


@word_cache(65536)
def sound(word: str) -> str:
    """A rough key for how a word sounds (jellyfish's Metaphone, glides after the first
    letter dropped): equal keys sound alike. Empty for a word without letters."""
    import jellyfish

    letters = "".join(ch for ch in word.lower() if ch.isalpha())
    if not letters:
        return ""
    code = jellyfish.metaphone(letters)
    return code[:1] + code[1:].translate(_GLIDES)


_NOT_WORD = re.compile(r"[^\w'’-]")


def bare(word: str) -> str:
    return _NOT_WORD.sub("", word).lower()


def own_case(word: str) -> str:
    """``bare(word)``, but as the filler wrote it where its case is more than a capital
    letter: an acronym or a name with inner capitals ("NATO", "McDonald's") is not recased
    like the original ("the EU" for "the World Heritage Act" read "Eu", which no tagger
    takes for an organisation)."""
    kept = _NOT_WORD.sub("", word)
    return kept if any(ch.isupper() for ch in kept[1:]) else kept.lower()


def roles(tokens: Sequence[str], title_before: bool) -> list[str]:
    """'title', 'first' or 'last' for each word of a person's name (preiss2023's rules, with
    the census lists deciding a single name where they can)."""
    words = [bare(t) for t in tokens]
    out = ["title" if w.rstrip(".") in TITLES else "" for w in words]
    names_at = [i for i, r in enumerate(out) if not r]
    titled = title_before or any(r == "title" for r in out)
    if len(names_at) == 1:
        w = words[names_at[0]]
        in_first, in_last = w in lexicons.first_names(), w in lexicons.last_names(20000)
        out[names_at[0]] = "last" if titled or (in_last and not in_first) else "first"
    elif names_at:
        for i in names_at:
            out[i] = "first"
        out[names_at[-1]] = "last"
    return out
