"""Shared forward passes: the causal fillers' rows of concurrent requests, in one pass.

Why: a causal column is a chain of SmolLM2 passes (a mask's candidates wait on the Top-1 word
before it, a beam's next token on its last one), each on a few rows. A pass of a few rows costs
about what reading the 540 MB of weights costs, so four users' passes one after another cost
four times one user's, while the same rows side by side in one pass cost little more than one.

How: ``share(model)`` wraps the model's ``forward``. A call made under ``torch.inference_mode``
(what every filler runs under) is queued, and whoever runs the passes takes every call queued
for that model and runs them together: the app's models thread (``threads.run``), or the caller
itself where there is none (a test, the command line). Alone, a call runs exactly as it would
unwrapped: same arguments, same kernels, same numbers.

Rows stay each call's own: its cached context is left-padded to the longest in the pass and its
new tokens right-padded to the longest; the padding is masked out (2D attention mask) and every
row keeps its own position ids, so no real token attends to another call's rows or to padding.
The vocabulary's scores are computed per call, on the positions that call asked for, and each
call gets back its own cache rows, copied out of the shared pass (a request's cache holds no
other request's rows). The numbers can differ from a pass alone in the last bits of float
rounding (a longer masked attention, a taller product), not in what is attended to; the words
were checked to be the same alone and shared (tests/test_scheduler.py; docs/app.md).
"""
from __future__ import annotations

import functools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer
from transformers.modeling_outputs import CausalLMOutputWithPast

from recover_core.filling import memo
from recover_core.runtime import threads

# What a shared pass may hold: padded row-tokens. Beyond it, the rest waits for the next pass
# (memory: the attention of a pass grows with rows x length).
MAX_ROW_TOKENS = 4096
# A pass waits at most this long for the next call of each user seen lately: between two of a
# user's passes its thread has work of its own (scores, a beam's text), and a pass that set off
# without it would leave it to a pass of its own. Less than a pass takes, so waiting for a user
# who has gone costs less than the pass it may save; one user alone never waits.
GATHER_S = 0.03
RECENT_S = 0.3  # a user whose last call is older than this is not waited for
# Arguments a call may have and still share a pass (what the fillers and ``generate`` pass).
_SHAREABLE = {"input_ids", "attention_mask", "position_ids", "past_key_values", "use_cache", "logits_to_keep",
              "return_dict", "cache_position", "output_attentions", "output_hidden_states"}


@dataclass
class _Call:
    kwargs: dict
    done: threading.Event = field(default_factory=threading.Event)
    out: Any = None
    error: BaseException | None = None
    rows: _Rows | None = None  # the call as a shared pass needs it; None: it runs alone


@dataclass
class _Rows:
    """One call in the form a shared pass needs: [b, s] new tokens on a cache of P positions."""
    ids: torch.Tensor  # [b, s]
    past: DynamicCache | None  # the call's own cache object (updated after the pass), maybe empty
    P: int  # its cached positions
    mask: torch.Tensor  # [b, P + s]
    pos: torch.Tensor  # [b, s]
    keep: int  # logits_to_keep: 0 for every position
    use_cache: bool

    @property
    def b(self) -> int:
        return self.ids.shape[0]

    @property
    def s(self) -> int:
        return self.ids.shape[1]


