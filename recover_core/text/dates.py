"""The written date, in one place: how a month, a day and a year are written, read and written
back. The recognizers (masking/recognizers.py, masking/quasi.py, masking/public_text.py) find
dates with these patterns; the operators (pseudonyms/quasi.py, pseudonyms/identifiers.py) read
them with ``month_index`` and write them back with ``month_word``, ``day_word`` and ``suffix``.
"""
from __future__ import annotations

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


_BORN = re.compile(r"(?i)\b(?:born|birth|dob|d\.o\.b\.?|birthday|birthdate)")


def said_born(text: str, start: int, window: int = 40) -> bool:
    """Whether the date at ``start`` is a birth date: "born", "DOB" ... in the ``window`` before it,
    in the same sentence, with no other date between ("born on 3 March 1960. On 2 October 2000"
    dates an event)."""
    seg = text[max(0, start - window):start]
    last = None
    for last in _BORN.finditer(seg):
        pass
    return last is not None and not re.search(r"[.;!?](?:\s|$)|\n|\d{4}", seg[last.end():].replace("d.o.b.", ""))
