"""Dates: a date of birth (after "born", "DOB", ...), a date or time of an event, a year of
birth said alone ("born in 1951").

Every date of a document moves as ``Helpers.event_moved`` says (pseudonyms/dates.py: one keyed
shift per document under every policy, with a smooth keyed warp under the default "jitter"),
written back in the original's own format; a date given only to the month or year moves as its
middle day does, so order holds at every precision. Under the "year" policy only the year is
kept (HIPAA Safe Harbor). A birth date moves with ``Helpers.birth_moved``: back by the
document's age offset, so every stated age (ages.py) agrees with the dates shown and none tells
the true age. The grammar of a written date is text/dates.py's.
"""
from __future__ import annotations

import random
import re
from datetime import date, datetime, time, timedelta
from typing import Callable

from recover_core.kinds.base import QUASI, Helpers, Recognizer, context_re
from recover_core.text import shapes
from recover_core.text.dates import DAY, DAYS, MONTH, YEAR, said_born
from recover_core.text.dates import day_word, month_index, month_word
from recover_core.text.shapes import WEEKDAYS
from recover_core.text.spoken import in_words


class DateOfBirth(Recognizer):
    label = "DATE_OF_BIRTH"
    strength = 1
    gate = True
    pattern = re.compile(
        r"(?<!\w)(?:\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}-\d{1,2}-\d{1,2}"
        r"|(?:the )?\d{1,2}(?:st|nd|rd|th)?(?: of)? " + MONTH + r",? \d{4}"
        r"|" + MONTH + r" (?:the )?\d{1,2}(?:st|nd|rd|th)?,? \d{4})(?!\w)", re.I)
    context = context_re(r"born|birth|dob|d\.o\.b\.?|birthday|birthdate|date of birth")
    context_before = 40

    def validate(self, item: str, text: str, start: int) -> bool:
        return said_born(text, start)


_MONTH = MONTH.replace("may|", "may(?!\\w)|")  # the month, never "maybe"
# "1, 2 and 3 March 1999", "29 November 1996", "the 3rd of May 2001", "3 March" (a year later or never)
_DAY_MONTH = rf"(?:the )?{DAY}(?:(?:, ?| and | or | to |-|–){DAY})*(?: of)? {_MONTH}"
# "March 14", and "September the 30th" as a speaker says it and Whisper writes it
_MONTH_DAY = rf"{_MONTH} (?:the )?{DAY}(?:(?:, ?| and |-|–){DAY})*"
# "28 April and 4 May 1993", "30 September/1 October 2002", "July and December 1995": one span,
# so that the year is read for every date of the list and all of them move alike
_LIST_SEP = r"(?:, | and |, and |/| to | or |-|–)"
_NUMERIC = r"\d{1,2}[/.]\d{1,2}[/.](?:\d{4}|\d{2})|\d{4}-\d{1,2}-\d{1,2}"
_SEASONS = r"(?:spring|summer|autumn|fall|winter)"
# "early 1996", "the end of 1990", "the first half of 1993", "the summer and autumn of 1994", "winter 1995"
_SEASON = (rf"(?:(?:early|late|mid|the (?:{_SEASONS}|end|beginning|middle|(?:first|second) half) of)[- ]"
           rf"|(?:the )?{_SEASONS} and {_SEASONS} of |{_SEASONS} )")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_TIME = r"\d{1,2}(?:[.:]\d{2})(?: ?[ap]\.?m\.?)?|\d{1,2} ?[ap]\.m\.|\d{1,2} ?o'clock"
# What follows a house number: one to three capitalised words and a word that can only end a
# street's name (not "Court" nor "Place": "In 1996 the Ankara Court" dates an event).
_HOUSE_NUMBER = re.compile(r" (?:[A-Z][\w'’-]* ){1,3}(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Boulevard|Blvd|"
                           r"Terrace|Crescent|Parkway|Pkwy|Highway|Hwy)\b")


