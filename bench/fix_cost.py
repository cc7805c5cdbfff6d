"""What issue 75's fixes cost the batch path (goal: no more than 3% slower than before them).

The batch path is ``obfuscate FILE -o OUT --skip-bad`` with the default settings (entityTagger, MLM
Top-1, the prior's choice, identifiers, 1 worker in this process, chunks of 64 lines,
checkpointed). The fixes that run on it, each toggled off here to give the path before them:

- finding 3: ``validation.normalise`` (invisible characters dropped, NFKC) on every line;
  before, ``check_text`` only stripped the line;
- finding 5: each line draws under its masked line's subkey (``obfuscator.masked_line`` and
  one HMAC, ``subkey``); before, every line's mapping drew under the run's key.

What is not toggled, and why: finding 2's atomic writes (the progress record was already
written, fsynced and renamed once a chunk; now through ``mkstemp``: one file a chunk,
timed apart below), finding 10's identifier substitutes (a keyed draw from a word list
instead of random letters, a shift per birth date: a few draws on identifier lines only),
finding 1 (it looks for identifiers under ``--rules paper`` only), findings 4, 9, 11-13 (not
on this path).

Both paths run in this process on the same input, in ``--rounds`` interleaved rounds (the
order alternating, a fresh key a round, the same for both), after a warm-up run; each run's CPU time (``time.process_time``, all
threads: a loaded machine moves it far less than the wall clock) and wall time. Prints each
round's ratio now / before and the median. On a loaded machine the rounds' ratios still move
by several percent, so one more run counts the new steps' own CPU time (each wrapped in a
per-thread timer): their share of the run is the cost, without the noise.

    python bench/fix_cost.py [--lines 512] [--corpus wiki] [--rounds 4]

wiki by default: 7% of its lines are not plain ASCII, so normalise runs past its ASCII fast path
(news and fortunes are all ASCII).
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


@contextlib.contextmanager
def timing_new_steps(spent: dict):
    """The new steps wrapped so that the CPU time inside each (this thread's) adds up in ``spent``."""
    from recover_core import obfuscator
    from recover_core.text import validation

    saved = validation.normalise, obfuscator.subkey, obfuscator.masked_line

    def timed(name, fn):
        def wrapper(*a, **kw):
            t0 = time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] = spent.get(name, 0.0) + time.thread_time() - t0
                spent[name + " calls"] = spent.get(name + " calls", 0) + 1
        return wrapper

    validation.normalise = timed("normalise", saved[0])
    obfuscator.subkey = timed("subkey", saved[1])
    obfuscator.masked_line = timed("masked_line", saved[2])
    try:
        yield
    finally:
        validation.normalise, obfuscator.subkey, obfuscator.masked_line = saved


@contextlib.contextmanager
def before_fixes():
    """The batch path as it was before issue 75's findings 3 and 5."""
    from recover_core import obfuscator
    from recover_core.text import validation

    saved = validation.normalise, obfuscator.subkey, obfuscator.masked_line
    validation.normalise = lambda text: text
    obfuscator.subkey = lambda key, label: key
    obfuscator.masked_line = lambda filled: ""
    try:
        yield
    finally:
        validation.normalise, obfuscator.subkey, obfuscator.masked_line = saved


def _count_draws() -> list[int]:
    """A counter of the engine's name draws (``Pseudonyms._draw``), redraws included."""
    from recover_core.pseudonyms.policy import Pseudonyms

    count, draw = [0], Pseudonyms._draw

    def counted(self, *a, **kw):
        count[0] += 1
        return draw(self, *a, **kw)
    Pseudonyms._draw = counted
    return count


