"""Torch work on threads that end with it, for servers that keep a pool of worker threads.

PyTorch's OpenMP runtime (libgomp) gives each thread that runs a parallel region a team of
worker threads of its own, and keeps it until that thread exits. Gradio runs handlers on a
pool of long-lived threads, so after a few requests several idle teams exist; once their
threads outnumber the cores, libgomp stops spinning between regions and every pass is
slower: the six columns of the demo sentence took 6.8-7.6 s instead of 5.2-5.8 s in one
process (docs/measurements.md, "OpenMP teams"). A thread that exits takes its team with
it, so work run by ``alone`` leaves no idle team behind.
"""
from __future__ import annotations

import contextvars
import threading
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")


def alone(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on a new thread that ends with it; its result, or its
    exception raised here. The caller's context variables go with it."""
    ctx = contextvars.copy_context()
    result: list = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(ctx.run(fn, *args, **kwargs))
        except BaseException as e:  # noqa: BLE001 (re-raised in the caller's thread)
            error.append(e)

    worker = threading.Thread(target=target, name="recover-torch", daemon=True)
    worker.start()
    worker.join()
    if error:
        raise error[0]
    return result[0]


_DONE = object()


def each_alone(gen: Iterator[T]) -> Iterator[T]:
    """The items of ``gen``, each step of it run by ``alone``: a streaming handler's work
    between two of its yields runs on a thread that ends there. Closing this closes ``gen``."""
    try:
        while True:
            item = alone(next, gen, _DONE)
            if item is _DONE:
                return
            yield item
    finally:
        gen.close()
