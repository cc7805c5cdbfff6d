"""Peak memory of the infill filler's re-ranking (review finding 12), on this machine.

Scores K candidate words for one gap with a long right context, twice on the same
inputs, each in a fresh process: the reference is the former computation (every
candidate in one pass, the full [K, S, V] logits and their log-softmax), measured in
the same run; then the chunked scoring the filler uses now. Peak memory is the
resident set's peak growth during the call, sampled every half millisecond from /proc
(Linux). The ratio is chunked over reference; the scores must agree.

    python bench/infill_memory.py [--k 50] [--right-chars 600] [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def peak_growth(fn):
    """(result, seconds, peak resident growth in bytes) of fn()."""
    base, peak, stop = rss(), [0], threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.0005)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    t0 = time.perf_counter()
    try:
        out = fn()
    finally:
        secs = time.perf_counter() - t0
        stop.set()
        t.join()
    return out, secs, max(peak[0], rss()) - base


def one_pass(filler, words, sep, right, prefix, past, logp0):
    """The former InfillFiller._sentence_scores, verbatim but for its name."""
    import torch

    from recover_core.filling.infill import _repeat

    suffixes = [filler.tok(sep + w + right, add_special_tokens=False)["input_ids"] for w in words]
    S = max(len(x) for x in suffixes)
    ids = torch.full((len(words), S), filler._doc, dtype=torch.long)
    real = torch.zeros((len(words), S), dtype=torch.bool)
    for j, x in enumerate(suffixes):
        ids[j, : len(x)] = torch.tensor(x)
        real[j, : len(x)] = True
    attn = torch.cat([torch.ones(len(words), len(prefix), dtype=torch.long), real.long()], 1)
    out = filler.model(input_ids=ids, past_key_values=_repeat(past, len(words)), attention_mask=attn)
    logp = out.logits.float().log_softmax(-1)
    tok_lp = logp[:, :-1].gather(-1, ids[:, 1:, None])[..., 0]
    return logp0[ids[:, 0]] + (tok_lp * real[:, 1:]).sum(1)


def measure(args) -> dict:
    """One variant in this process: its peak growth, time, and scores."""
    import torch

    from recover_core.data import corpora
    from recover_core.data import lexicons
    from recover_core.filling import infill as I

    torch.set_num_threads(args.threads)
    filler = I.InfillFiller(args.model)
    words = [w.title() for w in sorted(lexicons.place_names())[: args.k]]
    right = ", where"
    for s in corpora.news():
        if len(right) >= args.right_chars:
            break
        right += " " + s
    right = right[: args.right_chars]
    prefix = [filler._doc] + filler.tok("Last spring she moved to", add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        out = filler.model(input_ids=torch.tensor([prefix]), use_cache=True)
        logp0, past = out.logits[0, -1].float().log_softmax(-1), out.past_key_values
        fn = (lambda: one_pass(filler, words, " ", right, prefix, past, logp0)) if args.variant == "one-pass" else (
            lambda: filler._sentence_scores(words, " ", right, prefix, past, logp0))
        scores, secs, grew = peak_growth(fn)
    S = max(len(filler.tok(" " + w + right, add_special_tokens=False)["input_ids"]) for w in words)
    return {"scores": scores.tolist(), "seconds": secs, "peak": grew, "K": len(words), "S": S,
            "V": len(filler.tok), "chunk": I._score_chunk(S, len(filler.tok)), "budget": I.SCORE_BUDGET}


def main() -> None:
    import json
    import subprocess

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--k", type=int, default=50, help="candidates scored (the filler scores max(16, K))")
    ap.add_argument("--right-chars", type=int, default=600, help="length of the right context")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--variant", choices=["one-pass", "chunked"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.variant:
        print(json.dumps(measure(args)))
        return
    # Each variant in a fresh process: memory freed by one would otherwise hide the other's growth.
    runs = {}
    for variant in ("one-pass", "chunked"):
        cmd = [sys.executable, __file__, "--variant", variant, "--model", args.model, "--k", str(args.k),
               "--right-chars", str(args.right_chars), "--threads", str(args.threads)]
        p = subprocess.run(cmd, capture_output=True, text=True, check=True)
        runs[variant] = json.loads(p.stdout.strip().splitlines()[-1])
    ref, new = runs["one-pass"], runs["chunked"]
    print(f"{args.model}: K={ref['K']} candidates, S={ref['S']} tokens, V={ref['V']:,}; {args.threads} threads; "
          f"chunk={new['chunk']} candidates (SCORE_BUDGET={new['budget']:,}); ratio = chunked over one pass")
    print(f"{'scoring':10s} {'peak MB':>9s} {'seconds':>8s}")
    for name, r in runs.items():
        print(f"{name:10s} {r['peak'] / 2**20:9.0f} {r['seconds']:8.2f}")
    print(f"{'ratio':10s} {new['peak'] / max(ref['peak'], 1):9.3f} {new['seconds'] / ref['seconds']:8.2f}")
    diff = max(abs(a - b) for a, b in zip(new["scores"], ref["scores"]))
    same = sorted(range(ref["K"]), key=ref["scores"].__getitem__) == sorted(range(new["K"]), key=new["scores"].__getitem__)
    print(f"largest score difference {diff:.2e}; same ranking: {same}")


if __name__ == "__main__":
    main()
