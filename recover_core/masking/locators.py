"""Identifiers that locate a person: the network card they carry (a MAC address,
``stdnum.mac``), the vehicle they drive (its identification number and check digit, or a
British number plate), the
wallet they pay from (a Bitcoin address, ``stdnum.bitcoin``) and the spot they stand on
(coordinates in decimal degrees). Each is a small recognizer in the shape of
``recognizers.py``'s; the registry (``identifiers.py``) imports them, and their substitutes
are ``pseudonyms/locators.py``'s."""
from __future__ import annotations

import re

from stdnum import bitcoin as _bitcoin
from stdnum import mac as _mac

from recover_core.masking.recognizers import Recognizer, _context_re
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
    context = _context_re(r"vin|vehicle|chassis|car|truck|van|motorbike|frame number")

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
    context = _context_re(r"plate|plates|number plate|licen[cs]e plate|registration|reg|reg\.|vehicle|car|van")
    context_before = 24


class FlightNumber(Recognizer):
    """A flight ("flight BA 283", "flew out on UA901"): with its date it says where a person was,
    and when (TAB's CODE). Under protect="quasi"; after a word that says it is a flight."""

    label = "FLIGHT_NUMBER"
    profile = "quasi"
    pattern = re.compile(r"(?<![\w-])(?:[A-Z]{2}|[A-Z]\d|\d[A-Z]) ?\d{1,4}[A-Z]?(?![\w-])")
    context = _context_re(r"flight|flights|flew|fly|flying|boarded|boarding|booked on")
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
