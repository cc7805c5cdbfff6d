"""OUT/checkpoint: what ``--resume`` needs to continue a killed run exactly.

A checkpoint holds the trainable weights, the optimizer state, every random generator
(torch, Python, and the MLM masking generator) and the loop's state (round, step, time
spent, throughput counters), plus the settings that must not change between the run
and its resume. It is written as one folder swapped in atomically (atomic.directory),
so a kill at any moment leaves the previous complete checkpoint.
"""
from __future__ import annotations

import json
import random
from dataclasses import asdict
from pathlib import Path

from recover_core.runtime import atomic
from recover_core.errors import RecoverError
from recover_core.training.lora import trainable

# Settings a checkpoint must share with the run that resumes it (a key an older checkpoint
# lacks is not compared).
RESUME_KEYS = ("model", "from_minilm", "lora_r", "lora_targets", "mode", "rounds", "seed", "batch_size",
               "corpus", "train_file", "max_length", "mask_prob", "max_masks", "init_adapter", "heldout_file")


def _resume_conf(cfg) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else str(v) if isinstance(v, Path) else v)
            for k, v in asdict(cfg).items() if k in RESUME_KEYS}


def save_checkpoint(cfg, model, opt, data, state: dict) -> None:
    """Write OUT/checkpoint; ``data``: the MLMBatches whose masking generator to save, or None."""
    import torch

    with atomic.directory(cfg.out / "checkpoint") as tmp:
        torch.save({n: p.detach() for n, p in trainable(model).items()}, tmp / "trainable.pt")
        torch.save(opt.state_dict(), tmp / "optimizer.pt")
        torch.save({"torch": torch.get_rng_state(), "python": random.getstate(),
                    "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,  # dropout there
                    "masking": data.gen.get_state() if data else None}, tmp / "rng.pt")
        (tmp / "state.json").write_text(json.dumps({**state, "config": _resume_conf(cfg)}, indent=2))


def checkpoint_dir(out: Path) -> Path | None:
    """The complete checkpoint in ``out``, if there is one."""
    ck = out / "checkpoint"
    for folder in (ck, atomic.previous(ck)):  # previous: killed between the two renames
        if (folder / "state.json").exists():
            return folder
    return None


def load_checkpoint(cfg, model, opt) -> tuple[dict, dict]:
    """Restore weights, optimizer and generators; returns (loop state, saved generators)."""
    import torch

    ck = checkpoint_dir(cfg.out)
    if ck is None:
        raise RecoverError(f"--resume: no checkpoint in {cfg.out}.")
    state = json.loads((ck / "state.json").read_text())
    conf = _resume_conf(cfg)
    saved = state["config"]
    changed = [k for k in RESUME_KEYS if k in saved and saved[k] != conf.get(k)]
    if changed:
        was = ", ".join(f"{k}={saved.get(k)!r}" for k in changed)
        raise RecoverError(f"--resume: the checkpoint was made with other settings ({was}).")
    weights = torch.load(ck / "trainable.pt", weights_only=True)
    params = trainable(model)
    if set(weights) != set(params):
        raise RecoverError(f"--resume: the checkpoint in {cfg.out} does not fit this model.")
    with torch.no_grad():
        for n, p in params.items():
            p.copy_(weights[n])
    opt.load_state_dict(torch.load(ck / "optimizer.pt", weights_only=True))
    rng = torch.load(ck / "rng.pt", weights_only=False)
    torch.set_rng_state(rng["torch"])
    if rng.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    random.setstate(rng["python"])
    return state, rng