class EventDate(Recognizer):
    """A date or time of an event. A bare year counts (ECHR judgments and clinical notes date
    events by it); a year inside a number ("36110/97", "1996-123") does not."""

    label = "EVENT_DATE"
    profile = QUASI
    needs = None  # "last Tuesday", "in March" hold no digit
    strength = 3  # wins over a guess of another kind on the same digits ("1996 the X Court" as an address)
    pattern = re.compile(
        rf"(?<![\w/.-])(?:{_SEASON})?(?:"
        rf"{_DAY_MONTH}(?:{_LIST_SEP}{_DAY_MONTH})*(?:,? {YEAR})?"
        rf"|{_MONTH_DAY},? {YEAR}"
        rf"|{_MONTH}(?:{_LIST_SEP}{_MONTH})+,? {YEAR}"
        rf"|{_MONTH_DAY}(?=[\s,.;:)])"
        rf"|{_MONTH},? {YEAR}"
        rf"|{_NUMERIC}"
        rf"|{YEAR}s?(?:(?: ?[-–/] ?| and | to )(?:{YEAR}|\d\d)(?!\d))?"
        rf"|(?:last|next|this|on|that|every) {_WEEKDAY}|{_WEEKDAY},? (?={DAY} )"
        rf"|(?:in|since|until|till|by|from|of|during|before|after|early|late|mid-?) {_MONTH}(?!,? ?\d|{_LIST_SEP}{_MONTH})(?=[\s,.;:)]|$)"
        rf"|(?:at|around|about|from|until|till|by|before|after) (?:{_TIME})"
        rf")(?![\w/]|[.-]\d|:[0-9a-f])", re.I)  # not the first group of an IPv6 address ("2001:db8::")

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # The preposition of "in March" or "at 10.30" tells a month or a time from a word or a
        # number, and stays: TAB and a reader leave "in" and "at" as they are.
        a, b = m.start(), m.end()
        head = re.match(r"(?i)(?:in|since|until|till|by|from|of|during|before|after|at|around|about|on|that) ", m.group())
        if head:
            a += len(head.group())
        return a, b

    def validate(self, item: str, text: str, start: int) -> bool:
        if said_born(text, start) and DateOfBirth.pattern.fullmatch(item):
            return False  # a whole birth date: DATE_OF_BIRTH's, moved with the document's ages
        if re.match(YEAR, item) and re.search(r"(?i)\bborn in $", text[max(0, start - 8):start]):
            return False  # a birth year: BirthYear's
        low = item.lower()
        if re.fullmatch(rf"{YEAR}", item) and re.match(r"\s*(?:%|per|percent|euros?|dollars?|pounds?|km|kg|people|persons|cases)\b", text[start + len(item):start + len(item) + 12], re.I):
            return False  # "2000 euros", "1800 km": an amount or a count, not a year
        if re.fullmatch(YEAR, item) and _HOUSE_NUMBER.match(text, start + len(item)):
            return False  # "1600 Pennsylvania Avenue": a house number, the address's
        if low.startswith("may ") and not re.search(r"\d", item):
            return False  # "may ..." without a day or year is the verb
        # A month name on its own must be capitalised in cased text ("March" the month, "march" the verb)
        bare_month = re.fullmatch(_MONTH, item, re.I)
        return not bare_month or item[:1].isupper()


class BirthYear(Recognizer):
    """A birth year said alone ("born in 1951"): it moves with the document's birth dates and
    ages (``date_of_birth``), not with its events, or event year minus birth
    year would give the true age."""

    label = "DATE_OF_BIRTH"
    profile = QUASI
    strength = 4  # over EVENT_DATE on the same year
    # "born in 1932 and 1934": each year a birth year
    pattern = re.compile(rf"(?:(?<=\bborn in )|(?<=\bborn in \d{{4}} and )|(?<=\bborn in \d{{4}}, )){YEAR}(?![\d/-])",
                         re.I)


# The year a day and month without a year are read in (a common year: no 29 February).
REF_YEAR = 2001
Move = Callable[[date], date]


def _safe(year: int, month: int, day: int) -> date:
    for dd in (day, 28):
        try:
            return date(year, month, dd)
        except ValueError:
            continue
    return date(year, month, 28)


