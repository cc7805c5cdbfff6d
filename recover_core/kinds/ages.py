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


def _after(words: tuple[str, ...]) -> str:
    # one fixed-width look-behind per cue: Python's look-behinds cannot vary in width
    return "(?:" + "|".join(rf"(?<=\b{w} )" for w in words) + ")"


# Where a bare number is a person's age as people say it: after a birthday's verb ("turned 40",
# "turning forty"), or a person's "is"/"was" ("she's 50", "I was 19"); a number after "it's" is
# a time or a price, and after a name it may be anything.
_PEOPLE_BE = ("i am", "i was", "he is", "he was", "she is", "she was", "you are", "you were", "we are", "we were",
              "they are", "they were") + tuple(f"{p}{apostrophe}{be}" for p, be in (("i", "m"), ("he", "s"), ("she", "s"),
                                                                                  ("you", "re"), ("we", "re"), ("they", "re"))
                                                 for apostrophe in "'’")
AGE_CUE = _after(("turned", "turns", "turning") + _PEOPLE_BE)
# What may follow an age said bare: the clause's end, a conjunction, a pronoun, or a time
# ("she's 50 and ...", "when I turned 40 I changed", "he turned 18 last week"); never a noun.
NO_NOUN_AFTER = (r"(?=\s*(?:[.,;:!?]|$)|\s(?:and|but|or|so|when|then|now|at|in|on|last|this|that|before|after|i|he|"
                 r"she|we|they|you)(?![\w'-]))")


class Age(Recognizer):
    label = "AGE"
    profile = QUASI
    strength = 2
    pattern = re.compile(
        # "47 years old", and a child's "6 months old", "10 days old"
        r"(?<![\w-])(?:\d{1,3}|[a-z]+(?:-[a-z]+)?)[- ](?:years?|months?|weeks?|days?)[- ]old(?![\w-])"
        # "4 and 7 years old", "ten, twelve and fifteen years old": each age before the last of a
        # list whose last says what they are
        rf"|(?<![\w-])(?:\d{{1,3}}|{NUMBER_WORD})(?=(?:,? (?:and|or) |, )(?:(?:\d{{1,3}}|{NUMBER_WORD})(?:,? (?:and|or) |, ))?"
        rf"(?:\d{{1,3}}|{NUMBER_WORD})[- ](?:years?|months?)[- ]old(?![\w-]))"
        # "aged 22 years", "at the age of 39": from "age" on, as TAB's experts mark it
        r"|(?<!\w)(?:aged?|age of)(?: about)? \d{1,3}(?!\d)(?: years\b(?! (?:old|of age)\b))?"
        # "Grace Okafor, 47, flew": a number set off by commas right after a capitalised name
        r"|(?<=[a-z], )\d{1,2}(?=,)"
        # "49 years of age", "eighteen years of age", "His age is 49", "He was 17 at the time"
        r"|(?<![\w-])(?:\d{1,3}|[a-z]+(?:-[a-z]+)?) years? of age\b"
        r"|(?:(?<=\bage is )|(?<=\bage was ))\d{1,3}(?!\d)"
        r"|(?:(?<=\bwas )|(?<=\bis )|(?<=\bwere ))\d{1,2}(?= (?:at the time|when)\b)"
        # "when I turned 40 I ...", "she's 50 and ...": a bare number after a turn or a person's
        # "is", where no noun follows it (not "turned 40 pages", "he's 6 foot")
        rf"|{AGE_CUE}\d{{1,3}}(?!\d){NO_NOUN_AFTER}", re.I)
    needs = "number"  # a digit or a number word: "eighteen years of age" holds no digit

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # As TAB's experts mark it: "age of 39" whole; "aged 47" the age, "aged 22 years" with its unit.
        g = m.group()
        digits = re.search(r"\d{1,3}", g)
        if re.match(r"(?i)aged? (?!of)", g) and digits:
            return m.start() + digits.start(), m.end()
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        if re.fullmatch(r"\d{1,3}", item):
            return 1 <= int(item) <= 120  # "she's 50"; "we're 300" is no one's age
        if re.search(r"\d", item):
            return True
        return bool(re.fullmatch(NUMBER_WORD, re.split(r"[- ](?:year|month|week|day)", item, maxsplit=1)[0], re.I))



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
    if m:  # every age said ("38, 39 maybe") moves by the one offset
        return re.sub(r"(?<!\d)\d{1,3}(?!\d)", lambda n: str(max(1, int(n.group()) + helpers.age_offset)), original)
    assert words is not None
    word = number_word(new)
    return (word.capitalize() if words.group()[:1].isupper() else word) + original[words.end():]


OPERATORS = {"AGE": in_words(age)}
