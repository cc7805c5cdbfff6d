"""Ages: "47-year-old", "aged 47", "at the age of 47", "49 years of age", "his age is 49", "was
17 at the time". Each moves by the document's keyed age offset (1-3 years), in the original's
wording; its birth dates move back by the same offset (dates.py), so every age agrees with the
dates shown and none tells the true age.
"""
from __future__ import annotations

import random
import re

from recover_core.kinds.base import QUASI, Helpers, Recognizer
from recover_core.text.spoken import in_words


_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
         "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
# an age in words, one to ninety-nine ("eighteen", "forty-seven"), as ``number_word`` writes it
NUMBER_WORD = rf"(?:{'|'.join(_UNITS[1:] + _TENS[2:])})(?:-(?:{'|'.join(_UNITS[1:10])}))?"
NUMBER_WORD_RE = re.compile(rf"(?i)\b{NUMBER_WORD}\b")


class Age(Recognizer):
    label = "AGE"
    profile = QUASI
    strength = 2
    pattern = re.compile(
        r"(?<![\w-])(?:\d{1,3}|[a-z]+(?:-[a-z]+)?)[- ]years?[- ]old(?![\w-])"
        # "aged 22 years", "at the age of 39": from "age" on, as TAB's experts mark it
        r"|(?<!\w)(?:aged?|age of)(?: about)? \d{1,3}(?!\d)(?: years\b(?! (?:old|of age)\b))?"
        # "Grace Okafor, 47, flew": a number set off by commas right after a capitalised name
        r"|(?<=[a-z], )\d{1,2}(?=,)"
        # "49 years of age", "eighteen years of age", "His age is 49", "He was 17 at the time"
        r"|(?<![\w-])(?:\d{1,3}|[a-z]+(?:-[a-z]+)?) years? of age\b"
        r"|(?:(?<=\bage is )|(?<=\bage was ))\d{1,3}(?!\d)"
        r"|(?:(?<=\bwas )|(?<=\bis )|(?<=\bwere ))\d{1,2}(?= (?:at the time|when)\b)", re.I)
    needs = "number"  # a digit or a number word: "eighteen years of age" holds no digit

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # As TAB's experts mark it: "age of 39" whole; "aged 47" the age, "aged 22 years" with its unit.
        g = m.group()
        digits = re.search(r"\d{1,3}", g)
        if re.match(r"(?i)aged? (?!of)", g) and digits:
            return m.start() + digits.start(), m.end()
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        if re.search(r"\d", item):
            return True
        return bool(re.fullmatch(NUMBER_WORD, item.rsplit("-year", 1)[0].rsplit(" year", 1)[0], re.I))



def number_word(n: int) -> str:
    if n < 20:
        return _UNITS[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens] + (f"-{_UNITS[unit]}" if unit else "")


def word_number(word: str) -> int | None:
    low = word.lower()
    for n in range(0, 100):
        if number_word(n) == low:
            return n
    return None


def age(original: str, rng: random.Random, helpers: Helpers) -> str:
    m = re.search(r"\d{1,3}", original)
    words = None if m else re.match(r"[a-z]+(?:-[a-z]+)?", original, re.I)
    years = int(m.group()) if m else (word_number(words.group()) if words else None)
    if years is None:
        raise ValueError("no age")  # redrawn character by character instead
    # every age of the document moves by its one offset, as its birth dates do (Helpers.age_offset)
    new = max(1, years + helpers.age_offset)
    if m:
        return original[: m.start()] + str(new) + original[m.end():]
    assert words is not None
    word = number_word(new)
    return (word.capitalize() if words.group()[:1].isupper() else word) + original[words.end():]


OPERATORS = {"AGE": in_words(age)}
