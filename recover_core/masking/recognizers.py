"""Small recognizers for identifiers (Presidio's shape: a pattern, a validator, context words).

Each recognizer finds ``Span``s of one kind in a line: e-mail addresses, phone numbers
(``phonenumbers``, several regions), IP addresses (``ipaddress``), URLs and @handles, US SSNs
and other ID numbers where context says so, birth dates (only after "born", "DOB", ...), street
addresses and flat numbers, postcodes, and spoken digit strings in transcripts ("five five five
one two ..."). What pays (cards, their expiry, IBANs) is in ``payments.py``; what locates a
person (a device, a vehicle, a wallet, a spot) in ``locators.py``.

Every pattern is compiled once, with bounded repeats and no nested quantifiers that could
backtrack without end on a long line of digits or a string of addresses. The registry
(``identifiers.py``) imports this module and decides which recognizers run on a line; nothing
here knows the registry.
"""
from __future__ import annotations

import datetime
import ipaddress
import re
from typing import ClassVar, Iterator

import phonenumbers
from phonenumbers import Leniency
from stdnum.us import ssn as _ssn

from recover_core.text.dates import MONTH, said_born
from recover_core.text.spans import Span

SOURCE = "identifiers"
# How far before an item its context words may stand (characters).
CONTEXT_WINDOW = 48


def _context_re(words: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])(?:" + words + r")(?![\w])", re.I)


_DATE = re.compile(r"(\d{4})([-./])(\d{1,2})\2(\d{1,2})|(\d{1,2})([-./])(\d{1,2})\6(\d{4})")


def _a_date(item: str) -> bool:
    """Is ``item`` a calendar date written with digits ("2024-03-05", "05.03.2024", "3/5/2024")?
    A phone matcher reads one as digit groups after a word like "number", and its redrawn digits
    gave "2027-21-03", a date no calendar has, where the date itself was no phone."""
    m = _DATE.fullmatch(item.strip())
    if not m:
        return False
    if m.group(1):
        y, a, b = int(m.group(1)), int(m.group(3)), int(m.group(4))
        orders = [(a, b)]  # year first: month, then day
    else:
        y, a, b = int(m.group(8)), int(m.group(5)), int(m.group(7))
        orders = [(a, b), (b, a)]  # day and month in either order
    for month, day in orders:
        try:
            datetime.date(y, month, day)
            return True
        except ValueError:
            pass
    return False


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


class Recognizer:
    """One kind of identifier. ``needs`` names the cheap line feature it cannot do without
    ("digit", "@", "dot", "digitword"); the registry skips it on lines that lack it."""

    label: ClassVar[str]
    needs: ClassVar[str | None] = "digit"  # None: runs on every line
    pattern: ClassVar[re.Pattern[str] | None] = None
    context: ClassVar[re.Pattern[str] | None] = None
    # An item that counts only with a context word this many characters before it at most
    # ("sort code 60-16-13", "exp 04/27"); None: no such rule.
    context_before: ClassVar[int | None] = None

    gate: ClassVar[bool] = False  # True: only where a context word is in the line at all
    # "direct": names and identifiers, masked by every protection profile; "quasi": facts that
    # identify in combination (dates, ages, case numbers: masking/quasi.py), under protect="quasi".
    profile: ClassVar[str] = "direct"
    # Of overlapping items, a validated kind (a card by Luhn) wins over one found by context alone.
    strength: ClassVar[int] = 2

    @property
    def name(self) -> str:
        """Its name in the registry: the class's, or the one a Pattern was given."""
        return getattr(self, "_name", None) or type(self).__name__

    def find(self, text: str) -> Iterator[Span]:
        assert self.pattern is not None
        if self.gate and not (self.context and self.context.search(text)):
            return
        for m in self.pattern.finditer(text):
            a, b = self.bounds(m)
            if b > a and self.validate(text[a:b], text, a):
                yield Span(a, b, text[a:b], self.label, SOURCE)

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        return self.context_before is None or self.in_context(text, start, window=self.context_before)

    def in_context(self, text: str, start: int, window: int = CONTEXT_WINDOW, end: int | None = None,
                   after: int = 0) -> bool:
        """Whether a context word stands in the ``window`` characters before ``start`` (or in
        the ``after`` characters after ``end``: "98416 for the postal code")."""
        if self.context is None:
            return False
        if self.context.search(text, max(0, start - window), start):
            return True
        return bool(after and end is not None and self.context.search(text, end, end + after))


