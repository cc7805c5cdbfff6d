"""Identifiers that pay: a card's number (issuer prefix and Luhn check, ``stdnum.luhn``), its
expiry month, an IBAN (``stdnum.iban``) and a UK sort code. Small recognizers in the shape of
``recognizers.py``'s; the registry (``identifiers.py``) imports them, and their substitutes are
``pseudonyms/identifiers.py``'s. A card's security code is ``NumberWithContext``'s."""
from __future__ import annotations

import re
from typing import Iterator

from stdnum import iban as _iban
from stdnum import luhn as _luhn

from recover_core.masking.recognizers import SOURCE, Recognizer, _context_re, _digits
from recover_core.text.spans import Span


class CreditCard(Recognizer):
    label = "CREDIT_CARD"
    # 13 to 19 digits, in groups split by one space or hyphen.
    pattern = re.compile(r"(?<![\w.])\d(?:[ -]?\d){11,18}(?![\w]|[.,]\d)")
    context = _context_re(r"card|credit|debit|visa|mastercard|amex|maestro|cc|card number|charge|pay|payment|billed")
    ISSUERS = re.compile(r"4|5[0-8]|2[2-7]|3[47]|3[068]|35|6(?:011|5|4[4-9])|62|6[37]|2131|1800")
    MAESTRO = re.compile(r"5[06-8]|6")  # Maestro cards start so and may have 12 digits

    def validate(self, item: str, text: str, start: int) -> bool:
        d = _digits(item)
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
    context = _context_re(r"exp|expiry|expires|expiration|expiration date|expiry date|valid thru|valid through|"
                          r"good thru|valid to|valid until|mm/yy")
    context_before = 18


class Iban(Recognizer):
    label = "IBAN"
    pattern = re.compile(r"(?<![\w])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){10,30}(?![\w])")
    context = _context_re(r"iban|account|bank")

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
    context = _context_re(r"sort code|sort-code|sortcode|s/c")
    context_before = 16
