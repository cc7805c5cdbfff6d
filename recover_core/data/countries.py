"""Countries as a text names them: their plain and formal names ("the Republic of Turkey", "the
United Kingdom of Great Britain and Northern Ireland"), and the ones written with "the"."""
from __future__ import annotations

import functools
import re

from recover_core.data.lexicons import first_names, geonames, last_names

# A state's formal names: "the United Kingdom of Great Britain and Northern Ireland", "the Republic
# of Turkey", "the Russian Federation", "the Hellenic Republic".
_COUNTRY_ALIASES = {"united states of america": "united states", "usa": "united states", "uk": "united kingdom",
                    "britain": "united kingdom", "great britain": "united kingdom", "russian federation": "russia",
                    "hellenic republic": "greece", "helvetic confederation": "switzerland"}
_FORMAL = re.compile(r"^(?:(?:federal |socialist |democratic |islamic |people's |hellenic |slovak |czech |italian |"
                     r"french |portuguese |polish |turkish |lithuanian |latvian |estonian )*republic|kingdom|"
                     r"grand duchy|principality|federation|state|commonwealth) of (?:the )?")


def country_name(text: str, formal: bool = True) -> str | None:
    """The country ``text`` names, in any of its written forms (``formal``: "the Republic of
    Turkey" too), lower-case; None for anything else."""
    low = re.sub(r"^the ", "", text.strip().lower())
    low = re.sub(r" of great britain and northern ireland$", "", low)
    low = _COUNTRY_ALIASES.get(low, low)
    if low in _country_names_lower():
        return low
    if not formal:
        return None
    bare = _FORMAL.sub("", low)
    bare = _COUNTRY_ALIASES.get(bare, bare)
    return bare if bare != low and bare in _country_names_lower() else None


def is_country(text: str) -> bool:
    return country_name(text) is not None


def is_country_not_a_name(text: str) -> bool:
    """A country's name that is no one's: of several words ("Sierra Leone", "Burkina Faso"), or
    one that no census first or last name spells ("Peru"; "Jordan", "Chad", "India" may be a person's)."""
    if not is_country(text):
        return False
    low = text.split()[0].lower()
    return len(text.split()) > 1 or (low not in first_names() and low not in last_names())


@functools.lru_cache(maxsize=1)
def _country_names_lower() -> frozenset[str]:
    return frozenset(c.lower() for c in geonames().countries)


def country_names() -> frozenset[str]:
    """Every country's plain name, lower case ("sierra leone")."""
    return _country_names_lower()


# Countries named with "the" ("into the Netherlands"): a substitute keeps the sentence right.
THE_COUNTRIES = frozenset("""united states|united kingdom|netherlands|czech republic|philippines|gambia|bahamas|
maldives|united arab emirates|dominican republic|central african republic|comoros|seychelles|solomon islands|
marshall islands|democratic republic of the congo|republic of the congo|vatican""".replace("\n", "").split("|"))
