"""Substitutes for quasi-identifiers (masking/quasi.py) that keep a document useful.

* EVENT_DATE: every date of a document moves by one keyed shift (``Helpers.event_shift``,
  clinical de-identification's date shifting), written back in the original's own format,
  so the order of events and the intervals between them hold. A date given only to the
  month or year moves as its middle day does, so order holds at every precision.
* AGE: another age in the same band (child, teen, 18-29, 30-44, 45-64, 65-89, 90+: HIPAA
  groups ages over 89), in the original's wording.
* AMOUNT, DURATION and COUNT: the same currency or unit and the same number of digits, in the
  same layout; a number in words becomes another of its order of magnitude.
* NATIONALITY: another nationality, adjective for adjective, plural for plural.
* OCCUPATION: another of Faker's job titles; HEALTH: a common condition.
* CASE_NUMBER has no operator of its own: it is redrawn character by character (a digit for
  a digit, a letter for a letter), which is its shape.

Each operator takes the original, an ``rng`` keyed by the run's secret and the original, and
the ``Helpers`` of the mapping; nothing here reads a seed of its own.
"""
from __future__ import annotations

import functools
import random
import re
from datetime import date, datetime, time, timedelta
from typing import Callable, Protocol

from recover_core.data import lexicons
from recover_core.text.shapes import MONTHS, WEEKDAYS

# The year a day and month without a year are read in (a common year: no 29 February).
REF_YEAR = 2001


class Helpers(Protocol):
    dates: str  # "shift" or "year" (policy.DATE_POLICIES)

    @property
    def event_shift(self) -> int:
        """Days every event date of the mapping moves by (keyed, never 0)."""


def _month_index(word: str) -> int | None:
    low = word.lower().rstrip(".")
    for i, m in enumerate(MONTHS):
        if low == m or (len(low) >= 3 and m.startswith(low)):
            return i + 1
    return None


def _month_word(month: int, like: str) -> str:
    """Month ``month`` written as ``like`` is: full or cut to three letters, its case, its dot."""
    full = MONTHS[month - 1]
    core = like.rstrip(".")
    word = full if core.lower() in MONTHS else full[:3]  # "May" is whole; "Sept." an abbreviation
    if core.isupper() and len(core) > 1:
        word = word.upper()
    elif core[:1].isupper():
        word = word.capitalize()
    return word + ("." if like.endswith(".") and word != full else "")


def _suffix(day: int) -> str:
    return "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _day_word(day: int, like: str) -> str:
    """``day`` as ``like`` writes its day: "3", "03" or "3rd"."""
    digits = re.match(r"\d+", like).group()  # type: ignore[union-attr]
    out = str(day).zfill(len(digits)) if digits.startswith("0") else str(day)
    return out + (_suffix(day) if len(like) > len(digits) else "")


def _moved(d: date, shift: int) -> date:
    return d + timedelta(days=shift)


def _safe(year: int, month: int, day: int) -> date:
    for dd in (day, 28):
        try:
            return date(year, month, dd)
        except ValueError:
            continue
    return date(year, month, 28)


_MONTH_RE = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY_RE = r"\d{1,2}(?:st|nd|rd|th)?(?![\d\w])"
_DAYS_RE = rf"{_DAY_RE}(?:(?:, ?| and | or | to |-|–){_DAY_RE})*"
_YEAR_RE = r"(?:1[6-9]|20)\d\d"


def _days_in(days_text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in re.finditer(_DAY_RE, days_text)]


def _shift_days(days_text: str, month_text: str, year_text: str | None, shift: int) -> tuple[str, str, str | None]:
    """Each day of "1, 2 and 3" with its month and year moved; the month and year written
    are the last day's (a list of days that crosses a month's end keeps its days in order)."""
    year = int(year_text) if year_text else REF_YEAR
    month = _month_index(month_text) or 1
    pieces, last = [], None
    for a, b, word in _days_in(days_text):
        d = _moved(_safe(year, month, int(re.match(r"\d+", word).group())), shift)  # type: ignore[union-attr]
        pieces.append((a, b, _day_word(d.day, word)))
        last = d
    out = days_text
    for a, b, word in reversed(pieces):
        out = out[:a] + word + out[b:]
    assert last is not None
    new_year = str(last.year) if year_text else None
    return out, _month_word(last.month, month_text), new_year


