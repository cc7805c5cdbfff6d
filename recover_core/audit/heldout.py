"""Names no recognizer list holds, for the attacks: the held-out source of ``bench/heldout_names.py``.

The recognizers must never read that source (tests/test_layout.py), so this package does not
import it: the attacks load the bench file by its path, where the repository is at hand, and
fall back to Faker's world names outside the census lists (which entityTagger's name list
does hold: an easier case for the masker) where it is not.
"""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

BENCH_FILE = Path(__file__).resolve().parents[2] / "bench" / "heldout_names.py"


@functools.lru_cache(maxsize=1)
def _bench():
    if not BENCH_FILE.is_file():
        return None
    try:
        spec = importlib.util.spec_from_file_location("recover_heldout_names", BENCH_FILE)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        mod.pools()
        return mod
    except Exception:  # the bench's data package is missing: the fallback
        return None


def source() -> str:
    return "held-out (bench/heldout_names.py)" if _bench() is not None else "Faker world names (fallback)"


@functools.lru_cache(maxsize=1)
def full_names_pools() -> tuple[list[str], list[str]]:
    """(first names, surnames), capitalised, sorted, none in the census lists."""
    mod = _bench()
    if mod is not None:
        p = mod.pools()
        return (sorted({n for v in p["first"].values() for n in v}), sorted({n for v in p["last"].values() for n in v}))
    from recover_core.data import lexicons

    census = lexicons.first_names() | lexicons.last_names()
    first = sorted(n.capitalize() for n in lexicons.world_first_names() if n.isalpha() and n not in census)
    last = sorted(n.capitalize() for n in lexicons.world_last_names() if n.isalpha() and n not in census)
    return first, last


def full_names(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct "First Last" held-out names, drawn with a fixed seed (one locale per name
    where the held-out source gives locales)."""
    import random

    rng = random.Random(f"heldout-names:{seed}")
    mod = _bench()
    out: dict[str, None] = {}
    first, last = full_names_pools()
    while len(out) < n:
        out[mod.full_name(rng) if mod is not None else f"{rng.choice(first)} {rng.choice(last)}"] = None
    return list(out)
