"""A compact decoder-only Transformer LM (nanoGPT style): one file, a config, shape comments.

vats2024 §4.2.1 uses 6 layers, 12 heads and 768 hidden units (PAPER). CPU is a smaller
preset that pretrains and adapts on 2 CPU cores in minutes; the README states which
one a number comes from.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class LMConfig:
    vocab_size: int = 50364  # Whisper's GPT-2 BPE + [MASK] (lm/tokenizer.py)
    block_size: int = 128  # tokens of context; a sentence longer than this is cut
    n_layer: int = 6
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.1

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS = {
    "paper": LMConfig(n_layer=6, n_head=12, n_embd=768),
    "cpu": LMConfig(n_layer=4, n_head=4, n_embd=256),
    "tiny": LMConfig(n_layer=1, n_head=2, n_embd=32, dropout=0.0),  # tests of the mechanics only
}


class SelfAttention(nn.Module):
    def __init__(self, c: LMConfig):
        super().__init__()
        assert c.n_embd % c.n_head == 0
        self.qkv = nn.Linear(c.n_embd, 3 * c.n_embd)
        self.proj = nn.Linear(c.n_embd, c.n_embd)
        self.n_head, self.dropout = c.n_head, c.dropout

    def forward(self, x: torch.Tensor, pad: torch.Tensor | None) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # each [B, T, C]
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # [B, h, T, d]
        if pad is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        else:
            # Causal and not attending to right padding: [B, 1, T, T] boolean, True = may attend.
            causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            mask = causal[None, None] & ~pad[:, None, None, :]
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))  # [B, T, C]

    def step(self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None):
        """One new position per row, attending to every earlier one (ASR fusion decodes
        token by token). x: [B, 1, C]; past: keys and values [B, h, T, d]."""
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # [B, h, 1, d]
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)  # [B, h, T+1, d]
        y = F.scaled_dot_product_attention(q, k, v)  # one query: nothing later to hide
        return self.proj(y.transpose(1, 2).reshape(B, T, C)), (k, v)


class Block(nn.Module):
    def __init__(self, c: LMConfig):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(c.n_embd), SelfAttention(c)
        self.ln2 = nn.LayerNorm(c.n_embd)
        self.mlp = nn.Sequential(nn.Linear(c.n_embd, 4 * c.n_embd), nn.GELU(), nn.Linear(4 * c.n_embd, c.n_embd),
                                 nn.Dropout(c.dropout))

    def forward(self, x: torch.Tensor, pad: torch.Tensor | None) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), pad)
        return x + self.mlp(self.ln2(x))

    def step(self, x: torch.Tensor, past):
        a, past = self.attn.step(self.ln1(x), past)
        x = x + a
        return x + self.mlp(self.ln2(x)), past


class TransformerLM(nn.Module):
    def __init__(self, c: LMConfig):
        super().__init__()
        self.config = c
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = nn.Embedding(c.block_size, c.n_embd)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layer))
        self.ln_f = nn.LayerNorm(c.n_embd)
        self.head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2: a third fewer parameters at 768
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith(("attn.proj.weight", "mlp.2.weight")):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None,
                weights: torch.Tensor | None = None, pad: torch.Tensor | None = None):
        """idx, targets, weights, pad: [B, T]. targets -100 are ignored; ``weights`` scales
        each target's loss (Baseline1 gives [MASK] targets 0); ``pad`` marks right padding.
        Returns (logits [B, T, V], mean loss over weighted targets or None)."""
        B, T = idx.shape
        assert T <= self.config.block_size, f"{T} tokens > block_size {self.config.block_size}"
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))  # [B, T, C]
        for block in self.blocks:
            x = block(x, pad)
        logits = self.head(self.ln_f(x))  # [B, T, V]
        if targets is None:
            return logits, None
        nll = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten(), ignore_index=-100,
                              reduction="none")  # [B*T]
        w = (targets.flatten() != -100).float()
        if weights is not None:
            w = w * weights.flatten().float()
        return logits, (nll * w).sum() / w.sum().clamp_min(1.0)

    @torch.no_grad()
    def step(self, idx: torch.Tensor, past: list | None = None):
        """Incremental decoding with a key/value cache: idx [B] is each row's newest token,
        past the cache from the previous call (None at the start). Returns (log-probs
        [B, V] of the next token, the new cache). Rows can be reordered between calls with
        ``reorder(past, rows)``. Positions beyond block_size are the caller's to avoid."""
        t = 0 if past is None else past[0][0].shape[2]
        assert t < self.config.block_size, f"position {t} >= block_size {self.config.block_size}"
        x = self.wte(idx[:, None]) + self.wpe.weight[t]  # [B, 1, C]
        new = []
        for i, block in enumerate(self.blocks):
            x, kv = block.step(x, None if past is None else past[i])
            new.append(kv)
        return F.log_softmax(self.head(self.ln_f(x))[:, 0].float(), dim=-1), new  # [B, V]

    @staticmethod
    def reorder(past: list, rows: torch.Tensor) -> list:
        return [(k.index_select(0, rows), v.index_select(0, rows)) for k, v in past]

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