class Email(Recognizer):
    label = "EMAIL"
    needs = "@"
    # A domain, or an address literal ("john@[192.168.0.1]", RFC 5321), which is as private.
    pattern = re.compile(r"(?<![\w.+%-])[\w.+%-]{1,64}@(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}"
                         r"|\[\d{1,3}(?:\.\d{1,3}){3}\])")

    def validate(self, item: str, text: str, start: int) -> bool:
        return not item.startswith(".") and (item.endswith("]") or re.search(r"\.[A-Za-z]{2,}$", item) is not None)


class Handle(Recognizer):
    label = "HANDLE"
    needs = "@"
    pattern = re.compile(r"(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?(?![\w@])")


class Url(Recognizer):
    label = "URL"
    needs = "dot"
    TLDS = ("com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|cz|ru|cn|jp|kr|in|au|nz|ca|us|"
            "br|mx|ar|za|ie|pt|gr|tr|info|biz|me|tv|ly|app|dev|ai|xyz")
    pattern = re.compile(
        r"(?:https?://|www\.)[^\s<>\"'()\[\]]{1,500}"
        r"|(?<![\w@.-])(?:[A-Za-z0-9-]{1,63}\.){1,6}(?:" + TLDS + r")(?:/[^\s<>\"'()\[\]]{0,400})?(?![\w@-])",
        re.I)

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        a, b = m.start(), m.end()
        while b > a and m.string[b - 1] in ".,;:!?'\"":  # sentence punctuation is not the URL's
            b -= 1
        return a, b


class IpAddress(Recognizer):
    label = "IP_ADDRESS"
    needs = "digit"
    pattern = re.compile(r"(?<![\w.:])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d|:\w)"
                         r"|(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:])"
                         r"|(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){1,7}:(?![\w:])")

    def validate(self, item: str, text: str, start: int) -> bool:
        if ":" in item and (item.count(":") < 3 and "::" not in item):  # "7:15:30" is a time
            return False
        try:
            ipaddress.ip_address(item)
        except ValueError:
            return False
        return True


