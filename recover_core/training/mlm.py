"""Fine-tuning a masked LM on a corpus (vats2024 §3.2 "Fine-Tuning"), and measuring it.

vats2024 fine-tunes the filling model on the corpus being obfuscated: either on its
sentences that have no mask (``clean``), or on the whole corpus after its masks were
filled by the model itself, Top-1 or Top-K (``filled``), possibly for several rounds
(fill, fine-tune, refill). Both modes are here, fully or with LoRA (peft), for any
local masked LM or registered bundle.

It also builds an MLM where no offline one exists: the MiniLM-L6 encoder that a pip
package ships is a BertModel without MLM head. ``recover_core/models/minilm.py`` adds BERT's head
(decoder tied to the word embeddings, output bias from word frequencies), and
``finetune-mlm --from-minilm`` trains the head plus LoRA on the encoder.

Output folder layout::

    OUT/checkpoint/      the latest checkpoint (trainable weights, optimizer, step, RNG)
    OUT/metrics.jsonl    loss and held-out accuracy, one JSON object per line
    OUT/model/           the final merged model: AutoModelForMaskedLM.from_pretrained(OUT/model)
    OUT/adapter/         LoRA only: adapter + trained head weights (a few MB), see adapters.load_mlm_adapter()
    OUT/round-N/         more than one round: that round's training text and merged model
    OUT/base/            filled mode from MiniLM: the untrained MLM that fills round 1

Every folder is written under a temporary name and renamed when complete, so a killed
run never leaves a half-written model or checkpoint; ``--resume`` continues from
``OUT/checkpoint`` with the same data order, masking and dropout as an uninterrupted run.
"""
from __future__ import annotations

import random
import shutil
from pathlib import Path

from recover_core.errors import RecoverError
from recover_core.training.artifacts import save_mlm_adapter, save_model
from recover_core.training.batches import MLMBatches
from recover_core.training.checkpoints import load_checkpoint, save_checkpoint
from recover_core.training.config import MLM_LR, FinetuneConfig
from recover_core.training.evaluate import evaluate_mlm, format_eval, heldout_for, unwrap
from recover_core.training.log import RunLog
from recover_core.training.lora import load_init_adapter, merged, mlm_base, prepare_mlm, trainable
from recover_core.training.loop import new_state, start_run, train_round
from recover_core.training.model_card import mlm_card, run_stats
from recover_core.training.sentences import filled_texts, training_sentences


def _check(cfg: FinetuneConfig) -> None:
    from recover_core.filling.base import check_method

    if cfg.mode not in ("clean", "filled"):
        raise RecoverError(f"--mode must be clean or filled, not {cfg.mode!r}.")
    check_method(cfg.fill_method)
    if cfg.rounds < 1 or (cfg.steps is not None and cfg.steps < 1) or cfg.batch_size < 1 or cfg.lora_r < 0:
        raise RecoverError("--rounds, --steps and --batch-size must be at least 1, --lora-r at least 0.")
    if cfg.rounds > 1 and cfg.mode != "filled":
        raise RecoverError("--rounds > 1 needs --mode filled (each round refills the masks).")
    if cfg.minutes is not None and cfg.minutes <= 0:
        raise RecoverError("--minutes must be positive.")
    if not 0 < cfg.mask_prob < 1:
        raise RecoverError("--mask-prob must be between 0 and 1.")
    if cfg.eval_every < 0:
        raise RecoverError("--eval-every must be 0 (none) or more.")
    if cfg.from_minilm and cfg.model:
        raise RecoverError("Give either --model or --from-minilm, not both.")
    if cfg.init_adapter is not None and cfg.lora_r == 0:
        raise RecoverError("--init-adapter continues a LoRA adapter; it needs --lora-r above 0.")


def _loss(model, ids, attn, labels):
    """MLM cross-entropy, with the head run only at the masked positions (15% of them):
    the head's [hidden x vocab] product is the largest single cost of a small encoder."""
    import torch.nn.functional as F

    from recover_core.filling.mlm import split_head

    encoder, head = split_head(unwrap(model))
    hidden = encoder(input_ids=ids, attention_mask=attn)[0]
    sel = labels != -100
    return F.cross_entropy(head(hidden[sel]).float(), labels[sel])


