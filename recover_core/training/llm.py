"""LoRA instruction tuning of a causal LM for filling masks (vats2024 §3.2, §4.2.4).

Each training example is a prompt (instruction.prompt): the instruction "Predict the
[MASK] tokens in the given sentence", the input (a sentence with a few words masked)
and, as the response, the original sentence. The loss is on the response only.

Offline the base is SmolLM2-135M-Instruct; any causal LM name or folder works, so a
LLaMA hub id does in a Space. The checkpoint, resume and time-budget machinery is the
one finetune-mlm uses (recover_core/training/loop.py and checkpoints.py).

    python -m recover_core finetune-llm --out ~/.cache/recover/smollm2-fill --minutes 40 --bf16
"""
from __future__ import annotations

import random
from pathlib import Path

from recover_core.errors import RecoverError
from recover_core.training.artifacts import save_causal_adapter
from recover_core.training.checkpoints import load_checkpoint, save_checkpoint
from recover_core.training.config import LLM_LR, LLMConfig
from recover_core.training.evaluate import heldout_loss, heldout_sentences
from recover_core.training.examples import InstructExamples
from recover_core.training.lora import causal_base, prepare_causal, trainable
from recover_core.training.loop import new_state, start_run, train_round
from recover_core.training.model_card import llm_card, run_stats
from recover_core.training.sentences import training_sentences


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

    _check(cfg)
    log = start_run(cfg)
    if not cfg.resume:
        log.path.unlink(missing_ok=True)
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)

    base, tok = causal_base(cfg)
    sents, _ = training_sentences(cfg)
    model = prepare_causal(base, cfg)
    model.train()
    params = list(trainable(model).values())
    base_lr = cfg.lr or LLM_LR
    opt = torch.optim.AdamW(params, lr=base_lr, weight_decay=cfg.weight_decay)
    held = heldout_sentences()[: cfg.eval_items]
    state = new_state(cfg)
    if cfg.resume:
        state, _ = load_checkpoint(cfg, model, opt)
        log.truncate(1, state["step"])
        state["resumed_with"] = state.get("resumed_with", []) + [cfg.command]
        log.say(f"resumed from step {state['step']}")
    else:
        state["eval_before"] = heldout_loss(model, tok, held, cfg)
        log.write({"round": 1, "step": 0, "heldout_loss": state["eval_before"]})
        log.say(f"held-out response loss before training: {state['eval_before']:.3f}")
    data = InstructExamples(sents, tok, cfg)
    log.say(f"{len(sents)} training sentences, {data.batches_per_epoch} batches per epoch")

    def evaluate():
        x = heldout_loss(model, tok, held, cfg)
        return "heldout_loss", x, f"held-out {x:.3f}"

    stopped, seconds = train_round(
        cfg, state, log, opt=opt, params=params, base_lr=base_lr, budget=cfg.minutes * 60 if cfg.minutes else None,
        batches=data, loss_fn=lambda ids, attn, labels: model(input_ids=ids, attention_mask=attn, labels=labels).loss,
        evaluate=evaluate, save=lambda: save_checkpoint(cfg, model, opt, None, state), desc="finetune-llm",
        smoothing=0.05)
    if stopped:
        return cfg.out / "adapter"
    state["seconds"] = state["round_seconds"] = seconds  # a resume then trains no more
    save_checkpoint(cfg, model, opt, None, state)
    return _finish(cfg, model, tok, held, state, log)


def _finish(cfg: LLMConfig, model, tok, held: list[str], state: dict, log) -> Path:
    after = heldout_loss(model, tok, held, cfg)
    log.write({"round": 1, "step": "final", "heldout_loss": after})
    stats = run_stats(state)
    save_causal_adapter(model, cfg.out / "adapter", cfg, llm_card(cfg, state, after, stats, len(held)))
    log.say(f"held-out response loss after training: {after:.3f}")
    log.say(f"training: {stats['steps']} steps in {stats['seconds']} s; {stats['steps_per_s']} steps/s, "
            f"{stats['tokens_per_s']} tokens/s; peak memory {stats['peak_rss_mb']} MB")
    log.say(f"adapter: {cfg.out / 'adapter'}")
    return cfg.out / "adapter"
