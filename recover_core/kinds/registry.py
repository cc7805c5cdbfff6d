"""The registry of identifier kinds: which recognizers run, in what order, and which operator
replaces each kind's items (Presidio's RecognizerRegistry and its anonymizer's operators in one
object).

As in Presidio, the registry imports the kinds, never the other way round. A built-in kind is
its module in this package (its recognizers and its operators side by side) and a line of
``default()`` below; a user's kind joins through ``recover_core.recognizers.add`` and
``recover_core.operators.add``. A kind's label joins ``spans.IDENTIFIER_LABELS`` when its first
recognizer is added, so its marker and its substitute follow from the registry.
"""
from __future__ import annotations

import random
import re

import phonenumbers

from recover_core.errors import RecoverError
from recover_core.kinds import (addresses, ages, cases, contact, dates, groups, id_numbers, locators, occupations,
                                payments, phones, quantities, spoken, spoken_digits)
from recover_core.kinds.base import Helpers, Operator, Recognizer
from recover_core.kinds.redraw import scramble
from recover_core.text.spans import ENTITY_LABELS, GENERIC_LABELS, IDENTIFIER_LABELS

_LABEL_RE = re.compile(r"[A-Z][A-Z0-9_]{1,40}")
PROFILES = ("direct", "quasi")


class Registry:
    """Recognizers by name, in the order they run (order matters only for ties: of two items of
    the same strength and extent, the earlier recognizer's label), and each kind's operator."""

    def __init__(self, recognizers: tuple[Recognizer, ...] = (), operators: dict[str, Operator] | None = None):
        self._recognizers: dict[str, Recognizer] = {}
        # The recognizers each profile runs, kept between lines (a corpus is found line by
        # line) and dropped whenever the registry changes.
        self._running: dict[str, tuple[Recognizer, ...]] = {}
        self.operators: dict[str, Operator] = {}
        for r in recognizers:
            self.add(r)
        self.operators.update(operators or {})
        # The built-in operators as they were made: removing a user's operator of a built-in
        # kind puts the kind's own back instead of leaving it without one.
        self._built_in = dict(self.operators)

    def add(self, recognizer: Recognizer) -> Recognizer:
        """Register a recognizer (its ``name`` must be new); its label becomes an identifier kind."""
        if not isinstance(recognizer, Recognizer):
            raise RecoverError(f"A recognizer is a recover_core.recognizers.Recognizer (such as Pattern), "
                               f"not {type(recognizer).__name__}.")
        name, label = recognizer.name, recognizer.label
        if name in self._recognizers:
            raise RecoverError(f"A recognizer named {name!r} is already registered: remove it first, or give "
                               "yours another name.")
        if not isinstance(label, str) or not _LABEL_RE.fullmatch(label) or label in ENTITY_LABELS \
                or label in GENERIC_LABELS or label in ("NUMBER", "WORD"):
            raise RecoverError(f"{label!r} cannot label an identifier: use upper-case letters, digits and '_' "
                               "(such as TAX_ID), and not an entity type or a generic marker.")
        self._recognizers[name] = recognizer
        self._running.clear()
        IDENTIFIER_LABELS.add(label)
        return recognizer

    def remove(self, name: str) -> None:
        """Unregister a recognizer by name; its label goes with the last recognizer of it."""
        if name not in self._recognizers:
            raise RecoverError(f"No recognizer named {name!r}. Registered: {', '.join(self._recognizers)}.")
        label = self._recognizers.pop(name).label
        self._running.clear()
        if not any(r.label == label for r in self._recognizers.values()):
            IDENTIFIER_LABELS.discard(label)

    def names(self) -> list[str]:
        """The registered recognizers' names, in the order they run."""
        return list(self._recognizers)

    def recognizers(self) -> tuple[Recognizer, ...]:
        return tuple(self._recognizers.values())

    def running(self, protect: str) -> tuple[Recognizer, ...]:
        """The recognizers a protection profile runs: "direct" those of names and identifiers,
        "quasi" every one (dates, ages, sums ... too)."""
        got = self._running.get(protect)
        if got is None:
            got = self._running[protect] = tuple(r for r in self._recognizers.values()
                                                 if protect == "quasi" or r.profile == "direct")
        return got

    def quasi_labels(self) -> set[str]:
        """The kinds only ``protect="quasi"`` finds (EVENT_DATE, AGE, ...; not DATE_OF_BIRTH, which
        a direct recognizer finds too)."""
        direct = {r.label for r in self.running("direct")}
        return {r.label for r in self.running("quasi")} - direct

    def set_operator(self, label: str, fn: Operator) -> None:
        self.operators[label] = fn

    def reset_operator(self, label: str) -> None:
        """A built-in kind gets its own operator back; any other kind is then redrawn character by character."""
        if label in self._built_in:
            self.operators[label] = self._built_in[label]
        else:
            self.operators.pop(label, None)

    def substitute(self, label: str, original: str, rng: random.Random, helpers: Helpers) -> str:
        """A substitute of ``original``'s shape, drawn with ``rng``. Any original the kind's own
        rules cannot read (a malformed IP), or of a kind with no operator, is redrawn character
        by character instead."""
        try:
            return self.operators[label](original, rng, helpers)
        except (ValueError, IndexError, KeyError, phonenumbers.NumberParseException):
            return scramble(original, rng)


def default() -> Registry:
    """The built-in kinds in their default order. A case number is registered before an ID
    number: the two tie on the same digits ("application no. 36110/97"), and the first names it."""
    return Registry(
        recognizers=(
            contact.Email(), contact.Url(), contact.Handle(),
            payments.CreditCard(), payments.CardExpiry(), payments.Iban(),
            contact.IpAddress(),
            locators.MacAddress(), locators.Vin(), locators.NumberPlate(), locators.FlightNumber(),
            locators.BitcoinAddress(), locators.Coordinates(),
            id_numbers.Ssn(), phones.Phone(), dates.DateOfBirth(), addresses.Address(), addresses.Postcode(),
            cases.ApplicationNumber(), cases.CaseNumber(), id_numbers.IdNumber(), id_numbers.NumberWithContext(),
            payments.SortCode(), spoken_digits.SpokenDigits(),
            # quasi-identifiers (protect="quasi")
            dates.BirthYear(), dates.EventDate(), ages.Age(), quantities.Amount(), quantities.Duration(),
            quantities.Count(), groups.Nationality(),
            *spoken.RECOGNIZERS,  # the same kinds said in words, as a transcript writes them
            occupations.Occupation(), occupations.Condition(), occupations.ClinicalTerm()),
        operators={**contact.OPERATORS, **payments.OPERATORS, **phones.OPERATORS, **id_numbers.OPERATORS,
                   **addresses.OPERATORS, **locators.OPERATORS, **spoken_digits.OPERATORS, **dates.OPERATORS,
                   **ages.OPERATORS, **cases.OPERATORS, **quantities.OPERATORS, **groups.OPERATORS,
                   **occupations.OPERATORS})


# The one registry the engine, the CLI and the app use.
REGISTRY = default()
