"""ID numbers: US SSNs (``stdnum``), and driver's licence, passport, medical record, account
and PIN numbers where a word says what they are; redrawn character by character in their
layout, with no group of the original's digits coming back.
"""
from __future__ import annotations

import random
import re

from stdnum.us import ssn as _ssn

from recover_core.kinds.base import Helpers, Recognizer, context_re, digits
from recover_core.kinds.redraw import put, rand_digits, scramble, shared_groups
from recover_core.text.dates import NUMERIC_DATE_TAIL, numeric_date, year_of_date


class Ssn(Recognizer):
    label = "ID_NUMBER"
    pattern = re.compile(r"(?<![\w-])\d{3}([- ])\d{2}\1\d{4}(?![\w]|-\d)|(?<![\w-])\d{9}(?![\w])")
    context = context_re(r"ssn|social security|social|ss#|tax id|tin|itin")

    def validate(self, item: str, text: str, start: int) -> bool:
        if self.in_context(text, start):
            return True
        return not item.isdigit() and _ssn.is_valid(digits(item))


class IdNumber(Recognizer):
    """Driver's licence, passport, medical record, national ID, account and PIN numbers: any
    token with digits right after words that say what it is ("ZZ 62 02 78 T", "B94711220")."""

    label = "ID_NUMBER"
    strength = 1
    gate = True
    pattern = re.compile(r"(?<![\w-])(?P<pre>[A-Za-z]{1,3} (?=\d))?[A-Za-z0-9]{0,12}\d[A-Za-z0-9./-]{0,24}(?<![./-])"
                         r"(?: \d{1,9}(?![\w./-])){0,4}(?: [A-Za-z](?![\w']))?(?![\w])")
    context = context_re(
        r"id|i\.d\.|identity|identification|passport|licen[cs]e|driver'?s?|dl|medical record|mrn|record number|"
        r"patient|nhs|national insurance|insurance|ni number|nino|social security|ssn|sin|tax|tin|aadhaar|cpf|dni|"
        r"nie|nif|bsn|personal number|personnummer|account|acct|member|membership|policy|customer|pin|code|"
        r"password|passcode|serial|badge|employee|student|case|claim|reference|ref|no\.|number|#")

    # Short words that come before a number without being part of it ("is 1234", "no 55").
    NOT_PREFIX = frozenset("a an i is at on in to of my me no id by or and it its his her our the was".split())

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # A letter prefix ("ZZ 62 02 78 T") is part of the number where it is capitals, or in a
        # caseless line where it is no everyday short word.
        # A prefix that is itself a word saying what the number is ("MRN 00123456", "DL 12345")
        # is its label, not part of it: scrambled with it, "MRN" came out as "LZU".
        pre = m.group("pre")
        if pre and (self.context.fullmatch(pre.strip()) or
                    not (pre.isupper() or (m.string == m.string.lower() and pre.strip() not in self.NOT_PREFIX))):
            return m.start() + len(pre), m.end()
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        if NUMERIC_DATE_TAIL.search(item) or numeric_date(item) or year_of_date(item, text, start):
            return False  # "DOB 02/11/1961", "seen on 2024-03-05": the date recognizers' (shifted, not scrambled)
        return sum(c.isdigit() for c in item) >= 4 and self.in_context(text, start, window=36)


class NumberWithContext(Recognizer):
    """A bare run of digits right after a word that asks for a secret number ("my pin is
    4421", "account 12345678"), or of nine digits or more anywhere: a number of no known
    shape, but private by what it is."""

    label = "ID_NUMBER"
    strength = 1
    pattern = re.compile(r"(?<![\w.,:/-])\d{3,20}(?![\w]|[.,:/]\d)")
    context = context_re(r"pin|code|account|acct|password|passcode|card|member|customer|policy|ref|reference|"
                          r"routing|sort code|cvv|cvc|security")
    # A card's security code has three digits: right after the word that names it.
    SECURITY_CODE = re.compile(r"(?<![\w])(?:cvv2?|cvc2?|csc|security code)\W{0,3}$", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        # Nine digits or more with no separator are an account, a phone or an ID wherever they
        # stand ("Text 391004251 when you arrive"): amounts and counts that long have commas.
        if len(item) == 3:
            return bool(self.SECURITY_CODE.search(text, max(0, start - 20), start))
        if year_of_date(item, text, start):
            return False
        return len(item) >= 9 or self.in_context(text, start, window=28)


def id_number(original: str, rng: random.Random, helpers: Helpers) -> str:
    d = re.sub(r"\D", "", original)
    ssn = re.fullmatch(r"\d{3}[- ]?\d{2}[- ]?\d{4}", original) is not None
    for _ in range(100):
        new = scramble(original, rng)
        if new != original and not shared_groups(original, new, 0) and (
                not ssn or _ssn.is_valid(re.sub(r"\D", "", new))):
            return new
    return put(original, rand_digits(len(d), rng), str.isdigit)


OPERATORS = {"ID_NUMBER": id_number}