class Phone(Recognizer):
    """Phone numbers through ``phonenumbers``: valid numbers of several regions (any region
    when written with +), and possible North American numbers of 10 digits or with
    context words ("555-123-4567" is never a valid number, and is what people type)."""

    label = "PHONE"
    REGIONS = ("US", "GB", "DE", "FR", "IN", "AU")
    NATIONAL = re.compile(r"(?<![\w])(?:\+|\(?0)\d")
    context = _context_re(r"phone|call|cell|mobile|tel|telephone|fax|number|text me|whatsapp|reach me|ring")

    def find(self, text: str) -> Iterator[Span]:
        if sum(c.isdigit() for c in text) < 7:
            return
        seen: set[tuple[int, int]] = set()
        # Other regions' national numbers start with a trunk 0 ("020 7946 0958"), and
        # international ones with +: the US matcher alone serves a line with neither.
        regions = self.REGIONS if self.NATIONAL.search(text) else self.REGIONS[:1]
        for region in regions:
            leniency = Leniency.POSSIBLE if region == "US" else Leniency.VALID
            for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency, max_tries=200):
                a, b = m.start, m.end
                if (a, b) in seen or _a_date(m.raw_string):
                    continue
                n = len(_digits(m.raw_string))
                if leniency is Leniency.POSSIBLE and not phonenumbers.is_valid_number(m.number):
                    # only the shapes people write phones in, not any 7-digit run
                    shaped = re.fullmatch(r"(?:\+?1?[ .-]?\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}|\d{3}[ .-]\d{4})"
                                          r"(?: ?(?:x|ext\.?|extension) ?\d{1,6})?", m.raw_string, re.I)
                    if not shaped or (n < 10 and not self.in_context(text, a)):
                        continue
                seen.add((a, b))
                yield Span(a, b, text[a:b], self.label, SOURCE)
        yield from self._generic(text, seen)

    # Groups split only at separators (or a "(0)"), so a long run of digits is tried in few ways.
    GENERIC = re.compile(r"(?<![\w+])(?:\+|00)?\(?\d{1,5}\)?(?:\(0\)\d{0,12}|[ .-]{1,2}\(?\d{1,8}\)?){1,6}"
                         r"(?: ?(?:x|ext\.?) ?\d{1,6})?(?![\w]|[.,]\d)", re.I)

    def _generic(self, text: str, seen: set[tuple[int, int]]) -> Iterator[Span]:
        # Other countries' numbers in shapes phonenumbers rejects ("+49 (0) 1234 5678"): digit
        # groups of 7 to 15 digits, written with + or 00, or after a phone word.
        for m in self.GENERIC.finditer(text):
            item, n = m.group(), len(_digits(m.group()))
            if not 7 <= n <= 15 or any(a <= m.start() < b for a, b in seen) or _a_date(item):
                continue
            if item.startswith(("+", "00")) or self.in_context(text, m.start()):
                yield Span(m.start(), m.end(), item, self.label, SOURCE)


class Ssn(Recognizer):
    label = "ID_NUMBER"
    pattern = re.compile(r"(?<![\w-])\d{3}([- ])\d{2}\1\d{4}(?![\w]|-\d)|(?<![\w-])\d{9}(?![\w])")
    context = _context_re(r"ssn|social security|social|ss#|tax id|tin|itin")

    def validate(self, item: str, text: str, start: int) -> bool:
        if self.in_context(text, start):
            return True
        return not item.isdigit() and _ssn.is_valid(_digits(item))


class IdNumber(Recognizer):
    """Driver's licence, passport, medical record, national ID, account and PIN numbers: any
    token with digits right after words that say what it is ("ZZ 62 02 78 T", "B94711220")."""

    label = "ID_NUMBER"
    strength = 1
    gate = True
    pattern = re.compile(r"(?<![\w-])(?P<pre>[A-Za-z]{1,3} (?=\d))?[A-Za-z0-9]{0,12}\d[A-Za-z0-9./-]{0,24}(?<![./-])"
                         r"(?: \d{1,9}(?![\w./-])){0,4}(?: [A-Za-z](?![\w']))?(?![\w])")
    context = _context_re(
        r"id|i\.d\.|identity|identification|passport|licen[cs]e|driver'?s?|dl|medical record|mrn|record number|"
        r"patient|nhs|national insurance|insurance|ni number|nino|social security|ssn|sin|tax|tin|aadhaar|cpf|dni|"
        r"nie|nif|bsn|personal number|personnummer|account|acct|member|membership|policy|customer|pin|code|"
        r"password|passcode|serial|badge|employee|student|case|claim|reference|ref|no\.|number|#")

    # Short words that come before a number without being part of it ("is 1234", "no 55").
    NOT_PREFIX = frozenset("a an i is at on in to of my me no id by or and it its his her our the was".split())

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # A letter prefix ("ZZ 62 02 78 T") is part of the number where it is capitals, or in a
        # caseless line where it is no everyday short word.
        # A prefix that is itself a word saying what the number is ("MRN 00123456", "DL 12345")
        # is its label, not part of it: scrambled with it, "MRN" came out as "LZU".
        pre = m.group("pre")
        if pre and (self.context.fullmatch(pre.strip()) or
                    not (pre.isupper() or (m.string == m.string.lower() and pre.strip() not in self.NOT_PREFIX))):
            return m.start() + len(pre), m.end()
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        if _DATE_TAIL.search(item) or _a_date(item) or _year_of_date(item, text, start):
            return False  # "DOB 02/11/1961", "seen on 2024-03-05": the date recognizers' (shifted, not scrambled)
        return sum(c.isdigit() for c in item) >= 4 and self.in_context(text, start, window=36)


