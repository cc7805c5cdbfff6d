"""Work a filler may reuse within one request, and only there.

The app fills one masked sentence six ways. Top-1 and Top-K of a causal filler ask the
same questions for the first mask (and for every later mask whose left context agrees),
the instruction-tuned filler's beams do not depend on the method at all, and its
fallback is the infill filler's own work. Inside ``request()`` (or ``using`` a request's
book) those answers are computed once; outside it nothing is kept. The memo holds the
user's text, so it lives only as long as the request: the block's end drops it, even when
the request fails or the client goes away (a generator's ``close``).

One memo per request: the causal columns of concurrent requests run side by side (their
passes shared, filling/scheduler.py), so the memo in use is a context variable, never a
global: one request never reads another's answers. A request that spans several steps of a
generator, each of which may run on another thread (Gradio), keeps its ``book`` and makes
it current around each step's work (``using``); a batch run never opens one.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Hashable, Iterator

_memo: contextvars.ContextVar[dict | None] = contextvars.ContextVar("recover_memo", default=None)


def book() -> dict:
    """A request's memo, empty; current only inside ``using(it)``."""
    return {}


@contextlib.contextmanager
def using(memo: dict | None) -> Iterator[None]:
    """``memo`` (a request's ``book``) is the current one in this block (None: none is)."""
    token = _memo.set(memo)
    try:
        yield
    finally:
        _memo.reset(token)


@contextlib.contextmanager
def request() -> Iterator[dict]:
    """A memo for the work in this block, dropped at its end."""
    memo = book()
    try:
        with using(memo):
            yield memo
    finally:
        memo.clear()


def current() -> dict | None:
    """The memo in use here, or None."""
    return _memo.get()


def reuse(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()``, or its earlier result for ``key`` within this request. Results are
    copied out as lists where they are lists, so a caller's edits never reach the memo."""
    memo = _memo.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    value = memo[key]
    return list(value) if isinstance(value, list) else value
