"""MLM logits at one position per row, for BERT-layout encoders (BERT, RoBERTa, MiniLM).

Same numbers as ``head(model.base_model(...)[0][rows, pos])`` up to float rounding,
for less work:

* every matrix product goes through whichever of two kernels is faster on this CPU,
  timed once at load on a batch-sized input: oneDNN on weights packed once for it, or
  PyTorch's default fp32 ``linear`` (MKL). oneDNN picks kernels by instruction set and
  measured 2-3x faster than MKL on an AVX-512 EPYC; on an AVX2-only EPYC, MKL was
  10-18% faster on batches (and oneDNN faster on one short sentence). Both give the
  same numbers up to float rounding, so the choice changes speed, not outputs;
* the last layer runs only at the position asked for: its keys and values still
  come from every position, but its query, attention output and feed-forward do
  not (one layer in six of MiniLM, one in twelve of BERT base).

Other layouts, a PyTorch without oneDNN, or a model whose numbers this does not
reproduce (checked once, on a padded batch) fall back: to plain ``F.linear`` on the
same path, or to None, meaning the caller runs the model as it is. The packed
weights are a second copy of the model's (about 90 MB for MiniLM, 430 MB for BERT base).
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F

LogitsAt = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def logits_at(model) -> LogitsAt | None:
    """``f(input_ids [b, L], attention_mask [b, L], pos [b]) -> logits [b, V]``, or None."""
    base = model.base_model
    cfg = getattr(base, "config", None)
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    head = _head_parts(model)
    if cfg is None or not layers or head is None or not hasattr(base, "embeddings"):
        return None
    if cfg.is_decoder or getattr(cfg, "chunk_size_feed_forward", 0):
        return None
    working = []
    for packed in dict.fromkeys((_onednn_available(), False)):
        try:
            n = len(layers)
            dense, act, norm, decoder = head
            fast = _Fast(base.embeddings, [_Layer(layer, cfg, packed, last=i == n - 1) for i, layer in enumerate(layers)],
                         _Linear(dense.weight, dense.bias, packed), act, norm,
                         _Linear(decoder.weight, decoder.bias, packed))
            if _agrees(model, fast):
                working.append(fast)
        except Exception:  # an unforeseen layout or PyTorch build: fall back, never fail
            continue
    if len(working) < 2:
        return working[0] if working else None
    times = [_seconds(fast, cfg.vocab_size) for fast in working]
    best = working[times.index(min(times))]
    best.description += " (timed at load: " + ", ".join(
        f"{'oneDNN' if f.decoder.packed else 'PyTorch linear'} {1000 * t:.0f} ms" for f, t in zip(working, times)) + ")"
    return best


@torch.inference_mode()
def _seconds(fast: "_Fast", vocab: int, rows: int = 16, length: int = 32, repeats: int = 2) -> float:
    """Best of ``repeats`` timings of one batch-sized forward (the encoder at every
    position, the head at one per row), after a warm-up call."""
    import time

    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(5, vocab, (rows, length), generator=gen)
    attn, pos = torch.ones_like(ids), torch.zeros(rows, dtype=torch.long)
    fast.head(fast.hidden(ids, attn, torch.arange(rows), pos))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fast.head(fast.hidden(ids, attn, torch.arange(rows), pos))
        best = min(best, time.perf_counter() - start)
    return best


def _onednn_available() -> bool:
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


class _Linear:
    """``x @ W.T + b`` on [N, in] inputs, optionally with exact GELU fused in."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, packed: bool):
        weight = weight.detach()
        self.packed = packed
        self.weight = torch.ops.mkldnn._reorder_linear_weight(weight, None) if packed else weight
        self.bias = bias.detach() if bias is not None else None

    def __call__(self, x: torch.Tensor, gelu: bool = False) -> torch.Tensor:
        if self.packed:
            return torch.ops.mkldnn._linear_pointwise(
                x, self.weight, self.bias, "gelu" if gelu else "none", [], "none" if gelu else "")
        y = F.linear(x, self.weight, self.bias)
        return F.gelu(y) if gelu else y


def _cat(*linears: torch.nn.Linear) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.cat([m.weight for m in linears]), torch.cat([m.bias for m in linears])