def finetune_mlm(cfg: FinetuneConfig) -> Path:
    """Fine-tune, checkpoint, evaluate and save; returns the merged model folder (OUT/model)."""
    import torch

    _check(cfg)
    log = start_run(cfg)
    if not cfg.resume:  # a fresh run: drop what an earlier run in this folder left (metrics, cached fills)
        log.path.unlink(missing_ok=True)
        (cfg.out / "masked.txt").unlink(missing_ok=True)
        for stale in [*cfg.out.glob("round-*"), cfg.out / "base"]:
            shutil.rmtree(stale, ignore_errors=True)
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)

    base_model, tok, base_name = mlm_base(cfg)
    clean, masked = training_sentences(cfg)
    if cfg.mode == "clean" and not clean:
        raise RecoverError("No mask-free sentence to train on (every line has a marker); try --mode filled.")
    model = prepare_mlm(base_model, cfg)
    if cfg.init_adapter is not None and not cfg.resume:  # a resume reads the checkpoint instead
        load_init_adapter(model, cfg, base_name)
    model.to(cfg.device).train()
    params = list(trainable(model).values())
    base_lr = cfg.lr or MLM_LR["lora" if cfg.lora_r else "full"]
    opt = torch.optim.AdamW(params, lr=base_lr, weight_decay=cfg.weight_decay)
    held = heldout_for(cfg)

    state = new_state(cfg)
    rng = None
    if cfg.resume:
        state, rng = load_checkpoint(cfg, model, opt)
        log.truncate(state["round"], state["step"])  # steps after the checkpoint are done again
        state["resumed_with"] = state.get("resumed_with", []) + [cfg.command]
        log.say(f"resumed from round {state['round']}, step {state['step']}")
    else:
        state["eval_before"] = evaluate_mlm(model, held, cfg.eval_items, cfg.eval_seed, tokenizer=tok)
        log.write({"round": 1, "step": 0, "eval": state["eval_before"]})
        log.say("held-out before training:\n" + format_eval(state["eval_before"]))
    budget = cfg.minutes * 60 / cfg.rounds if cfg.minutes else None  # seconds per round
    filler_model = cfg.model

    def evaluate():
        r = evaluate_mlm(model, held, cfg.eval_items, cfg.eval_seed, tokenizer=tok)
        return "eval", r, f"held-out top-1 {100 * r['top1']:.1f}%, top-10 {100 * r['top10']:.1f}%"

    while state["round"] <= cfg.rounds:
        r = state["round"]
        texts = clean
        if cfg.mode == "filled":
            if r == 1 and cfg.from_minilm:
                if not (cfg.out / "base" / "config.json").exists():
                    save_model(merged(model), tok, cfg.out / "base")
                filler_model = str(cfg.out / "base")
            elif r > 1:
                filler_model = str(cfg.out / f"round-{r - 1}" / "model")
            texts = clean + filled_texts(cfg, masked, filler_model, r)
        data = MLMBatches(texts, tok, cfg, r)
        if rng is not None and rng.get("masking") is not None and state["step"] > 0:
            data.gen.set_state(rng["masking"])
        rng = None
        log.say(f"round {r}/{cfg.rounds}: {len(texts)} sentences, {data.n_tokens} tokens, "
                f"{data.batches_per_epoch} batches per epoch")
        stopped, seconds = train_round(
            cfg, state, log, opt=opt, params=params, base_lr=base_lr, budget=budget, batches=data,
            loss_fn=lambda ids, attn, labels: _loss(model, ids, attn, labels), evaluate=evaluate,
            save=lambda: save_checkpoint(cfg, model, opt, data, state), desc=f"finetune r{r}", smoothing=0.02)
        if stopped:
            return cfg.out / "model"
        state["seconds"] += seconds  # completed rounds only
        if r < cfg.rounds:  # the next round fills with this round's model
            save_model(merged(model), tok, cfg.out / f"round-{r}" / "model")
        state.update(round=r + 1, step=0, round_seconds=0.0)
        save_checkpoint(cfg, model, opt, None, state)

    return _finish(cfg, model, tok, base_name, held, state, log)


def _finish(cfg: FinetuneConfig, model, tok, base_name: str, held: list[str], state: dict, log: RunLog) -> Path:
    model.to("cpu")  # scored and saved as every user loads it
    after = evaluate_mlm(model, held, cfg.eval_items, cfg.eval_seed, tokenizer=tok)
    log.write({"round": cfg.rounds, "step": "final", "eval": after})
    stats = run_stats(state)
    card = mlm_card(cfg, base_name, state, after, stats)
    save_model(merged(model), tok, cfg.out / "model", card)
    if cfg.lora_r:
        save_mlm_adapter(model, cfg.out / "adapter", base_name, cfg, card)
    log.say("held-out after training:\n" + format_eval(after))
    log.say(f"training: {stats['steps']} steps in {stats['seconds']} s (with evaluations and saves); "
            f"{stats['steps_per_s']} steps/s, {stats['tokens_per_s']} tokens/s; peak memory {stats['peak_rss_mb']} MB")
    log.say(f"model: {cfg.out / 'model'}" + (f"; adapter: {cfg.out / 'adapter'}" if cfg.lora_r else ""))
    return cfg.out / "model"
