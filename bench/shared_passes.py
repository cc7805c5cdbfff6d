"""Shared passes (issue 77): N users' causal columns side by side against one after another,
in this process, on the real models, as app.py runs them (``threads.serve``: the forward passes
on the models thread; each user's columns on a thread of its own).

* alone        each user's causal columns (infill and the LoRA-tuned LLM, Top-1 and Top-K),
               one user after another: their words, and the seconds each took; the last of
               them done is what the N-th user waited when requests took turns (before);
* shared       the same N users at the same moment: the words again (they must be the same,
               word for word and candidate for candidate), the last done, and how many calls
               shared a pass (``SharedPasses.stats``).

Users fill different sentences (the demo sentence and app.py's examples) under their own seeds,
so their passes differ in length, as real users' do. Ratio: shared last done / alone last done,
both measured in this run; the 1-minute load is printed before each (a shared machine).

Run:  python bench/shared_passes.py [--users 4] [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

SENTENCE = ("Maria Kowalski flew from Chicago to Lagos last week to meet Chidi Okonkwo, who works for Shell "
            "and lives with his sister Ngozi in Abuja.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    import app
    from recover_core.models import bundles
    from recover_core.explorer import sentence as explore
    from recover_core.runtime import threads
    from recover_core.filling import get_filler, scheduler

    threads.serve()
    # One key for every request, so that the words compare (the app draws a fresh one per
    # request); the fillers' candidates do not depend on it.
    explore.new_key = lambda: b"\x07" * 32
    models = {k: explore.default_model(k) for k in ("mlm", "infill", "instruct")}
    sentences = [SENTENCE] + [e[0] for e in app.EXAMPLES]
    inputs = [(sentences[i % len(sentences)], 100 + i) for i in range(args.users)]

    def columns(sentence: str, seed: int) -> tuple[float, list]:
        t0 = time.perf_counter()
        for _, _, _, cols in explore.fill_steps(sentence, "entityTagger", 10000, "mask", 10, seed, models,
                                                app.CAUSAL_COLUMNS):
            pass
        bundles.forget_request_state()
        # The words: each column's text, and its candidates with the one chosen (scores apart:
        # they may differ in the last float bits, and are compared to 4 places below).
        return time.perf_counter() - t0, [(c[0]["text"], c[2][["mask", "label", "candidate", "chosen"]].values.tolist(),
                                           c[2]["score"].tolist()) for _, c in sorted(cols.items())]

    # Before: a request's causal columns ran whole on the models thread, requests in turn.
    columns_before = threads.on_models_thread(lambda *a: iter([columns(*a)]))
    columns(SENTENCE, 0)  # loads both causal fillers
    passes = [scheduler.share(get_filler(k, models[k]).model) for k in ("infill", "instruct")]
    print(f"users: {args.users}, sentences of {[len(s.split()) for s, _ in inputs]} words; models {models}; "
          f"{os.cpu_count()} cores")
    ratios, same = [], True
    for r in range(args.rounds):
        load = os.getloadavg()[0]
        alone, words = [], []
        t0 = time.perf_counter()
        for s, seed in inputs:
            secs, w = next(columns_before(s, seed))
            alone.append(secs)
            words.append(w)
        turns = time.perf_counter() - t0
        one_new = columns(*inputs[0])  # one user alone as now: its own thread, the passes on the models thread
        one_same = [c[:2] for c in one_new[1]] == [c[:2] for c in words[0]]
        same = same and one_same
        print(f"round {r + 1}: user 0 alone, before {alone[0]:.2f} s, now {one_new[0]:.2f} s, ratio "
              f"{one_new[0] / alone[0]:.2f} (same words: {one_same})", flush=True)
        load2 = os.getloadavg()[0]
        before = [dict(p.stats) for p in passes]
        got: list = [None] * args.users
        done: list = [0.0] * args.users
        start = threading.Barrier(args.users)

        def user(i: int) -> None:
            start.wait()
            t = time.perf_counter()
            got[i] = columns(*inputs[i])[1]
            done[i] = time.perf_counter() - t

        users = [threading.Thread(target=user, args=(i,)) for i in range(args.users)]
        for t in users:
            t.start()
        for t in users:
            t.join()
        shared_last = max(done)
        stats = [{k: p.stats[k] - b.get(k, 0) for k in ("calls", "passes", "shared", "shared_passes")} for p, b in zip(passes, before)]
        same_words = [[c[:2] for c in g] for g in got] == [[c[:2] for c in w] for w in words]
        gap = max((abs(a - b) for g, w in zip(got, words) for cg, cw in zip(g, w) for a, b in zip(cg[2], cw[2])
                   if a == a and b == b), default=0.0)  # NaN: a row of the rules' own word, no score
        same = same and same_words
        ratios.append(shared_last / turns)
        print(f"round {r + 1}: alone, in turn (load {load:.1f}): each {', '.join(f'{x:.1f}' for x in alone)} s, "
              f"last done {turns:.1f} s | shared (load {load2:.1f}): last done {shared_last:.1f} s "
              f"(each {', '.join(f'{x:.1f}' for x in done)}) | ratio {shared_last / turns:.2f} | same words: "
              f"{same_words} (scores differ by at most {gap:.1e}) | calls/passes/shared calls: infill {stats[0]}, instruct {stats[1]}", flush=True)
        for i, (a, b) in enumerate(zip(words, got)):
            if [c[:2] for c in a] != [c[:2] for c in b]:
                print(f"  user {i} differs: alone {[c[:2] for c in a]}\n  shared {[c[:2] for c in b]}")
    print(f"p50 ratio shared/in turn {statistics.median(ratios):.2f}; every word the same: {same} "
          f"(1-min load now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
