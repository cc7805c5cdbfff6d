"""Phone numbers: found through ``phonenumbers`` (valid numbers of several regions, possible
North American ones in the shapes people type them), replaced by another valid number of the
same region and type, digit for digit in the same layout, its extension redrawn apart and its
area code never kept while another of the likeliest region turns up.
"""
from __future__ import annotations

import random
import re
from typing import Iterator

import phonenumbers
from phonenumbers import Leniency

from recover_core.kinds.base import SOURCE, Helpers, Recognizer, context_re, digits
from recover_core.kinds.redraw import put, rand_digits, shared_groups
from recover_core.text.dates import numeric_date
from recover_core.text.spans import Span


# Regions tried first for a national number (no + or 00): where most of our users' numbers are.
PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "AU")


class Phone(Recognizer):
    """Phone numbers through ``phonenumbers``: valid numbers of several regions (any region
    when written with +), and possible North American numbers of 10 digits or with
    context words ("555-123-4567" is never a valid number, and is what people type)."""

    label = "PHONE"
    REGIONS = PHONE_REGIONS
    NATIONAL = re.compile(r"(?<![\w])(?:\+|\(?0)\d")
    context = context_re(r"phone|call|cell|mobile|tel|telephone|fax|number|text me|whatsapp|reach me|ring")

    def find(self, text: str) -> Iterator[Span]:
        if sum(c.isdigit() for c in text) < 7:
            return
        seen: set[tuple[int, int]] = set()
        # Other regions' national numbers start with a trunk 0 ("020 7946 0958"), and
        # international ones with +: the US matcher alone serves a line with neither.
        regions = self.REGIONS if self.NATIONAL.search(text) else self.REGIONS[:1]
        for region in regions:
            leniency = Leniency.POSSIBLE if region == "US" else Leniency.VALID
            for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency, max_tries=200):
                a, b = m.start, m.end
                if (a, b) in seen or numeric_date(m.raw_string):
                    continue
                n = len(digits(m.raw_string))
                if leniency is Leniency.POSSIBLE and not phonenumbers.is_valid_number(m.number):
                    # only the shapes people write phones in, not any 7-digit run
                    shaped = re.fullmatch(r"(?:\+?1?[ .-]?\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}|\d{3}[ .-]\d{4})"
                                          r"(?: ?(?:x|ext\.?|extension) ?\d{1,6})?", m.raw_string, re.I)
                    if not shaped or (n < 10 and not self.in_context(text, a)):
                        continue
                seen.add((a, b))
                yield Span(a, b, text[a:b], self.label, SOURCE)
        yield from self._generic(text, seen)

    # Groups split only at separators (or a "(0)"), so a long run of digits is tried in few ways.
    GENERIC = re.compile(r"(?<![\w+])(?:\+|00)?\(?\d{1,5}\)?(?:\(0\)\d{0,12}|[ .-]{1,2}\(?\d{1,8}\)?){1,6}"
                         r"(?: ?(?:x|ext\.?) ?\d{1,6})?(?![\w]|[.,]\d)", re.I)

    def _generic(self, text: str, seen: set[tuple[int, int]]) -> Iterator[Span]:
        # Other countries' numbers in shapes phonenumbers rejects ("+49 (0) 1234 5678"): digit
        # groups of 7 to 15 digits, written with + or 00, or after a phone word.
        for m in self.GENERIC.finditer(text):
            item, n = m.group(), len(digits(m.group()))
            if not 7 <= n <= 15 or any(a <= m.start() < b for a, b in seen) or numeric_date(item):
                continue
            if item.startswith(("+", "00")) or self.in_context(text, m.start()):
                yield Span(m.start(), m.end(), item, self.label, SOURCE)


NORTH_AMERICAN = re.compile(r"(?:\+?1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}")


