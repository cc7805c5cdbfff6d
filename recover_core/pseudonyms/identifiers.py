"""Substitutes for identifiers that keep their shape (Presidio's operators, one per kind).

A card number becomes another of the same issuer prefix, length and grouping that passes
Luhn; a phone another valid number of the same region, digit for digit in the same layout;
an IBAN another of the same country with a valid checksum; an IP one of the same version; an
e-mail, URL or handle one of the same shape whose names are the pseudonyms of those names and
whose domain is drawn from a list of real-looking ones (never the original's letters); a birth
date the date shifted by a keyed offset of its own; an address one of the same form; a US
state and its ZIP code another state and a ZIP code of that state; a spoken digit string
other digit words of the same count.

What must not survive is any part of the original an attacker could match: a domain label
kept its length and hyphens ("stanford.edu" became "lpuiwkmw.edu"), one shift for all the
birth dates of a run made every age gap exact (one known date gave the others away), and a
state stayed beside a redrawn ZIP code (issue 75).

Each operator takes the original, an ``rng`` that ``Pseudonyms`` keys (never seeded from the
original here) and ``Helpers`` for what only the mapping knows (a name's pseudonym, a keyed
stream for a domain or a date). The filler never proposes these: no model invents a card number.
"""
from __future__ import annotations

import ipaddress
import random
import re
from datetime import date
from typing import Callable, Protocol, Sequence

import phonenumbers
from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.us import ssn as _ssn

from recover_core.text import shapes
from recover_core.text.dates import day_word, month_index, month_word
from recover_core.text.spoken import in_words
from recover_core.pseudonyms import locators, quasi
from recover_core.pseudonyms.redraw import like as _like, put as _put, rand_digits as _rand_digits
from recover_core.pseudonyms.redraw import scramble as _scramble, shared_groups as _shared_groups
from recover_core.pseudonyms.places import US_STATE_ZIPS


class Helpers(Protocol):
    def rename(self, tokens: Sequence[str]) -> list[str | None]:
        """Each token's pseudonym where it is a name (masked elsewhere, or a known name), else None."""

    def keyed(self, what: str) -> random.Random:
        """A stream keyed by ``what`` (a domain, a date) under the mapping's key: the same
        part of two identifiers ("acme.com" in two addresses) gets the same substitute."""

    def birth_moved(self, born: date) -> date:
        """Where the birth date ``born`` moves: in step with the document's events and its stated ages."""