_DATE_TAIL = re.compile(r"(?<!\d)\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})$")


_MONTH_BEFORE = re.compile(MONTH + r",? $", re.I)
_YEAR_AFTER_MONTH = re.compile(MONTH + r"(?: \d{1,2}(?:st|nd|rd|th)?)?,? $", re.I)


def _year_of_date(item: str, text: str, start: int) -> bool:
    """Is ``item`` the year of a date ("by 1 June 2025", "June 3rd, 2025")? Then it is no account
    or ID number, whatever word stands near it: after "sort code" it was scrambled into
    "1 June 0387", a date that garbles the text and shifts nothing."""
    return len(item) == 4 and item.isdigit() and bool(_YEAR_AFTER_MONTH.search(text, max(0, start - 20), start))
# Words that make "... Court" a court of law rather than a street ("Lemon Tree Court").
_COURT_WORDS = frozenset("""state security district regional administrative criminal civil labour labor supreme
    constitutional appeal appeals high assize magistrates magistrate county crown family military commercial
    juvenile first instance provincial municipal city""".split())


class DateOfBirth(Recognizer):
    label = "DATE_OF_BIRTH"
    strength = 1
    gate = True
    pattern = re.compile(
        r"(?<!\w)(?:\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}-\d{1,2}-\d{1,2}"
        r"|(?:the )?\d{1,2}(?:st|nd|rd|th)?(?: of)? " + MONTH + r",? \d{4}"
        r"|" + MONTH + r" \d{1,2}(?:st|nd|rd|th)?,? \d{4})(?!\w)", re.I)
    context = _context_re(r"born|birth|dob|d\.o\.b\.?|birthday|birthdate|date of birth")
    context_before = 40

    def validate(self, item: str, text: str, start: int) -> bool:
        return said_born(text, start)



STREET_TYPES = (r"street|st|road|rd|avenue|ave|av|lane|ln|boulevard|blvd|drive|dr|way|court|ct|place|pl|terrace|"
                r"close|crescent|square|sq|parkway|pkwy|highway|hwy|circle|cir|trail|trl|row|alley|gardens|grove|"
                r"hill|park|walk|mews|rise|view|point|pike|loop|plaza|ridge|run|crossing|meadows?|heights|mountain|overpass|"
                r"manor|path|pass|port|station|summit|track|trace|turnpike|union|valley|villa|ville|wells?|"
                r"estates?|expressway|extension|fork|freeway|junction|key|knolls?|landing|light|mall|mill|"
                r"mission|motorway|mount|oval|pines?|ramp|ranch|shoals?|shores?|spring|springs|stravenue|"
                r"stream|tunnel|underpass|vista|islands?|harbor|harbour|green|glen|gateway|forge|field|falls|"
                r"ferry|creek|crest|course|cove|corners?|center|centre|causeway|burg|brook|branch|bridge|bluffs?|"
                r"bend|bayou|beach|camp|canyon|cape|cliffs?|club|common|curve|dale|dam|divide|flats?|ford|"
                r"fort|haven|hollow|inlet|isle|lake|lakes|lodge|neck|orchard|pine|prairie|radial|rapids?|rest|"
                r"route|shoal|skyway|spurs?|locks?|plains?|squares|stream|throughway|village|ways|wall|well")
STREET_TYPE_SET = frozenset(STREET_TYPES.split("|"))
UNIT = r"(?:,? (?:apt|apartment|suite|ste|unit|flat|fl|floor|room|rm|no)\.? ?#?\w{1,5}|,? #\w{1,5})?"