def _phone_regions(original: str) -> tuple[list[str], int]:
    """The regions a phone number is valid in (a national number such as "097512992" is valid
    in Italy and maybe elsewhere: the text never says which), and how many of its leading
    digits are the country code and trunk prefix, which stay."""
    d = re.sub(r"\D", "", original)
    if original.lstrip().startswith(("+", "00")):
        text = "+" + d[2:] if original.lstrip().startswith("00") else original
        try:
            n = phonenumbers.parse(text, None)
        except phonenumbers.NumberParseException:
            return ["US"], 0
        reg = phonenumbers.region_code_for_number(n) or phonenumbers.region_code_for_country_code(n.country_code)
        return [reg or "US"], max(len(d) - len(str(n.national_number)), 0)
    if NORTH_AMERICAN.fullmatch(original.strip()):  # "555-123-4567": what people type for a US number
        n = phonenumbers.parse(original, "US")  # the pattern guarantees it parses
        region = phonenumbers.region_code_for_number(n) if phonenumbers.is_valid_number(n) else None
        return [region or "US"], 1 if len(d) == 11 else 0  # a Canadian area code stays Canadian
    order = list(PHONE_REGIONS) + sorted(phonenumbers.SUPPORTED_REGIONS - set(PHONE_REGIONS))
    regions = [r for r in order if _valid_in(original, r)]
    if regions:
        return regions, 1 if d.startswith("0") else 0
    return ["US"], 1 if len(d) == 11 and d.startswith("1") else 0


def _valid_in(text: str, region: str) -> bool:
    return _kind_in(text, region) is not None


def _kind_in(text: str, region: str) -> int | None:
    """The number's type in ``region`` (phonenumbers.PhoneNumberType: fixed line, mobile,
    toll-free, ...), or None where it is not a valid number of that region."""
    try:
        n = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(n) or phonenumbers.region_code_for_number(n) != region:
        return None
    return phonenumbers.number_type(n)


# An extension after the number ("ext. 42", "x603"): its digits are no part of the number that
# decides the region; counted in, "(415) 555-2671 ext. 42" read as valid in 13 regions at once.
_EXTENSION = re.compile(r"(\s*(?:ext\.?|extension|x|#)\s*)(\d{1,6})$", re.I)
TRIES = 300  # draws of a whole new number before one keeping the area code (each ~0.1 ms)


def phone(original: str, rng: random.Random, helpers: Helpers) -> str:
    """A number of the same length and format and, where the original is a valid number, of
    its type (a landline or mobile stays one, not a non-geographic personal number such as
    NANP's 5XX codes), valid in every region the original is valid in (so in the caller's,
    whichever it is), else in the likeliest one. Its area code is drawn too, never kept
    while a number valid in the likeliest region turns up: an area code names a town."""
    ext = _EXTENSION.search(original)
    if ext and ext.start() > 0:
        return phone(original[:ext.start()], rng, helpers) + ext.group(1) + rand_digits(len(ext.group(2)), rng)
    d = re.sub(r"\D", "", original)
    regions, keep = _phone_regions(original)
    text_of = (lambda s: "+" + re.sub(r"\D", "", s)[2:]) if original.lstrip().startswith("00") else (lambda s: s)
    kind = _kind_in(text_of(original), regions[0])
    first = typeless = None  # valid in the likeliest region at least (and of the original's type)
    for attempt in range(TRIES + 100):
        if attempt == TRIES and first:
            break  # valid in the likeliest region, of its type, with an area code of its own
        k = keep if attempt < TRIES else min(len(d) - 2, keep + 3)  # then keep the area code too
        new = d[:k] + rand_digits(len(d) - k, rng)
        if new == d:
            continue
        cand = put(original, new, str.isdigit)
        if shared_groups(original, cand, k):
            continue
        its = _kind_in(text_of(cand), regions[0])
        if its is None:
            continue
        if kind is not None and its != kind:
            typeless = typeless or cand
            continue
        if all(_valid_in(text_of(cand), r) for r in regions[1:]):
            return cand
        first = first or cand
    return first or typeless or put(original, d[:keep] + rand_digits(len(d) - keep, rng), str.isdigit)


OPERATORS = {"PHONE": phone}
