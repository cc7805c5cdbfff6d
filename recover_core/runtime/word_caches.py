"""Caches that see a user's words, and the one call that empties them all.

The hot paths of the rules (how a word sounds, a place's kind, ...) memoise per word, and
the words they see are originals. The app promises that a text lives for its request only,
so every such cache is made here and emptied after each request
(``bundles.forget_request_state``); a batch process ends with its run.
"""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)
_CACHES: list = []


def word_cache(maxsize: int) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)`` that ``forget_all`` empties."""
    def wrap(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _CACHES.append(cached)
        return cached  # type: ignore[return-value]
    return wrap


def forget_all() -> None:
    """Empty every word cache (thread-safe: lru_cache's clear takes its own lock)."""
    for cached in _CACHES:
        cached.cache_clear()


def held() -> int:
    """How many words the caches hold now (for the tests)."""
    return sum(c.cache_info().currsize for c in _CACHES)