def _days_in(days_text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in re.finditer(DAY, days_text)]


def _shift_days(days_text: str, month_text: str, year_text: str | None, move: Move) -> tuple[str, str, str | None]:
    """Each day of "1, 2 and 3" with its month and year moved; the month and year written
    are the last day's (a list of days that crosses a month's end keeps its days in order)."""
    year = int(year_text) if year_text else REF_YEAR
    month = month_index(month_text) or 1
    pieces, last = [], None
    for a, b, word in _days_in(days_text):
        d = move(_safe(year, month, int(re.match(r"\d+", word).group())))  # type: ignore[union-attr]
        pieces.append((a, b, day_word(d.day, word)))
        last = d
    out = days_text
    for a, b, word in reversed(pieces):
        out = out[:a] + word + out[b:]
    assert last is not None
    new_year = str(last.year) if year_text else None
    return out, month_word(last.month, month_text), new_year


def _numeric(original: str, move: Move, us: bool = False) -> str | None:
    """A date written in digits ("2000-03-05", "05.03.2000", "3/5/00"), moved, in its own layout;
    None for anything else. Day first, as most of the world writes, unless only month first
    makes a date ("12/25/2000"); with ``us``, month first where both make one, unless the date
    is dotted (a birth date on an English form: "DOB 03/05/1960"). A two-digit year above 30
    is of the 1900s."""
    m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", original)
    if m:
        d = move(_safe(int(m[1]), int(m[2]), int(m[3])))
        return f"{d.year}-{str(d.month).zfill(len(m[2]))}-{str(d.day).zfill(len(m[3]))}"
    m = re.fullmatch(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})", original)
    if not m:
        return None
    a, b, y = int(m[1]), int(m[3]), int(m[4])
    year = y if len(m[4]) == 4 else (1900 + y if y > 30 else 2000 + y)
    month_first = a <= 12 < b or (us and a <= 12 and m[2] != ".")
    day, month = (b, a) if month_first else (a, b)
    d = move(_safe(year, month, day))
    first, second = (d.month, d.day) if month_first else (d.day, d.month)
    new_year = str(d.year) if len(m[4]) == 4 else str(d.year)[2:]
    return f"{str(first).zfill(len(m[1]))}{m[2]}{str(second).zfill(len(m[3]))}{m[2]}{new_year}"


def year_moved(year: int, move: Move) -> int:
    return move(date(year, 7, 2)).year  # the year's middle day


def moved(original: str, move: Move, rng: random.Random, weekday_shift: int = 0, us: bool = False) -> str:
    """``original`` with every date in it moved by ``move``, written in its own format: the one
    place a date is read, moved and written back, for events and births alike (``us``: see
    ``_numeric``). ValueError where it holds no date."""
    numeric = _numeric(original, move, us)
    if numeric is not None:
        return numeric
    day_month = rf"(?P<days>{DAYS})(?: of)? (?P<month>{MONTH})(?:,? (?P<year>{YEAR}))?"
    patterns: list[tuple[str, Callable[[re.Match[str]], str]]] = [
        (day_month, _day_month(move, _years_of_list(day_month, original))),
        (rf"(?P<month>{MONTH}) (?:the )?(?P<days>{DAYS})(?:,? (?P<year>{YEAR}))?", _day_month(move, {})),
        (rf"(?P<months>{MONTH}(?:{_LIST_SEP}{MONTH})+)(?P<sep>,? )(?P<year>{YEAR})", _months_year(move)),
        (rf"(?P<month>{MONTH})(?P<sep>,? )(?P<year>{YEAR})", _month_year(move)),
        (rf"(?P<year>{YEAR})(?P<tail>s?)(?:(?P<rsep> ?[-–/] ?)(?P<yy>\d\d)(?!\d))?", _years(move)),
        # "March of '87", "in 98", "since 06": a year said in two digits stays in two
        (rf"(?P<month>{MONTH})(?P<sep> of |,? ')(?P<yy>\d\d)(?!\d)|^(?P<q>')?(?P<yy2>\d\d)$", _short_year(move)),
        (rf"(?P<month>{MONTH})(?![\w])", _month_alone(move)),
        # "on the 9th": a day said alone, moved as a day of a 31-day month
        (r"(?P<day>\d{1,2})(?:st|nd|rd|th)\b", _day_alone(move)),
        (r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)", _weekday(weekday_shift)),
        (r"(?P<h>\d{1,2})(?:(?P<sep>[.:])(?P<m>\d{2}))?(?P<ampm> ?[ap]\.?m\.?| ?o'clock)?", _time(rng)),
    ]
    for pattern, fn in patterns:  # the first form that the original holds decides
        new, n = re.subn(pattern, fn, original, flags=re.I)
        if n:
            return new
    raise ValueError("no date")


