"""Nationalities and groups said of a person ("a Turkish national", "of Kurdish origin"),
replaced by another nationality in the original's form: an adjective for an adjective, a plural
for a plural, the word after it kept ("a Turkish national" -> "a Dutch national").
"""
from __future__ import annotations

import random
import re

from recover_core.data import countries, lexicons
from recover_core.data.lexicons import everyday
from recover_core.kinds.base import QUASI, Helpers, Recognizer


# Words that tie a nationality or group to a person: "a Nigerian woman", "of Kurdish origin",
# "a Turkish national". A group word alone ("Turkish law", "the Russian Government") is left
# to entityTagger, which reads its context.
_PERSON_AFTER = (r"(?:national|nationals|citizen|citizens|woman|women|man|men|girl|boy|person|people|origin|"
                 r"descent|ethnicity|background|family|families|community|applicant|applicants|mother|father|"
                 r"wife|husband|son|daughter|nurse|doctor|student|worker|workers|refugee|refugees|minority|"
                 r"nationality|passport|extraction)")


class Nationality(Recognizer):
    label = "NATIONALITY"
    profile = QUASI
    needs = None
    strength = 1
    # "a Turkish national": the word after it is part of the mention (it says what the group word is)
    pattern = re.compile(rf"(?<![\w-])(?:[A-Z][a-z]+(?:-[A-Z][a-z]+)?)(?= (?:{_PERSON_AFTER})\b)(?: (?:nationals?|citizens?)\b)?"
                         rf"|(?<=\bof )[A-Z][a-z]+(?= (?:origin|descent|nationality|extraction)\b)"
                         rf"|(?:(?<=\bis )|(?<=\bwas )|(?<=\bare )|(?<=\bwere ))[A-Z][a-z]+(?=[.,;])")

    def validate(self, item: str, text: str, start: int) -> bool:
        words = item.split()
        # the group word: "Turkish" of "Turkish national", "Leonean" of "Sierra Leonean national"
        return is_group_word(words[1] if len(words) > 1 and words[1][:1].isupper() else words[0])

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # a two-word country's people ("a Sierra Leonean national", "a Sri Lankan citizen"): the
        # word before belongs to the mention (the tagger read "Sierra" as a person's name)
        before = re.search(r"(?<![\w-])([A-Z][a-z]+) $", m.string[max(0, m.start() - 20):m.start()])
        if before and _two_word_country(before.group(1), m.group().split()[0]):
            return m.start() - len(before.group(1)) - 1, m.end()
        return m.start(), m.end()


def _two_word_country(first: str, group: str) -> bool:
    """Whether ``first`` and a word that ``group`` is made from name a country ("Sierra"
    "Leonean": Sierra Leone)."""
    return any(c.startswith(first.lower() + " ") and c.split()[1][:4] == group.lower()[:4]
               for c in countries.country_names())


def is_group_word(word: str) -> bool:
    """A demonym or group adjective: on the group list, or shaped like one ("Moldovan",
    "Azerbaijani", "Kurdish"): a capitalised word ending as demonyms do, that is no everyday word."""
    low = word.lower()
    if low in _group_words():
        return True
    return bool(re.fullmatch(r"[a-z]{3,}(?:an|ian|ean|ese|ish|i|ic|ch)", low)) and not _is_everyday(low)


def _group_words() -> frozenset[str]:
    return lexicons.nationalities()


def _is_everyday(low: str) -> bool:
    return everyday(low)


def nationality(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another nationality in the original's form: an adjective for an adjective, a plural for a
    plural; the word after it stays ("a Turkish national" -> "a Dutch national")."""
    m = re.match(r"((?:[A-Z][\w-]* )*[A-Z][\w-]*)(?: (.*))?$", original)  # "Sierra Leonean" | "national"
    word_, rest = (m.group(1), m.group(2) or "") if m else original.partition(" ")[::2]
    low = word_.lower()
    plural = low in lexicons.plural_groups()
    pool = [w for w in lexicons.GROUP_KINDS["nationality"] if w.lower() != low and w.lower() + "s" != low]
    if plural:
        pool = [p for w in pool if (p := lexicons.group_plural(w))]
    # any first sound: "a"/"an" before it is made to agree where the text is put together
    # (pseudonyms/apply.py), so the substitute's sound tells nothing of the original's
    word = rng.choice(pool)
    word = word.upper() if word_.isupper() and len(word_) > 1 else word
    return f"{word} {rest}" if rest else word


OPERATORS = {"NATIONALITY": nationality}
