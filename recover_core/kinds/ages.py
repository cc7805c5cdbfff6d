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


class Age(Recognizer):
    label = "AGE"
    profile = QUASI
    strength = 2
    pattern = re.compile(
        r"(?<![\w-])(?:\d{1,3}|[a-z]+(?:-[a-z]+)?)[- ]years?[- ]old(?![\w-])"
        r"|(?<!\w)(?:aged|age|at the age of|age of)(?: about)? \d{1,3}(?!\d)"
        # "Grace Okafor, 47, flew": a number set off by commas right after a capitalised name
        r"|(?<=[a-z], )\d{1,2}(?=,)"
        # "49 years of age", "His age is 49", "He was 17 at the time"
        r"|(?<![\w-])\d{1,3}(?= years? of age\b)|(?:(?<=\bage is )|(?<=\bage was ))\d{1,3}(?!\d)"
        r"|(?:(?<=\bwas )|(?<=\bis )|(?<=\bwere ))\d{1,2}(?= (?:at the time|when)\b)", re.I)
    _NUMBER_WORD = re.compile(r"(?i)(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                              r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
                              r"sixty|seventy|eighty|ninety)(?:-(?:one|two|three|four|five|six|seven|eight|nine))?")

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # "aged 47": the age only; "the age of" stays, as TAB's experts leave it.
        g = m.group()
        digits = re.search(r"\d{1,3}", g)
        if not g[:1].isdigit() and digits and not re.search(r"years?[- ]old", g, re.I):
            return m.start() + digits.start(), m.start() + digits.end()
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        head = re.split(r"[- ]", item)[0]
        return head.isdigit() or bool(self._NUMBER_WORD.fullmatch(item.rsplit("-year", 1)[0].rsplit(" year", 1)[0]))


_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
         "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


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
