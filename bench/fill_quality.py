"""Quality of substitutes without annotation (issue: same-type >= 90%, leaks <= 5%).

entityTagger masks real news sentences; a filler replaces every mask; spaCy
re-tags the filled sentence. A substitute is the same type when an entity of the
original's label covers it; it leaks when it equals the original word. Also
prints p50 latency per sentence.

With the type check on (default), the filler itself asks en_core_web_md whether a
candidate reads as the masked type, so a same-type rate judged by that same model
is optimistic by construction; the rate judged by en_core_web_sm, which the filler
never consults, is the independent figure.

    python bench/fill_quality.py [--sentences 40] [--filler infill] [--model smollm2-135m] [--no-type-check]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tqdm import tqdm  # noqa: E402

from recover_core import bundles, corpora  # noqa: E402
from recover_core.filling import MaskInput, get_filler  # noqa: E402
from recover_core.filling.candidates import ner_type_check  # noqa: E402
from recover_core.masking import build, mask_many  # noqa: E402
from recover_core.quality import leaks, originals_per_fill, same_type  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=80)
    ap.add_argument("--filler", default="infill")
    ap.add_argument("--model", default=None)
    ap.add_argument("--methods", default="top1,topk")
    ap.add_argument("--no-type-check", action="store_true")
    args = ap.parse_args()

    masker = build("entityTagger")
    # Every 7th sentence with an entity: spread over the corpus, fixed.
    pool = [m for m in mask_many(list(corpora.news()), masker, "class") if m.spans]
    sample = pool[:: max(1, len(pool) // args.sentences)][: args.sentences]
    filler = get_filler(args.filler, args.model)
    nlp = bundles.load_ner("spacy-md")
    judge = bundles.load_ner("spacy-sm")
    check = None if args.no_type_check else ner_type_check(nlp)
    print(f"{len(sample)} news sentences with entities, {sum(len(m.spans) for m in sample)} masked words; "
          f"filler {args.filler}:{filler.model_name}")
    for method in args.methods.split(","):
        filled, secs = [], []
        for i, m in enumerate(tqdm(sample, desc=method)):
            t = time.perf_counter()
            filled.append(filler.fill([MaskInput(m.masked, m.markers)], method=method, seed=0, first_id=i,
                                      type_check=check)[0])
            secs.append(time.perf_counter() - t)
        per_label: dict = {}
        hit, total = same_type(filled, nlp, per_label)
        hit_sm, _ = same_type(filled, judge)
        n_leaks = sum(leaks(f, originals_per_fill(m.original, m.spans, f)) for f, m in zip(filled, sample))
        n_fills = sum(len(f.fills) for f in filled)
        print(f"{method}: same-type (judged by md) {hit}/{total} = {hit / total:.1%}   "
              f"(judged by sm) {hit_sm}/{total} = {hit_sm / total:.1%}   leaks {n_leaks}/{n_fills} = "
              f"{n_leaks / n_fills:.1%}   fallbacks {sum(x.fallback for f in filled for x in f.fills)}   "
              f"p50 {statistics.median(secs):.2f} s/sentence")
        print("    by label (md):", {k: f"{h}/{t}" for k, (h, t) in sorted(per_label.items())})
        for f in filled[:4]:
            print("   ", f.text)


if __name__ == "__main__":
    main()