def run_batch(src: Path, out: Path, key: str) -> tuple[float, float]:
    """One ``obfuscate`` run of ``src`` into ``out``: (CPU seconds, wall seconds)."""
    from recover_core import batch
    from recover_core.batch.job import Job
    from recover_core.obfuscator import Settings

    job = Job(command="obfuscate", input=src, output=out, in_jsonl=False, out_jsonl=False, quiet=True, skip_bad=True,
              engine=Settings(technique="entityTagger", filler="mlm"), key=key)
    out.unlink(missing_ok=True)
    c0, w0 = time.process_time(), time.perf_counter()
    batch.run(job, restart=True)
    return time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=512)
    ap.add_argument("--corpus", default="wiki")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()

    import torch

    from recover_core.runtime import atomic
    from recover_core.data.corpora import CORPORA
    from recover_core.pseudonyms.key import new_key

    torch.set_num_threads(1)
    lines = [ln.replace("\n", " ") for ln in CORPORA[args.corpus]()][: args.lines]
    key = new_key().hex()
    with tempfile.TemporaryDirectory(prefix="fix-cost-") as tmp:
        src = Path(tmp) / "in.txt"
        src.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
        run_batch(src, Path(tmp) / "warm.txt", key)  # models loaded, caches warm
        # Toggling the subkey changes which names are drawn, and with them how many the tagger
        # refuses and the engine draws again: under one key that moved the work by +-10% (968
        # draws against 820 on these lines). So each round draws under a key of its own, the
        # same for both paths, and the draws are counted.
        draws = _count_draws()
        now, pre, drawn = [], [], {"now": 0, "pre": 0}
        for r in range(args.rounds):
            key = new_key().hex()
            order = ("now", "pre") if r % 2 == 0 else ("pre", "now")
            for which in order:
                draws[0] = 0
                with before_fixes() if which == "pre" else contextlib.nullcontext():
                    t = run_batch(src, Path(tmp) / f"{which}.txt", key)
                (now if which == "now" else pre).append(t)
                drawn[which] += draws[0]
            print(f"round {r + 1}: now {now[-1][0]:.2f} CPU s ({now[-1][1]:.1f} s wall), before the fixes "
                  f"{pre[-1][0]:.2f} CPU s ({pre[-1][1]:.1f} s wall): ratio {now[-1][0] / pre[-1][0]:.3f} CPU, "
                  f"{now[-1][1] / pre[-1][1]:.3f} wall", flush=True)
        spent: dict = {}
        with timing_new_steps(spent):
            counted = run_batch(src, Path(tmp) / "counted.txt", key)
        record = Path(tmp) / "record.json"
        write = min(timeit.repeat(lambda: atomic.write_bytes(record, b"{}" * 200, mode=atomic.PRIVATE, fsync=True),
                                  number=20, repeat=3)) / 20
    ascii_share = sum(ln.isascii() for ln in lines) / max(len(lines), 1)
    cpu = [a[0] / b[0] for a, b in zip(now, pre)]
    wall = [a[1] / b[1] for a, b in zip(now, pre)]
    chunks = -(-len(lines) // 64)
    print(f"{len(lines)} lines of {args.corpus} ({ascii_share:.0%} plain ASCII), default obfuscate, 1 worker, "
          f"1 torch thread, {args.rounds} rounds")
    print(f"names drawn (the tagger's refusals drawn again): now {drawn['now']}, before {drawn['pre']}")
    print(f"summed over the rounds: {sum(c for c, _ in now) / sum(c for c, _ in pre):.3f} CPU")
    print(f"now / before issue 75's fixes: median ratio {statistics.median(cpu):.3f} CPU "
          f"(rounds {min(cpu):.3f}-{max(cpu):.3f}), {statistics.median(wall):.3f} wall (goal: at most 1.03)")
    steps = sum(v for k, v in spent.items() if not k.endswith("calls"))
    print("the new steps' own CPU time in one more run (" + ", ".join(
        f"{k} {spent[k] * 1e3:.1f} ms in {spent[k + ' calls']} calls" for k in ("normalise", "subkey", "masked_line")
        if k in spent) + f"): {steps:.3f} s of {counted[0]:.2f} CPU s, {steps / counted[0]:+.2%} of the run")
    print(f"one atomic record write (mkstemp, fchmod, fsync, rename): {write * 1e3:.2f} ms, {chunks} a run: "
          f"{chunks * write / statistics.median(c for c, _ in now):.2%} of its CPU time if it were all CPU")


if __name__ == "__main__":
    main()