def _numeric(original: str, shift: int) -> str | None:
    m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", original)
    if m:
        d = _moved(_safe(int(m[1]), int(m[2]), int(m[3])), shift)
        return f"{d.year}-{str(d.month).zfill(len(m[2]))}-{str(d.day).zfill(len(m[3]))}"
    m = re.fullmatch(r"(\d{1,2})([/.])(\d{1,2})\2(\d{4}|\d{2})", original)
    if not m:
        return None
    a, b, y = int(m[1]), int(m[3]), int(m[4])
    year = y if len(m[4]) == 4 else (1900 + y if y > 40 else 2000 + y)
    month_first = a <= 12 < b  # "12/25/2000"; otherwise day first, as most of the world writes
    day, month = (b, a) if month_first else (a, b)
    d = _moved(_safe(year, month, day), shift)
    first, second = (d.month, d.day) if month_first else (d.day, d.month)
    new_year = str(d.year) if len(m[4]) == 4 else str(d.year)[2:]
    return f"{str(first).zfill(len(m[1]))}{m[2]}{str(second).zfill(len(m[3]))}{m[2]}{new_year}"


def _year_moved(year: int, shift: int) -> int:
    return _moved(date(year, 7, 2), shift).year  # the year's middle day


def event_date(original: str, rng: random.Random, helpers: Helpers) -> str:
    """``original`` with every date in it moved by the mapping's shift, in its own format; under
    the "year" policy, its year alone."""
    if getattr(helpers, "dates", "shift") == "year":
        return year_only(original)
    shift = helpers.event_shift
    numeric = _numeric(original, shift)
    if numeric is not None:
        return numeric
    patterns: list[tuple[str, Callable[[re.Match[str]], str]]] = [
        (rf"(?P<days>{_DAYS_RE})(?: of)? (?P<month>{_MONTH_RE})(?:,? (?P<year>{_YEAR_RE}))?", _day_month(shift)),
        (rf"(?P<month>{_MONTH_RE}) (?P<days>{_DAYS_RE})(?:,? (?P<year>{_YEAR_RE}))?", _day_month(shift)),
        (rf"(?P<month>{_MONTH_RE})(?P<sep>,? )(?P<year>{_YEAR_RE})", _month_year(shift)),
        (rf"(?P<year>{_YEAR_RE})(?P<tail>s?)(?:(?P<rsep> ?[-–/] ?)(?P<yy>\d\d)(?!\d))?", _years(shift)),
        (rf"(?P<month>{_MONTH_RE})(?![\w])", _month_alone(shift)),
        (r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)", _weekday(shift)),
        (r"(?P<h>\d{1,2})(?:(?P<sep>[.:])(?P<m>\d{2}))?(?P<ampm> ?[ap]\.?m\.?| ?o'clock)?", _time(rng)),
    ]
    for pattern, fn in patterns:  # the first form that the original holds decides
        new, n = re.subn(pattern, fn, original, flags=re.I)
        if n:
            return new
    raise ValueError("no date")  # redrawn character by character instead


def year_only(original: str) -> str:
    """A date generalised to its year (HIPAA Safe Harbor: "all elements of dates except the year"):
    "29 November 1996" -> "1996", "12/09/2000" -> "2000", "1982-84" and "the 1990s" as they are. A
    date with no year says "that day" ("last Tuesday", "3 March"), "that month" or "that time"."""
    numeric = re.fullmatch(r"\d{1,2}[/.]\d{1,2}[/.](\d{4}|\d{2})|(\d{4})-\d{1,2}-\d{1,2}", original)
    if numeric:
        y = numeric[1] or numeric[2]
        return y if len(y) == 4 else ("19" if int(y) > 40 else "20") + y
    years = re.search(rf"{_YEAR_RE}s?(?:(?: ?[-–/] ?| and | to )(?:{_YEAR_RE}|\d\d)(?!\d))?", original)
    if years:
        # a season or a part of the year ("the summer of 1995", "early 1996") says more than the year: it goes
        return years.group() if not original.startswith("the ") or not years.group().endswith("s") else f"the {years.group()}"
    if re.search(r"\d{1,2}[.:]\d{2}|[ap]\.?m\.?|o'clock", original, re.I):
        return "that time"
    if re.fullmatch(rf"(?:in |since |until |by |from |of |during |before |after |early |late |mid-?)?{_MONTH_RE}", original, re.I):
        return "that month"
    return "that day"


