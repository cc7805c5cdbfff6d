"""Application, case, file and registration numbers ("no. 36110/97"). An application number's
serial moves by the document's keyed offset, so joined applications keep their order and
distance, and its year of lodging moves as the document's dates do; any other code is redrawn
character by character.
"""
from __future__ import annotations

import random
import re

from recover_core.kinds.base import QUASI, Helpers, Recognizer, context_re
from recover_core.kinds.dates import year_moved


class CaseNumber(Recognizer):
    """An application, case, file or registration number: digits with a slash ("36110/97"),
    or any digit-bearing code right after "no.", "file", "case", "reference" ..."""

    label = "CASE_NUMBER"
    profile = QUASI
    # Found by context, as an ID number is: of the two on the same digits the longer wins
    # ("phone number is 001-793-466-0772x603" is no case number "001-793-466"); on the same
    # extent the registry's order names it a case number.
    strength = 1
    pattern = re.compile(r"(?<![\w/.-])(?:[A-Z]{1,4}[ .-]?)?\d{1,7}/\d{1,4}(?:[-/]\d{1,4})?(?![\w/]|[.-]\d)"
                         # not one group of a spaced number ("NI number ZZ 62 02 78 T"): ID_NUMBER's whole
                         r"|(?<![\w/.-])(?<![A-Z] )[A-Z0-9][A-Z0-9./-]{0,20}\d[A-Z0-9./-]{0,20}(?<![.-])(?![\w/]| \d)")
    context = context_re(r"no\.|nos\.|nr\.|number|numbers|file|case|cases|reference|ref\.|registration|"
                          r"register|application|applications|docket|complaint|decision|judgment")

    def validate(self, item: str, text: str, start: int) -> bool:
        if re.search(r"(?<!\d)\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})$", item):
            return False  # "DOB 02/11/1961": a date, for the date recognizers
        if "/" in item and re.fullmatch(r"(?:[A-Z]{1,4}[ .-]?)?\d{1,7}/\d{1,4}(?:[-/]\d{1,4})?", item):
            return not re.fullmatch(r"\d{1,2}/\d{1,2}", item)  # "3/4": a fraction, not a file
        # Otherwise only right after a word that names a number ("no. 2003-12", "file K-12")
        return self.in_context(text, start, window=16) and sum(c.isdigit() for c in item) >= 2


class ApplicationNumber(CaseNumber):
    """A case or application number named as one ("application no. 29537/95", "(no. 36110/97)",
    "case no. K-12/98"): it points to one case, and so to its parties, on its own (TAB marks it
    a direct identifier), so every profile masks it."""

    profile = "direct"

    def validate(self, item: str, text: str, start: int) -> bool:
        return self.in_context(text, start, window=24) and super().validate(item, text, start)


_CASE = re.compile(r"(?P<head>[A-Z]{1,4}[ .-]?)?(?P<n>[1-9]\d{0,6})/(?P<yy>\d{2}|\d{4})(?P<tail>(?:[-/]\d{1,4})?)")


def case_number(original: str, rng: random.Random, helpers: Helpers) -> str:
    """An application number "26480/95": its serial moved by the document's keyed offset (joined
    applications keep their order and their distance, no leading zero), its year of lodging moved
    as the document's dates are ("/95" stays a year, before the judgment). Any other code is
    redrawn character by character."""
    m = _CASE.fullmatch(original.strip())
    if not m:
        raise ValueError("not an application number")
    serial = m["n"]
    new = int(serial) + helpers.case_offset(len(serial))
    if new < 10 ** (len(serial) - 1) or new >= 10 ** len(serial):
        new = int(serial) - helpers.case_offset(len(serial))
    if not 1 <= new < 10 ** len(serial) or new == int(serial):
        raise ValueError("no room")
    yy = m["yy"]
    year = int(yy) if len(yy) == 4 else (1900 + int(yy) if int(yy) > 40 else 2000 + int(yy))
    moved = year if getattr(helpers, "dates", "shift") == "year" else year_moved(year, helpers.event_moved)
    return f"{m['head'] or ''}{new}/{str(moved)[-len(yy):]}{m['tail']}"


OPERATORS = {"CASE_NUMBER": case_number}
