"""What the secret key costs the default `obfuscate` path (issue 57: within 3% of before).

Every draw that depends on an original is seeded by ``key.keyed_rng``, an HMAC-SHA256 of it
under the run's key; before keys (commit d0360b0) the same draw was seeded by
``random.Random(f"pseudonyms:{seed}:{original}")``, which hashes its string with SHA-512.
So the key's cost is (keyed draws) x (one keyed seeding - one string seeding).

In one process, on --lines lines of --corpus (default settings: entityTagger, MLM Top-1,
the prior's choice, one torch thread): the CPU seconds of the whole run, how many keyed
seedings it made (counted by cProfile in a second pass over the same lines), and the time of one keyed seeding against one
string seeding (the reference, timed in the same run). Prints the keyed seedings' share of
the run's CPU and the key's extra cost over the reference as a share of the run.

The end-to-end counterpart, noisier on a shared machine: ``python bench/corpus_scale.py
--default-path 03a150d --keyless d0360b0`` (commit 03a150d brought the keys).

    python bench/key_cost.py [--lines 1000] [--corpus fortunes]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--corpus", default="fortunes")
    args = ap.parse_args()

    import torch

    from recover_core.data.corpora import CORPORA
    from recover_core.obfuscator import Obfuscator
    from recover_core.pseudonyms.key import keyed_rng, new_key

    torch.set_num_threads(1)
    lines = list(CORPORA[args.corpus]())[: args.lines]
    engine = Obfuscator()
    engine.fill(engine.mask_many(lines[:64]))  # models loaded and warm before the count
    t0 = time.process_time()
    for at in range(0, len(lines), 64):
        engine.fill(engine.mask_many(lines[at: at + 64]))
    cpu = time.process_time() - t0  # the run as it is, then again under the profiler to count
    prof = cProfile.Profile()
    prof.enable()
    for at in range(0, len(lines), 64):
        engine.fill(engine.mask_many(lines[at: at + 64]))
    prof.disable()
    calls = sum(v[1] for k, v in pstats.Stats(prof).stats.items() if k[2] == "keyed_rng")

    key, n = new_key(), 20_000
    keyed = min(timeit.repeat(lambda: keyed_rng(key, "pseudonyms:0:person:first:Margaret"), number=n, repeat=5)) / n
    plain = min(timeit.repeat(lambda: random.Random("pseudonyms:0:Margaret"), number=n, repeat=5)) / n
    print(f"{len(lines)} lines of {args.corpus}, default settings, 1 torch thread: {cpu:.1f} CPU s; {calls} keyed "
          f"seedings (counted in a second, profiled pass)")
    print(f"one keyed seeding {keyed * 1e6:.1f} us, one string seeding (before keys) {plain * 1e6:.1f} us: "
          f"ratio {keyed / plain:.2f}")
    print(f"keyed seedings' share of the run: {calls * keyed / cpu:.3%}; the key's extra cost over string "
          f"seeding: {calls * (keyed - plain) / cpu:+.3%} of the run (goal: within 3%)")


if __name__ == "__main__":
    main()
