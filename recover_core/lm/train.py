"""Training and scoring the downstream LM (vats2024 §3.3).

Conditions, as the paper defines them, differ only in the text and one switch:
- oracle: the clean train set;
- baseline0: the masked train set, `[MASK]` a token like any other;
- baseline1: the masked train set, `[MASK]` targets given zero loss weight;
- a filling method: the filled train set.

Perplexity is per word (total negative log-likelihood over words plus sentence ends), so
numbers compare across tokenizers; per-token perplexity is reported beside it.
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Sequence

import torch

from recover_core.errors import RecoverError
from recover_core.runtime import env
from recover_core.lm.model import LMConfig, TransformerLM
from recover_core.lm.tokenizer import LMTokenizer

CONDITIONS = ("oracle", "baseline0", "baseline1")  # and every filling method, trained like oracle


@dataclass(frozen=True)
class TrainConfig:
    epochs: float = 1.0  # passes over the sentences (fractions allowed)
    batch_size: int = 32
    lr: float = 1e-3
    warmup_steps: int = 50
    weight_decay: float = 0.01
    seed: int = 0
    ignore_mask: bool = False  # baseline1
    bf16: bool = False


def batches(ids: Sequence[list[int]], cfg: TrainConfig, block_size: int, epoch: int):
    """(inputs, targets, pad) per batch: [B, T] each. Sentences of similar length share
    a batch (sorted within shuffled windows), so little compute goes to padding."""
    rng = random.Random(f"{cfg.seed}:{epoch}")
    order = list(range(len(ids)))
    rng.shuffle(order)
    window = cfg.batch_size * 50
    groups = []
    for w in range(0, len(order), window):
        chunk = sorted(order[w : w + window], key=lambda i: len(ids[i]))
        groups += [chunk[b : b + cfg.batch_size] for b in range(0, len(chunk), cfg.batch_size)]
    rng.shuffle(groups)
    for g in groups:
        yield collate([ids[i][: block_size + 1] for i in g])


def collate(seqs: Sequence[list[int]]):
    T = max(len(s) for s in seqs) - 1
    inputs = torch.zeros((len(seqs), T), dtype=torch.long)  # [B, T]
    targets = torch.full((len(seqs), T), -100, dtype=torch.long)
    pad = torch.ones((len(seqs), T), dtype=torch.bool)
    for b, s in enumerate(seqs):
        n = len(s) - 1
        inputs[b, :n] = torch.tensor(s[:-1])
        targets[b, :n] = torch.tensor(s[1:])
        pad[b, :n] = False
    return inputs, targets, pad


def loss_weights(targets: torch.Tensor, mask_id: int, ignore_mask: bool) -> torch.Tensor | None:
    """Baseline1: a target that is [MASK] teaches nothing (weight 0); every other target 1."""
    return (targets != mask_id).float() if ignore_mask else None


def train(model: TransformerLM, tok: LMTokenizer, sentences: Sequence[str], cfg: TrainConfig,
          desc: str = "train", progress: bool = True) -> dict:
    """Train in place; returns steps, tokens, seconds and tokens/s."""
    from tqdm import tqdm

    if not sentences:
        raise RecoverError(f"{desc}: no sentences to train on.")
    torch.manual_seed(cfg.seed)
    ids = tok.encode_batch(list(sentences))
    per_epoch = math.ceil(len(ids) / cfg.batch_size)
    total = max(1, round(cfg.epochs * per_epoch))
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay}, {"params": rest, "weight_decay": 0}],
                            lr=cfg.lr, betas=(0.9, 0.95))
    model.train()
    dev = next(model.parameters()).device  # batches are built on the CPU, then moved
    # A GPU has native bfloat16; a CPU only where env says so.
    bf16 = cfg.bf16 if dev.type == "cuda" else env.bf16_autocast(cfg.bf16)
    step, tokens, t0 = 0, 0, time.time()
    with tqdm(total=total, desc=desc, unit="step", disable=not progress, leave=False) as bar:
        epoch = 0
        while step < total:
            for inputs, targets, pad in batches(ids, cfg, model.config.block_size, epoch):
                if step >= total:
                    break
                # Counted on the CPU, before the move: on a GPU each would wait for the device.
                n_tokens, padded = int((~pad).sum()), bool(pad.any())
                inputs, targets, pad = inputs.to(dev), targets.to(dev), pad.to(dev)
                lr = cfg.lr * min(1.0, (step + 1) / cfg.warmup_steps) * 0.5 * (1 + math.cos(math.pi * step / total))
                for g in opt.param_groups:
                    g["lr"] = lr
                with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
                    _, loss = model(inputs, targets, loss_weights(targets, tok.mask_id, cfg.ignore_mask),
                                    pad if padded else None)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                step += 1
                tokens += n_tokens
                bar.update(1)
                if progress:  # .item() waits for the GPU: only for a bar someone watches
                    bar.set_postfix(loss=f"{loss.item():.3f}")
            epoch += 1
    secs = time.time() - t0
    model.eval()
    return {"steps": step, "tokens": tokens, "seconds": round(secs, 2), "tokens_per_s": round(tokens / max(secs, 1e-9), 1),
            "bf16": bf16}


@torch.inference_mode()
def perplexity(model: TransformerLM, tok: LMTokenizer, sentences: Sequence[str], batch_size: int = 64) -> dict:
    """Per-word and per-token perplexity of clean sentences, each scored on its own.

    A sentence longer than the LM's context is left out (and counted), rather than cut:
    cutting would score part of it against all of its words. Which sentences are left
    out depends only on the test set and the tokenizer, so conditions stay comparable."""
    model.eval()
    all_ids = tok.encode_batch(list(sentences))
    keep = [i for i, x in enumerate(all_ids) if len(x) <= model.config.block_size + 1]
    if not keep:
        raise RecoverError("No test sentence fits the LM's context: nothing to score.")
    sentences = [sentences[i] for i in keep]
    ids = [all_ids[i] for i in keep]
    nll, n_tokens = 0.0, 0
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    dev = next(model.parameters()).device
    for b in range(0, len(order), batch_size):
        inputs, targets, pad = (t.to(dev) for t in collate([ids[i] for i in order[b : b + batch_size]]))
        logits, _ = model(inputs, pad=pad if pad.any() else None)  # float32 on every device
        lp = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), targets, ignore_index=-100,
                                               reduction="sum")
        nll += lp.item()
        n_tokens += int((targets != -100).sum())
    n_words = sum(len(s.split()) for s in sentences) + len(sentences)  # words + sentence ends
    return {"ppl_word": math.exp(nll / n_words), "ppl_token": math.exp(nll / max(n_tokens, 1)),
            "nll": nll, "words": n_words, "tokens": n_tokens, "left_out_long": len(all_ids) - len(keep)}


@torch.no_grad()
def sentence_logprobs(model: TransformerLM, tok: LMTokenizer, sentences: Sequence[str],
                      batch_size: int = 64) -> list[float]:
    """log p_LM(sentence), its end included, per sentence in input order: what an n-best
    rescorer adds to the recognizer's score (asr/grid_rescore.py). A sentence longer than
    the LM's context is scored on its first block_size tokens; hypotheses of one utterance
    are near one length, so the cut treats them alike."""
    model.eval()
    ids = [x[: model.config.block_size + 1] for x in tok.encode_batch(list(sentences))]
    out = [0.0] * len(ids)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    dev = next(model.parameters()).device
    for b in range(0, len(order), batch_size):
        rows = order[b : b + batch_size]
        inputs, targets, pad = (t.to(dev) for t in collate([ids[i] for i in rows]))
        logits, _ = model(inputs, pad=pad if pad.any() else None)  # [B, T, V]
        nll = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), targets, ignore_index=-100,
                                                reduction="none").sum(1)  # [B]
        for i, v in zip(rows, nll.tolist()):
            out[i] = -v
    return out


def new_model(preset: LMConfig, tok: LMTokenizer) -> TransformerLM:
    from dataclasses import replace

    return TransformerLM(replace(preset, vocab_size=tok.vocab_size))
