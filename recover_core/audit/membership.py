"""``membership``: which names were in the corpus, read from the substitutes released.

Under ``consistent=True`` (and ``--mapping``) one mapping serves the whole run: no original is
ever used as a substitute, and each substitute stands for one original. So a name of a known
population that never appears as a substitute is more likely to have been an original. The
attacker here has the released text and its public fills, and a population of names half of
which (the members) were in the corpus; it guesses "member" for every population name that
never comes back as a substitute. Its precision against the base rate (the members' share of
the population) is the leak.

Simulation through the real engine: the population is drawn from the commonest census first
names (the names substitutes are drawn from, the attacker's best case); each member stands
in one real news sentence with a census surname (``replay.templates``), and the lines are
obfuscated by ``Obfuscator.obfuscate_many`` with ``consistent=True``, and, for comparison,
without it (each line its own mapping under its own subkey: the default).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from recover_core.data import lexicons
from recover_core.obfuscator import Obfuscator
from recover_core.pseudonyms import new_key
from recover_core.pseudonyms.names import census_share


@dataclass(frozen=True)
class MembershipResult:
    setting: str
    population: int
    members: int
    lines: int
    guessed: int  # population names guessed members (never released as a substitute)
    precision: float  # members among them
    base_rate: float  # members / population
    # The attacker who knows the draw's prior (the code is public): only the commonest quarter
    # of the population, whose non-members a run would most likely have drawn, is guessed.
    common_guessed: int = 0
    common_precision: float = 0.0
    common_base_rate: float = 0.0


def population(size: int, seed: int = 0) -> tuple[list[str], set[str]]:
    """``size`` names drawn from the 1,000 commonest census first names (500 per gender), and
    the half of them that are members."""
    common = list(dict.fromkeys([n for n, _ in lexicons.census("dist.male.first")[:500]] +
                                [n for n, _ in lexicons.census("dist.female.first")[:500]]))
    rng = random.Random(f"membership:{seed}")
    names = rng.sample(common, size)
    return names, set(rng.sample(names, size // 2))


def released_names(results) -> set[str]:
    """Every word of every released person substitute, lower-case."""
    return {w.strip(".,'").lower() for r in results for f in r.public()["fills"] if f["label"] == "PERSON"
            for w in f["word"].split()}


def attack(make: Callable[[bytes], Obfuscator], *, members: int = 300, seed: int = 0,
           progress: bool = False) -> list[MembershipResult]:
    from tqdm import tqdm

    from recover_core.audit.replay import SLOT, templates

    share = census_share("first")
    names, inside = population(2 * members, seed)
    rng = random.Random(f"membership-lines:{seed}")
    engine = make(new_key())
    slots = templates(len(inside), engine, seed)
    surnames = list(lexicons.ranked_last_names(2000))
    chosen = sorted(inside)
    lines = [t.replace(SLOT, f"{m.capitalize()} {rng.choice(surnames).capitalize()}")
             for t, m in zip(slots, chosen)]
    out = []
    for setting, consistent in (("consistent mapping", True), ("per-line subkeys (default)", False)):
        engine = make(new_key())
        results = []
        for b in tqdm(range(0, len(lines), 64), desc=f"membership ({setting})", disable=not progress):
            results += engine.obfuscate_many(lines[b:b + 64], consistent=consistent)
        seen = released_names(results)
        members_used = set(chosen[:len(lines)])
        guess = [n for n in names if n not in seen and (n in members_used or n not in inside)]
        hits = sum(n in members_used for n in guess)
        pop = [n for n in names if n in members_used or n not in inside]
        common = set(sorted(pop, key=lambda n: -share.get(n, 0.0))[:len(pop) // 4])
        guess_c = [n for n in guess if n in common]
        out.append(MembershipResult(setting, len(pop), len(members_used), len(lines), len(guess),
                                    hits / max(len(guess), 1), len(members_used) / max(len(pop), 1),
                                    len(guess_c), sum(n in members_used for n in guess_c) / max(len(guess_c), 1),
                                    sum(n in members_used for n in common) / max(len(common), 1)))
    return out
