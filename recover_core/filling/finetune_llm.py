"""LoRA instruction tuning of a causal LM for filling masks (vats2024 §3.2, §4.2.4).

Each training example is a prompt (instruction.prompt): the instruction "Predict the
[MASK] tokens in the given sentence", the input (a sentence with a few words masked)
and, as the response, the original sentence. The loss is on the response only.

Offline the base is SmolLM2-135M-Instruct; any causal LM name or folder works, so a
LLaMA hub id does in a Space. The checkpoint, resume and time-budget machinery is the
MLM command's (finetune.py).

    python -m recover_core finetune-llm --out ~/.cache/recover/smollm2-fill --minutes 40 --bf16
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from recover_core.errors import RecoverError
from recover_core.filling import finetune as ft
from recover_core.filling.instruct import prompt

DEFAULT_LR = 2e-4  # alpaca-lora's, for LoRA on a causal LM


@dataclass
class LLMConfig:
    out: Path
    model: str = "smollm2-135m"  # a causal LM bundle name or local folder
    corpus: str = ",".join(ft.EVAL_CORPORA)
    train_file: Path | None = None  # or one sentence per line
    lora_r: int = 16
    lora_alpha: float | None = None  # default 2 * r
    lora_dropout: float = 0.05
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")
    steps: int | None = None  # None: ft.DEFAULT_STEPS, or as many as --minutes allow
    minutes: float | None = None
    batch_size: int = 8
    lr: float | None = None
    warmup_steps: int = 50
    weight_decay: float = 0.0
    max_length: int = 256  # tokens of prompt + response
    bf16: bool = False
    mask_prob: float = 0.15  # share of a sentence's words masked: at least 1, at most max_masks
    max_masks: int = 4
    seed: int = 0
    resume: bool = False
    eval_every: int = 200  # steps between held-out losses; 0 = only before and after
    eval_items: int = 64  # held-out prompts for the loss
    save_every: int = 100
    threads: int | None = None
    quiet: bool = False
    stop_after: int | None = None  # for tests: stop (checkpointed) here, as a kill would
    command: str = ""
    mode: str = "clean"  # what ft._clean_and_masked reads: the LLM trains on mask-free sentences
    exclude_heldout: bool = True  # ft._clean_and_masked too: held-out sentences never train
    corpora_used: list[str] = field(default_factory=list, repr=False)
    rounds: int = 1


# --- examples -----------------------------------------------------------------------------

def word_core(word: str) -> tuple[int, int]:
    """[start, end) of a whitespace token without its surrounding punctuation."""
    s, e = 0, len(word)
    while s < e and not word[s].isalnum():
        s += 1
    while e > s and not word[e - 1].isalnum():
        e -= 1
    return s, e


def mask_example(sentence: str, rng: random.Random, mask_prob: float = 0.15, max_masks: int = 4) -> str:
    """The sentence with a few words masked, as the masking techniques would mark them.

    Capitalised words inside the sentence and content words are chosen more often than
    function words, since those are what the techniques mask. Half of the sentences use
    class markers ([PERSON], [GPE], [NUMBER]) where a name list or digits say so."""
    from recover_core import lexicons

    tokens = sentence.split(" ")
    spans = [(i, *word_core(t)) for i, t in enumerate(tokens)]
    spans = [(i, s, e) for i, s, e in spans if e > s and tokens[i][s:e].replace("'", "").isalnum()]
    if not spans:
        return sentence
    weights = []
    for i, s, e in spans:
        w = tokens[i][s:e]
        weights.append(6.0 if i > 0 and w[:1].isupper() else 1.0 if w.lower() in lexicons.FUNCTION_WORDS else 3.0)
    n = min(max_masks, len(spans), max(1, round(mask_prob * len(tokens))))
    chosen: set[int] = set()
    while len(chosen) < n:
        chosen.add(rng.choices(range(len(spans)), weights=weights)[0])
    classes = rng.random() < 0.5
    for j in chosen:
        i, s, e = spans[j]
        w = tokens[i][s:e]
        marker = "[MASK]"
        if classes:
            if w.isdigit():
                marker = "[NUMBER]"
            elif w[:1].isupper() and w.lower() in lexicons.first_names():
                marker = "[PERSON]"
            elif w[:1].isupper() and w.lower() in lexicons.place_names():
                marker = "[GPE]"
        tokens[i] = tokens[i][:s] + marker + tokens[i][e:]
    return " ".join(tokens)


def encode(tok, masked: str, original: str, max_length: int) -> tuple[list[int], list[int]]:
    """(input ids, labels): the prompt's labels are -100, the response's are its ids + EOS."""
    p = tok(prompt(masked), add_special_tokens=False)["input_ids"]
    r = tok(original, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    ids = (p + r)[:max_length]
    labels = ([-100] * len(p) + r)[:max_length]
    return ids, labels


class _Examples:
    """Batch i of an epoch, masks included, depends only on (seed, epoch, i): a resumed run
    sees the same batches without saving a generator."""

    def __init__(self, sentences: list[str], tok, cfg: LLMConfig):
        if not sentences:
            raise RecoverError("No training sentences.")
        self.sents, self.tok, self.cfg = sentences, tok, cfg
        self.batches_per_epoch = -(-len(sentences) // cfg.batch_size)

    def batch(self, step: int):
        epoch, j = divmod(step, self.batches_per_epoch)
        order = list(range(len(self.sents)))
        random.Random(f"{self.cfg.seed}:{epoch}").shuffle(order)
        rows = order[j * self.cfg.batch_size : (j + 1) * self.cfg.batch_size]
        return self.collate([self.example(r, epoch) for r in rows])

    def example(self, row: int, epoch: int) -> tuple[list[int], list[int]]:
        s = self.sents[row]
        masked = mask_example(s, random.Random(f"{self.cfg.seed}:{epoch}:{row}"), self.cfg.mask_prob,
                              self.cfg.max_masks)
        return encode(self.tok, masked, s, self.cfg.max_length)

    def collate(self, examples: Sequence[tuple[list[int], list[int]]]):
        import torch

        n = max(len(ids) for ids, _ in examples)
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
        ids = torch.full((len(examples), n), pad)  # [B, T], right-padded
        labels = torch.full((len(examples), n), -100)
        attn = torch.zeros((len(examples), n), dtype=torch.long)
        for b, (x, y) in enumerate(examples):
            ids[b, : len(x)], labels[b, : len(y)], attn[b, : len(x)] = torch.tensor(x), torch.tensor(y), 1
        return ids, attn, labels


def heldout_loss(model, tok, sentences: Sequence[str], cfg: LLMConfig) -> float:
    """Mean response cross-entropy over held-out prompts (masks drawn with a fixed seed)."""
    import torch

    ex = _Examples(list(sentences), tok, cfg)
    total, n = 0.0, 0
    model.eval()
    with torch.inference_mode():
        for b in range(0, len(sentences), cfg.batch_size):
            ids, attn, labels = ex.collate([ex.example(r, -1) for r in range(b, min(b + cfg.batch_size, len(sentences)))])
            logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()  # [B, T-1, V]
            tgt = labels[:, 1:]
            loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tgt, ignore_index=-100, reduction="sum")
            total, n = total + loss.item(), n + int((tgt != -100).sum())
    model.train()
    return total / max(n, 1)


# --- model ----------------------------------------------------------------------------------

def _base(cfg: LLMConfig):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recover_core import bundles

    b = bundles.get(cfg.model)
    if b.kind != "causal":
        raise RecoverError(f"{cfg.model!r} is a {b.kind} model; finetune-llm needs a causal LM.")
    src = b.source()
    return AutoModelForCausalLM.from_pretrained(src), AutoTokenizer.from_pretrained(src)


def _prepare(model, cfg: LLMConfig):
    from peft import LoraConfig, get_peft_model

    targets = ft._lora_modules(model, cfg.lora_targets)
    lcfg = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha or 2 * cfg.lora_r, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, lcfg)


def _check(cfg: LLMConfig) -> None:
    if cfg.lora_r < 1:
        raise RecoverError("--lora-r must be at least 1 (finetune-llm trains LoRA adapters only).")
    if (cfg.steps is not None and cfg.steps < 1) or cfg.batch_size < 1 or cfg.max_masks < 1:
        raise RecoverError("--steps, --batch-size and --max-masks must be at least 1.")
    if cfg.minutes is not None and cfg.minutes <= 0:
        raise RecoverError("--minutes must be positive.")
    if not 0 < cfg.mask_prob < 1:
        raise RecoverError("--mask-prob must be between 0 and 1.")


def finetune_llm(cfg: LLMConfig) -> Path:
    """Train, checkpoint, evaluate and save the adapter; returns OUT/adapter."""
    import torch
    from tqdm import tqdm

    _check(cfg)
    log = ft.start_run(cfg)
    if not cfg.resume:
        log.path.unlink(missing_ok=True)
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)

    base, tok = _base(cfg)
    sents, _ = ft._clean_and_masked(cfg)
    model = _prepare(base, cfg)
    model.train()
    params = list(ft._trainable(model).values())
    base_lr = cfg.lr or DEFAULT_LR
    opt = torch.optim.AdamW(params, lr=base_lr, weight_decay=cfg.weight_decay)
    held = ft.heldout_sentences()[: cfg.eval_items]
    state = {"round": 1, "step": 0, "round_seconds": 0.0, "seconds": 0.0, "train_seconds": 0.0, "tokens": 0,
             "steps_done": 0, "eval_before": None, "command": cfg.command, "resumed_with": []}
    if cfg.resume:
        state, _ = ft._load_checkpoint(cfg, model, opt)
        log.truncate(1, state["step"])
        state["resumed_with"] = state.get("resumed_with", []) + [cfg.command]
        log.say(f"resumed from step {state['step']}")
    else:
        state["eval_before"] = heldout_loss(model, tok, held, cfg)
        log.write({"round": 1, "step": 0, "heldout_loss": state["eval_before"]})
        log.say(f"held-out response loss before training: {state['eval_before']:.3f}")
    data = _Examples(sents, tok, cfg)
    log.say(f"{len(sents)} training sentences, {data.batches_per_epoch} batches per epoch")
    budget = cfg.minutes * 60 if cfg.minutes else None
    max_steps = ft._max_steps(cfg)
    t_start, secs_start = time.time(), state["round_seconds"]
    bar = tqdm(total=max_steps, initial=state["step"], desc="finetune-llm", unit="step", disable=cfg.quiet)
    ema = None
    while max_steps is None or state["step"] < max_steps:
        elapsed = secs_start + time.time() - t_start
        if budget is not None and elapsed >= budget:
            break
        lr = ft.set_lr(cfg, opt, base_lr, state["step"], elapsed, budget, max_steps)
        ids, attn, labels = data.batch(state["step"])
        loss = ft.train_step(cfg, opt, params, state, attn,
                             lambda: model(input_ids=ids, attention_mask=attn, labels=labels).loss)
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        bar.update(1)
        bar.set_postfix(loss=f"{ema:.3f}", lr=f"{lr:.1e}")
        rec: dict[str, Any] = {"round": 1, "step": state["step"], "loss": round(loss.item(), 4), "lr": lr}
        if cfg.eval_every and state["step"] % cfg.eval_every == 0:
            rec["heldout_loss"] = heldout_loss(model, tok, held, cfg)
            bar.write(f"step {state['step']}: loss {ema:.3f}, held-out {rec['heldout_loss']:.3f}", file=sys.stderr)
        log.write(rec)
        stop = cfg.stop_after is not None and state["step"] >= cfg.stop_after
        if state["step"] % cfg.save_every == 0 or stop:
            state["round_seconds"] = secs_start + time.time() - t_start
            ft._save_checkpoint(cfg, model, opt, None, state)
        if stop:
            bar.close()
            log.say(f"stopped at step {state['step']} (checkpointed); continue with --resume")
            return cfg.out / "adapter"
    bar.close()
    state["seconds"] = state["round_seconds"] = secs_start + time.time() - t_start  # a resume then trains no more
    ft._save_checkpoint(cfg, model, opt, None, state)
    return _finish(cfg, model, tok, held, state, log)


def _finish(cfg: LLMConfig, model, tok, held: list[str], state: dict, log) -> Path:
    after = heldout_loss(model, tok, held, cfg)
    log.write({"round": 1, "step": "final", "heldout_loss": after})
    secs = max(state["train_seconds"], 1e-9)
    stats = {"steps": state["steps_done"], "seconds": round(state["seconds"], 1),
             "steps_per_s": round(state["steps_done"] / secs, 3), "tokens_per_s": round(state["tokens"] / secs, 1),
             "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
    card = _model_card(cfg, state, after, stats)

    def write(tmp: Path) -> None:
        model.save_pretrained(tmp)  # adapter_config.json + adapter_model.safetensors
        (tmp / "README.md").unlink(missing_ok=True)  # peft's empty template; model_card.md is the card
        (tmp / "artifact.json").write_text(json.dumps({"base": cfg.model, "kind": "instruct",
                                                       "lora_r": cfg.lora_r, "lora_targets": list(cfg.lora_targets)},
                                                      indent=2))
        (tmp / "model_card.md").write_text(card, encoding="utf-8")

    ft._atomic_dir(cfg.out / "adapter", write)
    log.say(f"held-out response loss after training: {after:.3f}")
    log.say(f"training: {stats['steps']} steps in {stats['seconds']} s; {stats['steps_per_s']} steps/s, "
            f"{stats['tokens_per_s']} tokens/s; peak memory {stats['peak_rss_mb']} MB")
    log.say(f"adapter: {cfg.out / 'adapter'}")
    return cfg.out / "adapter"


def _model_card(cfg: LLMConfig, state: dict, after: float, stats: dict) -> str:
    before = state.get("eval_before")
    before_s = f"{before:.3f}" if isinstance(before, float) else "–"
    budget = f"; time budget {cfg.minutes} min" if cfg.minutes else ""
    resumed = "".join(f"\ncontinued with:\n\n    {c}\n" for c in state.get("resumed_with", []))
    return f"""# Instruction-tuned filler trained by recover (vats2024 §4.2.4)

