"""Numbers said aloud, as a transcript writes them: read into digits and written back in words.

Whisper writes a number sometimes in figures ("47 years old") and often in words ("forty seven
years old", "the fourteenth of march nineteen sixty", "three hundred thousand pounds"). The
quasi-identifier operators (kinds/dates.py, ages.py, quantities.py) read figures; rather
than teach each of them words, ``in_words`` wraps one: the span's spoken numbers become figures,
the operator moves or scales them as it does any written number (one policy for text and
speech), and the figures it returns are said again in the original's own spoken form (a year as
a year, "nineteen sixty one"; a day as an ordinal, "the ninth"; a sum in words, "four hundred
thousand"), its case, hyphens and "and" kept.

The patterns here (``CARDINAL``, ``DAY_ORDINAL``, ``SPOKEN_YEAR``) are what the recognizers of
spoken quasi-identifiers (kinds/spoken.py) find. Reading a number's value is text2num's
(``text_to_num``); writing one is num2words'. This module imports neither masking/ nor
pseudonyms/: an operator reaches it as a plain function.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Any, Callable

from num2words import num2words
from text_to_num import text2num

_UNITS = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def _alt(words: list[str]) -> str:
    # each word whole: "six" never matches the head of "sixty" or "sixteen"
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")(?![\w'])"


_UNIT = _alt(_UNITS)
_TEEN = _alt(_TEENS)
_TEN = _alt(_TENS)
# 1-99: "forty seven", "forty-seven", "twelve", "six"
BELOW_100 = rf"(?:{_TEN}(?:[- ]{_UNIT})?|{_TEEN}|{_UNIT})"
_TEN_TO_99 = rf"(?:{_TEN}(?:[- ]{_UNIT})?|{_TEEN})"
# 1-999: "three hundred", "a hundred and fifty", "one hundred fifty"
_GROUP = rf"(?:(?:a|{_UNIT}) hundred(?![\w'])(?:(?: and)? {BELOW_100})?|{BELOW_100})"
_SCALE = r"(?:thousand|million|billion)(?![\w'])"
# Any whole number said in words: "forty seven thousand five hundred", "a million", "three
# hundred thousand". A group follows another only after a scale word, so "two three" (digits
# said one by one: SPOKEN_DIGITS') is two numbers, not one.
CARDINAL = rf"(?:{_GROUP}|(?:half )?a(?= {_SCALE}))(?: {_SCALE}(?:,?(?: and)? {_GROUP}(?! {_SCALE}))?)*"

_ORDINAL_UNITS = "first second third fourth fifth sixth seventh eighth ninth".split()
_ORDINAL_TEENS = ("tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth "
                  "nineteenth").split()
# A day of the month said as an ordinal, 1-31: "the ninth", "twenty first", "thirty-first"
DAY_ORDINAL = (rf"(?:(?:twenty)[- ]{_alt(_ORDINAL_UNITS)}|thirty[- ]first(?![\w'])|"
               rf"{_alt(['twentieth', 'thirtieth'] + _ORDINAL_TEENS + _ORDINAL_UNITS)})")
# A year said as a person says it, 1600-2099: "nineteen sixty", "nineteen eighty nine",
# "nineteen oh five", "nineteen hundred", "twenty ten", "two thousand and five"
SPOKEN_YEAR = (rf"(?:(?:sixteen|seventeen|eighteen|nineteen) (?:hundred(?![\w'])|oh[- ]{_UNIT}|{_TEN_TO_99})"
               rf"|twenty (?:oh[- ]{_UNIT}|{_TEN_TO_99})"
               rf"|two thousand(?![\w'])(?:(?: and)? {BELOW_100})?)")

_ORDINAL_AS_CARDINAL = {"first": "one", "second": "two", "third": "three", "fifth": "five", "eighth": "eight",
                        "ninth": "nine", "twelfth": "twelve", "twentieth": "twenty", "thirtieth": "thirty"}

_YEAR_RE = re.compile(rf"(?<![\w'-]){SPOKEN_YEAR}(?![\w'-])", re.I)
# a year said in two digits with its "oh" ("since oh six"): "06" in figures
_OH_RE = re.compile(rf"(?<![\w'-])oh[- ]{_UNIT}(?![\w'-])", re.I)
_ORDINAL_RE = re.compile(rf"(?<![\w'-]){DAY_ORDINAL}(?![\w'-])", re.I)
_CARDINAL_RE = re.compile(rf"(?<![\w'-]){CARDINAL}(?![\w'-])", re.I)


@dataclass(frozen=True)
class Said:
    """One number said in words: where it is, its value, and how it was said."""

    start: int
    end: int
    value: int
    kind: str  # "cardinal", "ordinal", "year" or "oh" (a two-digit year under ten: "oh six")
    words: str


def _value(words: str) -> int:
    """The value of a cardinal said in words (text2num), "a hundred" read as "one hundred"."""
    low = re.sub(r"^a ", "one ", words.lower().replace(",", ""))
    if half := re.fullmatch(r"half a (thousand|million|billion)", low):  # "half a million"
        return int(text2num(f"one {half[1]}", "en")) // 2
    return int(text2num(low, "en"))


def _ordinal_value(words: str) -> int:
    # text2num reads cardinals; an ordinal's last word is turned back into its cardinal first
    # ("twenty first" -> "twenty one", "fourteenth" -> "fourteen")
    head, _, last = words.lower().replace("-", " ").rpartition(" ")
    last = _ORDINAL_AS_CARDINAL.get(last) or re.sub(r"th$", "", last)
    return _value(f"{head} {last}".strip())


def _year_value(words: str) -> int:
    """A spoken year's value: "two thousand and five" is a cardinal; otherwise it is said in two
    halves, century then the rest ("nineteen | eighty nine", "nineteen | oh five", "nineteen | hundred")."""
    low = words.lower()
    if low.startswith("two thousand"):
        return _value(low)
    century, _, rest = low.partition(" ")
    rest = rest.replace("-", " ")
    if rest == "hundred":
        return _value(century) * 100
    return _value(century) * 100 + _value(re.sub(r"^oh ", "", rest))


def read(text: str, years: bool = False) -> list[Said]:
    """The numbers ``text`` says in words, in order (years only where ``years``: "nineteen sixty"
    in a date is a year; in a sum, "nineteen hundred pounds" is a cardinal). Numbers in figures
    are left out; a run text2num cannot read is left out too."""
    found: list[Said] = []
    taken: list[tuple[int, int]] = []
    kinds = ([("year", _YEAR_RE, _year_value), ("oh", _OH_RE, lambda w: _value(w[3:]))] if years else []) + [("ordinal", _ORDINAL_RE, _ordinal_value),
                                                                    ("cardinal", _CARDINAL_RE, _value)]
    for kind, pattern, value in kinds:
        for m in pattern.finditer(text):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            try:
                n = value(m.group())
            except ValueError:
                continue
            found.append(Said(m.start(), m.end(), n, kind, m.group()))
            taken.append((m.start(), m.end()))
    return sorted(found, key=lambda s: s.start)


def _figures(s: Said) -> str:
    if s.kind == "oh":
        return f"{s.value:02d}"
    if s.kind == "ordinal":
        return f"{s.value}{_suffix(s.value)}"
    return str(s.value)


def _suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def in_figures(text: str, said: list[Said]) -> str:
    """``text`` with each spoken number of ``said`` written in figures ("the 14th of march 1960")."""
    out = text
    for s in reversed(said):
        out = out[: s.start] + _figures(s) + out[s.end:]
    return out


def say(value: int, kind: str, like: str = "") -> str:
    """``value`` in words as ``like`` says its number: a year as a year ("nineteen sixty one",
    "two thousand and five" where ``like`` says "thousand"), a day as an ordinal ("ninth"), any
    other number as a cardinal ("four hundred thousand"); with hyphens and "and" only where
    ``like`` has them, "a hundred" where it says "a", its first capital where it has one."""
    if kind == "oh":  # a year in two digits: "oh six" under ten, "twelve" from ten
        if value == 0:  # "'00" is said as its whole year, not "oh zero"
            return "Two thousand" if like[:1].isupper() else "two thousand"
        if value < 10:
            return f"{'Oh' if like[:1].isupper() else 'oh'} {num2words(value)}"
        kind = "cardinal"
    if kind == "year" and not re.search(r"thousand", like, re.I) and 1100 <= value <= 2099:
        words = num2words(value, to="year")
    elif kind == "ordinal":
        words = num2words(value, to="ordinal")
    else:
        words = num2words(value)
    words = words.replace(",", "")
    if not re.search(r"\band\b", like, re.I) and like:
        words = re.sub(r" and\b", "", words)  # "one hundred fifty", as an American speaker says it
    if "-" not in like:
        words = words.replace("-", " ")  # transcripts without punctuation: "forty seven"
    if re.match(r"(?i)a (?:hundred|thousand|million|billion)\b", like):
        words = re.sub(r"^one (?=hundred|thousand|million|billion)", "a ", words)
    return words.capitalize() if like[:1].isupper() else words


_FIGURES = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:st|nd|rd|th)?(?![\w]|[.,]\d)")


def _class(figures: str, has_year: bool) -> str:
    digits = re.sub(r"(?:st|nd|rd|th)$", "", figures).replace(",", "")
    if not figures[-1:].isdigit():
        return "ordinal"
    if has_year and len(digits) == 4 and 1600 <= int(digits) <= 2099:
        return "year"
    return "cardinal"


def in_words_like(text: str, said: list[Said], original_figures: str) -> str:
    """``text`` (an operator's output in figures) with each number said as the original said
    the number in its place: numbers are matched kind by kind, in order (the i-th day with the
    i-th day, the year with the year), so an operator that drops one ("the 14th of march 1960"
    -> "1960" under the year policy) still gets each right; a number the original wrote in
    figures stays in figures."""
    by_kind: dict[str, list[Said | None]] = {}
    spoken_at = {_figures_start(s, said, original_figures): s for s in said}
    has_year = any(s.kind == "year" for s in said)
    for m in _FIGURES.finditer(original_figures):
        by_kind.setdefault(_class(m.group(), has_year), []).append(spoken_at.get(m.start()))
    seen: dict[str, int] = {}
    pieces, at = [], 0
    for m in _FIGURES.finditer(text):
        kind = _class(m.group(), has_year)
        options = by_kind.get(kind) or []
        i = seen.get(kind, 0)
        seen[kind] = i + 1
        like = options[min(i, len(options) - 1)] if options else None
        if like is None:
            continue  # in figures in the original too, or nothing of its kind was said
        value = int(re.sub(r"\D", "", re.sub(r"(?:st|nd|rd|th)$", "", m.group())))
        # "06" (a year in two digits) is "oh six", whatever the original's two digits were
        kind_said = "oh" if re.fullmatch(r"0\d", m.group()) else like.kind
        pieces += [text[at:m.start()], say(value, kind_said, like.words)]
        at = m.end()
    return "".join(pieces) + text[at:]


def _figures_start(s: Said, said: list[Said], original_figures: str) -> int:
    """Where ``s`` stands once every number of ``said`` is in figures."""
    shift = sum(len(_figures(o)) - (o.end - o.start) for o in said if o.start < s.start)
    return s.start + shift


Operator = Callable[[str, Any, Any], str]


def in_words(op: Operator, years: bool = False) -> Operator:
    """``op`` (an operator on figures: ``op(original, rng, helpers)``) made to take and give
    numbers in words as well: a span with none said in words goes to ``op`` as it is."""

    @functools.wraps(op)
    def spoken(original: str, rng: Any, helpers: Any) -> str:
        said = read(original, years=years)
        if not said:
            return op(original, rng, helpers)
        # "the" of "the fourteenth" goes to the operator without it (a date operator reads the
        # first word as the month) and comes back only before a day: under the year policy the
        # day is gone, and "the nineteen sixty" says nothing
        the = re.match(r"(?i)the (?=\S)", original) if said[0].kind == "ordinal" else None
        if the:
            rest = original[the.end():]
            said = [replace(s, start=s.start - the.end(), end=s.end - the.end()) for s in said]
            figures = in_figures(rest, said)
            new = op(figures, rng, helpers)
            back = in_words_like(new, said, figures)
            if re.match(r"\d+(?:st|nd|rd|th)\b", new):
                return the.group() + back
            return back[:1].upper() + back[1:] if the.group()[:1].isupper() else back
        figures = in_figures(original, said)
        return in_words_like(op(figures, rng, helpers), said, figures)

    return spoken


# --- a substitute in figures, said aloud ----------------------------------------------------
# Whisper writes most spoken numbers in figures ("47 years old", "300,000 pounds", "14 March
# 1960"), so most substitutes come back in figures too. A voice reads figures its own way (flite
# says "25 April 1959" as "twenty five april ..."); ``say_figures`` writes what a person says
# instead, for the voice to speak, and ``values`` reads a number back from either form, so
# that a second pass is checked by value ("the 25th of April" heard for "twenty fifth").
_SYMBOLS = {"£": "pounds", "$": "dollars", "€": "euros"}
_CODES = {"GBP": "pounds", "USD": "dollars", "EUR": "euros"}
_MONTHS = ("january february march april may june july august september october november "
           "december").split()
_MONTH_NAME = r"(?i:" + "|".join(_MONTHS) + r")(?![\w'])"


def _plural(unit: str, n: float) -> str:
    return unit[:-1] if n == 1 and unit.endswith("s") else unit


def _say_number(figures: str, like: str = "") -> str:
    """A number in figures in words: without "and" (as a transcript's speaker mostly says it),
    or in the style of ``like``, the speaker's words where known ("two hundred and fifty",
    "a hundred")."""
    plain = figures.replace(",", "")
    if "." in plain:
        whole, _, frac = plain.partition(".")
        return f"{_say_number(whole, like)} point " + " ".join(num2words(int(d)) for d in frac)
    if like:
        return say(int(plain), "cardinal", like.lower())
    return re.sub(r" and\b", "", num2words(int(plain)).replace(",", "")).replace("-", " ")


_SCALES = {" thousand": 10 ** 3, " million": 10 ** 6, " billion": 10 ** 9}


def _say_scaled(figures: str, scale: str | None, like: str = "") -> str:
    """A number with its scale word as a person says it: "1.2 million" is "one point two
    million", but "0.9 million" (a sum of 1.2 million scaled down) is "nine hundred thousand"."""
    if scale and float(figures.replace(",", "")) < 1:
        return _say_number(str(round(float(figures.replace(",", "")) * _SCALES[scale])), like)
    return _say_number(figures, like) + (scale or "")


def _say_year(value: int, like: str) -> str:
    """A year said in the style of ``like`` (the speaker's words, lower case; "" unknown): from
    2001 to 2099 with "thousand" where they said it ("two thousand and twelve", "and" only if
    they said one), in two halves where they did not ("twenty twelve", "twenty oh five").
    Before 2000 a year is said in halves whatever the style: "one thousand nine hundred and
    eighty", no one says."""
    if 2001 <= value <= 2099 and (m := re.search(r"\btwo thousand(?: and)?", like)):
        return say(value, "year", m.group() + " x")
    if 2001 <= value <= 2009 and re.search(r"\btwenty oh\b", like):
        return "twenty oh " + say(value - 2000, "cardinal")
    return say(value, "year")


def _say_money(figures: str, scale: str | None, unit: str, like: str) -> str:
    """A sum with its currency named after it; with pence or cents as a person says them:
    "$27.98" is "twenty seven dollars and ninety eight cents", or "nine pounds forty" where
    the speaker said no "pence" ("nine pounds ninety")."""
    whole, _, cents = figures.replace(",", "").partition(".")
    if scale or len(cents) != 2:
        return f"{_say_scaled(figures, scale, like)} {_plural(unit, 2 if scale else float(figures.replace(',', '')))}"
    said = f"{_say_number(whole, like)} {_plural(unit, int(whole))}"
    if int(cents) == 0:
        return said
    small = "pence" if unit == "pounds" else "cents"
    if like and not re.search(r"\b(?:cents?|pence|p)\b", like):
        return f"{said} {_say_number(cents.lstrip('0'))}"
    small = "penny" if small == "pence" and int(cents) == 1 else _plural(small, int(cents))
    return f"{said} and {_say_number(cents.lstrip('0'))} {small}"


def say_figures(text: str, label: str, like: str = "") -> str:
    """``text`` (a substitute) with its figures said as a person says them: a date's day as an
    ordinal ("the twenty fifth of April nineteen fifty nine"), a year as a year, a sum with its
    currency named after it ("£400,000" -> "four hundred thousand pounds"), any other as a
    cardinal ("forty eight years old"). Text without figures comes back as it is.

    ``like``: the words the speaker said for the original, where known (the audio tells what
    the figures do not, ``speech.boundaries.said_in``). A date is then said in its style: a
    year from 2001 with "thousand" ("two thousand and twelve") or in two halves ("twenty
    twelve"); "the" before the day, and "of" after it, only where the speaker said them. Any
    other number with "and" and "a hundred" as the speaker said them ("a hundred and fifty
    pounds", "two hundred fifty thousand pounds")."""
    if not re.search(r"\d", text):
        return text
    out = text
    if label in ("EVENT_DATE", "DATE_OF_BIRTH"):
        low = like.lower()
        # a day before its month: "the" and "of" as said; as a person mostly says it when unknown
        the = "the " if not like or re.search(rf"\bthe (?:[a-z]+ ){{1,2}}(?:of )?{_MONTH_NAME}", low) else ""
        of = "of " if not like or re.search(rf"\bof {_MONTH_NAME}", low) else ""
        out = re.sub(rf"(?i)(?<![\w/.-])(the )?(\d{{1,2}})(?:st|nd|rd|th)?(?: of)? ({_MONTH_NAME})",
                     lambda m: f"{m[1] or the}{say(int(m[2]), 'ordinal')} {of}{m[3]}", out)
        # "March 21" is "March twenty first": Whisper writes "the" where it heard one ("September
        # the 30th"), and most often none where none was said ("June 5th" for "june fifth"); the
        # speaker's own words, where known, decide (Whisper drops a said "the" too)
        after_month = None if not like else bool(re.search(rf"{_MONTH_NAME} the ", low))
        out = re.sub(rf"({_MONTH_NAME}) (the )?(\d{{1,2}})(?:st|nd|rd|th)?(?![\d/.-])",
                     lambda m: f"{m[1]} {('the ' if after_month else '') if after_month is not None else m[2] or ''}"
                               f"{say(int(m[3]), 'ordinal')}", out)
        out = re.sub(r"(?<![\d/.-])((?:1[6-9]|20)\d\d)(?![\d/-])", lambda m: _say_year(int(m[1]), low), out)
        # a day said alone ("on the 23rd"), a year in two digits ("in '01", "March of 88")
        out = re.sub(r"(?<![\w/.:-])(\d{1,2})(?:st|nd|rd|th)\b", lambda m: say(int(m[1]), "ordinal"), out)
        return re.sub(r"(?<![\w/.:-])'?(\d\d)(?![\w/:-]|[.,]\d)",
                      lambda m: say(int(m[1]), "oh" if m[1][0] == "0" else "cardinal"), out)
    sym = "|".join(re.escape(s) for s in _SYMBOLS)
    codes = "|".join(_CODES)
    money = rf"(?:({sym}) ?|\b({codes}) ?)(\d[\d,]*(?:\.\d+)?)( (?:thousand|million|billion))?(?![\d])"
    low = like.lower()
    out = re.sub(money, lambda m: _say_money(m[3], m[4], _SYMBOLS.get(m[1] or '') or _CODES[m[2]], low), out)
    out = re.sub(r"(\d[\d,]*(?:\.\d+)?) ?(?:%|per ?cent\b)", lambda m: f"{_say_number(m[1], low)} percent", out)
    out = re.sub(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w]|[.,]\d)",
                 lambda m: _say_number(m.group(), low), out)
    return out


def values(text: str, years: bool = False) -> list[int]:
    """Every whole number ``text`` says, in figures or in words, in order ("25th" and "twenty
    fifth" are both 25; with ``years``, "1959" and "nineteen fifty nine" are both 1959)."""
    said = read(text, years=years)
    found = [(s.start, s.value) for s in said]
    for m in re.finditer(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\d])|(?<![\w.,])\d+", text):
        if not any(s.start <= m.start() < s.end for s in said):
            found.append((m.start(), int(m.group().replace(",", ""))))
    return [v for _, v in sorted(found)]
