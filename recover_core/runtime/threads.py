"""One thread for the heavy torch work of a server, so that only it keeps an OpenMP team.

PyTorch's OpenMP runtime (libgomp) gives each thread that runs a parallel region a team of
worker threads of its own, and keeps it until that thread exits. Gradio runs handlers on a
pool of long-lived threads, so after a few requests several idle teams exist; once their
threads outnumber the cores, libgomp stops spinning between regions and every pass is
slower: the six columns of the demo sentence took 6.8-7.6 s instead of 5.2-5.8 s in one
process (docs/measurements.md, "OpenMP teams"). Threads that end with their work leave no
team, but through the app they measured slower still (6.9 s against 5.3 s), most likely
because each new thread starts with oneDNN's per-thread caches empty.

So ``serve()`` starts one long-lived thread that runs the heavy handlers' work with every
core, and leaves every other thread one torch thread (no team): the MLM columns, which run
beside the heavy work, are a few small passes.

Every core only while the cores are free: when other processes already keep them busy (a
shared machine, a test run beside the app), a team of two on two cores waits at every
barrier for a thread the scheduler has put aside, and one infill column of the demo
sentence took 152-269 s on two threads against 37-57 s on one, the same words and scores
(1-minute load 9-15 on 2 cores). So before each step the models thread takes every core
only while the load average leaves room for them (``threads_for``).
"""
from __future__ import annotations

import concurrent.futures
import contextvars
import functools
import inspect
import os
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_models: concurrent.futures.ThreadPoolExecutor | None = None
_models_thread: threading.Thread | None = None
_cores = 1  # the models thread's count when the machine is free
_resized = False  # the models thread changed its count (and so torch's default for new threads)
_DONE = object()


def threads_for(cores: int, load: float | None = None) -> int:
    """Torch threads for the models thread now: ``cores`` while the 1-minute load average
    leaves them free (at most ``cores + 1``: the app's own work counts in it), else one."""
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # no load average on this system: assume the cores are free
            return cores
    return cores if load <= cores + 1 else 1


def serve() -> None:
    """Start the models thread with torch's thread count as it is now, then give every
    other thread one torch thread. For a server process only: it changes torch's setting."""
    global _models, _cores
    import torch

    if _models is not None:
        return
    n = _cores = torch.get_num_threads()
    _models = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="recover-models")

    def claim() -> None:
        global _models_thread
        _models_thread = threading.current_thread()
        torch.set_num_threads(n)
        torch.get_num_threads()  # torch fixes a thread's count at its first use: this one keeps n

    _models.submit(claim).result()
    if n > 1:
        torch.set_num_threads(1)  # the default for threads that start torch from now on


def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the models thread (here, when there is none or this is it)."""
    if _models is None or threading.current_thread() is _models_thread:
        return fn(*args, **kwargs)
    ctx = contextvars.copy_context()
    try:
        return _models.submit(ctx.run, _sized, fn, *args, **kwargs).result()
    finally:
        global _resized
        if _resized:
            import torch

            # torch.set_num_threads on the models thread also set the count that threads
            # starting torch from now on take; this one (a server worker) keeps one, as they must.
            _resized = False
            torch.set_num_threads(1)


def _sized(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """On the models thread: ``fn`` with the thread count the load allows (outputs do not
    depend on it; checked on the causal fillers, docs/measurements.md)."""
    global _resized
    import torch

    n = threads_for(_cores)
    if n != torch.get_num_threads():
        torch.set_num_threads(n)
        _resized = True
    return fn(*args, **kwargs)


def on_models_thread(fn: Callable) -> Callable:
    """A handler whose work runs on the models thread; a generator's every step does."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def steps(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                while True:
                    item = run(next, gen, _DONE)
                    if item is _DONE:
                        return
                    yield item
            finally:
                run(gen.close)  # a client that went away: the handler's own clean-up, there too
        return steps

    @functools.wraps(fn)
    def plain(*args, **kwargs):
        return run(fn, *args, **kwargs)
    return plain


class InFlight:
    """Requests of one kind under way, and where their heavy steps run: on the models thread
    while a request is alone (every core for all of its work, as a column ran before passes
    were shared), else on the request's own worker, whose forward passes the models thread
    shares with the others' (filling/scheduler.py). Measured idle on 2 cores: one user's
    causal columns were 18% slower with every column on its worker (docs/app.md)."""

    def __init__(self) -> None:
        self._n = 0
        self._lock = threading.Lock()

    def __enter__(self) -> "InFlight":
        with self._lock:
            self._n += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._n -= 1

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return run(fn, *args, **kwargs) if self._n <= 1 else fn(*args, **kwargs)
