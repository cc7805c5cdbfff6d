"""The vehicle identification number's check digit (49 CFR 565.15), which the recognizer reads
and the operator writes: python-stdnum has no VIN module."""
from __future__ import annotations

# Characters a VIN may hold (never I, O or Q) and the value each counts for.
VALUES = {**{str(d): d for d in range(10)},
          **dict(zip("ABCDEFGH", range(1, 9))), **dict(zip("JKLMN", range(1, 6))), "P": 7, "R": 9,
          **dict(zip("STUVWXYZ", range(2, 10)))}
LETTERS = "".join(c for c in VALUES if c.isalpha())
WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def check_digit(vin: str) -> str:
    """The ninth character a North American VIN must have: its characters' values, weighted,
    summed, modulo 11; 10 is written X."""
    r = sum(VALUES[c] * w for c, w in zip(vin.upper(), WEIGHTS)) % 11
    return "X" if r == 10 else str(r)
