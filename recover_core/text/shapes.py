"""A DATE, TIME or NUMBER keeps its shape: a month for a month, digits for digits.

A numeric entity ("March 3, 1999", "10:30 pm", "2,500") is rewritten piece by piece:
a month becomes another month, a weekday another weekday, a run of digits other digits
of the same length (a year stays a plausible year, a day of the month a day, an hour an
hour), a number word another number word; everything else ("last", "pm", commas) stays
as it is, because it carries the shape and no private information. A filler's own word
is used where it already has the original's shape ("1999" for "2004").

Cheap checks on lists, no NER pass per candidate (issue 12).
"""
from __future__ import annotations

import random
import re

MONTHS = ("january february march april may june july august september october november december").split()
MONTH_ABBR = [m[:3] for m in MONTHS]
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
                "hundred thousand million billion").split()
# Currencies, as a sum is written (kinds/quantities.py finds sums by them and names a
# sum's unit by them). ISO 4217 codes, with the ones the euro replaced (ATS, DEM, FRF ...): judgments give old sums in them.
CURRENCY_CODE = (r"(?:EUR|USD|GBP|TRL|TRY|YTL|PLN|RUB|UAH|CHF|SEK|DKK|NOK|HUF|CZK|HRK|BGN|RON|ISK|MKD|RSD|BAM|GEL|AMD|"
                  r"AZN|MDL|ATS|DEM|FRF|ITL|GRD|ESP|PTE|BEF|NLG|FIM|IEP|LUF|SIT|SKK|EEK|LVL|LTL|CYP|MTL|ALL|BYN|BYR|"
                  r"KZT|JPY|CNY|INR|AUD|CAD|ROL|SUR)")
CURRENCY_WORD = (r"(?i:euros?|dollars?|pounds?(?: sterling)?|francs?|liras?|lira|zlotys?|roubles?|rubles?|hryvnias?|"
                  r"kunas?|korunas?|forints?|lei|leu|levs?|leva|marks?|kroner|kronor|krona|krone|dinars?|drachmas?|"
                  r"escudos?|pesetas?|shillings?|schillings?|lari|drams?|manats?|cents?)")
# Labels whose substitutes keep the original's shape (NUMBER is vocabThres/allowList's digits).
SHAPED_LABELS = frozenset({"NUMBER", "DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "PERCENT", "QUANTITY"})

_PIECES = re.compile(r"\d+|[A-Za-z]+|\s+|.", re.S)
_ORDINAL_SUFFIX = {"st", "nd", "rd", "th"}


def _kind(piece: str) -> str:
    low = piece.lower()
    if piece.isdigit():
        return "d" * len(piece)
    if low in MONTHS:
        return "MONTH"
    if low in MONTH_ABBR and piece[:1].isupper():  # "Mar", not "mar"-as-a-word
        return "MON"
    if low in WEEKDAYS:
        return "WEEKDAY"
    if low in NUMBER_WORDS:
        return "NUMWORD"
    return low


def shape(text: str) -> tuple[str, ...]:
    """What must stay the same: "March 3, 1999" -> ("MONTH", " ", "d", ",", " ", "dddd")."""
    return tuple(_kind(p) for p in _PIECES.findall(text))


def has_shape(text: str) -> bool:
    """Whether ``text`` holds anything that shaping replaces (a month, digits, ...)."""
    return any(k in ("MONTH", "MON", "WEEKDAY", "NUMWORD") or k[:1] == "d" and k.strip("d") == ""
               for k in shape(text))


def same_shape(a: str, b: str) -> bool:
    return shape(a) == shape(b) and a.lower() != b.lower()


def _digits(piece: str, before: str, after: str, rng: random.Random) -> str:
    n, value = len(piece), int(piece)
    if n == 4 and 1000 <= value <= 2100:  # a year reads as a year
        return str(rng.randint(1950, 2030))
    if after.lower() in _ORDINAL_SUFFIX or (before in {"/", "-"} or after in {"/", "-"}) and n <= 2:
        return str(rng.randint(1, 28)).zfill(n)  # a day, or a day or month in 03/12/1999
    if before == ":" and n == 2:
        return f"{rng.randint(0, 59):02d}"  # the minutes of 10:30
    if after == ":" or (after.lower() in {"am", "pm"} and n <= 2):
        return str(rng.randint(1, 12)).zfill(n)  # an hour
    if n == 1:
        return str(rng.randint(2, 9))
    first = str(rng.randint(1, 9)) if piece[0] != "0" else "0"
    return first + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))


def _same_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word.capitalize() if like[:1].isupper() else word


def reshape(text: str, rng: random.Random) -> str:
    """Another text of the same shape, drawn with ``rng``: every month, weekday, number
    word and run of digits replaced by a different one of its kind."""
    pieces = _PIECES.findall(text)
    out = []
    for i, p in enumerate(pieces):
        before = pieces[i - 1] if i else ""
        after = pieces[i + 1] if i + 1 < len(pieces) else ""
        k = _kind(p)
        if k == "MONTH":
            w = rng.choice([m for m in MONTHS if m != p.lower()])
        elif k == "MON":
            w = rng.choice([m for m in MONTH_ABBR if m != p.lower()])
        elif k == "WEEKDAY":
            w = rng.choice([d for d in WEEKDAYS if d != p.lower()])
        elif k == "NUMWORD":
            w = rng.choice([n for n in NUMBER_WORDS if n != p.lower() and (n in NUMBER_WORDS[:20]) ==
                            (p.lower() in NUMBER_WORDS[:20])])
        elif p.isdigit():
            w = p
            for _ in range(20):  # a different value of the same shape
                w = _digits(p, before, after, rng)
                if w != p:
                    break
            out.append(w)
            continue
        else:
            out.append(p)
            continue
        out.append(_same_case(w, p))
    return "".join(out)