# Street types of French, Italian, Spanish and Portuguese, which come before the street's name.
ROMANCE_TYPES = (r"rue|avenue|boulevard|bd|chemin|allée|place|impasse|quai|cours|route|passage|voie|sentier|square|"
                 r"via|viale|piazza|piazzale|piazzetta|vicolo|vico|largo|corso|strada|contrada|borgo|rotonda|canale|"
                 r"stretto|incrocio|lungomare|salita|traversa|rione|calle|c/|c\.|avenida|avda\.?|paseo|plaza|pasaje|"
                 r"camino|carrera|carretera|ronda|glorieta|rambla|callejón|cuesta|travesía|vía|vial|urbanización|"
                 r"acceso|alameda|cañada|partida|polígono|vereda|carrer|rua|travessa|praça|estrada")
ROMANCE_UNITS = (r"(?: (?:piano|puerta|piso|escalera|esc\.|interno|int\.|scala|bajo|apt\.?|étage|porta|appartamento|"
                 r"apartamento|appartement|app\.|apto\.?) \w{1,4}){0,3}")
HOUSE = r"\d{1,6}[A-Za-z]?(?:[/-]\d{1,5}[A-Za-z]?)?"
ENGLISH_UNITS = r"(?:flat|apartment|apt\.?|studio|unit|suite|ste\.?|room)"


class Address(Recognizer):
    """A house number and a street: "42 Elm Street", "1600 Pennsylvania Ave NW", "Flat 5,
    Buckley Skyway", and the continental forms ("Hauptstraße 12", "Handegasse 9-4",
    "56, boulevard Victoire Collin", "Piazza Bataglia, 61 Piano 4", "Calle Mayor 4 Puerta 9")."""

    label = "ADDRESS"
    pattern = re.compile(
        # Romance languages: maybe a number, a street type, its name, and maybe a number and units
        r"(?P<romance>(?<![\w-])(?P<lead>\d{1,5}(?: bis| ter)?,? )?(?P<rtype>" + ROMANCE_TYPES + r")"
        r"(?: [\w'’.-]{1,30}){1,5}?(?:,? (?:n\.?|nº|no\.?)? ?" + HOUSE + r"(?![\w])" + ROMANCE_UNITS + r"|(?=[,.;]|$)))"
        # English: a unit or a house number, 1-4 words, a street type, maybe a direction and a unit
        r"|(?P<english>(?<![\w-])(?:" + ENGLISH_UNITS + r" \d{1,5}[A-Za-z]?,? |" + HOUSE + r",? )"
        r"(?P<name>(?:[A-Za-z][\w'.-]{0,30} ){1,4})"
        r"(?:" + STREET_TYPES + r")(?:s|es)?\.?(?: (?:n|s|e|w|ne|nw|se|sw|north|south|east|west)\.?)?" + UNIT +
        r"(?![\w]))"
        # German and Dutch: a street word ending in a street suffix, then the number
        r"|(?P<german>(?<![\w-])(?P<pre>(?:(?-i:[A-ZÄÖÜ])[\w.-]{0,30} ){0,2})(?P<compound>[\w-]{0,30}(?:straße|strasse|str\.|"
        r"weg|gasse|platz|allee|ring|damm|ufer|chaussee|steig|pfad|markt|straat|laan|plein|gracht|kade|singel|dijk|"
        r"dreef|hof|steeg|boulevard|pad|baan|wal|park|plantsoen))"
        r" " + HOUSE + r"(?![\w]))"
        # a flat on its own
        r"|(?P<flat>(?<![\w-])(?:flat|apartment|apt\.?|suite|unit) #?\d{1,5}[A-Za-z]?(?![\w]))",
        re.I)
    CUE = re.compile(r"(?:live|lives|living|lived|address|at|on|to|from|moved|in)\W*$")

    def find(self, text: str) -> Iterator[Span]:
        caseless = text == text.lower()
        for m in self.pattern.finditer(text):
            a, b = self.bounds(m)
            if b > a and self._fits(m, caseless, self.CUE.search(text[max(0, a - 24):a].lower()) is not None):
                yield Span(a, b, text[a:b], self.label, SOURCE)

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # "42 Elm Street." ends a sentence; "St." and "Ave." keep their dot
        a, b = m.start(), m.end()
        while b > a and m.string[b - 1] == " ":
            b -= 1
        if m.string[a:b].endswith(".") and len(re.sub(r"^.*?(\w+)\.$", r"\1", m.string[a:b])) > 4:
            b -= 1
        return a, b

    @staticmethod
    def _fits(m: re.Match[str], caseless: bool, cue: bool) -> bool:
        """Whether a match reads as an address and not as "place at Dora village some 50",
        "151 runs" or "measuring 4": the name words capitalised in a cased line, a cue
        ("I live at", "moved to") in a caseless one."""
        if m.group("romance"):
            if m.group("lead"):
                return True
            if not any(c.isdigit() for c in m.group()):
                return (m.group("rtype")[:1].isupper() and not caseless) or cue
            return (m.group("rtype")[:1].isupper() and not caseless) or (caseless and cue)
        if m.group("english"):
            name = m.group("name").split()
            # "5 August 1996 the İzmir State Security Court": a year after a month, then a court
            # (TAB's judgments are full of them), is a date and an institution, not a house.
            before = m.string[max(0, m.start() - 12):m.start()].lower()
            if _MONTH_BEFORE.search(before) or (m.group().lower().rstrip(".").endswith(("court", "courts")) and
                                                 any(w.lower() in _COURT_WORDS for w in name)):
                return False
            if caseless:
                return len(name) <= 3 and cue
            # a street's name starts with a name word: "Rule 1 of the Rules of Court" is no house
            return name[0][:1].isupper() and all(w[:1].isupper() or w.lower() in ("of", "the", "de", "la") for w in name)
        if m.group("german"):
            words = m.group("pre").split() + [m.group("compound")]
            return (not caseless and all(w[:1].isupper() for w in words)) or (caseless and cue)
        return True


