"""Quasi-identifiers said aloud, as a transcript writes them in words (issue 85).

Whisper writes "forty seven years old", "the fourteenth of march nineteen sixty", "three
hundred thousand pounds" in words, lower case, often without punctuation; the figure kinds'
recognizers read figures and a few short number words. These find the same kinds in words, with
the same labels, so the same operators replace them (through text/spoken.in_words):

* EVENT_DATE: "the fourteenth of march nineteen sixty", "march the fourteenth", "november
  nineteen eighty nine", "in nineteen sixty" (a year said alone only after a word that dates);
* DATE_OF_BIRTH: the same after "born" (``said_born``): moved with the document's ages;
* AGE: "forty seven years old", "six months old", "aged seventy two", "at the age of sixty", "she
  was seventy two when ...", "she's fifty and ...", "when I turned forty I ...";
* AMOUNT: "three hundred thousand pounds", "two and a half million euros", "about a million
  dollars"; without a currency, "eighty grand", "thirty five thousand a year";
* DURATION: "six months", "twenty five years", "a hundred and twenty days".

A number said digit by digit ("five five five one two") stays SPOKEN_DIGITS'.
"""
from __future__ import annotations

import re

from recover_core.kinds.ages import AGE_CUE, NO_NOUN_AFTER
from recover_core.kinds.base import QUASI, Recognizer
from recover_core.kinds.quantities import ROUGHLY, TIME_UNIT
from recover_core.text.dates import YEAR, said_born
from recover_core.text.shapes import CURRENCY_WORD, MONTHS
from recover_core.text.spoken import BELOW_100, CARDINAL, DAY_ORDINAL, SPOKEN_YEAR, read

# A month said in full: a speaker does not say "Sept."
_MONTH = "(?:" + "|".join(MONTHS) + r")(?![\w'])"
_ANY_YEAR = rf"(?:{SPOKEN_YEAR}|{YEAR}(?!\d))"
# Words after which a year said alone dates something ("in nineteen sixty", "since twenty ten")
_DATING = ("in", "since", "until", "till", "by", "from", "during", "before", "after")
_EDGE = r"(?<![\w'-])"
_SCALE = r"(?:thousand|million|billion)(?![\w'])"


def _after(words: tuple[str, ...]) -> str:
    # one fixed-width look-behind per word: Python's look-behinds cannot vary in width
    return "(?:" + "|".join(rf"(?<=\b{w} )" for w in words) + ")"


class SpokenDate(Recognizer):
    label = "EVENT_DATE"
    profile = QUASI
    needs = None  # words, no digit
    strength = 3  # as EventDate: over a count or a run of digit words on the same words
    pattern = re.compile(
        rf"{_EDGE}(?:"
        rf"(?:the )?{DAY_ORDINAL}(?: of)? {_MONTH}(?:,? {_ANY_YEAR})?"
        rf"|{_MONTH},? (?:the )?{DAY_ORDINAL}(?:,? {_ANY_YEAR})?"
        rf"|{_MONTH},? {SPOKEN_YEAR}"
        rf"|{_after(_DATING)}{SPOKEN_YEAR}"
        rf")(?![\w'-])", re.I)

    # "the" of "the fourteenth" is in the span: under the year policy the day goes, and its
    # "the" with it (text/spoken.in_words), or "on the nineteen sixty" would be left

    def validate(self, item: str, text: str, start: int) -> bool:
        return bool(read(item, years=True)) and not said_born(text, start)


class SpokenBirthDate(SpokenDate):
    """A birth date said in words ("born on the ninth of november nineteen eighty nine"): a
    direct identifier, as DateOfBirth in figures is; moved with the document's ages."""

    label = "DATE_OF_BIRTH"
    profile = "direct"
    strength = 4  # as BirthYear: over EVENT_DATE on the same words

    def validate(self, item: str, text: str, start: int) -> bool:
        return bool(read(item, years=True)) and said_born(text, start)


class SpokenBirthYear(Recognizer):
    """"born in nineteen fifty one": the year moves with the ages, as BirthYear's does."""

    label = "DATE_OF_BIRTH"
    profile = QUASI
    needs = None
    strength = 4
    pattern = re.compile(rf"(?<=\bborn in ){SPOKEN_YEAR}(?![\w'-])", re.I)


class SpokenAge(Recognizer):
    label = "AGE"
    profile = QUASI
    needs = None
    strength = 3  # over a duration ("forty seven years") or digit words on the same words
    pattern = re.compile(
        rf"{_EDGE}{CARDINAL}[- ](?:years?|months?|weeks?|days?)[- ]old(?![\w'-])"
        rf"|{_after(('aged', 'age of', 'age is', 'age was'))}(?:about )?{CARDINAL}(?![\w'-])"
        # "she was seventy two when she sold the house", "he was sixty at the time"
        rf"|{_after(('was', 'is', 'were'))}{CARDINAL}(?= (?:at the time|when)\b)"
        # "she's fifty and ...", "when I turned forty I ...": as Age's bare figures
        rf"|{AGE_CUE}{CARDINAL}{NO_NOUN_AFTER}", re.I)

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        head = re.match(r"(?i)about ", m.group())  # "aged about sixty": the age only
        return m.start() + (len(head.group()) if head else 0), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        said = read(item)
        return bool(said) and 1 <= said[0].value <= 120


