"""What every kind of identifier shares: the ``Recognizer`` a kind finds its items with, the
context-word pattern and digit reader recognizers use, and the ``Helpers`` an operator may ask
of the mapping that calls it (a name's pseudonym, a keyed stream, where a date moves).

An operator is ``fn(original, rng, helpers) -> substitute``; ``rng`` is keyed by the engine's
secret and the original (pseudonyms/key.py), never seeded from the original here.
"""
from __future__ import annotations

import random
import re
from datetime import date
from typing import Callable, ClassVar, Iterator, Protocol, Sequence

from recover_core.text.spans import Span


SOURCE = "identifiers"
# How far before an item its context words may stand (characters).
CONTEXT_WINDOW = 48
# "direct": names and identifiers, masked by every protection profile; "quasi": facts that
# identify in combination (dates, ages, sums), masked under protect="quasi" only.
QUASI = "quasi"


def context_re(words: str) -> re.Pattern[str]:
    """A pattern of ``words`` (alternatives, a regular expression) as whole words, in any case."""
    return re.compile(r"(?<![\w])(?:" + words + r")(?![\w])", re.I)


def digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


class Recognizer:
    """One kind of identifier. ``needs`` names the cheap line feature it cannot do without
    ("digit", "@", "dot", "digitword", "number"); the registry skips it on lines that lack it."""

    label: ClassVar[str]
    needs: ClassVar[str | None] = "digit"  # None: runs on every line
    pattern: ClassVar[re.Pattern[str] | None] = None
    context: ClassVar[re.Pattern[str] | None] = None
    # An item that counts only with a context word this many characters before it at most
    # ("sort code 60-16-13", "exp 04/27"); None: no such rule.
    context_before: ClassVar[int | None] = None

    gate: ClassVar[bool] = False  # True: only where a context word is in the line at all
    # "direct": names and identifiers, masked by every protection profile; "quasi": facts that
    # identify in combination (dates, ages, case numbers: kinds/dates.py ...), under protect="quasi".
    profile: ClassVar[str] = "direct"
    # Of overlapping items, a validated kind (a card by Luhn) wins over one found by context alone.
    strength: ClassVar[int] = 2

    @property
    def name(self) -> str:
        """Its name in the registry: the class's, or the one a Pattern was given."""
        return getattr(self, "_name", None) or type(self).__name__

    def find(self, text: str) -> Iterator[Span]:
        assert self.pattern is not None
        if self.gate and not (self.context and self.context.search(text)):
            return
        for m in self.pattern.finditer(text):
            a, b = self.bounds(m)
            if b > a and self.validate(text[a:b], text, a):
                yield Span(a, b, text[a:b], self.label, SOURCE)

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        return self.context_before is None or self.in_context(text, start, window=self.context_before)

    def in_context(self, text: str, start: int, window: int = CONTEXT_WINDOW, end: int | None = None,
                   after: int = 0) -> bool:
        """Whether a context word stands in the ``window`` characters before ``start`` (or in
        the ``after`` characters after ``end``: "98416 for the postal code")."""
        if self.context is None:
            return False
        if self.context.search(text, max(0, start - window), start):
            return True
        return bool(after and end is not None and self.context.search(text, end, end + after))


class Helpers(Protocol):
    """What an operator may ask of the mapping that calls it (pseudonyms/policy.py's ``Pseudonyms``)."""

    dates: str  # "jitter", "shift" or "year" (pseudonyms/dates.DATE_POLICIES)

    def rename(self, tokens: Sequence[str]) -> list[str | None]:
        """Each token's pseudonym where it is a name (masked elsewhere, or a known name), else None."""

    def keyed(self, what: str) -> random.Random:
        """A stream keyed by ``what`` (a domain, a date) under the mapping's key: the same
        part of two identifiers ("acme.com" in two addresses) gets the same substitute."""

    def birth_moved(self, born: date) -> date:
        """Where the birth date ``born`` moves: in step with the document's events and its stated ages."""

    @property
    def event_shift(self) -> int:
        """Days the mapping's event dates move by before any jitter (keyed, never 0)."""

    def event_moved(self, d: date) -> date:
        """Where the event date ``d`` moves (keyed; never against the order of two dates)."""

    @property
    def age_offset(self) -> int:
        """Years every stated age of the document moves by (keyed, 1-3)."""

    def quantity_scale(self, unit: str) -> float:
        """The keyed factor every quantity of ``unit`` ("money:eur", "time:year") in the document is scaled by."""

    def case_offset(self, digits: int) -> int:
        """What application numbers of ``digits`` digits in the document move by (keyed, never 0)."""


Operator = Callable[[str, random.Random, Helpers], str]