class _Layer:
    """One post-LayerNorm BERT layer (self-attention, then feed-forward)."""

    def __init__(self, layer, cfg, packed: bool, last: bool):
        sa = layer.attention.self
        self.heads, self.scale = sa.num_attention_heads, getattr(sa, "scaling", None)
        if last:  # queries at one position, keys and values everywhere
            self.q = _Linear(sa.query.weight, sa.query.bias, packed)
            self.kv = _Linear(*_cat(sa.key, sa.value), packed)
        else:  # one product instead of three
            self.qkv = _Linear(*_cat(sa.query, sa.key, sa.value), packed)
        out = layer.attention.output
        self.out, self.ln1 = _Linear(out.dense.weight, out.dense.bias, packed), out.LayerNorm
        self.up = _Linear(layer.intermediate.dense.weight, layer.intermediate.dense.bias, packed)
        # Exact GELU (BERT's "gelu") is fused into the product; any other activation runs after it.
        self.act = None if cfg.hidden_act == "gelu" else layer.intermediate.intermediate_act_fn
        self.down, self.ln2 = _Linear(layer.output.dense.weight, layer.output.dense.bias, packed), layer.output.LayerNorm

    def __call__(self, h: torch.Tensor, b: int, mask: torch.Tensor | None,
                 pos: torch.Tensor | None = None) -> torch.Tensor:
        """[b*L, H] in; [b*L, H] out, or [b, H] at ``pos`` (one position per row) only."""
        H = h.shape[1]
        L, d = h.shape[0] // b, H // self.heads
        if pos is None and hasattr(self, "qkv"):
            x = h
            q, k, v = self.qkv(h).view(b, L, 3, self.heads, d).permute(2, 0, 3, 1, 4)
        elif pos is None:  # the last layer, asked at every position (all masks in one pass)
            x = h
            q = self.q(h).view(b, L, self.heads, d).transpose(1, 2)
            k, v = self.kv(h).view(b, L, 2, self.heads, d).permute(2, 0, 3, 1, 4)
        else:
            x = h.view(b, L, H)[torch.arange(b), pos]  # [b, H]
            q = self.q(x).view(b, 1, self.heads, d).transpose(1, 2)
            k, v = self.kv(h).view(b, L, 2, self.heads, d).permute(2, 0, 3, 1, 4)
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)  # [b, heads, Lq, d]
        a = _norm(self.ln1, self.out(ctx.transpose(1, 2).reshape(-1, H)) + x)
        up = self.up(a, gelu=True) if self.act is None else self.act(self.up(a))
        return _norm(self.ln2, self.down(up) + a)


def _norm(ln: torch.nn.LayerNorm, x: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, ln.normalized_shape, ln.weight, ln.bias, ln.eps)


class _Fast:
    def __init__(self, embeddings, layers: list[_Layer], dense: _Linear, act: Callable, norm, decoder: _Linear):
        self.embeddings, self.layers = embeddings, layers
        self.dense, self.act, self.norm, self.decoder = dense, act, norm, decoder
        self.description = (f"{'oneDNN on packed weights' if decoder.packed else 'PyTorch linear'}, "
                            "last layer at the masks only")

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        b, L = input_ids.shape
        h = self.embeddings(input_ids=input_ids).reshape(b * L, -1)
        # Padding is masked as keys only: padded positions' own outputs are never read.
        mask = None if bool(attention_mask.all()) else attention_mask.bool()[:, None, None, :]
        for layer in self.layers[:-1]:
            h = layer(h, b, mask)
        h = self.layers[-1](h, b, mask, pos)  # [b, H]
        return self.head(h)

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, rows: torch.Tensor,
               pos: torch.Tensor) -> torch.Tensor:
        """[b, L] ids and mask; [n] rows and positions -> [n, H] last hidden states there."""
        b, L = input_ids.shape
        h = self.embeddings(input_ids=input_ids).reshape(b * L, -1)
        mask = None if bool(attention_mask.all()) else attention_mask.bool()[:, None, None, :]
        for layer in self.layers:
            h = layer(h, b, mask)
        return h.view(b, L, -1)[rows, pos]

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """[n, H] -> [n, V] logits."""
        return self.decoder(_norm(self.norm, self.act(self.dense(h))))


def _head_parts(model) -> tuple | None:
    """(dense, activation, layer norm, decoder) of a BERT or RoBERTa MLM head."""
    if hasattr(model, "cls") and hasattr(model.cls, "predictions"):  # BERT
        p = model.cls.predictions
        return p.transform.dense, p.transform.transform_act_fn, p.transform.LayerNorm, p.decoder
    if hasattr(model, "lm_head") and hasattr(model.lm_head, "layer_norm"):  # RoBERTa
        h = model.lm_head
        return h.dense, F.gelu, h.layer_norm, h.decoder
    return None


@torch.inference_mode()
def _agrees(model, fast: LogitsAt) -> bool:
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(5, model.config.vocab_size, (3, 9), generator=gen)
    attn = torch.ones_like(ids)
    attn[1, 6:] = 0
    ids[1, 6:] = model.config.pad_token_id or 0
    pos = torch.tensor([0, 4, 8])
    want = model(input_ids=ids, attention_mask=attn).logits[torch.arange(3), pos]
    got = fast(ids, attn, pos)
    return got.shape == want.shape and bool(torch.allclose(got, want, rtol=1e-3, atol=1e-3))
