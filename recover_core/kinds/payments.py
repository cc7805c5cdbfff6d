"""Identifiers that pay: a card's number (issuer prefix and Luhn check, ``stdnum.luhn``), its
expiry month, an IBAN (``stdnum.iban``) and a UK sort code. A card becomes another of the same
issuer prefix, length and grouping that passes Luhn; an IBAN another of the same country with a
valid checksum; an expiry another month a card could have. A card's security code is
``id_numbers.NumberWithContext``'s; a sort code is redrawn digit for digit.
"""
from __future__ import annotations

import random
import re
from typing import Iterator

from stdnum import iban as _iban
from stdnum import luhn as _luhn

from recover_core.kinds.base import SOURCE, Helpers, Recognizer, context_re, digits
from recover_core.kinds.redraw import like, put, rand_digits, shared_groups
from recover_core.text.spans import Span


class CreditCard(Recognizer):
    label = "CREDIT_CARD"
    # 13 to 19 digits, in groups split by one space or hyphen.
    pattern = re.compile(r"(?<![\w.])\d(?:[ -]?\d){11,18}(?![\w]|[.,]\d)")
    context = context_re(r"card|credit|debit|visa|mastercard|amex|maestro|cc|card number|charge|pay|payment|billed")
    ISSUERS = re.compile(r"4|5[0-8]|2[2-7]|3[47]|3[068]|35|6(?:011|5|4[4-9])|62|6[37]|2131|1800")
    MAESTRO = re.compile(r"5[06-8]|6")  # Maestro cards start so and may have 12 digits

    def validate(self, item: str, text: str, start: int) -> bool:
        d = digits(item)
        if len(set(re.findall(r"[ -]", item))) > 1:  # "4111-1111 1111" is no one's card
            return False
        if (len(d) >= 13 and self.ISSUERS.match(d) or self.MAESTRO.match(d)) and _luhn.is_valid(d):
            return True
        return self.in_context(text, start)  # a mistyped card is still a card where it says so


class CardExpiry(Recognizer):
    """A card's expiry month ("exp 04/27", "valid thru 04/2027"): with the card number it is
    what a payment needs, so it goes wherever the number goes. Only right after a word that
    names it: a bare "04/27" is a date or a score."""

    label = "CARD_EXPIRY"
    pattern = re.compile(r"(?<![\w/.-])(?:0[1-9]|1[0-2]) ?[/-] ?(?:20)?\d\d(?![\w/]|[.-]\d)")
    context = context_re(r"exp|expiry|expires|expiration|expiration date|expiry date|valid thru|valid through|"
                          r"good thru|valid to|valid until|mm/yy")
    context_before = 18


class Iban(Recognizer):
    label = "IBAN"
    pattern = re.compile(r"(?<![\w])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){10,30}(?![\w])")
    context = context_re(r"iban|account|bank")

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            # the repeat also takes the words after it ("... 7220 today"): the longest prefix
            # that ends at a group's end and validates is the IBAN
            item = m.group()
            ends = [i for i in range(len(item), 11, -1) if i == len(item) or item[i] == " "]
            for e in ends:
                if _iban.is_valid(item[:e].upper()):
                    yield Span(m.start(), m.start() + e, item[:e], self.label, SOURCE)
                    break
            else:
                if self.in_context(text, m.start()) and item[:2].isupper() and " " not in item:
                    yield Span(m.start(), m.end(), item, self.label, SOURCE)


class SortCode(Recognizer):
    """A UK bank's sort code ("sort code 60-16-13"): with the account number, where the money is."""

    label = "ID_NUMBER"
    strength = 1
    pattern = re.compile(r"(?<![\w-])\d\d-\d\d-\d\d(?![\w-])")
    context = context_re(r"sort code|sort-code|sortcode|s/c")
    context_before = 16


def card_expiry(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another month, one to three years from the original's year either way (a card is valid
    for a few years: any other spread reads as no card's), in the original's layout."""
    m = re.fullmatch(r"(\d\d)( ?[/-] ?)(20)?(\d\d)", original)
    if not m:
        return put(original, rand_digits(sum(c.isdigit() for c in original), rng), str.isdigit)
    year = int(m.group(4)) + rng.choice((-3, -2, -1, 1, 2, 3))
    return f"{rng.randint(1, 12):02d}{m.group(2)}{m.group(3) or ''}{year % 100:02d}"


def credit_card(original: str, rng: random.Random, helpers: Helpers) -> str:
    d = re.sub(r"\D", "", original)
    keep = 4 if d.startswith("6011") else 1 if d.startswith("4") else 2  # the issuer's prefix
    new = d
    for _ in range(50):
        body = d[:keep] + rand_digits(len(d) - keep - 1, rng)
        new = body + _luhn.calc_check_digit(body)
        if new != d and not shared_groups(original, put(original, new, str.isdigit), keep):
            break
    return put(original, new, str.isdigit)


def iban(original: str, rng: random.Random, helpers: Helpers) -> str:
    compact = re.sub(r"\s", "", original).upper()
    cc, bban = compact[:2], compact[4:]
    new = compact
    for _ in range(3000):  # some countries check their own account numbers too (1 in 97 pass)
        nb = "".join(like(c, rng) for c in bban)
        new = cc + _iban.calc_check_digits(cc + "00" + nb) + nb
        if new != compact and _iban.is_valid(new) and not shared_groups(
                original, put(original, new, lambda c: not c.isspace()), 0):
            break
    out = put(original, new, lambda c: not c.isspace())
    return out if original[:2].isupper() else out.lower()


OPERATORS = {"CREDIT_CARD": credit_card, "CARD_EXPIRY": card_expiry, "IBAN": iban}
