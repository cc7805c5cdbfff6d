r"""Identifier recognizers, as a registry you can extend (Presidio's RecognizerRegistry).

    from recover_core import Obfuscator, recognizers, operators
    recognizers.add(recognizers.Pattern("TAX_ID", r"\b\d{2} \d{3} \d{3} \d{3}\b", context=("tax",)))
    operators.add("TAX_ID", lambda original, rng: "".join(str(rng.randrange(10)) if c.isdigit() else c
                                                          for c in original))
    Obfuscator().obfuscate("My tax ID is 12 345 678 901, Tom said.").text  # the ID in the same shape
    recognizers.remove("TAX_ID")

A recognizer finds spans of one kind (its ``label``); the engine masks them beside the
technique under our rules (``rules="ours"``), and the kind's operator (``operators``) draws
each substitute under the engine's key. A kind with no operator of its own is redrawn
character by character (a digit for a digit, a letter for a letter). Subclass ``Recognizer``
for more than a pattern: override ``find`` or ``validate``.
"""
from __future__ import annotations

from recover_core.kinds.base import CONTEXT_WINDOW, Recognizer
from recover_core.kinds.pattern import Pattern
from recover_core.kinds.registry import REGISTRY

add = REGISTRY.add
remove = REGISTRY.remove
names = REGISTRY.names
registered = REGISTRY.recognizers

__all__ = ["add", "remove", "names", "registered", "Pattern", "Recognizer", "CONTEXT_WINDOW"]
