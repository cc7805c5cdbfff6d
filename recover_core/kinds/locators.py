"""What locates a person: a device's hardware address, a vehicle's VIN or plate, a flight, a
crypto wallet, a spot on the map. Each becomes another of its kind: a locally administered MAC
address in the same layout, a VIN with its check digit where the original had one, a plate or a
flight of the same format, a wallet address of the same kind and length, a spot at the same
precision.
"""
from __future__ import annotations

import random
import re
import string

from stdnum import bitcoin as _bitcoin
from stdnum import mac as _mac

from recover_core.kinds.base import Helpers, Recognizer, context_re
from recover_core.kinds.redraw import put, scramble, shared_groups
from recover_core.text import vin


class MacAddress(Recognizer):
    """A network card's hardware address ("00:1A:2B:3C:4D:5E", "00-1a-2b-3c-4d-5e",
    "001a.2b3c.4d5e"): it names one device, and so its owner."""

    label = "MAC_ADDRESS"
    needs = None  # "aa:bb:cc:dd:ee:ff" holds no digit
    pattern = re.compile(r"(?<![\w:.-])(?:[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}"
                         r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:-]|\.\w)")

    def validate(self, item: str, text: str, start: int) -> bool:
        hexes = re.sub(r"[^0-9A-Fa-f]", "", item)  # Cisco's "001a.2b3c.4d5e" as stdnum reads it
        return _mac.is_valid(":".join(hexes[i: i + 2] for i in range(0, 12, 2)))


class Vin(Recognizer):
    """A vehicle identification number: 17 capitals and digits, never I, O or Q, whose ninth
    is a check digit (North America; ISO 3779 elsewhere has none, so there a word such as
    "VIN" or "chassis" must stand before it)."""

    label = "VEHICLE_ID"
    pattern = re.compile(r"(?<![\w-])[A-HJ-NPR-Z0-9]{17}(?![\w-])")
    context = context_re(r"vin|vehicle|chassis|car|truck|van|motorbike|frame number")

    def validate(self, item: str, text: str, start: int) -> bool:
        if item.isdigit() or item.isalpha():
            return False
        return vin.check_digit(item) == item[8] or self.in_context(text, start, window=32)


class NumberPlate(Recognizer):
    """A British number plate in today's format ("KX19 ABC": area, age, three letters), after a
    word that says what it is: the tagger read one as an organisation and filled it with a
    word ("my licence plate is SWIFT")."""

    label = "VEHICLE_PLATE"
    pattern = re.compile(r"(?<![\w-])[A-Z]{2}\d{2} ?[A-Z]{3}(?![\w-])")
    context = context_re(r"plate|plates|number plate|licen[cs]e plate|registration|reg|reg\.|vehicle|car|van")
    context_before = 24


class FlightNumber(Recognizer):
    """A flight ("flight BA 283", "flew out on UA901"): with its date it says where a person was,
    and when (TAB's CODE). Under protect="quasi"; after a word that says it is a flight."""

    label = "FLIGHT_NUMBER"
    profile = "quasi"
    pattern = re.compile(r"(?<![\w-])(?:[A-Z]{2}|[A-Z]\d|\d[A-Z]) ?\d{1,4}[A-Z]?(?![\w-])")
    context = context_re(r"flight|flights|flew|fly|flying|boarded|boarding|booked on")
    context_before = 16


class BitcoinAddress(Recognizer):
    """A Bitcoin address, legacy ("1A1zP1…") or bech32 ("bc1q…"), valid by its checksum: it
    ties payments to one wallet, and a wallet to its owner."""

    label = "CRYPTO_ADDRESS"
    pattern = re.compile(r"(?<![\w])(?:[13][1-9A-HJ-NP-Za-km-z]{25,34}|bc1[02-9ac-hj-np-z]{11,71})(?![\w])", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        return _bitcoin.is_valid(item)


class Coordinates(Recognizer):
    """A spot on Earth in decimal degrees ("51.5074, -0.1278", "40.7128° N, 74.0060° W"): to
    within about 100 m at three decimals, a home or a workplace."""

    label = "COORDINATES"
    pattern = re.compile(r"(?<![\w.-])-?\d{1,2}\.\d{3,8}(?:° ?|°? ?[NSns](?![\w]))?,? ?-?\d{1,3}\.\d{3,8}"
                         r"(?:° ?[EWew]|°? ?[EWew](?![\w])|°)?(?![\w]|\.\d)")
    NUMBER = re.compile(r"-?\d+\.\d+")

    def validate(self, item: str, text: str, start: int) -> bool:
        nums = self.NUMBER.findall(item)
        lat, lon = (float(x) for x in nums)
        # Without a degree sign or a hemisphere, two numbers of three decimals are as likely
        # measurements ("12.345, 67.890"): four or more, as a phone's GPS gives, are a place.
        marked = "°" in item or re.search(r"[NSEWnsew]", item) is not None
        return abs(lat) <= 90 and abs(lon) <= 180 and (marked or min(len(x.split(".")[1]) for x in nums) >= 4)


def mac_address(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another hardware address in the same layout and case, locally administered (the second
    hex digit 2, 6, A or E): no maker's prefix is kept, and no real card has it."""
    hexes = [rng.choice("0123456789abcdef") for _ in range(12)]
    hexes[1] = rng.choice("26ae")
    new = put(original, "".join(hexes), lambda c: c in string.hexdigits)
    return new.upper() if original.upper() == original else new


def vehicle_id(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another VIN: a digit for a digit and a letter for a letter (never I, O or Q), the check
    digit put where a North American one stands."""
    for _ in range(100):
        new = [rng.choice(string.digits) if c.isdigit() else rng.choice(vin.LETTERS) for c in original.upper()]
        if original[8].upper() == vin.check_digit(original):
            new[8] = vin.check_digit("".join(new))
        new_text = "".join(new)
        if new_text != original.upper() and not shared_groups(original, new_text, 0):
            return new_text
    return new_text


def in_layout(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another plate or flight of the same format: a letter for a letter, a digit for a digit."""
    for _ in range(20):
        new = scramble(original, rng)
        if new != original:
            return new
    return new


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def crypto_address(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another address of the same kind and length (its checksum is not made: nobody should
    pay a made-up address, and no reader needs one that takes payments)."""
    if original.lower().startswith("bc1"):
        return original[:4] + "".join(rng.choice(_BECH32) for _ in original[4:])
    return original[0] + "".join(rng.choice(_BASE58) for _ in original[1:])


def coordinates(original: str, rng: random.Random, helpers: Helpers) -> str:
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
