"""Operators: how each identifier kind is replaced, as a registry you can extend (Presidio's
anonymizer operators).

``add(label, fn)`` makes ``fn(original, rng) -> substitute`` the operator of an identifier
kind (a label a recognizer finds: ``recover_core.recognizers``). ``rng`` is a
``random.Random`` keyed by the engine's secret and the original (pseudonyms/key.py), so the
same original gets the same substitute within a mapping and nobody without the key can tie
the two; draw everything from it, never from the original's own digits. The engine keeps
the substitute off every original and every substitute already used, drawing again if it
must, so ``fn`` need not check.
"""
from __future__ import annotations

import inspect
import random
from typing import Callable

from recover_core.errors import RecoverError
from recover_core.kinds.registry import REGISTRY
from recover_core.text.spans import IDENTIFIER_LABELS

Operator = Callable[[str, random.Random], str]


def add(label: str, fn: Operator) -> None:
    """Replace ``label``'s items with ``fn(original, rng)`` from now on (this one or a built-in
    kind: the user's operator wins)."""
    if label not in IDENTIFIER_LABELS:
        raise RecoverError(f"No recognizer finds {label!r}: add one first (recover_core.recognizers.add). "
                           f"Identifier kinds: {', '.join(IDENTIFIER_LABELS)}.")
    if not callable(fn):
        raise RecoverError(f"The operator for {label} must be a function fn(original, rng) -> str.")
    try:
        inspect.signature(fn).bind("original", random.Random())
    except TypeError:
        raise RecoverError(f"The operator for {label} must take two arguments, (original, rng).") from None
    except ValueError:  # a builtin with no signature: trust it
        pass

    def operator(original: str, rng: random.Random, helpers: object) -> str:
        out = fn(original, rng)
        if not isinstance(out, str):
            raise RecoverError(f"The operator for {label} returned {type(out).__name__}, not a string.")
        return out
    REGISTRY.set_operator(label, operator)


def remove(label: str) -> None:
    """Take a user's operator off: a built-in kind gets its own back, any other kind is then
    redrawn character by character."""
    REGISTRY.reset_operator(label)


def labels() -> list[str]:
    """The kinds that have an operator of their own."""
    return list(REGISTRY.operators)


__all__ = ["add", "remove", "labels", "Operator"]
