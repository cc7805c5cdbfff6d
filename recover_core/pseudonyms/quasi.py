"""Substitutes for quasi-identifiers (masking/quasi.py) that keep a document useful.

* EVENT_DATE: every date of a document moves as ``Helpers.event_moved`` says (clinical
  de-identification's date shifting: one keyed shift per document, under the default "jitter"
  policy plus a smooth keyed warp that never reverses order), written back in the original's
  own format. A date given only to the month or year moves as its middle day does, so order
  holds at every precision.
* AGE: the age plus the document's age offset (1-3 years, keyed), in the original's wording;
  its birth dates move back by the same offset (pseudonyms/identifiers.date_of_birth), so every
  age agrees with the dates shown and none tells the true age.
* AMOUNT, DURATION and COUNT: scaled by one keyed factor per unit and document (``quantity``),
  rounded to the original's precision, in its layout or words: one quantity one substitute,
  order and proportions kept.
* NATIONALITY: another nationality, adjective for adjective, plural for plural.
* OCCUPATION: another of Faker's job titles; HEALTH: a common condition.
* CASE_NUMBER: an application number's serial moved by the document's keyed offset, its year
  as the document's dates move (``case_number``); any other code redrawn character by character.

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
from recover_core.text.dates import DAY as _DAY_RE, DAYS as _DAYS_RE, MONTH as _MONTH_RE, YEAR as _YEAR_RE
from recover_core.text.dates import day_word as _day_word, month_index as _month_index, month_word as _month_word
from recover_core.text.shapes import CURRENCY_CODE, CURRENCY_WORD, WEEKDAYS
from recover_core.text.spoken import in_words

# The year a day and month without a year are read in (a common year: no 29 February).
REF_YEAR = 2001


class Helpers(Protocol):
    dates: str  # "jitter", "shift" or "year" (dates.DATE_POLICIES)

    @property
    def event_shift(self) -> int:
        """Days the mapping's event dates move by before any jitter (keyed, never 0)."""

    def event_moved(self, d: date) -> date:
        """Where the event date ``d`` moves (keyed; never against the order of two dates)."""


Move = Callable[[date], date]


def _safe(year: int, month: int, day: int) -> date:
    for dd in (day, 28):
        try:
            return date(year, month, dd)
        except ValueError:
            continue
    return date(year, month, 28)


def _days_in(days_text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in re.finditer(_DAY_RE, days_text)]


def _shift_days(days_text: str, month_text: str, year_text: str | None, move: Move) -> tuple[str, str, str | None]:
    """Each day of "1, 2 and 3" with its month and year moved; the month and year written
    are the last day's (a list of days that crosses a month's end keeps its days in order)."""
    year = int(year_text) if year_text else REF_YEAR
    month = _month_index(month_text) or 1
    pieces, last = [], None
    for a, b, word in _days_in(days_text):
        d = move(_safe(year, month, int(re.match(r"\d+", word).group())))  # type: ignore[union-attr]
        pieces.append((a, b, _day_word(d.day, word)))
        last = d
    out = days_text
    for a, b, word in reversed(pieces):
        out = out[:a] + word + out[b:]
    assert last is not None
    new_year = str(last.year) if year_text else None
    return out, _month_word(last.month, month_text), new_year


def _numeric(original: str, move: Move) -> str | None:
    m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", original)
    if m:
        d = move(_safe(int(m[1]), int(m[2]), int(m[3])))
        return f"{d.year}-{str(d.month).zfill(len(m[2]))}-{str(d.day).zfill(len(m[3]))}"
    m = re.fullmatch(r"(\d{1,2})([/.])(\d{1,2})\2(\d{4}|\d{2})", original)
    if not m:
        return None
    a, b, y = int(m[1]), int(m[3]), int(m[4])
    year = y if len(m[4]) == 4 else (1900 + y if y > 40 else 2000 + y)
    month_first = a <= 12 < b  # "12/25/2000"; otherwise day first, as most of the world writes
    day, month = (b, a) if month_first else (a, b)
    d = move(_safe(year, month, day))
    first, second = (d.month, d.day) if month_first else (d.day, d.month)
    new_year = str(d.year) if len(m[4]) == 4 else str(d.year)[2:]
    return f"{str(first).zfill(len(m[1]))}{m[2]}{str(second).zfill(len(m[3]))}{m[2]}{new_year}"


def _year_moved(year: int, move: Move) -> int:
    return move(date(year, 7, 2)).year  # the year's middle day