- base: {cfg.model} (causal LM)
- method: LoRA r={cfg.lora_r}, alpha={cfg.lora_alpha or 2 * cfg.lora_r}, on {', '.join(cfg.lora_targets)}
- prompt: "### Instruction: Predict the [MASK] tokens in the given sentence." / "### Input:" the sentence
  with {cfg.mask_prob:.0%} of its words masked (1 to {cfg.max_masks}; half of the sentences with class
  markers [PERSON] [GPE] [NUMBER]) / "### Response:" the original sentence; loss on the response only
- data: {', '.join(cfg.corpora_used)}; held-out sentences (hash split) excluded
- trained: {stats['steps']} steps, batch {cfg.batch_size}, {'bfloat16 autocast' if cfg.bf16 else 'float32'},
  lr {cfg.lr or DEFAULT_LR}, seed {cfg.seed}{budget}
- time: {stats['seconds']} s ({stats['steps_per_s']} steps/s, {stats['tokens_per_s']} tokens/s, peak memory {stats['peak_rss_mb']} MB)
- held-out response loss ({len(ft.heldout_sentences()[: cfg.eval_items])} prompts): before {before_s}, after {after:.3f}
- date: {time.strftime('%Y-%m-%d %H:%M')}

Accuracy on held-out masked words, beside every other filler: `python -m recover_core evaluate-fillers`
(README, "Fillers compared").

