"""A user's own kind of identifier from a regular expression (``recover_core.recognizers``)."""
from __future__ import annotations

import re
from typing import Callable

from recover_core.errors import RecoverError
from recover_core.kinds.base import CONTEXT_WINDOW, Recognizer, context_re


class Pattern(Recognizer):
    """A kind of identifier from a regular expression (Presidio's PatternRecognizer), the
    common case of a user's own kind: ``Pattern("TAX_ID", r"\\b\\d{2} \\d{3} \\d{3} \\d{3}\\b",
    context=("tax",))``.

    ``context``: words of which one must stand within CONTEXT_WINDOW characters before the
    item, or half that after it ("12 345 678 901 is my tax number"), for a match to count;
    a context word turns a pattern that also matches everyday numbers into a precise one.
    ``validate(item) -> bool``: a checksum or any other test of the matched text."""

    needs = None  # no prefilter: a user's pattern may match anything
    strength = 3  # a kind the user named wins over the built-ins' guesses on the same characters

    def __init__(self, label: str, regex: str | re.Pattern[str], context: tuple[str, ...] | list[str] | str = (),
                 validate: Callable[[str], bool] | None = None, name: str | None = None):
        try:
            self.pattern = re.compile(regex) if isinstance(regex, str) else regex  # type: ignore[misc]
        except re.error as e:
            raise RecoverError(f"The pattern for {label!r} is not a valid regular expression: {e}.") from None
        if not isinstance(self.pattern, re.Pattern):
            raise RecoverError(f"The pattern for {label!r} is a string or a compiled regular expression.")
        if self.pattern.search(""):
            raise RecoverError(f"The pattern for {label!r} matches the empty string: it would find nothing real.")
        words = (context,) if isinstance(context, str) else tuple(context)
        if any(not isinstance(w, str) or not w.strip() for w in words):
            raise RecoverError(f"The context words for {label!r} must be non-empty strings.")
        if validate is not None and not callable(validate):
            raise RecoverError(f"validate for {label!r} must be a function of the matched text.")
        self.context = context_re("|".join(re.escape(w.strip()) for w in words)) if words else None  # type: ignore[misc]
        self.label = label  # type: ignore[misc]
        self._name = name or label
        self._check = validate

    def validate(self, item: str, text: str, start: int) -> bool:
        if self.context is not None and not self.in_context(text, start, end=start + len(item),
                                                           after=CONTEXT_WINDOW // 2):
            return False
        return self._check is None or bool(self._check(item))

    def __repr__(self) -> str:
        return f"Pattern({self.label!r}, name={self.name!r})"