class Postcode(Recognizer):
    label = "POSTCODE"
    strength = 1
    UK = re.compile(r"(?<![\w])[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}(?![\w])")
    UK_LOWER = re.compile(r"(?<![\w])[a-z]{1,2}\d[a-z\d]? ?\d[a-z]{2}(?![\w])")
    CA = re.compile(r"(?<![\w])[A-Z]\d[A-Z] ?\d[A-Z]\d(?![\w])")
    STATES = (r"AL|AK|AZ|AR|CA|CO|CT|DE|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|"
              r"NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|DC")
    US_STATE = re.compile(r"\b(?:" + STATES + r")\.? (\d{5}(?:-\d{4})?)(?![\w])")
    ANY = re.compile(r"(?<![\w-])(?:[A-Z]{1,2}-?)?\d{3,6}(?:-\d{3,4})?(?![\w])|(?<![\w])\d{3} ?\d{2}(?![\w])")
    context = _context_re(r"zip|zip code|zipcode|postcode|post code|postal code|postal|plz|cap|cp|code postal")

    def find(self, text: str) -> Iterator[Span]:
        for pat in (self.UK, self.CA, self.US_STATE):
            for m in pat.finditer(text):
                g = 0  # "WA 98101" whole: a state kept beside a redrawn ZIP code and city narrows where (issue 75)
                yield Span(m.start(g), m.end(g), m.group(g), self.label, SOURCE)
        if not self.context.search(text):  # type: ignore[union-attr]
            return
        for pat in (self.ANY, self.UK_LOWER):
            for m in pat.finditer(text):
                if self.in_context(text, m.start(), window=24, end=m.end(), after=28):
                    yield Span(m.start(), m.end(), m.group(), self.label, SOURCE)


DIGIT_WORDS = {"zero": 0, "oh": 0, "o": 0, "nought": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
               "six": 6, "seven": 7, "eight": 8, "nine": 9, "niner": 9}