class SpokenAmount(Recognizer):
    """A sum said in words with its currency: "three hundred thousand pounds", "about a million
    dollars". Amount finds the short ones too ("five hundred euros"); this one the whole of a
    long one ("forty seven thousand five hundred pounds")."""

    label = "AMOUNT"
    profile = QUASI
    needs = None
    strength = 2
    # "two and a half million euros": the half belongs to the sum
    pattern = re.compile(rf"{_EDGE}{ROUGHLY}{CARDINAL}(?: and a half(?: {_SCALE})?)? {CURRENCY_WORD}(?![\w'-])", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        return bool(read(item))


_NUMBER = rf"(?:\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?|{CARDINAL})"


class SpokenSum(Recognizer):
    """A sum as people say it, without a currency: in slang ("eighty grand", "fifty quid",
    "200 bucks") or as a wage or rent ("thirty five thousand a year", "900 a month"; from a
    hundred up: "twenty a day" is more likely a count)."""

    label = "AMOUNT"
    profile = QUASI
    needs = None
    strength = 2
    pattern = re.compile(
        rf"{_EDGE}{ROUGHLY}{_NUMBER}(?: and a half)?(?: {_SCALE})? (?:grand|quid|bucks)(?![\w'-])"
        rf"|{_EDGE}{ROUGHLY}{_NUMBER}(?: {_SCALE})?(?= (?:a|an|per) (?:year|month|week)\b)", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        if re.search(r"(?i)(?:grand|quid|bucks)$", item):
            return True
        said = read(item)
        number = said[-1].value if said else float(re.sub(r"[^\d.]", "", item) or 0)
        scaled = re.search(rf"(?i) {_SCALE}$", item) is not None
        return scaled or number >= 100


class SpokenDuration(Recognizer):
    """How long, in words: "six months", "twenty five years", "a hundred and twenty days"."""

    label = "DURATION"
    profile = QUASI
    needs = None
    strength = 2
    _ONE = rf"{CARDINAL}(?: and a half)? {TIME_UNIT}"
    pattern = re.compile(rf"{_EDGE}{_ONE}(?:(?:,| and) {_ONE})?(?![\w'-])", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        # not "forty seven years old" (an age) nor "years of age"
        after = text[start + len(item):start + len(item) + 8]
        return bool(read(item)) and not re.match(r"[- ](?:old|of age)\b", after, re.I)


# --- values said bare, as people say them on a call (bench/spoken_quasi.py --set heldout) ----------
# Whisper writes most of them in figures ("in 98.", "on the 9th.", "at 23", "2.5 million"), so each
# takes figures and words alike. A bare number is a value only where nothing follows it that it
# could count: the clause's end, a conjunction or a pronoun (NO_NOUN_AFTER), never more figures.
_BARE = rf"(?![\w'-])(?![.,:]\d){NO_NOUN_AFTER}"
_D_UNIT = "(?:one|two|three|four|five|six|seven|eight|nine)"
_D_TENS = "(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
# a year in two digits: "'98", "06", "87" (from 30), "oh six", "ninety eight"
_SHORT_YEAR = (rf"(?:'\d\d|0\d|[3-9]\d|oh[- ]{_D_UNIT}|(?:thirty|forty|fifty|sixty|seventy|eighty|ninety)"
               rf"(?:[- ]{_D_UNIT})?)")


class SpokenShortYear(Recognizer):
    """A year said in two digits after a word that dates ("in ninety eight", "since oh six") or
    a month ("March of eighty seven"): moved as a year, said back in two digits."""

    label = "EVENT_DATE"
    profile = QUASI
    needs = None
    strength = 3  # over "March" alone (EventDate's "in March")
    pattern = re.compile(rf"{_after(_DATING)}{_SHORT_YEAR}{_BARE}"
                         rf"|{_EDGE}{_MONTH}(?: of|,? (?='))? (?:'?\d\d|{_SHORT_YEAR})(?![\w'-])", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        return not said_born(text, start)


class SpokenShortBirthYear(SpokenShortYear):
    """"born in sixty two": the year moves with the ages, as BirthYear's does."""

    label = "DATE_OF_BIRTH"
    strength = 4
    pattern = re.compile(rf"(?<=\bborn in ){_SHORT_YEAR}{_BARE}"
                         rf"|{_EDGE}{_MONTH}(?: of|,? (?='))? (?:'?\d\d|{_SHORT_YEAR})(?![\w'-])", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        return said_born(text, start)


class SpokenDay(Recognizer):
    """A day of the month said alone: "on the ninth", "booked for the 29th"; not "on the second
    floor" (a noun after it)."""

    label = "EVENT_DATE"
    profile = QUASI
    needs = None
    strength = 3
    pattern = re.compile(rf"{_after(('on', 'for', 'by', 'until', 'till', 'from', 'since', 'before', 'after'))}"
                         rf"the (?:{DAY_ORDINAL}|(?:[12]?\d|3[01])(?:st|nd|rd|th)){_BARE}", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        return not said_born(text, start)


_AGE_NUMBER = rf"(?:\d{{1,3}}|{CARDINAL})"
_OLDER = rf"(?:1[3-9]|[2-9]\d|(?:thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)|{_D_TENS}(?:[- ]{_D_UNIT})?)"
# who has an age: a person's noun ("a woman of seventy"), a relative ("our youngest is two")
_PERSON = ("man", "woman", "boy", "girl", "lady", "gentleman", "person", "child", "patient")
_KIN = ("son", "daughter", "youngest", "eldest", "oldest", "baby", "brother", "sister", "husband", "wife", "mother",
        "father", "mum", "mom", "dad", "grandson", "granddaughter", "kid", "child")
_KIN_BE = tuple(f"{k} is" for k in _KIN) + tuple(f"{k}{a}s" for k in _KIN for a in "'’")
_HEDGE = r"(?=,? (?:maybe|perhaps|probably|i think|or so)\b|\s*[.,;:!?]|$)"


class SaidAge(Recognizer):
    """An age said bare where its context says it is one: "joined at twenty three" (13 and up:
    "at five" is a time), "a woman of seventy", "our youngest is two and a half", and a
    speaker's second guess with the first ("I was thirty eight, thirty nine maybe"): one span,
    each number moved by the document's age offset."""

    label = "AGE"
    profile = QUASI
    needs = None
    strength = 3
    pattern = re.compile(
        rf"{_after(('at',))}{_OLDER}{_BARE}"
        rf"|{_after(tuple(f'{p} of' for p in _PERSON))}{_AGE_NUMBER}{_BARE}"
        rf"|{_after(_KIN_BE)}"
        rf"{_AGE_NUMBER}(?: and a half)?{_BARE}"
        rf"|{AGE_CUE}{_AGE_NUMBER}(?:, | or | to ){_AGE_NUMBER}{_HEDGE}", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        numbers = [int(n) for n in re.findall(r"\d+", item)] + [s.value for s in read(item)]
        return bool(numbers) and all(1 <= n <= 120 for n in numbers)


# Words that say a sum is meant: a bare number after them is money ("the quote they gave us was 19,400")
_MONEY = ("cost|costs|costing|paid|pay|pays|paying|owe|owes|owed|worth|charge|charged|charges|price|priced|quote|"
          "quoted|bill|fee|fees|rent|salary|wage|wages|deposit|loan|mortgage|debt|spent|spend|sold|bought|earn|earns|"
          "earned|offered|offer|asking|budget|savings|inherited|borrowed|lent")


class SaidSum(Recognizer):
    """A sum said without its currency where nothing else could be meant: scaled by a million
    or a billion with no noun after it ("asking 2.5 million for the business", "a million and
    a half", "half a million"), or a number from a hundred up after a word of money ("the
    quote they gave us was 19,400"); and pence or cents said after the whole ("nine pounds
    ninety", "42 dollars and 60 cents"), one sum with them."""

    label = "AMOUNT"
    profile = QUASI
    needs = None
    strength = 3  # over the whole alone ("9 pounds")
    pattern = re.compile(
        # not after a currency sign: "$1.2 million" is Amount's, sign and all (else said without it)
        rf"(?<![\w'$£€¥.,-]){ROUGHLY}(?:half a|\d+(?:\.\d+)?|{CARDINAL}) (?:million|billion)(?: and a half)?"
        rf"(?![\w'-])(?![.,:]\d)(?:{NO_NOUN_AFTER}|(?= (?:for|to|from)\b))"
        rf"|{_EDGE}(?:\d+|{CARDINAL}) (?:pounds|dollars|euros|quid|bucks) (?:and )?(?:\d\d|{BELOW_100})"
        rf"(?: (?:pence|p|cents?))?(?![\w'-])", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        return not re.search(r"(?i)\bthanks? (?:you )?$", text[max(0, start - 10):start])  # "thanks a million"


class SaidMoneySum(Recognizer):
    """A number from a hundred up, with no noun after it, after a word of money: "the quote they
    gave us was 19,400". Weakest: a sum with its currency on the same words ("paid EUR 5,000")
    is Amount's."""

    label = "AMOUNT"
    profile = QUASI
    needs = None
    strength = 1
    pattern = re.compile(rf"\b(?:{_MONEY})\b(?:[ ,]+[\w']+){{0,4}}? (?P<n>\d{{1,3}}(?:,\d{{3}})+|\d{{3,}}|{CARDINAL})"
                         rf"{_BARE}", re.I)

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        return m.start("n"), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        said = read(item)
        return (said[-1].value if said else int(re.sub(r"\D", "", item) or 0)) >= 100


RECOGNIZERS: tuple[Recognizer, ...] = (SpokenBirthDate(), SpokenBirthYear(), SpokenDate(), SpokenAge(), SpokenAmount(),
                                       SpokenSum(), SpokenDuration(), SpokenShortBirthYear(), SpokenShortYear(),
                                       SpokenDay(), SaidAge(), SaidSum(), SaidMoneySum())
