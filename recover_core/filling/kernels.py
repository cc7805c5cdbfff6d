"""Matrix products on the faster of two CPU kernels, for inference.

oneDNN on weights packed once for it, or PyTorch's default fp32 ``linear`` (MKL). oneDNN
picks kernels by instruction set: it measured 2-3x faster than MKL on an AVX-512 EPYC; on
an AVX2-only EPYC the two were even on a 16 x 24 batch, while MKL took 1.4-2.8x longer on the
few-row passes that most of the fillers' passes are (a word growing by one token on 3-64
rows). Both give the same numbers up to float rounding, so which one runs is timed on those
passes and changes speed, not outputs. The timing (about 9 s a model on one thread) is done
once per CPU, torch version, thread count and model shape and remembered in the cache
(``kernels.json``); each load still checks that the packed products give the model's logits.

``Linear`` is one product (the MLM's own forward, ``fastpath``, builds on it);
``pack_linears`` moves every ``nn.Linear`` of a whole model (the causal fillers' SmolLM2)
onto oneDNN in place, where that agrees with the model and is faster. The packed weights
are a second copy of the model's.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import platform
import time

import torch
import torch.nn.functional as F

from recover_core.runtime import atomic
from recover_core.runtime import env


def onednn_available() -> bool:
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


class Linear:
    """``x @ W.T + b`` on [N, in] inputs, optionally with exact GELU fused in."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, packed: bool):
        weight = weight.detach()
        self.packed = packed
        self.weight = torch.ops.mkldnn._reorder_linear_weight(weight, None) if packed else weight
        self.bias = bias.detach() if bias is not None else None

    def __call__(self, x: torch.Tensor, gelu: bool = False) -> torch.Tensor:
        if self.packed:
            # oneDNN keeps what it builds for each input shape, for good: with a row count per
            # batch of real tokens, a worker grew by 60 MB per 1,000 lines. Rounded up to one of
            # 8 counts per power of two (at most 1/8 more rows), the shapes are few and memory
            # stays flat.
            n = len(x)
            padded = rows(n)
            if padded != n:
                x = torch.cat([x, x.new_zeros(padded - n, x.shape[1])])
            return torch.ops.mkldnn._linear_pointwise(
                x, self.weight, self.bias, "gelu" if gelu else "none", [], "none" if gelu else "")[:n]
        y = F.linear(x, self.weight, self.bias)
        return F.gelu(y) if gelu else y


