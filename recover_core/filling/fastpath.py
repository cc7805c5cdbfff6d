"""MLM logits at one position per row, for BERT-layout encoders (BERT, RoBERTa, MiniLM).

Same numbers as ``head(model.base_model(...)[0][rows, pos])`` up to float rounding,
for less work:

* every matrix product goes through whichever of two kernels is faster on this CPU,
  timed once at load on a batch-sized input (``kernels``: oneDNN on packed weights, or
  PyTorch's default fp32 ``linear``); both give the same numbers up to float rounding,
  so the choice changes speed, not outputs;
* the products run on the real tokens only, never on padding (a batch of lines of
  different lengths is padded to the longest; on news that was about 45% of the
  positions); attention alone sees the padded layout;
* the last layer runs only at the positions asked for: its keys and values still
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

from recover_core.filling import kernels
from recover_core.filling.kernels import Linear as _Linear

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
    for packed in dict.fromkeys((kernels.onednn_available(), False)):
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

    def __call__(self, h: torch.Tensor, batch: "_Batch",
                 at: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        """[N, H] (the batch's real tokens) in; [N, H] out, or [n, H] at ``at`` = (rows [n],
        positions [n]) only (the last layer: keys and values from every position of those rows)."""
        b, L, mask = batch.b, batch.L, batch.mask
        H = h.shape[1]
        d = H // self.heads
        if at is None and hasattr(self, "qkv"):
            x = h
            q, k, v = batch.unpack(self.qkv(h)).view(b, L, 3, self.heads, d).permute(2, 0, 3, 1, 4)
        else:  # the last layer: always asked at given positions
            rows, pos = at
            x = h[batch.index(rows, pos)]  # [n, H]
            q = self.q(x).view(len(rows), 1, self.heads, d).transpose(1, 2)  # [n, heads, 1, d]
            k, v = batch.unpack(self.kv(h)).view(b, L, 2, self.heads, d).permute(2, 0, 3, 1, 4)  # [b, heads, L, d]
            if not torch.equal(rows, torch.arange(b)):  # several positions of a row: its keys for each
                k, v = k[rows], v[rows]
                mask = mask[rows] if mask is not None else None
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)  # [b or n, heads, Lq, d]
        ctx = ctx.transpose(1, 2).reshape(-1, H)
        a = _norm(self.ln1, self.out(ctx if at is not None else batch.pack(ctx)) + x)
        up = self.up(a, gelu=True) if self.act is None else self.act(self.up(a))
        return _norm(self.ln2, self.down(up) + a)


class _Batch:
    """Where a padded [b, L] batch's real tokens are. Every product runs on those alone and
    only attention sees the padded [b, L] layout: a chunk's lines differ in length, and on
    news a chunk's padding was about 45% of its positions. Padding is masked as keys; padded
    queries are computed and never read."""

    def __init__(self, attention_mask: torch.Tensor):
        self.b, self.L = attention_mask.shape
        flat = attention_mask.reshape(-1).bool()
        self.full = bool(flat.all())
        self.mask = None if self.full else attention_mask.bool()[:, None, None, :]
        self.real = flat.nonzero().squeeze(1)  # [N] flat positions of the real tokens
        self.slot = flat.long().cumsum(0) - 1  # [b*L] flat position -> its row in [N]

    def pack(self, x: torch.Tensor) -> torch.Tensor:
        """[b*L, C] -> [N, C]"""
        return x if self.full else x.index_select(0, self.real)

    def unpack(self, x: torch.Tensor) -> torch.Tensor:
        """[N, C] -> [b*L, C], zeros at the padding"""
        if self.full:
            return x
        return x.new_zeros(self.b * self.L, x.shape[1]).index_copy_(0, self.real, x)

    def index(self, rows: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """Rows in [N] of the (row, position) pairs."""
        return self.slot[rows * self.L + pos]


def _norm(ln: torch.nn.LayerNorm, x: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, ln.normalized_shape, ln.weight, ln.bias, ln.eps)


class _Fast:
    def __init__(self, embeddings, layers: list[_Layer], dense: _Linear, act: Callable, norm, decoder: _Linear):
        self.embeddings, self.layers = embeddings, layers
        self.dense, self.act, self.norm, self.decoder = dense, act, norm, decoder
        self.description = (f"{'oneDNN on packed weights' if decoder.packed else 'PyTorch linear'}, "
                            "real tokens only, last layer at the masks only")

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        return self.head(self.hidden(input_ids, attention_mask, torch.arange(len(input_ids)), pos))

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, rows: torch.Tensor,
               pos: torch.Tensor) -> torch.Tensor:
        """[b, L] ids and mask; [n] rows and positions -> [n, H] last hidden states there.
        The last layer runs at those positions only (its queries, attention output and
        feed-forward), also for several positions of a row (all of a line's masks at once)."""
        b, L = input_ids.shape
        batch = _Batch(attention_mask)
        h = batch.pack(self.embeddings(input_ids=input_ids).reshape(b * L, -1))  # [N, H]
        for layer in self.layers[:-1]:
            h = layer(h, batch)
        return self.layers[-1](h, batch, (rows, pos))

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
    # Several positions of one row at once (one pass for all masks), padding included
    rows, many = torch.tensor([0, 1, 1, 2, 2]), torch.tensor([2, 0, 5, 1, 8])
    want_many = model(input_ids=ids, attention_mask=attn).logits[rows, many]
    got_many = fast.head(fast.hidden(ids, attn, rows, many))
    return got.shape == want.shape and bool(torch.allclose(got, want, rtol=1e-3, atol=1e-3)) and \
        got_many.shape == want_many.shape and bool(torch.allclose(got_many, want_many, rtol=1e-3, atol=1e-3))