## Loading

    recover_core.filling.get_filler("instruct", "{cfg.out / 'adapter'}")

## Command

    {state.get('command') or '(called from Python)'}
{resumed}"""


def load_adapter(folder: Path | str):
    """(model, tokenizer): the base causal LM with the adapter merged in."""
    from peft import PeftModel

    folder = Path(folder)
    meta = json.loads((folder / "artifact.json").read_text())
    base, tok = _base(LLMConfig(out=folder, model=meta["base"]))  # the base by its bundle name
    return PeftModel.from_pretrained(base, str(folder)).merge_and_unload().eval(), tok


# --- command line ------------------------------------------------------------------------------

def cmd_finetune(args) -> None:
    cfg = LLMConfig(
        out=args.out, model=args.model, corpus=args.corpus, train_file=args.train_file, lora_r=args.lora_r,
        lora_alpha=args.lora_alpha, lora_targets=tuple(t.strip() for t in args.lora_targets.split(",") if t.strip()),
        steps=args.steps, minutes=args.minutes, batch_size=args.batch_size, lr=args.lr,
        max_length=args.max_length, bf16=args.bf16, seed=args.seed, resume=args.resume, eval_every=args.eval_every,
        save_every=args.save_every, threads=args.threads, quiet=args.quiet, command=ft._command_line())
    finetune_llm(cfg)


def add_parser(sub) -> None:
    p = sub.add_parser("finetune-llm", help="LoRA instruction tuning of a causal LM to fill masks (vats2024 §4.2.4)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(fn=cmd_finetune)
    p.add_argument("--model", default="smollm2-135m", help="a causal LM name (see `models`) or a local folder")
    p.add_argument("--corpus", default=",".join(ft.EVAL_CORPORA), help="registered corpora, comma-separated")
    p.add_argument("--train-file", type=Path, default=None, help="instead: sentences, one per line")
    p.add_argument("--lora-r", type=ft._positive, default=16)
    p.add_argument("--lora-alpha", type=float, default=None, help="default 2 * r")
    p.add_argument("--lora-targets", default="q_proj,v_proj", help="module name suffixes, comma-separated")
    p.add_argument("--steps", type=ft._positive, default=None, help=f"default {ft.DEFAULT_STEPS} (or --minutes)")
    p.add_argument("--minutes", type=float, default=None, help="time budget; the learning rate decays with it")
    p.add_argument("--batch-size", type=ft._positive, default=8)
    p.add_argument("--lr", type=float, default=None, help=f"default {DEFAULT_LR}")
    p.add_argument("--max-length", type=ft._positive, default=256)
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast (about 2x faster on AVX512-BF16 CPUs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=ft._positive, default=None)
    p.add_argument("--out", type=Path, required=True, help="output folder (adapter/, checkpoint/)")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--save-every", type=ft._positive, default=100)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--quiet", action="store_true")