def _rebuilt(m: re.Match[str], new: dict[str, str | None]) -> str:
    """The match with each named group in ``new`` written anew, the rest as it was."""
    out, base = m.group(), m.start()
    for a, b, word in sorted(((m.start(g), m.end(g), w) for g, w in new.items() if m[g] is not None and w is not None),
                             reverse=True):
        out = out[: a - base] + word + out[b - base:]
    return out


def _day_month(shift: int) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        days, month, year = _shift_days(m["days"], m["month"], m["year"], shift)
        return _rebuilt(m, {"days": days, "month": month, "year": year})
    return fn


def _month_year(shift: int) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        d = _moved(_safe(int(m["year"]), _month_index(m["month"]) or 1, 15), shift)
        return f"{_month_word(d.month, m['month'])}{m['sep']}{d.year}"
    return fn


def _years(shift: int) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        year = int(m["year"])
        if m["tail"]:  # "the 1990s": the decade its middle moves into
            return f"{_year_moved(year + 5, shift) // 10 * 10}s"
        out = str(_year_moved(year, shift))
        if m["yy"]:  # "1982-84": the second year in two digits, moved as a year of the same century
            out += m["rsep"] + str(_year_moved(year // 100 * 100 + int(m["yy"]), shift))[2:]
        return out
    return fn


def _month_alone(shift: int) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        d = _moved(_safe(REF_YEAR, _month_index(m["month"]) or 1, 15), shift)
        return _month_word(d.month, m["month"])
    return fn


def _weekday(shift: int) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        word = WEEKDAYS[(WEEKDAYS.index(m["weekday"].lower()) + shift) % 7]
        return word.capitalize() if m["weekday"][:1].isupper() else word
    return fn


def _time(rng: random.Random) -> Callable[[re.Match[str]], str]:
    # A time of day says nothing once its date has moved, but an unusual one ("03.17") is a
    # fact: it is redrawn to the quarter hour within two hours, keyed by the original.
    def fn(m: re.Match[str]) -> str:
        hour, minute = int(m["h"]), int(m["m"] or 0)
        twelve = bool(m["ampm"])
        t = datetime.combine(date(REF_YEAR, 1, 1), time(hour % 24, minute % 60)) + \
            timedelta(minutes=rng.choice([x for x in range(-120, 121, 15) if x]))
        new_hour = (t.hour % 12 or 12) if twelve else t.hour
        out = str(new_hour).zfill(len(m["h"]))
        if m["sep"]:
            out += m["sep"] + str(t.minute).zfill(2)
        return out + (m["ampm"] or "")
    return fn


# Age bands: an age stays in its band, so what a reader infers from it holds (a minor stays
# a minor); HIPAA Safe Harbor counts every age over 89 as one band.
AGE_BANDS = ((0, 12), (13, 17), (18, 29), (30, 44), (45, 64), (65, 89), (90, 105))
_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
         "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _number_word(n: int) -> str:
    if n < 20:
        return _UNITS[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens] + (f"-{_UNITS[unit]}" if unit else "")


def _word_number(word: str) -> int | None:
    low = word.lower()
    for n in range(0, 100):
        if _number_word(n) == low:
            return n
    return None


def age(original: str, rng: random.Random, helpers: object) -> str:
    m = re.search(r"\d{1,3}", original)
    words = None if m else re.match(r"[a-z]+(?:-[a-z]+)?", original, re.I)
    years = int(m.group()) if m else (_word_number(words.group()) if words else None)
    if years is None:
        raise ValueError("no age")  # redrawn character by character instead
    lo, hi = next(((a, b) for a, b in AGE_BANDS if a <= years <= b), AGE_BANDS[-1])
    new = rng.choice([y for y in range(lo, hi + 1) if y != years] or [years + 1])
    if m:
        return original[: m.start()] + str(new) + original[m.end():]
    assert words is not None
    word = _number_word(new)
    return (word.capitalize() if words.group()[:1].isupper() else word) + original[words.end():]


def amount(original: str, rng: random.Random, helpers: object) -> str:
    """The same currency and layout; each digit of the sum redrawn, its first never 0. A sum,
    duration or count in words ("three years and nine months", "seven other persons") has each
    number word redrawn within its order of magnitude."""
    m = re.search(r"\d[\d ,.]*\d|\d", original)
    if not m:
        return _words_redrawn(original, rng)
    first = True
    out = []
    for c in m.group():
        if c.isdigit():
            out.append(str(rng.randint(1, 9)) if first else str(rng.randrange(10)))
            first = False
        else:
            out.append(c)
    # a conversion in brackets ("[approx. EUR 138]") is a sum too: its digits are redrawn as well
    rest = original[m.end():]
    return original[: m.start()] + "".join(out) + (amount(rest, rng, helpers) if re.search(r"\d", rest) else rest)


_NUMBER_WORDS = re.compile(r"(?i)\b(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|"
                           r"four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                           r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)\b")


def _words_redrawn(original: str, rng: random.Random) -> str:
    """Each number word of ``original`` redrawn: 2-9 within 2-9, 10-19 within 10-19, tens within
    20-99, in the original's case; the words around them ("years", "other persons") stay."""
    def one(m: re.Match[str]) -> str:
        n = _word_number(m.group().replace(" ", "-"))
        if n is None:
            return m.group()
        lo, hi = (1, 9) if n < 10 else (10, 19) if n < 20 else (20, 99)
        new = _number_word(rng.choice([x for x in range(max(lo, 2), hi + 1) if x != n]))
        return new.capitalize() if m.group()[:1].isupper() else new
    out = _NUMBER_WORDS.sub(one, original)
    if out == original:
        raise ValueError("no number")  # redrawn character by character instead
    return out


def nationality(original: str, rng: random.Random, helpers: object) -> str:
    """Another nationality in the original's form: an adjective for an adjective, a plural for a
    plural; the word after it stays ("a Turkish national" -> "a Dutch national")."""
    word_, _, rest = original.partition(" ")
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


@functools.lru_cache(maxsize=1)
def _jobs() -> tuple[str, ...]:
    """Faker's job titles of one to three words, in lower case ("ballet dancer" -> "dentist")."""
    from faker.providers.job.en_US import Provider
    return tuple(sorted({j.lower() for j in Provider.jobs if "," not in j and "/" not in j and len(j.split()) <= 3}))


def occupation(original: str, rng: random.Random, helpers: object) -> str:
    """Another occupation, plural for a plural ("ballet dancers" -> "dentists")."""
    word = rng.choice([j for j in _jobs() if j != original.lower()])  # any first sound, as nationality()
    plural = original.endswith("s") and not original.endswith("ss")
    word = word + ("es" if word.endswith(("s", "sh", "ch")) else "s") if plural else word
    # capitals where the original is a title ("Chief Executive"), not where its first word is a
    # nationality ("American lawyer" -> "tax adviser", not "Tax adviser")
    titled = all(w[:1].isupper() for w in original.split())
    return " ".join(w.capitalize() for w in word.split()) if titled else word


# Conditions common enough to single no one out: what a health condition becomes.
# Bare nouns: the original's article, if any, stays before the span ("with a [psychotic illness]").
CONDITIONS = ("asthma", "diabetes", "epilepsy", "heart disease", "chronic back pain", "hearing loss", "arthritis",
              "migraine", "thyroid disease", "anaemia")


def health(original: str, rng: random.Random, helpers: object) -> str:
    return rng.choice([c for c in CONDITIONS if c != original.lower()])


OPERATORS: dict[str, Callable] = {"EVENT_DATE": event_date, "AGE": age, "AMOUNT": amount, "DURATION": amount,
                                   "COUNT": amount,
                                   "NATIONALITY": nationality, "OCCUPATION": occupation, "HEALTH": health}