def rows(n: int) -> int:
    """``n`` rounded up to a multiple of an eighth of its power of two (n itself up to 15)."""
    step = 1 << max(0, n.bit_length() - 4)
    return -(-n // step) * step


def pack_linears(model: torch.nn.Module, timed: bool = True) -> str:
    """Run every ``nn.Linear`` of ``model`` on oneDNN, in place, where that gives the model's
    logits and is faster on this CPU (``timed=False``: wherever it gives them, for tests);
    returns what runs (for a page or a log).

    The modules stay as they are (weights, tied embeddings, state dict): only their forward
    changes, and only while no gradient is wanted, so a model that is trained afterwards
    trains as before (its packed copy would then be stale; the fillers never train). Safe to
    call again on the same model, as two fillers sharing one do."""
    done = getattr(model, "_recover_kernels", None)
    if done is not None:
        return done
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    description = "PyTorch linear"
    if linears and onednn_available():
        try:
            ids = _sample(model)
            key = _choice_key(model)
            known = remembered(key) if timed else None
            plain = _logits(model, ids), _timed(model) if timed and known is None else 0.0
            for m in linears:
                m.forward = functools.partial(_packed_forward, m, Linear(m.weight, m.bias, packed=True))
            packed = _logits(model, ids), _timed(model) if timed and known is None else 0.0
            if timed and known is None:
                known = remember(key, packed[1], plain[1])
            if torch.allclose(packed[0], plain[0], rtol=1e-3, atol=1e-3) and (not timed or known["packed"]):
                description = "oneDNN on packed weights" + (
                    f" (timed on this CPU: {known['packed_ms']} ms, PyTorch linear {known['plain_ms']} ms)"
                    if timed else "")
            else:
                _unpack(linears)
        except Exception:  # an unforeseen layout or PyTorch build: the model as it was, never a failure
            _unpack(linears)
    model._recover_kernels = description
    return description


def _choice_key(model: torch.nn.Module) -> str:
    """What the timing depends on: the CPU, torch and its thread count, the model's shape."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        cpu = ""
    c = model.config
    parts = [cpu or platform.machine(), torch.__version__, torch.get_num_threads(), type(model).__name__,
             getattr(c, "hidden_size", None), getattr(c, "num_hidden_layers", None), c.vocab_size, PASSES]
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def _choices_path():
    return env.cache_dir() / "kernels.json"


def remembered(key: str) -> dict | None:
    """The timing done before for this ``_choice_key`` (CPU, torch, threads, model shape), or None."""
    try:
        got = json.loads(_choices_path().read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return got if isinstance(got, dict) and isinstance(got.get("packed"), bool) else None


def remember(key: str, packed_s: float, plain_s: float) -> dict:
    """Keep one timing (written whole: a torn file is read as nothing remembered)."""
    choice = {"packed": packed_s < plain_s, "packed_ms": round(1000 * packed_s), "plain_ms": round(1000 * plain_s)}
    try:
        path = _choices_path()
        try:
            known = json.loads(path.read_text())
            known = known if isinstance(known, dict) else {}
        except (OSError, ValueError):
            known = {}
        atomic.write_text(path, json.dumps({**known, key: choice}, indent=1))
    except OSError:  # a read-only cache: time again next load
        pass
    return choice


def _packed_forward(module: torch.nn.Linear, kernel: Linear, x: torch.Tensor) -> torch.Tensor:
    if torch.is_grad_enabled():
        return F.linear(x, module.weight, module.bias)
    return kernel(x.reshape(-1, x.shape[-1])).reshape(*x.shape[:-1], -1)


def _unpack(linears: list[torch.nn.Linear]) -> None:
    for m in linears:
        m.__dict__.pop("forward", None)


def _sample(model: torch.nn.Module, n: int = 16, length: int = 24) -> torch.Tensor:
    """A batch the size of the causal fillers' scoring passes: [n, length] token ids."""
    gen = torch.Generator().manual_seed(0)
    return torch.randint(5, model.config.vocab_size, (n, length), generator=gen)


@torch.inference_mode()
def _logits(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    return model(input_ids=ids).logits


# The passes a causal filler makes for one mask, as (rows, new tokens) on a cached context of
# CONTEXT tokens: the context itself (or a prompt), first tokens growing into words (about 40
# rows, then a few), and the candidates' scoring rows. Timed on a batch alone, the choice
# flipped from one load to the next on an AVX2 EPYC (the two within 2% on 16 x 24).
PASSES = ((1, 24), (40, 1), (4, 1), (16, 8))
CONTEXT = 24


@torch.inference_mode()
def _timed(model: torch.nn.Module, repeats: int = 2) -> float:
    """Seconds for one round of PASSES (the best of ``repeats`` after a warm-up round)."""
    gen = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    past = model(input_ids=torch.randint(5, vocab, (1, CONTEXT), generator=gen), use_cache=True).past_key_values
    rounds = []
    for rows, tokens in PASSES:
        cache = copy.deepcopy(past)
        cache.batch_repeat_interleave(rows)
        rounds.append((torch.randint(5, vocab, (rows, tokens), generator=gen), cache))
    best = float("inf")
    for r in range(repeats + 1):
        caches = [copy.deepcopy(c) for _, c in rounds]  # a pass appends to its cache
        start = time.perf_counter()
        for (ids, _), cache in zip(rounds, caches):
            model(input_ids=ids, past_key_values=cache, use_cache=True)
        if r:
            best = min(best, time.perf_counter() - start)
    return best
