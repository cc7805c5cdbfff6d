"""A check set of the project's own for organisation cues (issue 56, item 5), drawn from Faker, not
from Mimesis (bench/heldout_names.py, which stays held out): 96 company names of 12 Faker locales
and Faker first names in six sentences with an organisation cue, cased and caseless.

Run:  python bench/ner_company_check.py   (about 20 s)
"""
from __future__ import annotations

import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import ner_recall as B  # noqa: E402
from faker import Faker  # noqa: E402

from recover_core.masking.entity_tagger import DEFAULT_TYPES  # noqa: E402

LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "it_IT", "es_ES", "nl_NL", "pl_PL", "pt_BR", "sv_SE", "da_DK", "fi_FI")
TEMPLATES = ("{first} works for {org} as an engineer.", "My manager at {org} is {first}.",
             "Ask {first} at {org} about the invoice.", "Employer: {org}. City: {city}.",
             "I was shopping at {org} with {first}.", "She used to work at {org} before the move.")


def items() -> list[dict]:
    rng = random.Random(7)
    orgs, firsts = [], []
    for loc in LOCALES:
        f = Faker(loc)
        f.seed_instance(3)
        orgs += [f.company() for _ in range(8)]
        firsts += [f.first_name() for _ in range(8)]
    out = []
    for caseless in (False, True):
        for k, org in enumerate(orgs):
            tpl, pieces, pos = TEMPLATES[k % len(TEMPLATES)], [], 0
            for m in re.finditer(r"\{(\w+)\}", tpl):
                val = {"org": org, "city": "Springfield"}.get(m.group(1)) or rng.choice(firsts)
                pieces += [(tpl[pos: m.start()], None), (val, m.group(1))]
                pos = m.end()
            it = B.assemble(pieces + [(tpl[pos:], None)], caseless)
            it["slice"] = "caseless" if caseless else "cased"
            out.append(it)
    return out


def main() -> None:
    its = items()
    res, _ = B.run_config("ours", [it["text"] for it in its], DEFAULT_TYPES)
    df, fp, masked, n = B.score_generic(its, res)
    print((df.groupby(["slice", "label"]).found.mean() * 100).round(1).to_string())
    print(f"false positives: {fp / n * 1000:.1f} per 1,000 words")


if __name__ == "__main__":
    main()
