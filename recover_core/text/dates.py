"""The written date, in one place: how a month, a day and a year are written, read and written
back. The date kinds (kinds/dates.py) and the recognizers that must tell a date from another
number (kinds/phones.py, kinds/id_numbers.py, masking/public_text.py) find dates with these
patterns; kinds/dates.py's operators read them with ``month_index`` and write them back with
``month_word``, ``day_word`` and ``suffix``.
"""
from __future__ import annotations

import datetime
import re

from recover_core.text.shapes import MONTHS

# A month, whole or cut short ("Sept."), in any case where the pattern is compiled with re.I.
MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
DAY = r"\d{1,2}(?:st|nd|rd|th)?(?![\d\w])"  # "3", "03", "3rd"
DAYS = rf"{DAY}(?:(?:, ?| and | or | to |-|–){DAY})*"  # "1, 2 and 3"
YEAR = r"(?:1[6-9]|20)\d\d"


def month_index(word: str) -> int | None:
    """1-12 for a month's name, whole or cut to three letters or more; None for anything else."""
    low = word.lower().rstrip(".")
    for i, m in enumerate(MONTHS):
        if low == m or (len(low) >= 3 and m.startswith(low)):
            return i + 1
    return None


def month_word(month: int, like: str) -> str:
    """Month ``month`` written as ``like`` is: full or cut to three letters, its case, its dot."""
    full = MONTHS[month - 1]
    core = like.rstrip(".")
    word = full if core.lower() in MONTHS else full[:3]  # "May" is whole; "Sept." an abbreviation
    if core.isupper() and len(core) > 1:
        word = word.upper()
    elif core[:1].isupper():
        word = word.capitalize()
    return word + ("." if like.endswith(".") and word != full else "")


def suffix(day: int) -> str:
    """"st", "nd", "rd" or "th" for a day of the month."""
    return "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def day_word(day: int, like: str) -> str:
    """``day`` as ``like`` writes its day: "3", "03" or "3rd"."""
    digits = re.match(r"\d+", like).group()  # type: ignore[union-attr]
    out = str(day).zfill(len(digits)) if digits.startswith("0") else str(day)
    return out + (suffix(day) if len(like) > len(digits) else "")


# a word of its own: "Bornova on 26 April 2001" (a town in İzmir) dates an event
_BORN = re.compile(r"(?i)\b(?:born|birth|dob|d\.o\.b\.?|birthday|birthdate)(?![a-z])")


def said_born(text: str, start: int, window: int = 40) -> bool:
    """Whether the date at ``start`` is a birth date: "born", "DOB" ... in the ``window`` before it,
    in the same sentence, with no other date between ("born on 3 March 1960. On 2 October 2000"
    dates an event)."""
    seg = text[max(0, start - window):start]
    last = None
    for last in _BORN.finditer(seg):
        pass
    return last is not None and not re.search(r"[.;!?](?:\s|$)|\n|\d{4}", seg[last.end():].replace("d.o.b.", ""))


_NUMERIC_DATE = re.compile(r"(\d{4})([-./])(\d{1,2})\2(\d{1,2})|(\d{1,2})([-./])(\d{1,2})\6(\d{4})")


def numeric_date(item: str) -> bool:
    """Is ``item`` a calendar date written with digits ("2024-03-05", "05.03.2024", "3/5/2024")?
    A phone matcher reads one as digit groups after a word like "number", and its redrawn digits
    gave "2027-21-03", a date no calendar has, where the date itself was no phone."""
    m = _NUMERIC_DATE.fullmatch(item.strip())
    if not m:
        return False
    if m.group(1):
        y, a, b = int(m.group(1)), int(m.group(3)), int(m.group(4))
        orders = [(a, b)]  # year first: month, then day
    else:
        y, a, b = int(m.group(8)), int(m.group(5)), int(m.group(7))
        orders = [(a, b), (b, a)]  # day and month in either order
    for month, day in orders:
        try:
            datetime.date(y, month, day)
            return True
        except ValueError:
            pass
    return False


# A numeric date at the end of an item ("DOB 02/11/1961"), and a month right before a point.
NUMERIC_DATE_TAIL = re.compile(r"(?<!\d)\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})$")
MONTH_BEFORE = re.compile(MONTH + r",? $", re.I)
_YEAR_AFTER_MONTH = re.compile(MONTH + r"(?: \d{1,2}(?:st|nd|rd|th)?)?,? $", re.I)


def year_of_date(item: str, text: str, start: int) -> bool:
    """Is ``item`` the year of a date ("by 1 June 2025", "June 3rd, 2025")? Then it is no account
    or ID number, whatever word stands near it: after "sort code" it was scrambled into
    "1 June 0387", a date that garbles the text and shifts nothing."""
    return len(item) == 4 and item.isdigit() and bool(_YEAR_AFTER_MONTH.search(text, max(0, start - 20), start))
