"""Character-level redraws that the kinds' operators share: a digit for a digit, a letter for a letter, new characters put in an
original's layout, and the check that no group of the original's digits came back."""
from __future__ import annotations

import random
import re
import string
from typing import Callable


def put(original: str, new: str, keep: Callable[[str], bool]) -> str:
    """``new``'s characters in the places of ``original``'s characters for which ``keep`` holds."""
    it = iter(new)
    return "".join(next(it, c) if keep(c) else c for c in original)


def rand_digits(n: int, rng: random.Random) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def like(c: str, rng: random.Random) -> str:
    """A random character of the same kind (digit, upper or lower letter)."""
    if c.isdigit():
        return rng.choice(string.digits)
    if c.isalpha():
        return rng.choice(string.ascii_uppercase if c.isupper() else string.ascii_lowercase)
    return c


def scramble(s: str, rng: random.Random) -> str:
    return "".join(like(c, rng) for c in s)


def shared_groups(original: str, cand: str, keep: int) -> set[str]:
    """Groups of 3 or more digits of ``original`` that ``cand`` holds anywhere, past the
    ``keep`` leading digits the kind keeps (a country code, an issuer's prefix): a fresh draw can land on one ("555-123-4567" drew "872-555-9375"), and a
    group an attacker reads in the output narrows the original down."""
    groups = {m.group() for m in re.finditer(r"\d{3,}", original)
              if len(re.sub(r"\D", "", original[: m.end()])) > keep}
    return groups & set(re.findall(r"\d{3,}", cand))