def event_date(original: str, rng: random.Random, helpers: Helpers) -> str:
    """``original`` with every date in it moved as the mapping says, in its own format; under
    the "year" policy, its year alone."""
    if getattr(helpers, "dates", "shift") == "year":
        return year_only(original)
    move = helpers.event_moved
    numeric = _numeric(original, move)
    if numeric is not None:
        return numeric
    patterns: list[tuple[str, Callable[[re.Match[str]], str]]] = [
        (rf"(?P<days>{_DAYS_RE})(?: of)? (?P<month>{_MONTH_RE})(?:,? (?P<year>{_YEAR_RE}))?", _day_month(move)),
        (rf"(?P<month>{_MONTH_RE}) (?P<days>{_DAYS_RE})(?:,? (?P<year>{_YEAR_RE}))?", _day_month(move)),
        (rf"(?P<month>{_MONTH_RE})(?P<sep>,? )(?P<year>{_YEAR_RE})", _month_year(move)),
        (rf"(?P<year>{_YEAR_RE})(?P<tail>s?)(?:(?P<rsep> ?[-–/] ?)(?P<yy>\d\d)(?!\d))?", _years(move)),
        (rf"(?P<month>{_MONTH_RE})(?![\w])", _month_alone(move)),
        (r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)", _weekday(helpers.event_shift)),
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


def _day_month(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        days, month, year = _shift_days(m["days"], m["month"], m["year"], move)
        return _rebuilt(m, {"days": days, "month": month, "year": year})
    return fn


def _month_year(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        d = move(_safe(int(m["year"]), _month_index(m["month"]) or 1, 15))
        return f"{_month_word(d.month, m['month'])}{m['sep']}{d.year}"
    return fn


def _years(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        year = int(m["year"])
        if m["tail"]:  # "the 1990s": the decade its middle moves into
            return f"{_year_moved(year + 5, move) // 10 * 10}s"
        out = str(_year_moved(year, move))
        if m["yy"]:  # "1982-84": the second year in two digits, moved as a year of the same century
            out += m["rsep"] + str(_year_moved(year // 100 * 100 + int(m["yy"]), move))[2:]
        return out
    return fn


def _month_alone(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        d = move(_safe(REF_YEAR, _month_index(m["month"]) or 1, 15))
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
    # every age of the document moves by its one offset, as its birth dates do (Helpers.age_offset)
    new = max(1, years + helpers.age_offset)  # type: ignore[attr-defined]
    if m:
        return original[: m.start()] + str(new) + original[m.end():]
    assert words is not None
    word = _number_word(new)
    return (word.capitalize() if words.group()[:1].isupper() else word) + original[words.end():]


# --- quantities that keep their relations -------------------------------------------------
# A sum, a duration or a count is scaled by one keyed factor per unit and document
# (``Helpers.quantity_scale``), then rounded to the original's precision: one quantity has one
# substitute, "reduced from 14 to 12 years" stays a reduction, a prison term stays a prison term
# in size, and sums in one currency keep their proportions. Redrawn digit for digit ("14 years"
# -> "83 years", "12 years" -> "11 years") they kept none of that.
_GROUPED = re.compile(r"(\d{1,3})((?:([ ,.])\d{3})(?:\3\d{3})*)(?:([.,])(\d{1,2}))?$")
_PLAIN = re.compile(r"(\d+)(?:([.,])(\d{1,2}))?$")
_CURRENCY = re.compile(rf"[€$£]|\b{CURRENCY_CODE}\b|\b{CURRENCY_WORD}")
_UNIT_WORD = re.compile(r"(?i)\b(year|month|week|day|hour|minute)s?\b|%|per ?cent")


def quantity_unit(original: str) -> str:
    """What ``original`` counts, so that quantities of one unit share one factor: a currency, a
    time unit, a share, or the noun counted ("packages")."""
    cur = _CURRENCY.search(original)
    if cur and not _UNIT_WORD.search(original):
        return "money:" + cur.group().lower().rstrip("s")
    unit = _UNIT_WORD.search(original)
    if unit:
        return "time:" + (unit.group(1) or "%").lower()
    return "count:" + original.split()[-1].lower().rstrip("s")


def _scaled(value: float, factor: float, decimals: int) -> float:
    """``value`` times ``factor``, rounded to the original's significant figures (5,000 -> 7,000;
    7,630,000 -> 6,100,000; 14 -> 19), never equal to it, never below 1, nor below 2 where it was
    2 or more ("two applications" never becomes "one applications")."""
    low = 2 if value >= 2 else 1
    if decimals:
        new = round(value * factor, decimals)
        return new if new != value else round(value + 10 ** -decimals * (1 if factor > 1 else -1), decimals)
    whole = int(round(value))
    digits = str(whole).rstrip("0") or "0"
    place = 10 ** (len(str(whole)) - len(digits))  # 5,000: 1,000; 14: 1
    new = max(low, int(round(value * factor / place)) * place)
    if new == whole:
        new = max(low, whole + place * (1 if factor > 1 else -1))
    return float(new if new != whole else whole + place)


def _number_scaled(text: str, factor: float) -> str:
    """A number as written ("5,000", "7.630.000", "2.5", "14") scaled, in the same layout."""
    g = _GROUPED.match(text)
    if g and (len(text) > 4 or g.group(3) != "."):
        sep, dec_sep, dec = g.group(3), g.group(4), g.group(5) or ""
        value = float(text.replace(sep, "").replace(dec_sep or "#", "."))
        new = _scaled(value, factor, len(dec))
        whole, _, frac = f"{new:.{len(dec)}f}".partition(".")
        grouped = f"{int(whole):,}".replace(",", sep)
        return grouped + (dec_sep + frac if dec else "")
    p = _PLAIN.match(text)
    if not p:
        raise ValueError("no number")
    dec = p.group(3) or ""
    new = _scaled(float(p.group(1) + ("." + dec if dec else "")), factor, len(dec))
    out = f"{new:.{len(dec)}f}"
    return out.replace(".", p.group(2)) if dec else out


def quantity(original: str, rng: random.Random, helpers: object) -> str:
    """A sum, duration or count scaled by its unit's factor in this document, in its own words:
    figures stay figures in their layout, number words stay words; a share stays under 100%."""
    factor = helpers.quantity_scale(quantity_unit(original))  # type: ignore[attr-defined]
    nums = list(re.finditer(r"\d[\d ,.]*\d|\d", original))
    if not nums:
        def one(m: re.Match[str]) -> str:
            n = _word_number(m.group().replace(" ", "-").lower())
            if n is None:
                return m.group()
            new = int(_scaled(float(n), factor, 0))
            word = _number_word(new) if new < 100 else str(new)
            return word.capitalize() if m.group()[:1].isupper() else word
        out = _NUMBER_WORDS.sub(one, original)
        if out == original:
            raise ValueError("no number")
        return out
    out, at = [], 0
    share = bool(re.search(r"%|per ?cent", original, re.I))
    for m in nums:
        new = _number_scaled(m.group(), factor)
        if share and float(re.sub(r"[^\d.]", "", new.replace(",", ".")) or 0) >= 100:
            new = _number_scaled(m.group(), 1 / factor) if factor > 1 else new  # a share stays a share
        out += [original[at:m.start()], new]
        at = m.end()
    return "".join(out) + original[at:]


_CASE = re.compile(r"(?P<head>[A-Z]{1,4}[ .-]?)?(?P<n>[1-9]\d{0,6})/(?P<yy>\d{2}|\d{4})(?P<tail>(?:[-/]\d{1,4})?)")


def case_number(original: str, rng: random.Random, helpers: object) -> str:
    """An application number "26480/95": its serial moved by the document's keyed offset (joined
    applications keep their order and their distance, no leading zero), its year of lodging moved
    as the document's dates are ("/95" stays a year, before the judgment). Any other code is
    redrawn character by character."""
    m = _CASE.fullmatch(original.strip())
    if not m:
        raise ValueError("not an application number")
    serial = m["n"]
    new = int(serial) + helpers.case_offset(len(serial))  # type: ignore[attr-defined]
    if new < 10 ** (len(serial) - 1) or new >= 10 ** len(serial):
        new = int(serial) - helpers.case_offset(len(serial))  # type: ignore[attr-defined]
    if not 1 <= new < 10 ** len(serial) or new == int(serial):
        raise ValueError("no room")
    yy = m["yy"]
    year = int(yy) if len(yy) == 4 else (1900 + int(yy) if int(yy) > 40 else 2000 + int(yy))
    moved = year if getattr(helpers, "dates", "shift") == "year" else _year_moved(year, helpers.event_moved)  # type: ignore[attr-defined]
    return f"{m['head'] or ''}{new}/{str(moved)[-len(yy):]}{m['tail']}"


_NUMBER_WORDS = re.compile(r"(?i)\b(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|"
                           r"four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                           r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)\b")


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


# A number said in words ("the fourteenth of march nineteen sixty", "forty seven years old") is
# read into figures, replaced by the same rules, and said back in its own form (text/spoken.py).
OPERATORS: dict[str, Callable] = {"EVENT_DATE": in_words(event_date, years=True), "AGE": in_words(age),
                                   "AMOUNT": in_words(quantity), "DURATION": in_words(quantity),
                                   "COUNT": in_words(quantity), "CASE_NUMBER": case_number,
                                   "NATIONALITY": nationality, "OCCUPATION": occupation, "HEALTH": health}
