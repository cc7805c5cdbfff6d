"""One evaluation for every filler: held-out masked-word top-1 and top-10 on the same items.

An item is a held-out sentence (training.evaluate.heldout_sentences: news, wiki, fortunes and
scripture in equal numbers) with one content word replaced by [MASK]. Content words
only: every filler refuses function words as substitutes (candidates.acceptable), so
"the" could never be a hit. A hit compares lower-cased words. Each filler gives its
candidate list through the normal fill() call, with no type check and no keep-list.

    python -m recover_core evaluate-fillers --items 200
"""
from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass
from typing import Sequence

from recover_core.errors import RecoverError

DEFAULT_FILLERS = ("mlm:minilm-mlm", "infill:smollm2-135m", "instruct:smollm2-fill")


@dataclass(frozen=True)
class Item:
    masked: str
    gold: str  # lower case


def items(sentences: Sequence[str], n: int, seed: int = 0) -> list[Item]:
    """Up to n items, one per sentence, chosen and masked by a seeded hash (the same on
    every machine, for every filler)."""
    from recover_core.data import lexicons
    from recover_core.filling.candidates import ALPHA_RE
    from recover_core.training.examples import word_core

    order = sorted(set(sentences), key=lambda s: hashlib.sha1(f"{seed}:{s}".encode()).hexdigest())
    out: list[Item] = []
    for s in order:
        if len(out) >= n:
            break
        tokens = s.split(" ")
        spots = []
        for i, t in enumerate(tokens):
            a, b = word_core(t)
            w = t[a:b]
            if len(w) >= 2 and ALPHA_RE.match(w) and w.lower() not in lexicons.FUNCTION_WORDS:
                spots.append((i, a, b))
        if not spots:
            continue
        i, a, b = spots[int(hashlib.sha1(f"{seed}:pos:{s}".encode()).hexdigest(), 16) % len(spots)]
        gold = tokens[i][a:b]
        tokens[i] = tokens[i][:a] + "[MASK]" + tokens[i][b:]
        out.append(Item(" ".join(tokens), gold.lower()))
    return out


def evaluate_filler(filler, its: Sequence[Item], k: int = 10, batch_size: int = 16, progress: bool = True) -> dict:
    """top-1 / top-10 share of items whose gold word is the best / among the best k."""
    from tqdm import tqdm

    from recover_core.filling.base import MaskInput

    hits1 = hitsk = fallbacks = 0
    if getattr(filler, "beams", k) < k:  # the instruct filler's candidates are its beams: give it k
        filler.beams = k
    t0 = time.time()
    with tqdm(total=len(its), desc=f"{filler.name}:{filler.model_name}", unit="item", disable=not progress,
              file=sys.stderr) as bar:
        for b in range(0, len(its), batch_size):
            chunk = its[b : b + batch_size]
            filled = filler.fill([MaskInput.parse(it.masked) for it in chunk], method="top1", k=k, seed=0)
            for it, f in zip(chunk, filled):
                words = [c.word.lower() for c in f.fills[0].candidates] if f.fills else []
                hits1 += bool(words) and words[0] == it.gold
                hitsk += it.gold in words[:k]
                fallbacks += f.fallback is not None
            bar.update(len(chunk))
    n = max(len(its), 1)
    return {"filler": f"{filler.name}:{filler.model_name}", "items": len(its), "top1": hits1 / n,
            f"top{k}": hitsk / n, "fallback_rate": fallbacks / n, "seconds_per_item": (time.time() - t0) / n}


def run(specs: Sequence[str], n_items: int, seed: int = 0, k: int = 10, corpora: Sequence[str] | None = None,
        progress: bool = True, on_row=None) -> list[dict]:
    """Every filler on the same items. A filler that cannot be built or fails is reported
    as skipped, and the others still run; ``on_row`` sees each row as it is finished."""
    from recover_core.filling import KINDS, get_filler
    from recover_core.training.config import EVAL_CORPORA
    from recover_core.training.evaluate import heldout_sentences

    its = items(heldout_sentences(tuple(corpora or EVAL_CORPORA)), n_items, seed)
    out = []
    for spec in specs:
        kind, _, model = spec.partition(":")
        if kind not in KINDS:
            raise RecoverError(f"Unknown filler {kind!r} in {spec!r}. Known: {', '.join(KINDS)} (as kind:model).")
        try:
            row = evaluate_filler(get_filler(kind, model or None), its, k=k, progress=progress)
        except RecoverError as e:
            row = {"filler": spec, "skipped": str(e)}
        except Exception as e:  # noqa: BLE001 - one broken filler must not lose the others' results
            row = {"filler": spec, "skipped": f"failed: {type(e).__name__}: {e}"}
        out.append(row)
        if on_row:
            on_row(row)
    return out


def format_results(rows: Sequence[dict], k: int = 10) -> str:
    lines = [f"{'filler':34s} {'items':>5s} {'top-1':>7s} {f'top-{k}':>7s} {'fallback':>8s} {'s/item':>7s}"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"{r['filler']:34s} skipped: {r['skipped']}")
            continue
        lines.append(f"{r['filler']:34s} {r['items']:5d} {100 * r['top1']:6.1f}% {100 * r[f'top{k}']:6.1f}% "
                     f"{100 * r['fallback_rate']:7.1f}% {r['seconds_per_item']:7.3f}")
    return "\n".join(lines)