def card_expiry(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another month, one to three years from the original's year either way (a card is valid
    for a few years: any other spread reads as no card's), in the original's layout."""
    m = re.fullmatch(r"(\d\d)( ?[/-] ?)(20)?(\d\d)", original)
    if not m:
        return _put(original, _rand_digits(sum(c.isdigit() for c in original), rng), str.isdigit)
    year = int(m.group(4)) + rng.choice((-3, -2, -1, 1, 2, 3))
    return f"{rng.randint(1, 12):02d}{m.group(2)}{m.group(3) or ''}{year % 100:02d}"


def credit_card(original: str, rng: random.Random, helpers: Helpers) -> str:
    d = re.sub(r"\D", "", original)
    keep = 4 if d.startswith("6011") else 1 if d.startswith("4") else 2  # the issuer's prefix
    new = d
    for _ in range(50):
        body = d[:keep] + _rand_digits(len(d) - keep - 1, rng)
        new = body + _luhn.calc_check_digit(body)
        if new != d and not _shared_groups(original, _put(original, new, str.isdigit), keep):
            break
    return _put(original, new, str.isdigit)


# Regions tried first for a national number (no + or 00): where most of our users' numbers are.
PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "AU")
NORTH_AMERICAN = re.compile(r"(?:\+?1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}")


def _phone_regions(original: str) -> tuple[list[str], int]:
    """The regions a phone number is valid in (a national number such as "097512992" is valid
    in Italy and maybe elsewhere: the text never says which), and how many of its leading
    digits are the country code and trunk prefix, which stay."""
    d = re.sub(r"\D", "", original)
    if original.lstrip().startswith(("+", "00")):
        text = "+" + d[2:] if original.lstrip().startswith("00") else original
        try:
            n = phonenumbers.parse(text, None)
        except phonenumbers.NumberParseException:
            return ["US"], 0
        reg = phonenumbers.region_code_for_number(n) or phonenumbers.region_code_for_country_code(n.country_code)
        return [reg or "US"], max(len(d) - len(str(n.national_number)), 0)
    if NORTH_AMERICAN.fullmatch(original.strip()):  # "555-123-4567": what people type for a US number
        n = phonenumbers.parse(original, "US")  # the pattern guarantees it parses
        region = phonenumbers.region_code_for_number(n) if phonenumbers.is_valid_number(n) else None
        return [region or "US"], 1 if len(d) == 11 else 0  # a Canadian area code stays Canadian
    order = list(PHONE_REGIONS) + sorted(phonenumbers.SUPPORTED_REGIONS - set(PHONE_REGIONS))
    regions = [r for r in order if _valid_in(original, r)]
    if regions:
        return regions, 1 if d.startswith("0") else 0
    return ["US"], 1 if len(d) == 11 and d.startswith("1") else 0


def _valid_in(text: str, region: str) -> bool:
    return _kind_in(text, region) is not None


def _kind_in(text: str, region: str) -> int | None:
    """The number's type in ``region`` (phonenumbers.PhoneNumberType: fixed line, mobile,
    toll-free, ...), or None where it is not a valid number of that region."""
    try:
        n = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(n) or phonenumbers.region_code_for_number(n) != region:
        return None
    return phonenumbers.number_type(n)


# An extension after the number ("ext. 42", "x603"): its digits are no part of the number that
# decides the region; counted in, "(415) 555-2671 ext. 42" read as valid in 13 regions at once.
_EXTENSION = re.compile(r"(\s*(?:ext\.?|extension|x|#)\s*)(\d{1,6})$", re.I)


TRIES = 300  # draws of a whole new number before one keeping the area code (each ~0.1 ms)


def phone(original: str, rng: random.Random, helpers: Helpers) -> str:
    """A number of the same length and format and, where the original is a valid number, of
    its type (a landline or mobile stays one, not a non-geographic personal number such as
    NANP's 5XX codes), valid in every region the original is valid in (so in the caller's,
    whichever it is), else in the likeliest one. Its area code is drawn too, never kept
    while a number valid in the likeliest region turns up: an area code names a town."""
    ext = _EXTENSION.search(original)
    if ext and ext.start() > 0:
        return phone(original[:ext.start()], rng, helpers) + ext.group(1) + _rand_digits(len(ext.group(2)), rng)
    d = re.sub(r"\D", "", original)
    regions, keep = _phone_regions(original)
    text_of = (lambda s: "+" + re.sub(r"\D", "", s)[2:]) if original.lstrip().startswith("00") else (lambda s: s)
    kind = _kind_in(text_of(original), regions[0])
    first = typeless = None  # valid in the likeliest region at least (and of the original's type)
    for attempt in range(TRIES + 100):
        if attempt == TRIES and first:
            break  # valid in the likeliest region, of its type, with an area code of its own
        k = keep if attempt < TRIES else min(len(d) - 2, keep + 3)  # then keep the area code too
        new = d[:k] + _rand_digits(len(d) - k, rng)
        if new == d:
            continue
        cand = _put(original, new, str.isdigit)
        if _shared_groups(original, cand, k):
            continue
        its = _kind_in(text_of(cand), regions[0])
        if its is None:
            continue
        if kind is not None and its != kind:
            typeless = typeless or cand
            continue
        if all(_valid_in(text_of(cand), r) for r in regions[1:]):
            return cand
        first = first or cand
    return first or typeless or _put(original, d[:keep] + _rand_digits(len(d) - keep, rng), str.isdigit)


def iban(original: str, rng: random.Random, helpers: Helpers) -> str:
    compact = re.sub(r"\s", "", original).upper()
    cc, bban = compact[:2], compact[4:]
    new = compact
    for _ in range(3000):  # some countries check their own account numbers too (1 in 97 pass)
        nb = "".join(_like(c, rng) for c in bban)
        new = cc + _iban.calc_check_digits(cc + "00" + nb) + nb
        if new != compact and _iban.is_valid(new) and not _shared_groups(
                original, _put(original, new, lambda c: not c.isspace()), 0):
            break
    out = _put(original, new, lambda c: not c.isspace())
    return out if original[:2].isupper() else out.lower()


def ip_address(original: str, rng: random.Random, helpers: Helpers) -> str:
    ip = ipaddress.ip_address(original)
    while True:
        if ip.version == 4:
            new = ipaddress.IPv4Address(rng.getrandbits(32))
            if not new.is_global and not ip.is_private:
                continue
            if ip.is_private and not new.is_private:  # a home network address stays one
                new = ipaddress.IPv4Address(f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}")
        else:
            new = ipaddress.IPv6Address(rng.getrandbits(128))
            if ip.compressed.startswith("2001:db8"):
                new = ipaddress.IPv6Address(int(ipaddress.IPv6Address("2001:db8::")) | rng.getrandbits(96))
        if new != ip:
            text = new.exploded if ip.exploded == original.lower() and ip.version == 6 else str(new)
            return text.upper() if original.isupper() else text


PUBLIC_DOMAINS = frozenset("""gmail.com googlemail.com yahoo.com yahoo.co.uk hotmail.com hotmail.co.uk outlook.com
    live.com msn.com aol.com icloud.com me.com mail.com gmx.de gmx.net web.de proton.me protonmail.com yandex.ru
    mail.ru qq.com 163.com example.com example.org example.net orange.fr free.fr libero.it btinternet.com
    comcast.net verizon.net att.net facebook.com linkedin.com twitter.com x.com instagram.com github.com
    youtube.com tiktok.com reddit.com medium.com t.me wa.me""".split())
# Path words of profile pages that name no one ("linkedin.com/in/...").
PATH_WORDS = frozenset("in u user users profile profiles p watch channel c status posts en people pub company www".split())
_PARTS = re.compile(r"[^\W\d_]+|\d+|[\W_]", re.UNICODE)


def _rebuild_words(s: str, rng: random.Random, helpers: Helpers, keep: frozenset[str] = frozenset()) -> str:
    """Letters and digits of ``s`` replaced: a name by its pseudonym, another word by random
    letters of its length, digits by digits; separators stay."""
    parts = _PARTS.findall(s)
    alpha = [p for p in parts if p.isalpha() and p.lower() not in keep]
    renamed = dict(zip(alpha, helpers.rename(alpha))) if alpha else {}
    out = []
    for p in parts:
        if p.isdigit():
            out.append(_rand_digits(len(p), rng))
        elif p.isalpha() and p.lower() not in keep:
            new = renamed.get(p) or _scramble(p, rng)
            out.append(new.upper() if p.isupper() and len(p) > 1 else new.capitalize() if p[:1].isupper() else new.lower())
        else:
            out.append(p)
    return "".join(out)


# The domains a fake e-mail or URL gets: word + word, as companies and schools name theirs.
# A label redrawn letter for letter kept its length and hyphens ("stanford.edu" became
# "lpuiwkmw.edu", matched against a list of domains by shape); a draw from this list keeps
# nothing of the original but its top-level domain.
DOMAIN_HEADS = """north south east west blue green red silver gold oak pine cedar maple river lake bay harbor
    summit peak ridge valley stone iron bright clear swift true first prime grand royal union liberty pioneer
    heritage keystone crown eagle falcon hawk fox wolf bear lion star sun moon sky cloud rain snow frost spring
    summer autumn winter field meadow forest grove park bridge gate tower castle haven port shore coast island
    mountain hill rock crest vista horizon compass anchor beacon lantern arrow""".split()
DOMAIN_TAILS = """field wood land view point line works labs tech soft net data systems group partners media
    press health care bank trust capital ventures solutions logic core hub base way path side stone brook dale
    ford gate vale mark wise craft well spring hill crest wave light""".split()
# Labels under the registrable one ("cs.stanford.edu"): common subdomains, drawn likewise.
SUBDOMAINS = "mail web www2 portal my app apps news shop blog info members dept cs staff students lists support".split()


def _domain(host: str, helpers: Helpers) -> str:
    """A real-looking domain for ``host``, drawn with a stream keyed by the host itself, so
    one host gets one fake domain within a mapping. Public webmail and example domains stay:
    they name no one; so do the top-level domain (with "co" of "co.uk") and "www"."""
    if host.lower() in PUBLIC_DOMAINS or host.lower().removeprefix("www.") in PUBLIC_DOMAINS:
        return host
    labels = host.split(".")
    tail = 2 if len(labels) > 2 and labels[-2].lower() in ("co", "com", "org", "ac", "gov") else 1
    rng = helpers.keyed("domain:" + host.lower().removeprefix("www."))
    out = []
    for i, lab in enumerate(labels):
        if i >= len(labels) - tail or lab.lower() == "www" or not lab:
            out.append(lab)
            continue
        own = lab.lower()
        if i == len(labels) - tail - 1:  # the registrable name: "stanford"
            new = own
            while new == own:
                new = rng.choice(DOMAIN_HEADS) + rng.choice(DOMAIN_TAILS)
        else:
            new = rng.choice([w for w in SUBDOMAINS if w != own])
        out.append(new.upper() if lab.isupper() and len(lab) > 1 else new)
    return ".".join(out)


def email(original: str, rng: random.Random, helpers: Helpers) -> str:
    local, _, host = original.rpartition("@")
    if host.startswith("["):  # an address literal: another address of the same kind
        return _rebuild_words(local, rng, helpers) + "@[" + ip_address(host[1:-1], rng, helpers) + "]"
    return _rebuild_words(local, rng, helpers) + "@" + _domain(host, helpers)


def handle(original: str, rng: random.Random, helpers: Helpers) -> str:
    return "@" + _rebuild_words(original[1:], rng, helpers)


def url(original: str, rng: random.Random, helpers: Helpers) -> str:
    m = re.match(r"(?i)(https?://)?([^/?#]+)(.*)", original)
    if not m:
        return _rebuild_words(original, rng, helpers)
    scheme, host, rest = m.group(1) or "", m.group(2), m.group(3)
    name, colon, port = host.partition(":")
    try:  # a host given by its address ("http://192.168.0.1/admin"): another address, not a domain
        new_host = ip_address(name, rng, helpers) + colon + port
    except ValueError:
        new_host = _domain(host, helpers)
    return scheme + new_host + _rebuild_words(rest, rng, helpers, keep=PATH_WORDS)


def id_number(original: str, rng: random.Random, helpers: Helpers) -> str:
    d = re.sub(r"\D", "", original)
    ssn = re.fullmatch(r"\d{3}[- ]?\d{2}[- ]?\d{4}", original) is not None
    for _ in range(100):
        new = _scramble(original, rng)
        if new != original and not _shared_groups(original, new, 0) and (
                not ssn or _ssn.is_valid(re.sub(r"\D", "", new))):
            return new
    return _put(original, _rand_digits(len(d), rng), str.isdigit)




def date_of_birth(original: str, rng: random.Random, helpers: Helpers) -> str:
    """The date moved as ``Helpers.birth_moved`` says, written as the original was: by the
    document's event shift and, apart from it, by the document's age offset in whole years, so
    that every age the output states agrees with the birth and event dates it shows, and none
    of them tells the true age. A birth year said alone ("born in 1951") moves the same way."""
    moved = helpers.birth_moved
    if re.fullmatch(r"(?:1[6-9]|20)\d\d", original.strip()):
        return str(moved(date(int(original), 7, 2)).year)
    if getattr(helpers, "dates", "shift") == "year":  # its year alone, back by the age offset as ages move
        year = re.search(r"(?:1[6-9]|20)\d\d", original)
        if year:
            return str(int(year.group()) - helpers.age_offset)  # type: ignore[attr-defined]
    m = re.fullmatch(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{2}|\d{4})", original)
    try:
        if m:
            a, sep, b, y = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
            year = int(y) + (1900 if len(y) == 2 and int(y) > 30 else 2000 if len(y) == 2 else 0)
            dmy = a > 12 or (b <= 12 and sep == ".")  # day first where it must be, or in the dotted style
            n = moved(date(year, b, a) if dmy else date(year, a, b))
            first, second = (n.day, n.month) if dmy else (n.month, n.day)
            ys = str(n.year)[-len(y):]
            return f"{first:0{len(m.group(1))}d}{sep}{second:0{len(m.group(3))}d}{sep}{ys}"
        m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", original)
        if m:
            n = moved(date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
            return f"{n.year}-{n.month:0{len(m.group(2))}d}-{n.day:0{len(m.group(3))}d}"
        month = re.search(r"[A-Za-z]{3,}\.?", original)
        day = re.search(r"\b\d{1,2}(?:st|nd|rd|th)?\b", original)
        year = re.search(r"\d{4}", original)
        index = month_index(month.group()) if month else None
        if index and day and year:
            n = moved(date(int(year.group()), index, int(re.match(r"\d+", day.group()).group())))  # type: ignore[union-attr]
            out = original[: month.start()] + month_word(n.month, month.group()) + original[month.end():]
            day = re.search(r"\b\d{1,2}(?:st|nd|rd|th)?\b", out)
            assert day is not None
            out = out[: day.start()] + day_word(n.day, day.group()) + out[day.end():]
            return re.sub(r"\d{4}", str(n.year), out, count=1)
    except (ValueError, StopIteration, OverflowError):
        pass
    return shapes.reshape(original, rng)


# Words of an address that say what it is, not where: they stay.
ADDRESS_WORDS = frozenset("""street st road rd avenue ave av lane ln boulevard blvd drive dr way court ct place pl
    terrace close crescent square sq parkway pkwy highway hwy circle cir trail trl row alley gardens grove hill park
    walk mews rise view point pike loop plaza ridge run apt apartment suite ste unit flat fl floor room rm no n s e w
    ne nw se sw north south east west rue boulevard bd chemin allée place impasse quai cours route via viale piazza
    vicolo largo corso calle avenida paseo plaza carrer camino ronda rua praça travessa estrada alameda de la le les
    du des del della di da do dos das the of bis ter nº""".split())
STREET_NAMES = ("Oak Maple Cedar Pine Birch Willow Ash Walnut Chestnut Spruce Hickory Poplar Magnolia Laurel Hawthorn "
                "Juniper Sycamore Aspen Linden Park Lake Hill River Spring Meadow Valley Forest Ridge Highland Church "
                "Mill Station Market Bridge Harbor Orchard Sunset Lincoln Franklin Madison Jackson Monroe Grant "
                "Wilson Clark Lewis Walker Hall Allen Young King Wright Scott Green Baker Adams Nelson Carter Mitchell "
                "Roberts Turner Phillips Campbell Parker Evans Edwards Collins Stewart Morris Murphy Cook Rogers "
                "Morgan Cooper Peterson Bailey Reed Kelly Howard Cox Ward Richardson Watson Brooks Wood Bennett Gray "
                "Hughes Price Sanders Myers Long Ross Foster Rosen Berger Fischer Weber Wagner Becker Schulz Hoffmann "
                "Koch Richter Klein Wolf Neumann Schwarz Braun Lange Werner Krause Martin Bernard Dubois Durand "
                "Lefebvre Moreau Laurent Simon Michel Garcia Rossi Russo Ferrari Esposito Bianchi Romano Colombo "
                "Ricci Marino Greco").split()
_GERMAN = re.compile(r"(?i)^(.+?)(straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|chaussee|steig|pfad|"
                     r"markt|straat|laan|plein|gracht|kade|singel|dijk|dreef|hof)$")


def address(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another address of the same form: house and flat numbers redrawn digit for digit, each
    name word another street name; the words that say what it is ("Street", "Apt", "rue") stay."""
    out = []
    for p in re.findall(r"[^\W\d_][\w'’.-]*|\d+|[^\w]+|_", original):
        low = p.lower().rstrip(".")
        if p.isdigit():
            new = _rand_digits(len(p), rng)
            out.append(str(rng.randint(1, 9)) + new[1:] if p[0] != "0" else new)
        elif low in ADDRESS_WORDS or not p[:1].isalpha():
            out.append(p)
        elif len(p) <= 2 and p[-1:].isdigit() is False and p.isupper():  # "4B"'s letter, "NW"
            out.append(p)
        else:
            g = _GERMAN.match(p)
            stem = g.group(1) if g else p
            name = rng.choice([n for n in STREET_NAMES if n.lower() != stem.lower()])
            name = name.lower() if stem.islower() else name.upper() if stem.isupper() and len(stem) > 1 else name
            out.append(name + (g.group(2) if g else ""))
    return "".join(out)


