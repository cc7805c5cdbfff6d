"""Digit strings said in words, as a transcript writes them ("my pin is four four two one",
"nine oh two one oh", "double four"), replaced by other digit words of the same count.
"""
from __future__ import annotations

import random
import re
from typing import Iterator

from recover_core.kinds.base import SOURCE, Helpers, Recognizer, context_re
from recover_core.text.spans import Span


DIGIT_WORDS = {"zero": 0, "oh": 0, "o": 0, "nought": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
               "six": 6, "seven": 7, "eight": 8, "nine": 9, "niner": 9}
REPEATS = {"double": 2, "triple": 3}
# Teens and tens read inside a digit string ("five five five twelve thirty four").
GROUP_WORDS = {"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
               "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred"}
_DIGIT_TOKEN = r"(?:zero|oh|o|nought|one|two|three|four|five|six|seven|eight|nine|niner|ten|eleven|twelve|thirteen|" \
               r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|" \
               r"eighty|ninety|hundred|double|triple)"
DIGIT_WORD_RE = re.compile(r"(?<![\w'])" + _DIGIT_TOKEN + r"(?![\w'])", re.I)


class SpokenDigits(Recognizer):
    """Runs of digit words in a transcript, whatever the case: four digits or more ("my pin
    is four four two one", "nine oh two one oh"), or two or more after a word that asks for
    digits ("the code is two seven"). "two kids", "nineteen ninety nine" and "one or two"
    are not digit strings."""

    label = "SPOKEN_DIGITS"
    needs = "digitword"
    pattern = re.compile(r"(?<![\w'])" + _DIGIT_TOKEN + r"(?:(?:[ ,-]{1,3}|\.{3} ?)" + _DIGIT_TOKEN + r"){0,40}(?![\w'])",
                         re.I)
    context = context_re(r"pin|code|number|no|card|phone|cell|mobile|digits|extension|ext|zip|postcode|account|"
                          r"password|passcode|id|social|ssn|is|it's|at|dial|call")
    STRONG_CONTEXT = context_re(r"pin|code|number|card|phone|cell|mobile|digits|extension|zip|postcode|account|"
                                 r"password|passcode|ssn|social security|dial")

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            toks = [(t.start(), t.end(), t.group().lower()) for t in DIGIT_WORD_RE.finditer(m.group())]
            # trim words that are no digits at either end ("double" at the end, "hundred" at the start)
            while toks and toks[-1][2] in REPEATS:
                toks.pop()
            while toks and toks[0][2] in GROUP_WORDS:
                toks.pop(0)
            if not toks:
                continue
            # "double four" is two digits
            digits = sum(REPEATS[t] - 1 if t in REPEATS else 1 for _, _, t in toks)
            proper = sum(1 for _, _, t in toks if t in DIGIT_WORDS and t not in ("oh", "o"))
            start, end = m.start() + toks[0][0], m.start() + toks[-1][1]
            if proper < 2 or (toks[0][2] in ("oh", "o") and proper < 3):
                continue
            groups = sum(1 for _, _, t in toks if t in GROUP_WORDS)
            if groups and proper < 3:  # "nineteen ninety nine", "twenty two"
                continue
            if digits >= 4 or (digits >= 2 and self.STRONG_CONTEXT.search(text, max(0, start - 32), start)):
                yield Span(start, end, text[start:end], self.label, SOURCE)


DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_GROUPS = ("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty "
           "fifty sixty seventy eighty ninety").split()


def spoken_digits(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Other digit words of the same count; "double" and "triple" stay where they are."""
    def word(tok: str) -> str:
        low = tok.lower()
        if low in ("double", "triple", "hundred"):
            return tok
        if low in _GROUPS:
            new = rng.choice([g for g in _GROUPS if (g.endswith("ty")) == low.endswith("ty")])
        else:
            n = rng.randrange(10)
            new = ("oh" if low in ("oh", "o") else "zero") if n == 0 else DIGIT_NAMES[n]
        return new.upper() if tok.isupper() and len(tok) > 1 else new.capitalize() if tok[:1].isupper() else new

    out = original
    for _ in range(20):
        out = re.sub(r"[A-Za-z]+", lambda m: word(m.group()), original)
        if out.lower() != original.lower():
            break
    return out


OPERATORS = {"SPOKEN_DIGITS": spoken_digits}
