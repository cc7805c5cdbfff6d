"""Work the app does once when it starts, in the background, so that no visitor pays for it.

On a fresh machine (a Space just built) the first request would otherwise merge the adapters
into their bases, train entityTagger's name-shape model (17 s on 2 cores), load spaCy and every
filler, and read the world name lists: 20-30 s for one sentence, and the first example 108 s.
The app runs these steps (``run_steps``) before it opens its port, as Gradio's cache_examples
does, so that the first visitor's request waits no longer than the second and an example clicked
shows its columns at once. Run in the background instead (the first design), a request that came
meanwhile waited for the step under way, up to the whole first example; and even the Audio tab's
8 s of steps, left to the background, made the first text request 6.6 s slower than the second
(bench/space_check.py, 2026-12-03). Each step runs on the models thread, with every core it may
take (runtime/threads.py).

The steps use the page's own examples, never a visitor's text; the log says which step ran and
how long it took, and for a step that failed only the kind of failure.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from recover_core.runtime import threads

Step = tuple[str, Callable[[], object]]
DONE = threading.Event()  # set when every step has run (tests and the Space check wait on it)
# The examples' page outputs as the warm-up computed them, by their settings (``key``): an example
# clicked with the page's default settings is shown from here at once. Only the page's own examples.
_EXAMPLES: dict[tuple, tuple] = {}


def prepare_models() -> None:
    """What `recover prepare` does: every bundle's merge or conversion, then the name-shape model."""
    from recover_core.masking import name_shape
    from recover_core.models import bundles

    for name in bundles.names():
        b = bundles.get(name)
        if b.locate is not None:
            try:
                b.prepare()
            except Exception as e:  # noqa: BLE001  (one model that cannot be built here leaves the others)
                print(f"warm-up: {name} not prepared ({type(e).__name__})", file=sys.stderr, flush=True)
    name_shape.model()


def text_steps(examples: list[tuple[str, str]]) -> list[Step]:
    """The Text tab on its examples (text, profile): masking, the engine's answer and all six
    columns with the page's default models, so every model and list they use is loaded."""
    from recover_core.explorer import sentence as explore
    from recover_core.masking.vocab_thres import DEFAULT_N

    models = {kind: explore.default_model(kind) for kind in explore.FILLER_TITLES}

    def fill(text: str, protect: str) -> Callable[[], object]:
        def run() -> None:
            *_, last = explore.fill_steps(text, "entityTagger", DEFAULT_N, "mask", 10, 0, models, explore.FILL_ORDER,
                                          protect, answer=True)
            if last[1] is not None and "**Obfuscated** (the engine" in last[1][1]:  # keep only a whole answer
                _EXAMPLES[key(text, "entityTagger", DEFAULT_N, "mask", 10, 0, models, protect)] = last
        return run

    return [(f"text example {i + 1} ({protect})", fill(text, protect)) for i, (text, protect) in enumerate(examples)]


def key(text, technique, n, markers, k, seed, models: dict, protect) -> tuple:
    return (text, technique, int(n), markers, int(k), int(seed or 0), tuple(sorted(models.items())), protect)


def example(text, technique, n, markers, k, seed, models: dict, protect) -> tuple | None:
    """An example's (masked, answer, status, columns) as the warm-up filled them, if it did with
    these settings; else None."""
    try:
        return _EXAMPLES.get(key(text, technique, n, markers, k, seed, models, protect))
    except (TypeError, ValueError):  # a cleared slider or seed: not an example's settings
        return None


def run_steps(steps: list[Step]) -> None:
    """Each step on the models thread, one after the other; a step that fails leaves the others."""
    t0 = time.time()
    try:
        for name, step in steps:
            t = time.time()
            try:
                threads.run(step)
                print(f"warm-up: {name} ready in {time.time() - t:.1f} s", file=sys.stderr, flush=True)
            except Exception as e:  # noqa: BLE001  (the request that needs it will say what is missing)
                print(f"warm-up: {name} failed ({type(e).__name__})", file=sys.stderr, flush=True)
            finally:
                _forget()
    finally:
        print(f"warm-up: done in {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
        DONE.set()


def _forget() -> None:
    from recover_core.models import bundles

    bundles.forget_request_state()