class SharedPasses:
    """The wrapped ``forward`` of one causal model: calls queued, run together."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.forward = model.forward  # the model's own
        self._pending: list[_Call] = []
        self._lock = threading.Lock()
        self._queued = threading.Condition(self._lock)
        self._seen: dict[int, float] = {}  # a user (_user) -> when it last made a call
        self.stats: Counter = Counter()  # calls, passes, shared passes (calls that shared one)

    def __call__(self, *args, **kwargs):
        if args:  # positional input_ids, as a test or an old caller may pass them
            kwargs = {"input_ids": args[0], **kwargs} if len(args) == 1 else None
        if kwargs is None or not torch.is_inference_mode_enabled():  # training, or an odd call: as it was
            return self.forward(*args, **(kwargs or {}))
        call = _Call(kwargs)
        with self._lock:
            self._pending.append(call)
            self._seen[_user()] = time.monotonic()
            self._queued.notify_all()
        threads.run(self._drain)
        call.done.wait()  # taken by a drain on another thread (no models thread): it finishes it
        if call.error is not None:
            raise call.error
        return call.out

    def _drain(self) -> None:
        """Run every queued call, sharing passes where they can."""
        with self._lock:
            end = time.monotonic() + GATHER_S
            while self._pending and len(self._pending) < self._users() and (left := end - time.monotonic()) > 0:
                self._queued.wait(left)
            batch, self._pending = self._pending, []
        with torch.inference_mode():
            for group in self._groups(batch):
                try:
                    outs = self._alone(group[0]) if len(group) == 1 else self._shared(group)
                    for call, out in zip(group, outs):
                        call.out = out
                except BaseException:  # noqa: BLE001  one call's failure must stay its own
                    for call in group:
                        try:
                            call.out = self._alone(call)[0]
                        except BaseException as e:  # noqa: BLE001
                            call.error = e
                finally:
                    for call in group:
                        call.done.set()

    def _users(self) -> int:
        """The users (requests) that made a call lately: how many calls a pass may expect."""
        now = time.monotonic()
        self._seen = {t: at for t, at in self._seen.items() if now - at <= RECENT_S}
        return len(self._seen)

    def _groups(self, batch: list[_Call]) -> list[list[_Call]]:
        """Calls that share a pass: those of similar length, so that at most half a pass is
        padding; a call that cannot be shared runs alone."""
        for c in batch:
            try:
                c.rows = _rows(c.kwargs, self.model)
            except Exception:  # noqa: BLE001  an input this reading did not foresee: the call alone
                c.rows = None
        rows = [(c, c.rows) for c in batch]
        groups: list[list[_Call]] = [[c] for c, r in rows if r is None]
        shareable = sorted(((c, r) for c, r in rows if r is not None), key=lambda x: -(x[1].s))
        current: list[tuple[_Call, _Rows]] = []
        for c, r in shareable:
            if current:
                S, P = current[0][1].s, max(max(x.P for _, x in current), r.P)
                b = sum(x.b for _, x in current) + r.b
                real = sum(x.b * (x.P + x.s) for _, x in current) + r.b * (r.P + r.s)
                if b * (P + S) <= 2 * real and b * S <= MAX_ROW_TOKENS:
                    current.append((c, r))
                    continue
                groups.append([x for x, _ in current])
            current = [(c, r)]
        if current:
            groups.append([x for x, _ in current])
        return groups

    def _alone(self, call: _Call) -> list:
        self.stats["calls"] += 1
        self.stats["passes"] += 1
        return [self.forward(**call.kwargs)]

    def _shared(self, group: list[_Call]) -> list:
        rows: list[_Rows] = [c.rows for c in group]  # type: ignore[misc]
        self.stats["calls"] += len(group)
        self.stats["passes"] += 1
        self.stats["shared"] += len(group)
        self.stats["shared_passes"] += 1
        B, S, P = sum(r.b for r in rows), max(r.s for r in rows), max(r.P for r in rows)
        ids = torch.zeros(B, S, dtype=torch.long)
        mask = torch.zeros(B, P + S, dtype=torch.long)
        pos = torch.zeros(B, S, dtype=torch.long)
        starts, a = [], 0
        for r in rows:
            starts.append(a)
            ids[a : a + r.b, : r.s] = r.ids
            mask[a : a + r.b, P - r.P : P + r.s] = r.mask
            pos[a : a + r.b, : r.s] = r.pos
            # the padding after a row's tokens continues its positions: never attended to by them
            pos[a : a + r.b, r.s :] = r.pos[:, -1:] + torch.arange(1, S - r.s + 1)
            a += r.b
        cache = _padded_cache(rows, P)
        hidden = self.model.get_decoder()(input_ids=ids, attention_mask=mask, position_ids=pos,
                                          past_key_values=cache, use_cache=True).last_hidden_state
        head = self.model.get_output_embeddings()
        outs = []
        for r, a in zip(rows, starts):
            mine = hidden[a : a + r.b, : r.s]
            logits = head(mine[:, -r.keep :] if r.keep else mine)  # as the model slices: logits_to_keep
            past = _own_rows(cache, r, a, P) if r.use_cache else None
            outs.append(CausalLMOutputWithPast(logits=logits, past_key_values=past))
        return outs


def _user() -> int:
    """Who made a call: the request (its memo, current while one of its columns fills), else
    the thread. Not the thread alone: the app's steps of one request run on several threads
    (Gradio hands each step of a generator to a worker), and a pass would wait for users who
    are one and the same."""
    book = memo.current()
    return id(book) if book is not None else threading.get_ident()


def _rows(kwargs: dict, model: torch.nn.Module) -> _Rows | None:
    """A call as rows, or None where it cannot share a pass (an argument the pass does not
    rebuild, a cache of another kind, logits_to_keep as indices)."""
    if set(kwargs) - _SHAREABLE or kwargs.get("output_attentions") or kwargs.get("output_hidden_states"):
        return None
    if kwargs.get("return_dict") is False:
        return None
    ids = kwargs.get("input_ids")
    keep = kwargs.get("logits_to_keep", 0)
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or not isinstance(keep, int) or keep < 0:
        return None
    b, s = ids.shape
    past = kwargs.get("past_key_values")
    if past is not None and (type(past) is not DynamicCache or not all(type(x) is DynamicLayer for x in past.layers)):
        return None
    P = past.get_seq_length() if past is not None else 0
    if past is not None and P and any(not x.is_initialized or x.keys.shape[0] != b for x in past.layers):
        return None
    mask = kwargs.get("attention_mask")
    mask = torch.ones(b, P + s, dtype=torch.long) if mask is None else mask
    if mask.shape != (b, P + s):
        return None
    pos = kwargs.get("position_ids")
    if pos is None:  # what the model does without them: positions after the cached ones
        pos = torch.arange(P, P + s)[None]
    pos = pos.expand(b, s) if pos.shape[0] == 1 else pos
    if pos.shape != (b, s):
        return None
    use_cache = kwargs.get("use_cache")
    use_cache = model.config.use_cache if use_cache is None else bool(use_cache)
    return _Rows(ids, past, P, mask.long(), pos.long(), keep if keep < s else 0, use_cache)


def _padded_cache(rows: list[_Rows], P: int) -> DynamicCache:
    """Every call's cached context, left-padded with zeros to ``P`` positions, one after another."""
    cache = DynamicCache()
    if P == 0:
        return cache
    like = next(r.past for r in rows if r.P)
    for i, layer in enumerate(like.layers):
        keys, values = [], []
        for r in rows:
            k = r.past.layers[i].keys if r.P else None
            v = r.past.layers[i].values if r.P else None
            keys.append(_left_pad(k, layer.keys, r.b, P))
            values.append(_left_pad(v, layer.values, r.b, P))
        cache.update(torch.cat(keys), torch.cat(values), i)
    return cache


