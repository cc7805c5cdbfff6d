"""What every tab's handlers share: the guard that turns failures into messages (never a
traceback, never the user's text in the log), and the concurrency groups of the events."""
from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import traceback
from pathlib import Path

import gradio as gr

from recover_core.errors import RecoverError
from recover_core.models import bundles
from recover_core.runtime import threads

ROOT = Path(__file__).resolve().parent.parent
# The spaCy pipeline and the fillers are shared by every request: the events that use
# them run one at a time, in one group, and at most QUEUE_SIZE requests wait.
MODELS = {"concurrency_id": "models", "concurrency_limit": 1}
# The MLM columns: a small model and a fast group of their own (spaCy's blocks are locked
# process-wide in bundles.spacy_zone, so the two groups never share it at once).
FAST = {"concurrency_id": "mlm", "concurrency_limit": 1}
# The causal columns of up to SHARED users fill side by side: their forward passes go to the
# models thread, which runs every pending one of a model in one shared pass
# (filling/scheduler.py): 4 users cost about one batch, not four runs in a row, same words.
SHARED = 8
CAUSAL = {"concurrency_id": "causal", "concurrency_limit": SHARED}
CAUSAL_REQUESTS = threads.InFlight()
QUEUE_SIZE = 32


def where(e: BaseException) -> str:
    """Where an exception was raised, as file:line, without its message (which may quote the
    user's text): the last frame in this project's code, then the frame that raised, if another."""
    def ours(path: str) -> bool:
        return Path(path).resolve().is_relative_to(ROOT) and "site-packages" not in path

    def short(path: str) -> str:
        return str(Path(path).resolve().relative_to(ROOT)) if ours(path) else path.split("site-packages/")[-1]

    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if ours(f.filename)]
    picked = mine[-1:] + ([frames[-1]] if frames and (not mine or frames[-1] is not mine[-1]) else [])
    return ", raised at ".join(f"{short(f.filename)}:{f.lineno}" for f in picked) or "an unknown place"


def friendly(fn):
    """Every handler: a RecoverError becomes its message; anything else a short notice, never a
    traceback. Afterwards the shared models forget what the request showed them."""
    @contextlib.contextmanager
    def guard():
        try:
            yield
        except RecoverError as e:
            raise gr.Error(str(e), print_exception=False) from None
        except gr.Error:
            raise
        except Exception as e:  # noqa: BLE001
            # The kind of failure and where, never its message: the arguments hold the user's text.
            print(f"handler {fn.__name__} failed: {type(e).__name__} at {where(e)}", file=sys.stderr)
            raise gr.Error(f"Something went wrong inside the model ({type(e).__name__}). "
                           "Nothing you typed was kept.", print_exception=False) from None
        finally:
            bundles.forget_request_state()

    if inspect.isgeneratorfunction(fn):  # Gradio streams generators: keep the wrapper one too
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            with guard():
                yield from fn(*args, **kwargs)
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with guard():
            return fn(*args, **kwargs)
    return wrapper
