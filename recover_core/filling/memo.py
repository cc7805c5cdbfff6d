"""Work a filler may reuse within one request, and only there.

The app fills one masked sentence six ways. Top-1 and Top-K of a causal filler ask the
same questions for the first mask (and for every later mask whose left context agrees),
the instruction-tuned filler's beams do not depend on the method at all, and its
fallback is the infill filler's own work. Inside ``request()`` those answers are
computed once; outside it nothing is kept. The memo holds the user's text, so it lives
only as long as the request: the block's end drops it, even when the request fails or
the client goes away (a generator's ``close``).

One memo at a time: only the app's events in its "models" concurrency group open one
(the causal columns, the API's /fill), and that group runs one event at a time; the MLM
columns run in a group of their own and never open one; a batch run never does.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Hashable, Iterator

_memo: dict | None = None


@contextlib.contextmanager
def request() -> Iterator[None]:
    global _memo
    _memo = {}
    try:
        yield
    finally:
        _memo = None


def reuse(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()``, or its earlier result for ``key`` within this request. Results are
    copied out as lists where they are lists, so a caller's edits never reach the memo."""
    if _memo is None:
        return compute()
    if key not in _memo:
        _memo[key] = compute()
    value = _memo[key]
    return list(value) if isinstance(value, list) else value