_STATE_ZIP = re.compile(r"(?P<state>[A-Z]{2})(?P<dot>\.?)(?P<gap> )(?P<zip>\d{5})(?P<plus>-\d{4})?")


def _state_and_zip(m: re.Match[str], rng: random.Random) -> str:
    """Another state and a ZIP code of that state: a state kept beside a redrawn ZIP code (or
    city) narrows where the person lives to one state, and a ZIP code of another state than
    the one written beside it reads as made up."""
    state = rng.choice(sorted(s for s in US_STATE_ZIPS if s != m.group("state")))
    lo, hi = rng.choice(US_STATE_ZIPS[state])
    zip_code = f"{rng.randint(lo, hi):03d}{_rand_digits(2, rng)}"
    plus = "-" + _rand_digits(4, rng) if m.group("plus") else ""
    return state + m.group("dot") + m.group("gap") + zip_code + plus


def postcode(original: str, rng: random.Random, helpers: Helpers) -> str:
    m = _STATE_ZIP.fullmatch(original)
    if m and m.group("state") in US_STATE_ZIPS:  # "IL 62704": the state goes with its ZIP code
        return _state_and_zip(m, rng)
    for _ in range(20):
        new = _scramble(original, rng)
        if new != original and (not new[:1].isdigit() or original[:1] == "0" or new[0] != "0"):
            return new
    return new


DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_GROUPS = ("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty "
           "fifty sixty seventy eighty ninety").split()


def spoken_digits(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Other digit words of the same count; "double" and "triple" stay where they are."""
    def word(tok: str) -> str:
        low = tok.lower()
        if low in ("double", "triple", "hundred"):
            return tok
        if low in _GROUPS:
            new = rng.choice([g for g in _GROUPS if (g.endswith("ty")) == low.endswith("ty")])
        else:
            n = rng.randrange(10)
            new = ("oh" if low in ("oh", "o") else "zero") if n == 0 else DIGIT_NAMES[n]
        return new.upper() if tok.isupper() and len(tok) > 1 else new.capitalize() if tok[:1].isupper() else new

    out = original
    for _ in range(20):
        out = re.sub(r"[A-Za-z]+", lambda m: word(m.group()), original)
        if out.lower() != original.lower():
            break
    return out


OPERATORS: dict[str, Callable[[str, random.Random, Helpers], str]] = {
    "CREDIT_CARD": credit_card, "CARD_EXPIRY": card_expiry, "PHONE": phone, "IBAN": iban, "IP_ADDRESS": ip_address,
    "EMAIL": email,
    "HANDLE": handle, "URL": url, "ID_NUMBER": id_number, "DATE_OF_BIRTH": in_words(date_of_birth, years=True), "ADDRESS": address,
    "POSTCODE": postcode, "SPOKEN_DIGITS": spoken_digits,
    **locators.OPERATORS,  # devices, vehicles, wallets, spots
    **quasi.OPERATORS,  # dates of events, ages, sums, nationalities (protect="quasi")
}


def substitute(label: str, original: str, rng: random.Random, helpers: Helpers) -> str:
    """A substitute of ``original``'s shape, drawn with ``rng``. Any original the kind's own
    rules cannot read (a malformed IP) is redrawn character by character instead."""
    try:
        return OPERATORS[label](original, rng, helpers)
    except (ValueError, IndexError, KeyError, phonenumbers.NumberParseException):
        return _scramble(original, rng)
