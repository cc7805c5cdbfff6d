"""Whole-corpus throughput: each technique x filler, on 1 and 2 local workers and on Ray.

What it runs: `python -m recover_core obfuscate` in a subprocess, as a user would, on the
news corpus (gensim's Lee corpus) repeated to --lines lines (--infill-lines for the
slower causal filler), Top-K, the default settings otherwise (the NER type check on).

What it reports, per configuration:
* warm lines/s: lines over the time from the first chunk's start to the last one's end,
  in the workers (the engines' `warm_lines_per_second`): a long run's throughput, model
  loading left out. Batch size 64 for the MLM, 8 for infill (so that 40 lines make chunks);
* 1 worker runs on one core (--threads 1), 2 workers on one core each;
* total seconds, loading included;
* the scaling efficiency from 1 to 2 local workers: rate(2) / (2 x rate(1)); goal >= 85%;
* whether the 2-worker and Ray outputs equal the 1-worker output byte for byte.

Reference, measured in the same run: the code before issue 11 (git commit --baseline,
default cdc43cc) running the same obfuscate command on the first --baseline-lines lines,
in a temporary git worktree. Its summary's seconds leave the MLM's loading out but
include spaCy's (about 2 s); its lines/s is lines / seconds.

--compare REF: the same 2-worker commands (left to right, and one pass with --one-pass)
from git commit REF in a temporary worktree, on the same input in the same run: its warm
lines/s, ours over it, and whether the outputs are byte-identical. For a change that
should alter speed and nothing else.

Projection for Fisher (1.16M sentences) and a 30M-sentence Reddit sample, on 1, 10 and
100 machines like this one (2 cores): one machine runs the local engine with 2 workers
at its measured warm rate; on M machines Ray runs 2 actors per machine, at the measured
Ray warm rate per machine, times M (assumed linear: chunks are independent and only
results travel to the driver), plus Ray's measured fixed cost (start and actors' model
loading: total seconds minus lines / warm rate). hours = lines / rate / 3600 + fixed.

Run:  python bench/corpus_scale.py [--lines 2000] [--infill-lines 120] [--no-ray] [--no-baseline] [--one-pass]

--default-path REF (issue 59): the default `obfuscate` instead (entityTagger, MLM Top-1, the
prior's choice, 2 workers) on --lines lines of --corpus, our code against commit REF, under
one kept key, in --repeats interleaved rounds (the machine's load moves both alike); beside
them our `--choice rank` (the prior's draws unchecked), and where asked commit --keyless
(before secret keys, issue 57) and our `--no-identifiers` (issue 56). Reports each one's
median warm lines/s, each one's speed over ours per round, its CPU-ms a line (the run's CPU, all
processes, less that of the same command on the first LOAD_LINES lines: what loading costs)
and their ratio per round, which a loaded machine moves far less than the wall clock; each
one's peak RSS (the largest process: a worker), and whether our output equals REF's and our
1-worker output.

      python bench/corpus_scale.py --default-path REF [--lines 1000] [--corpus fortunes] [--repeats 3]
                                   [--keyless REF2] [--identifiers]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FISHER, REDDIT = 1_160_000, 30_000_000
LOAD_LINES = 16  # --default-path: the short run whose CPU is taken as the loading's


def summary(stderr: str) -> dict:
    return json.loads(stderr[stderr.index("{") : stderr.rindex("}") + 1])


def obfuscate(cwd: Path, src: Path, out: Path, technique: str, filler: str, extra: list[str],
              method: str = "topk") -> dict:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    env.pop("RAY_ADDRESS", None)
    cmd = [sys.executable, "-m", "recover_core", "obfuscate", str(src), "-o", str(out), "--technique", technique,
           "--filler", filler, "--method", method, "--quiet", *extra]
    # Run under a parent that reports its children's peak RSS: the largest process of the
    # run, a worker where there are workers (Linux counts waited-for grandchildren).
    # Their CPU seconds too (user + system, all of them): on a loaded machine the wall clock
    # moves with the neighbours, the CPU a run needs much less.
    wrap = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
            "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")
    t = time.time()
    p = subprocess.run([sys.executable, "-c", wrap, *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr[-3000:]}")
    s = summary(p.stderr)
    s["wall_seconds"] = round(time.time() - t, 1)
    cpu, rss = p.stderr.strip().splitlines()[-1].split()
    s["peak_rss_mb"], s["cpu_seconds"] = round(int(rss) / 1024), float(cpu)
    return s


def corpus_file(path: Path, n: int, corpus: str = "news") -> Path:
    from recover_core.data.corpora import CORPORA

    sents = list(CORPORA[corpus]())
    path.write_text("\n".join(sents[i % len(sents)] for i in range(n)) + "\n")
    return path


class Worktree:
    """Commit ``ref`` checked out in a temporary git worktree, removed on exit."""

    def __init__(self, ref: str, path: Path):
        self.ref, self.path = ref, path

    def __enter__(self) -> Path:
        subprocess.run(["git", "worktree", "add", "--detach", str(self.path), self.ref], cwd=ROOT, check=True,
                       capture_output=True)
        return self.path

    def __exit__(self, *exc) -> None:
        subprocess.run(["git", "worktree", "remove", "--force", str(self.path)], cwd=ROOT, capture_output=True)


def baseline(ref: str, src: Path, tmp: Path) -> dict:
    with Worktree(ref, tmp / "baseline") as tree:
        s = obfuscate(tree, src, tmp / "baseline.txt", "entityTagger", "mlm", [])
    return {"ref": ref, "lines": s["lines"], "seconds": s["seconds"], "lines_per_second": s["lines"] / s["seconds"]}


def default_path(args) -> None:
    """--default-path: the default `obfuscate` of our code against commit REF, interleaved."""
    import statistics
    from contextlib import ExitStack

    from recover_core.pseudonyms import new_key, write_key_file

    with tempfile.TemporaryDirectory() as d, ExitStack() as trees:
        tmp = Path(d)
        src = corpus_file(tmp / "in.txt", args.lines, args.corpus)
        # The same command on a few lines: its CPU is the loading, so the difference is what
        # the other lines cost (load-proof, where the warm rate is not).
        head = corpus_file(tmp / "head.txt", LOAD_LINES, args.corpus)
        key = tmp / "key"
        write_key_file(key, new_key())
        keyed = ["--workers", "2", "--key-file", str(key)]
        arms = {"ours": (ROOT, keyed), f"commit {args.default_path}": (
            trees.enter_context(Worktree(args.default_path, tmp / "ref")), keyed),
            "ours --choice rank": (ROOT, [*keyed, "--choice", "rank"])}
        if args.keyless:  # a commit before keys has no --key-file: its draws are its own
            arms[f"commit {args.keyless} (no keys)"] = (trees.enter_context(Worktree(args.keyless, tmp / "keyless")),
                                                        ["--workers", "2"])
        if args.identifiers:
            arms["ours --no-identifiers"] = (ROOT, [*keyed, "--no-identifiers"])
        got: dict[str, list[dict]] = {a: [] for a in arms}
        outs: dict[str, bytes] = {}
        for r in range(args.repeats):
            order = list(arms) if r % 2 == 0 else list(arms)[::-1]  # neither side always runs first
            for name in order:
                tree, extra = arms[name]
                out = tmp / f"out-{len(outs)}.txt"
                g = obfuscate(tree, src, out, "entityTagger", "mlm", extra, method="top1")
                load = obfuscate(tree, head, tmp / "head-out.txt", "entityTagger", "mlm", extra, method="top1")
                g["cpu_ms_per_line"] = round(1000 * (g["cpu_seconds"] - load["cpu_seconds"]) / (args.lines - LOAD_LINES), 2)
                got[name].append(g)
                outs.setdefault(name, out.read_bytes())
                print(f"round {r + 1}: {name:34s} warm {g['warm_lines_per_second']:6.1f} lines/s, "
                      f"{g['cpu_ms_per_line']:6.2f} CPU-ms a line, peak RSS {g['peak_rss_mb']} MB", flush=True)
        one = tmp / "out-1-worker.txt"
        obfuscate(ROOT, src, one, "entityTagger", "mlm", ["--workers", "1", "--key-file", str(key)], method="top1")
        one_worker = one.read_bytes()
    ours = [g["warm_lines_per_second"] for g in got["ours"]]
    print(f"\n{args.lines} lines of {args.corpus}, default obfuscate (entityTagger, MLM Top-1, prior), "
          f"2 workers, {args.repeats} interleaved rounds")
    our_cpu = [g["cpu_ms_per_line"] for g in got["ours"]]
    print("CPU-ms a line: (CPU of the run - CPU of the same command on its first "
          f"{LOAD_LINES} lines) / the other lines; all processes, user + system. CPU speed over ours = its inverse ratio.")
    print("| run | warm lines/s (median) | over ours, per round | CPU-ms a line (median) | CPU speed over ours, "
          "per round | peak RSS MB |")
    print("|---|---:|---|---:|---|---:|")
    rows = []
    for name, gs in got.items():
        rates = [g["warm_lines_per_second"] for g in gs]
        ratios = [round(x / o, 2) for x, o in zip(rates, ours)]
        cpu = [g["cpu_ms_per_line"] for g in gs]
        cpu_ratios = [round(o / x, 3) for x, o in zip(cpu, our_cpu)]
        rss = max(g["peak_rss_mb"] for g in gs)
        print(f"| {name} | {statistics.median(rates):.1f} | {' / '.join(f'{x:.2f}' for x in ratios)} | "
              f"{statistics.median(cpu):.2f} | {' / '.join(f'{x:.3f}' for x in cpu_ratios)} | {rss} |")
        rows.append({"run": name, "lines": args.lines, "corpus": args.corpus, "median_lines_s": statistics.median(rates),
                     "rates": " ".join(map(str, rates)), "over_ours": " ".join(map(str, ratios)), "peak_rss_mb": rss,
                     "median_cpu_ms_per_line": statistics.median(cpu), "cpu_ms_per_line": " ".join(map(str, cpu)),
                     "cpu_speed_over_ours": " ".join(map(str, cpu_ratios))})
    ref = f"commit {args.default_path}"
    print(f"\nour output {'equals' if outs['ours'] == outs[ref] else 'DIFFERS FROM'} {ref}'s; "
          f"1 worker {'equals' if outs['ours'] == one_worker else 'DIFFERS FROM'} 2 workers")
    write_csv(args.csv, rows)
    print(f"wrote {args.csv}")


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=None, help="2000; 1000 with --default-path")
    ap.add_argument("--infill-lines", type=int, default=40)
    ap.add_argument("--techniques", default="allowList,vocabThres,entityTagger")
    ap.add_argument("--fillers", default="mlm,infill")
    ap.add_argument("--baseline", default="cdc43cc")
    ap.add_argument("--baseline-lines", type=int, default=600)
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--one-pass", action="store_true",
                    help="also run each MLM configuration with --one-pass (every mask of a line in one forward "
                         "pass) and report its rate against the left-to-right fill of the same run")
    ap.add_argument("--compare", metavar="REF", default=None,
                    help="also run the 2-worker MLM commands from git commit REF on the same input (see above)")
    ap.add_argument("--csv", type=Path, default=None)
    ap.add_argument("--default-path", metavar="REF", default=None,
                    help="the default obfuscate of our code against commit REF, interleaved (see above)")
    ap.add_argument("--corpus", default=None, help="news (default), or fortunes (default with --default-path)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keyless", metavar="REF", default=None, help="--default-path: also commit REF, before keys")
    ap.add_argument("--identifiers", action="store_true", help="--default-path: also ours with --no-identifiers")
    args = ap.parse_args()
    if args.default_path:
        args.corpus, args.lines = args.corpus or "fortunes", args.lines or 1000
        args.csv = args.csv or ROOT / "precomputed/bench/corpus_scale_default_path.csv"
        return default_path(args)
    args.corpus, args.lines = args.corpus or "news", args.lines or 2000
    args.csv = args.csv or ROOT / "precomputed/bench/corpus_scale.csv"

    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ref = None
        if not args.no_baseline:
            ref = baseline(args.baseline, corpus_file(tmp / "base.txt", args.baseline_lines), tmp)
            print(f"reference: commit {ref['ref']}, entityTagger + mlm topk, {ref['lines']} lines: "
                  f"{ref['lines_per_second']:.1f} lines/s", flush=True)
        for filler in args.fillers.split(","):
            n = args.lines if filler == "mlm" else args.infill_lines
            src = corpus_file(tmp / f"in-{n}.txt", n, args.corpus)
            for tech in args.techniques.split(","):
                bs = ["--batch-size", "64" if filler == "mlm" else "8"]
                # One worker on one core against two on two: the scaling from 1 to 2 cores.
                runs = {"1 worker": [*bs, "--threads", "1"], "2 workers": [*bs, "--workers", "2"]}
                if not args.no_ray:
                    runs["ray, 2 actors"] = [*bs, "--engine", "ray", "--workers", "2"]
                got, outputs, paths, row_extra = {}, {}, {}, {}
                for name, extra in runs.items():
                    out = tmp / f"out-{filler}-{tech}-{name.replace(' ', '_').replace(',', '')}.txt"
                    got[name] = obfuscate(ROOT, src, out, tech, filler, extra)
                    outputs[name], paths[name] = out.read_bytes(), out
                    print(f"{tech:13s} {filler:6s} {name:14s} warm {got[name]['warm_lines_per_second']} lines/s, "
                          f"{got[name]['seconds']} s in all", flush=True)
                if args.one_pass and filler == "mlm":
                    for name in ("1 worker", "2 workers"):
                        out = tmp / f"out-{tech}-onepass-{name.replace(' ', '_')}.txt"
                        got[f"{name}, one pass"] = g = obfuscate(ROOT, src, out, tech, filler, [*runs[name], "--one-pass"])
                        paths[f"{name}, one pass"] = out
                        print(f"{tech:13s} {filler:6s} {name + ', one pass':14s} warm {g['warm_lines_per_second']} "
                              f"lines/s = {g['warm_lines_per_second'] / got[name]['warm_lines_per_second']:.2f}x "
                              "left to right", flush=True)
                if args.compare and filler == "mlm":
                    modes = {"": [*runs["2 workers"]]} | ({"one_pass_": [*runs["2 workers"], "--one-pass"]}
                                                          if args.one_pass else {})
                    with Worktree(args.compare, tmp / "compare") as tree:
                        for key, extra in modes.items():
                            out = tmp / f"ref-{tech}-{key}.txt"
                            g = obfuscate(tree, src, out, tech, filler, extra)
                            name = "2 workers" + (", one pass" if key else "")
                            ours = got[name]
                            same = out.read_bytes() == paths[name].read_bytes()
                            row_extra[f"{key}ref_w2_lines_s"] = g["warm_lines_per_second"]
                            row_extra[f"{key}x_ref"] = round(ours["warm_lines_per_second"] / g["warm_lines_per_second"], 3)
                            row_extra[f"{key}same_as_ref"] = same
                            print(f"{tech:13s} {filler:6s} 2 workers{', one pass' if key else ''}: ours "
                                  f"{ours['warm_lines_per_second']} lines/s, commit {args.compare} "
                                  f"{g['warm_lines_per_second']} = {row_extra[f'{key}x_ref']:.2f}x; output "
                                  f"{'identical' if same else 'DIFFERS'}", flush=True)
                r1 = got["1 worker"]["warm_lines_per_second"]
                r2 = got["2 workers"]["warm_lines_per_second"]
                row = {"technique": tech, "filler": filler, "lines": n,
                       "w1_lines_s": r1, "w2_lines_s": r2, "scaling_eff": round(r2 / (2 * r1), 3),
                       "w1_seconds": got["1 worker"]["seconds"], "w2_seconds": got["2 workers"]["seconds"],
                       "same_output": all(o == outputs["1 worker"] for o in outputs.values())}
                if "1 worker, one pass" in got:
                    p1, p2 = (got[f"{w}, one pass"]["warm_lines_per_second"] for w in ("1 worker", "2 workers"))
                    row |= {"one_pass_w1_lines_s": p1, "one_pass_w2_lines_s": p2,
                            "one_pass_x_left_to_right": round(p2 / r2, 2)}
                if "ray, 2 actors" in got:
                    g = got["ray, 2 actors"]
                    row |= {"ray_lines_s": g["warm_lines_per_second"], "ray_seconds": g["seconds"],
                            "ray_fixed_s": round(g["seconds"] - n / g["warm_lines_per_second"], 1)}
                row |= row_extra
                if ref and tech == "entityTagger" and filler == "mlm":
                    row["x_reference"] = round(r2 / ref["lines_per_second"], 2)
                rows.append(row)
                write_csv(args.csv, rows)  # after every row: a run cut short keeps what it measured
    print("\n| technique | filler | 1 worker | 2 workers | scaling | Ray, 2 actors | same output |")
    print("|---|---|---:|---:|---:|---:|:---:|")
    for r in rows:
        print(f"| {r['technique']} | {r['filler']} | {r['w1_lines_s']} | {r['w2_lines_s']} | "
              f"{100 * r['scaling_eff']:.0f}% | {r.get('ray_lines_s', '-')} | {'yes' if r['same_output'] else 'NO'} |")
    if ref:
        et = next(r for r in rows if r["technique"] == "entityTagger" and r["filler"] == "mlm")
        print(f"\nentityTagger + MLM Top-K, 2 workers: {et['w2_lines_s']} lines/s = {et['x_reference']}x the reference "
              f"({ref['lines_per_second']:.1f} lines/s, commit {ref['ref']}, same run)")
    print("\nProjected hours (machines like this one, 2 cores each):")
    print("| technique | filler | corpus | 1 machine | 10 machines (Ray) | 100 machines (Ray) |")
    print("|---|---|---|---:|---:|---:|")
    for r in rows:
        for name, lines in (("Fisher 1.16M", FISHER), ("Reddit 30M", REDDIT)):
            one = lines / r["w2_lines_s"] / 3600
            cells = [f"{one:.1f}"]
            for m in (10, 100):
                if "ray_lines_s" in r:
                    cells.append(f"{lines / (m * r['ray_lines_s']) / 3600 + r['ray_fixed_s'] / 3600:.2f}")
                else:
                    cells.append("-")
            print(f"| {r['technique']} | {r['filler']} | {name} | " + " | ".join(cells) + " |")
    print(f"\nwrote {args.csv}")


if __name__ == "__main__":
    main()
