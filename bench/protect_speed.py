"""Masking time of the protection profiles, in the same run (issue 74: quasi within 1.5x of direct).

Both profiles mask the same real text through the engine (``Obfuscator.mask``): the news
sentences one by one, as the batch path takes lines, and the same sentences joined into one
document of about 100,000 characters, in one call. The spaCy model is loaded, and each
profile warmed on a few lines, before anything is timed; each measurement is the best of
``--repeat`` runs.

Run:  python bench/protect_speed.py   (about two minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recover_core import Obfuscator  # noqa: E402
from recover_core.data import corpora  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=400, help="news sentences masked one by one")
    ap.add_argument("--doc-chars", type=int, default=100_000, help="size of the one-call document")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    news = list(corpora.news())
    lines = news[: args.lines]
    paragraphs, size, at = [], 0, 0
    while size < args.doc_chars:
        para = " ".join(news[at: at + 8])
        paragraphs.append(para)
        size, at = size + len(para) + 2, at + 8
    doc = "\n\n".join(paragraphs)

    engines = {p: Obfuscator(protect=p, key=b"\0" * 32) for p in ("direct", "quasi")}
    for ob in engines.values():
        ob.mask_many(lines[:20])  # load spaCy and the lists; warm both
    rows = {}
    for name, ob in engines.items():
        rows[name] = (best(lambda: [ob.mask(t) for t in lines], args.repeat),
                      best(lambda: ob.mask(doc), args.repeat))
    print(f"{len(lines)} news sentences one by one; one document of {len(doc):,} characters in one call")
    print(f"{'profile':8s} {'sentences s':>12s} {'document s':>11s}")
    for name, (a, b) in rows.items():
        print(f"{name:8s} {a:12.2f} {b:11.2f}")
    ratio_lines = rows["quasi"][0] / rows["direct"][0]
    ratio_doc = rows["quasi"][1] / rows["direct"][1]
    print(f"quasi / direct: {ratio_lines:.2f}x on sentences, {ratio_doc:.2f}x on the document (goal: at most 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