def event_date(original: str, rng: random.Random, helpers: Helpers) -> str:
    """``original`` with every date in it moved as the mapping says, in its own format; under
    the "year" policy, its year alone. One it cannot read is redrawn character by character
    (the registry's fallback)."""
    if getattr(helpers, "dates", "shift") == "year":
        return year_only(original)
    return moved(original, helpers.event_moved, rng, helpers.event_shift)


def year_only(original: str) -> str:
    """A date generalised to its year (HIPAA Safe Harbor: "all elements of dates except the year"):
    "29 November 1996" -> "1996", "12/09/2000" -> "2000", "1982-84" and "the 1990s" as they are. A
    date with no year says "that day" ("last Tuesday", "3 March"), "that month" or "that time"."""
    numeric = re.fullmatch(r"\d{1,2}[/.]\d{1,2}[/.](\d{4}|\d{2})|(\d{4})-\d{1,2}-\d{1,2}", original)
    if numeric:
        y = numeric[1] or numeric[2]
        return y if len(y) == 4 else ("19" if int(y) > 40 else "20") + y
    years = re.search(rf"{YEAR}s?(?:(?: ?[-–/] ?| and | to )(?:{YEAR}|\d\d)(?!\d))?", original)
    if years:
        # a season or a part of the year ("the summer of 1995", "early 1996") says more than the year: it goes
        return years.group() if not original.startswith("the ") or not years.group().endswith("s") else f"the {years.group()}"
    if re.search(r"\d{1,2}[.:]\d{2}|[ap]\.?m\.?|o'clock", original, re.I):
        return "that time"
    if re.fullmatch(rf"(?:in |since |until |by |from |of |during |before |after |early |late |mid-?)?{MONTH}", original, re.I):
        return "that month"
    return "that day"


def _rebuilt(m: re.Match[str], new: dict[str, str | None]) -> str:
    """The match with each named group in ``new`` written anew, the rest as it was."""
    out, base = m.group(), m.start()
    for a, b, word in sorted(((m.start(g), m.end(g), w) for g, w in new.items() if m[g] is not None and w is not None),
                             reverse=True):
        out = out[: a - base] + word + out[b - base:]
    return out


def _years_of_list(pattern: str, original: str) -> dict[int, tuple[int, date]]:
    """Where each date of a list without a year of its own starts, the year it is in and the
    date that gives it: the year of the next date that has one ("28 April and 4 May 1993"), or
    the year before where its month comes later in the year ("28 December and 4 January 1994")."""
    out: dict[int, tuple[int, date]] = {}
    found = list(re.finditer(pattern, original, re.I))
    for i, m in enumerate(found):
        if m["year"]:
            continue
        dated = next((n for n in found[i + 1:] if n["year"]), None)
        if dated is not None:
            month = month_index(dated["month"]) or 1
            later = (month_index(m["month"]) or 1) > month
            day = int(re.findall(r"\d+", dated["days"])[-1])
            out[m.start()] = (int(dated["year"]) - later, _safe(int(dated["year"]), month, day))
    return out


