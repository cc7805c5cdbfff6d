"""The training loop both fine-tuning commands share: schedule, step, time budget, resume.

finetune-mlm and finetune-llm differ in their model, data and loss, not in how they
train: AdamW with linear warmup and a linear decay to zero at the end of the budget
(steps, or ``--minutes`` of wall time, whichever runs out first), gradient clipping,
optional bfloat16 autocast, a metrics record per step, held-out evaluations and
checkpoints every so many steps. ``train_round`` is that loop; the commands (mlm.py,
llm.py) hand it their batches, loss and evaluation. Everything it does depends only on
the step number and the saved generators, so a resumed run repeats an uninterrupted one.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from recover_core.errors import RecoverError
from recover_core.runtime import env
from recover_core.training.checkpoints import checkpoint_dir
from recover_core.training.config import DEFAULT_STEPS
from recover_core.training.log import RunLog

if TYPE_CHECKING:
    import torch


def resolve_device(name: str) -> str:
    """"auto" becomes "cuda" where PyTorch sees a GPU, else "cpu"; a GPU asked for by name
    must be there."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return name
    if not name.startswith("cuda"):
        raise RecoverError(f"--device must be auto, cpu, cuda or cuda:N, not {name!r}.")
    if not torch.cuda.is_available():
        raise RecoverError(f"--device {name}: PyTorch sees no CUDA GPU here; use --device cpu (or auto).")
    return name


def start_run(cfg) -> RunLog:
    """What every fine-tuning command does first: threads, the device, refuse to overwrite
    a checkpoint without --resume, the output folder and its metrics log."""
    import torch

    cfg.out = Path(cfg.out)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    cfg.device = resolve_device(cfg.device)
    if not cfg.resume and checkpoint_dir(cfg.out):
        raise RecoverError(f"{cfg.out} already has a checkpoint: add --resume to continue it, or pick another --out.")
    cfg.out.mkdir(parents=True, exist_ok=True)
    return RunLog(cfg.out / "metrics.jsonl")


def new_state(cfg) -> dict:
    """The loop's state, saved in every checkpoint. round_seconds: wall time of the current
    round (the --minutes budget); seconds: of the completed rounds; train_seconds:
    optimizer steps only (the throughput figures)."""
    return {"round": 1, "step": 0, "round_seconds": 0.0, "seconds": 0.0, "train_seconds": 0.0, "tokens": 0,
            "steps_done": 0, "eval_before": None, "command": cfg.command, "resumed_with": []}


def max_steps(cfg) -> int | None:
    """Steps per round; None: until the --minutes budget is spent."""
    if cfg.steps is not None:
        return cfg.steps
    return None if cfg.minutes else DEFAULT_STEPS


def lr_at(cfg, base_lr: float, step: int, progress: float) -> float:
    """Linear warmup, then linear decay to zero at the end of the budget (steps or time,
    whichever runs out first: with --minutes the decay follows the clock)."""
    steps = max_steps(cfg)
    warm = min(cfg.warmup_steps, max(1, steps // 10)) if steps else max(1, cfg.warmup_steps)
    return base_lr * min(1.0, (step + 1) / warm) * max(0.0, 1.0 - progress)


def set_lr(cfg, opt, base_lr: float, step: int, elapsed: float, budget: float | None, steps: int | None) -> float:
    """The scheduled learning rate for this step (steps or clock, whichever is further on)."""
    progress = max(step / steps if steps else 0.0, elapsed / budget if budget else 0.0)
    lr = lr_at(cfg, base_lr, step, progress)
    for g in opt.param_groups:
        g["lr"] = lr
    return lr


def train_step(cfg, opt, params, state: dict, attn, loss_fn) -> "torch.Tensor":
    """One optimizer step of either fine-tuning command, counted in ``state``."""
    import torch

    t_step = time.time()

    gpu = cfg.device != "cpu"  # GPUs have native bfloat16; a CPU only where env says so
    with torch.autocast("cuda" if gpu else "cpu", dtype=torch.bfloat16,
                        enabled=cfg.bf16 if gpu else env.bf16_autocast(cfg.bf16)):  # weights stay fp32
        loss = loss_fn()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    state["train_seconds"] += time.time() - t_step  # throughput without evaluations and saves
    state["step"] += 1
    state["steps_done"] += 1
    state["tokens"] += int(attn.sum())
    return loss


def train_round(cfg, state: dict, log: RunLog, *, opt, params, base_lr: float, budget: float | None, batches,
                loss_fn: Callable, evaluate: Callable[[], tuple[str, Any, str]], save: Callable[[], None],
                desc: str, smoothing: float) -> tuple[bool, float]:
    """Train from state["step"] until the round's steps or time budget (seconds) are spent.

    ``batches.batch(step)`` gives (ids, attention, labels); ``loss_fn(ids, attn, labels)``
    the loss; ``evaluate()`` (every cfg.eval_every steps) a (metrics key, value, text for
    the progress line); ``save()`` writes the checkpoint (every cfg.save_every steps).
    ``smoothing``: of the loss shown on the progress bar. Returns (stopped by
    cfg.stop_after, wall seconds of this round so far)."""
    from tqdm import tqdm

    t_start, secs_start = time.time(), state["round_seconds"]
    steps = max_steps(cfg)
    bar = tqdm(total=steps, initial=state["step"], desc=desc, unit="step", disable=cfg.quiet)
    ema = None
    while steps is None or state["step"] < steps:
        elapsed = secs_start + time.time() - t_start
        if budget is not None and elapsed >= budget:
            break
        lr = set_lr(cfg, opt, base_lr, state["step"], elapsed, budget, steps)
        ids, attn, labels = (t.to(cfg.device) for t in batches.batch(state["step"]))  # built on the CPU
        loss = train_step(cfg, opt, params, state, attn, lambda: loss_fn(ids, attn, labels))
        ema = loss.item() if ema is None else (1 - smoothing) * ema + smoothing * loss.item()
        bar.update(1)
        bar.set_postfix(loss=f"{ema:.3f}", lr=f"{lr:.1e}")
        rec: dict[str, Any] = {"round": state["round"], "step": state["step"], "loss": round(loss.item(), 4),
                               "lr": lr}
        if cfg.eval_every and state["step"] % cfg.eval_every == 0:
            key, value, text = evaluate()
            rec[key] = value
            bar.write(f"step {state['step']}: loss {ema:.3f}, {text}", file=sys.stderr)
        log.write(rec)
        stop = cfg.stop_after is not None and state["step"] >= cfg.stop_after
        if state["step"] % cfg.save_every == 0 or stop:
            state["round_seconds"] = secs_start + time.time() - t_start
            save()
        if stop:
            bar.close()
            log.say(f"stopped at step {state['step']} (checkpointed); continue with --resume")
            return True, state["round_seconds"]
    bar.close()
    return False, secs_start + time.time() - t_start