REPEATS = {"double": 2, "triple": 3}
# Teens and tens read inside a digit string ("five five five twelve thirty four").
GROUP_WORDS = {"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
               "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred"}
_DIGIT_TOKEN = r"(?:zero|oh|o|nought|one|two|three|four|five|six|seven|eight|nine|niner|ten|eleven|twelve|thirteen|" \
               r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|" \
               r"eighty|ninety|hundred|double|triple)"
DIGIT_WORD_RE = re.compile(r"(?<![\w'])" + _DIGIT_TOKEN + r"(?![\w'])", re.I)


class SpokenDigits(Recognizer):
    """Runs of digit words in a transcript, whatever the case: four digits or more ("my pin
    is four four two one", "nine oh two one oh"), or two or more after a word that asks for
    digits ("the code is two seven"). "two kids", "nineteen ninety nine" and "one or two"
    are not digit strings."""

    label = "SPOKEN_DIGITS"
    needs = "digitword"
    pattern = re.compile(r"(?<![\w'])" + _DIGIT_TOKEN + r"(?:(?:[ ,-]{1,3}|\.{3} ?)" + _DIGIT_TOKEN + r"){0,40}(?![\w'])",
                         re.I)
    context = _context_re(r"pin|code|number|no|card|phone|cell|mobile|digits|extension|ext|zip|postcode|account|"
                          r"password|passcode|id|social|ssn|is|it's|at|dial|call")
    STRONG_CONTEXT = _context_re(r"pin|code|number|card|phone|cell|mobile|digits|extension|zip|postcode|account|"
                                 r"password|passcode|ssn|social security|dial")

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            toks = [(t.start(), t.end(), t.group().lower()) for t in DIGIT_WORD_RE.finditer(m.group())]
            # trim words that are no digits at either end ("double" at the end, "hundred" at the start)
            while toks and toks[-1][2] in REPEATS:
                toks.pop()
            while toks and toks[0][2] in GROUP_WORDS:
                toks.pop(0)
            if not toks:
                continue
            # "double four" is two digits
            digits = sum(REPEATS[t] - 1 if t in REPEATS else 1 for _, _, t in toks)
            proper = sum(1 for _, _, t in toks if t in DIGIT_WORDS and t not in ("oh", "o"))
            start, end = m.start() + toks[0][0], m.start() + toks[-1][1]
            if proper < 2 or (toks[0][2] in ("oh", "o") and proper < 3):
                continue
            groups = sum(1 for _, _, t in toks if t in GROUP_WORDS)
            if groups and proper < 3:  # "nineteen ninety nine", "twenty two"
                continue
            if digits >= 4 or (digits >= 2 and self.STRONG_CONTEXT.search(text, max(0, start - 32), start)):
                yield Span(start, end, text[start:end], self.label, SOURCE)


class NumberWithContext(Recognizer):
    """A bare run of digits right after a word that asks for a secret number ("my pin is
    4421", "account 12345678"), or of nine digits or more anywhere: a number of no known
    shape, but private by what it is."""

    label = "ID_NUMBER"
    strength = 1
    pattern = re.compile(r"(?<![\w.,:/-])\d{3,20}(?![\w]|[.,:/]\d)")
    context = _context_re(r"pin|code|account|acct|password|passcode|card|member|customer|policy|ref|reference|"
                          r"routing|sort code|cvv|cvc|security")
    # A card's security code has three digits: right after the word that names it.
    SECURITY_CODE = re.compile(r"(?<![\w])(?:cvv2?|cvc2?|csc|security code)\W{0,3}$", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        # Nine digits or more with no separator are an account, a phone or an ID wherever they
        # stand ("Text 391004251 when you arrive"): amounts and counts that long have commas.
        if len(item) == 3:
            return bool(self.SECURITY_CODE.search(text, max(0, start - 20), start))
        if _year_of_date(item, text, start):
            return False
        return len(item) >= 9 or self.in_context(text, start, window=28)
