"""The inversion attack: a dictionary run through the tool, read backwards.

If a substitute were a function of public things (the code, a default seed) and the original,
an attacker would obfuscate every name of a public dictionary once, note which substitute
each name gets, and invert that table: a substitute in a released text then points to the
few dictionary names that map to it. We run exactly that attack on our own output:

- the victim obfuscates lines full of census names (its own templates, names drawn from the
  same public lists: the attacker's best case);
- the attacker obfuscates one line per dictionary name, with the same settings, under the key
  it can know: the victim's key where that key is published, an unrelated one where it is a
  secret (a guess is all the attacker has);
- a victim's name word is re-identified when its original is among at most ``MAX_CANDIDATES``
  dictionary names that the attacker's table maps to its substitute. Chance is
  ``MAX_CANDIDATES`` guesses among the dictionary's names.

Two default runs over the same lines are also compared: with a fresh key per run they must
rarely agree (datamimic #226's acceptance test).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

from recover_core.data import lexicons
from recover_core.obfuscator import Obfuscator
from recover_core.pseudonyms import bare, new_key

MAX_CANDIDATES = 10  # re-identified: the original is among at most this many dictionary names
# The victim's lines (never the attacker's): a name's context moves the filler's scores.
VICTIM_TEMPLATES = (
    "Yesterday {f1} {l1} met {f2} at the station.",
    "The letter from {f1} {l1} reached {f2} {l2} on Monday.",
    "{f1} and {f2} {l2} signed the lease together.",
    "Please ask {f1} {l1} to call the office.",
)
# The attacker's lines: one name each, a first name alone or a surname after a title.
ATTACK_FIRST = "{name} said it was fine."
ATTACK_LAST = "Mr. {name} said it was fine."


@dataclass(frozen=True)
class InversionResult:
    setting: str
    name_words: int  # the victim's name words with a substitute of as many words
    reidentified: float  # share whose original is among <= MAX_CANDIDATES names mapping to the substitute
    among_any: float  # share whose original is among the names mapping to it at all
    chance: float  # MAX_CANDIDATES random guesses among the dictionary
    same_across_runs: float | None  # share of person substitutes equal in two runs of this setting


def dictionary(size: int) -> tuple[list[str], list[str]]:
    """The attacker's dictionary: the ``size`` commonest census first names (half male, half
    female) and the ``size`` commonest surnames, capitalised."""
    half = size // 2
    first = [n for n, _ in lexicons.census("dist.male.first")[:half]] + \
        [n for n, _ in lexicons.census("dist.female.first")[: size - half]]
    firsts = list(dict.fromkeys(n.capitalize() for n in first))
    return firsts, [n.capitalize() for n in lexicons.ranked_last_names(size)]


def victim_lines(first: Sequence[str], last: Sequence[str], n: int, seed: int) -> list[str]:
    rng = random.Random(f"inversion-victims:{seed}")
    return [rng.choice(VICTIM_TEMPLATES).format(f1=rng.choice(first), f2=rng.choice(first), l1=rng.choice(last),
                                                l2=rng.choice(last)) for _ in range(n)]


def _pairs(results) -> list[tuple[str, str]]:
    """(original word, substitute word) of every person name, word by word."""
    out = []
    for res in results:
        for r in res.replacements:
            if r.label == "PERSON" and len(r.original.split()) == len(r.substitute.split()):
                out += [(bare(o), bare(s)) for o, s in zip(r.original.split(), r.substitute.split()) if bare(o)]
    return out


def table(engine: Obfuscator, first: Sequence[str], last: Sequence[str], batch: int = 64) -> dict[str, set[str]]:
    """The attacker's inverted table: substitute word -> the dictionary names that got it."""
    lines = [ATTACK_FIRST.format(name=n) for n in first] + [ATTACK_LAST.format(name=n) for n in last]
    inverse: dict[str, set[str]] = {}
    for b in range(0, len(lines), batch):
        for orig, sub in _pairs(engine.obfuscate_many(lines[b: b + batch])):
            inverse.setdefault(sub, set()).add(orig)
    return inverse


def attack(make: Callable[[bytes], Obfuscator], *, setting: str, published: bool, size: int = 1000,
           victims: int = 200, seed: int = 0) -> InversionResult:
    """One setting attacked. ``make(key)`` builds the engine under a key; the victim's key is
    fresh, and the attacker gets it only where it is ``published``."""
    first, last = dictionary(size)
    lines = victim_lines(first, last, victims, seed)
    key = new_key()
    released = make(key).obfuscate_many(lines)
    pairs = _pairs(released)
    inverse = table(make(key if published else new_key()), first, last)
    hits = sum(o in inverse.get(s, ()) and len(inverse[s]) <= MAX_CANDIDATES for o, s in pairs)
    anywhere = sum(o in inverse.get(s, ()) for o, s in pairs)
    again = _pairs(make(key if published else new_key()).obfuscate_many(lines))
    same = sum(a == b for a, b in zip(pairs, again)) / len(pairs) if pairs and len(again) == len(pairs) else None
    n = max(len(pairs), 1)
    return InversionResult(setting, len(pairs), hits / n, anywhere / n,
                           MAX_CANDIDATES / max(len(set(first) | set(last)) // 2, 1), same)


def settings_audited(base: dict | None = None) -> list[tuple[str, bool, Callable[[bytes], Obfuscator]]]:
    """(setting, key published?, engine maker): the product's default with its secret key;
    the same with the key published (what a public seed was before keys); and ``rank``."""
    base = dict(base or {})

    def maker(**kw) -> Callable[[bytes], Obfuscator]:
        settings = {**base, **kw}
        return lambda key: Obfuscator(key=key, **settings)

    return [("default (prior, secret key)", False, maker()),
            ("prior, key published", True, maker()),
            ("rank, secret key", False, maker(choice="rank")),
            ("rank, key published", True, maker(choice="rank"))]