def _day_month(move: Move, years: dict[int, tuple[int, date]]) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        if not m["year"] and m.start() in years:  # a date of a list: in the list's year, written once
            year, dated = years[m.start()]
            days, month, new_year = _shift_days(m["days"], m["month"], str(year), move)
            if new_year == str(move(dated).year):
                return _rebuilt(m, {"days": days, "month": month})
            return f"{_rebuilt(m, {'days': days, 'month': month})} {new_year}"  # moved into another year: say so
        days, month, year = _shift_days(m["days"], m["month"], m["year"], move)
        return _rebuilt(m, {"days": days, "month": month, "year": year})
    return fn


def _month_year(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        d = move(_safe(int(m["year"]), month_index(m["month"]) or 1, 15))
        return f"{month_word(d.month, m['month'])}{m['sep']}{d.year}"
    return fn


def _years(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        year = int(m["year"])
        if m["tail"]:  # "the 1990s": the decade its middle moves into
            return f"{year_moved(year + 5, move) // 10 * 10}s"
        out = str(year_moved(year, move))
        if m["yy"]:  # "1982-84": the second year in two digits, moved as a year of the same century
            out += m["rsep"] + str(year_moved(year // 100 * 100 + int(m["yy"]), move))[2:]
        return out
    return fn


def _months_year(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        # "July and December 1995": each month in the list's year (the year before where it comes
        # later than the last), moved by its middle day; the year written is the last month's
        year = int(m["year"])
        months = list(re.finditer(MONTH, m["months"], re.I))
        last = month_index(months[-1].group()) or 1
        out, moved_last = m["months"], move(date(year, last, 15))
        for k in reversed(months):
            index = month_index(k.group()) or 1
            d = move(_safe(year - (index > last), index, 15))
            said = month_word(d.month, k.group()) + ("" if d.year == moved_last.year else f" {d.year}")
            out = out[:k.start()] + said + out[k.end():]
        return f"{out}{m['sep']}{moved_last.year}"
    return fn


def _month_alone(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        d = move(_safe(REF_YEAR, month_index(m["month"]) or 1, 15))
        return month_word(d.month, m["month"])
    return fn


def short_year(yy: int) -> int:
    """A year said in two digits ("ninety eight", "oh six") in full: 1930-2029."""
    return (1900 if yy >= 30 else 2000) + yy


def _short_year(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        yy = m["yy"] or m["yy2"]
        if m["month"]:
            d = move(_safe(short_year(int(yy)), month_index(m["month"]) or 1, 15))
            return f"{month_word(d.month, m['month'])}{m['sep']}{d.year % 100:02d}"
        return f"{m['q'] or ''}{year_moved(short_year(int(yy)), move) % 100:02d}"
    return fn


def _day_alone(move: Move) -> Callable[[re.Match[str]], str]:
    def fn(m: re.Match[str]) -> str:
        return day_word(move(_safe(REF_YEAR, 1, int(m["day"]))).day, m.group())
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


def date_of_birth(original: str, rng: random.Random, helpers: Helpers) -> str:
    """The date moved as ``Helpers.birth_moved`` says, written as the original was: by the
    document's event shift and, apart from it, by the document's age offset in whole years, so
    that every age the output states agrees with the birth and event dates it shows, and none
    of them tells the true age. A birth year said alone ("born in 1951") moves the same way."""
    if re.fullmatch(r"(?:1[6-9]|20)\d\d", original.strip()):
        return str(helpers.birth_moved(date(int(original), 7, 2)).year)
    if short := re.fullmatch(r"(')?(\d\d)", original.strip()):  # "born in 62"
        return f"{short[1] or ''}{helpers.birth_moved(date(short_year(int(short[2])), 7, 2)).year % 100:02d}"
    if getattr(helpers, "dates", "shift") == "year":  # its year alone, back by the age offset as ages move
        year = re.search(r"(?:1[6-9]|20)\d\d", original)
        if year:
            return str(int(year.group()) - helpers.age_offset)
    try:
        return moved(original, helpers.birth_moved, rng, us=True)
    except (ValueError, OverflowError):
        return shapes.reshape(original, rng)


OPERATORS = {"EVENT_DATE": in_words(event_date, years=True), "DATE_OF_BIRTH": in_words(date_of_birth, years=True)}