def _left_pad(x: torch.Tensor | None, like: torch.Tensor, b: int, P: int) -> torch.Tensor:
    """[b, heads, P, head_dim]: ``x`` after P - len(x) zero positions (all zeros for no cache)."""
    n = 0 if x is None else x.shape[2]
    if n == P:
        return x
    pad = like.new_zeros(b, like.shape[1], P - n, like.shape[3])
    return pad if x is None else torch.cat([pad, x], 2)


def _own_rows(cache: DynamicCache, r: _Rows, a: int, P: int) -> DynamicCache:
    """The call's own cache after the pass: its rows, without the padding, copied out. The
    call's cache object is the one it passed (``generate`` and the fillers keep it), updated."""
    own = r.past if r.past is not None else DynamicCache()
    for i, layer in enumerate(cache.layers):
        k = layer.keys[a : a + r.b, :, P - r.P : P + r.s].clone()
        v = layer.values[a : a + r.b, :, P - r.P : P + r.s].clone()
        if i < len(own.layers) and own.layers[i].is_initialized:
            own.layers[i].keys, own.layers[i].values = k, v
        else:
            own.update(k, v, i)
    return own


def share(model: torch.nn.Module) -> SharedPasses:
    """Wrap ``model.forward`` so that concurrent calls share passes (once per model; safe to
    call again, as two fillers sharing one model do). ``generate`` reads the forward's
    signature (which arguments it takes): the wrapper shows the model's own."""
    got = getattr(model.__dict__.get("forward"), "_shared_passes", None)
    if got is not None:
        return got
    passes = SharedPasses(model)

    @functools.wraps(passes.forward)
    def forward(*args, **kwargs):
        return passes(*args, **kwargs)

    forward._shared_passes = passes  # type: ignore[attr-defined]  how share() knows it wrapped this one
    model.forward = forward
    return passes
