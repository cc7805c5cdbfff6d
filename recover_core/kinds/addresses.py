"""Street addresses and postcodes. An address becomes one of the same form (its street name
drawn, its number redrawn, a German compound kept a compound); a postcode another of the same
format, a US state beside its ZIP code another state with a ZIP code of its own.
"""
from __future__ import annotations

import random
import re
from typing import Iterator

from recover_core.kinds.base import SOURCE, Helpers, Recognizer, context_re
from recover_core.kinds.redraw import rand_digits, scramble
from recover_core.text.dates import MONTH_BEFORE
from recover_core.text.spans import Span


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
# Words that make "... Court" a court of law rather than a street ("Lemon Tree Court").
_COURT_WORDS = frozenset("""state security district regional administrative criminal civil labour labor supreme
    constitutional appeal appeals high assize magistrates magistrate county crown family military commercial
    juvenile first instance provincial municipal city""".split())


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
            if MONTH_BEFORE.search(before) or (m.group().lower().rstrip(".").endswith(("court", "courts")) and
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
    context = context_re(r"zip|zip code|zipcode|postcode|post code|postal code|postal|plz|cap|cp|code postal")

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


# Each US state's ZIP codes by their first three digits (USPS's ranges; a state may have
# several), so that a state redrawn beside its ZIP code gets a ZIP code of its own
# (``postcode``): "IL 62704" becomes "TX 75213", not "TX 62704".
US_STATE_ZIPS: dict[str, tuple[tuple[int, int], ...]] = {
    "AL": ((350, 369),), "AK": ((995, 999),), "AZ": ((850, 865),), "AR": ((716, 729),), "CA": ((900, 961),),
    "CO": ((800, 816),), "CT": ((60, 69),), "DE": ((197, 199),), "DC": ((200, 200), (202, 205)),
    "FL": ((320, 349),), "GA": ((300, 319), (398, 399)), "HI": ((967, 968),), "ID": ((832, 838),),
    "IL": ((600, 629),), "IN": ((460, 479),), "IA": ((500, 528),), "KS": ((660, 679),), "KY": ((400, 427),),
    "LA": ((700, 714),), "ME": ((39, 49),), "MD": ((206, 219),), "MA": ((10, 27),), "MI": ((480, 499),),
    "MN": ((550, 567),), "MS": ((386, 397),), "MO": ((630, 658),), "MT": ((590, 599),), "NE": ((680, 693),),
    "NV": ((889, 898),), "NH": ((30, 38),), "NJ": ((70, 89),), "NM": ((870, 884),), "NY": ((100, 149),),
    "NC": ((270, 289),), "ND": ((580, 588),), "OH": ((430, 459),), "OK": ((730, 749),), "OR": ((970, 979),),
    "PA": ((150, 196),), "RI": ((28, 29),), "SC": ((290, 299),), "SD": ((570, 577),), "TN": ((370, 385),),
    "TX": ((750, 799),), "UT": ((840, 847),), "VT": ((50, 59),), "VA": ((220, 246),), "WA": ((980, 994),),
    "WV": ((247, 268),), "WI": ((530, 549),), "WY": ((820, 831),),
}
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
            new = rand_digits(len(p), rng)
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
    zip_code = f"{rng.randint(lo, hi):03d}{rand_digits(2, rng)}"
    plus = "-" + rand_digits(4, rng) if m.group("plus") else ""
    return state + m.group("dot") + m.group("gap") + zip_code + plus


def postcode(original: str, rng: random.Random, helpers: Helpers) -> str:
    m = _STATE_ZIP.fullmatch(original)
    if m and m.group("state") in US_STATE_ZIPS:  # "IL 62704": the state goes with its ZIP code
        return _state_and_zip(m, rng)
    for _ in range(20):
        new = scramble(original, rng)
        if new != original and (not new[:1].isdigit() or original[:1] == "0" or new[0] != "0"):
            return new
    return new


OPERATORS = {"ADDRESS": address, "POSTCODE": postcode}
