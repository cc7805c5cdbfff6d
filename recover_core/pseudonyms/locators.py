"""Substitutes for what locates a person (masking/locators.py): another locally administered
MAC address in the same layout, another VIN with its check digit where the original had
one, another wallet address of the same kind and length, another spot at the same
precision. Each draws only from the ``rng`` it is given (keyed by the mapping)."""
from __future__ import annotations

import random
import re
import string

from recover_core.pseudonyms.redraw import put, scramble, shared_groups
from recover_core.text import vin as _vin


def mac_address(original: str, rng: random.Random, helpers: object) -> str:
    """Another hardware address in the same layout and case, locally administered (the second
    hex digit 2, 6, A or E): no maker's prefix is kept, and no real card has it."""
    hexes = [rng.choice("0123456789abcdef") for _ in range(12)]
    hexes[1] = rng.choice("26ae")
    new = put(original, "".join(hexes), lambda c: c in string.hexdigits)
    return new.upper() if original.upper() == original else new


def vehicle_id(original: str, rng: random.Random, helpers: object) -> str:
    """Another VIN: a digit for a digit and a letter for a letter (never I, O or Q), the check
    digit put where a North American one stands."""
    for _ in range(100):
        new = [rng.choice(string.digits) if c.isdigit() else rng.choice(_vin.LETTERS) for c in original.upper()]
        if original[8].upper() == _vin.check_digit(original):
            new[8] = _vin.check_digit("".join(new))
        new_text = "".join(new)
        if new_text != original.upper() and not shared_groups(original, new_text, 0):
            return new_text
    return new_text


def in_layout(original: str, rng: random.Random, helpers: object) -> str:
    """Another plate or flight of the same format: a letter for a letter, a digit for a digit."""
    for _ in range(20):
        new = scramble(original, rng)
        if new != original:
            return new
    return new


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def crypto_address(original: str, rng: random.Random, helpers: object) -> str:
    """Another address of the same kind and length (its checksum is not made: nobody should
    pay a made-up address, and no reader needs one that takes payments)."""
    if original.lower().startswith("bc1"):
        return original[:4] + "".join(rng.choice(_BECH32) for _ in original[4:])
    return original[0] + "".join(rng.choice(_BASE58) for _ in original[1:])


def coordinates(original: str, rng: random.Random, helpers: object) -> str:
    """Another spot on land's latitudes (60° S to 70° N) at the same precision, each number
    written as the original's: signs, degrees and hemisphere letters."""
    nums = list(re.finditer(r"-?\d+\.(\d+)", original))
    lat, lon = rng.uniform(-60, 70), rng.uniform(-180, 180)
    hemi = re.search(r"[NSns]", original[nums[0].end(): nums[1].start()]) is not None

    def written(value: float, m: re.Match[str]) -> str:
        return f"{abs(value) if hemi else value:.{len(m.group(1))}f}"

    out = original[: nums[0].start()] + written(lat, nums[0]) + original[nums[0].end(): nums[1].start()] \
        + written(lon, nums[1]) + original[nums[1].end():]
    if hemi:
        out = re.sub(r"[NSns](?![\w])", lambda m: ("N" if lat >= 0 else "S") if m.group().isupper()
                     else ("n" if lat >= 0 else "s"), out, count=1)
        out = re.sub(r"[EWew](?![\w])", lambda m: ("E" if lon >= 0 else "W") if m.group().isupper()
                     else ("e" if lon >= 0 else "w"), out, count=1)
    return out


OPERATORS = {"MAC_ADDRESS": mac_address, "VEHICLE_ID": vehicle_id, "VEHICLE_PLATE": in_layout,
             "FLIGHT_NUMBER": in_layout, "CRYPTO_ADDRESS": crypto_address, "COORDINATES": coordinates}
