"""The LMs a recognizer can fuse, by name: a folder of LMs with a card each.

Two families: "transformer", our own TransformerLM (``NAME.pt``), fused token by token; and
"smollm2", the pretrained SmolLM2-135M (lm/pretrained.py), plain or with a LoRA adapter
(``NAME.adapter/``), which rescores the n-best list. Its LMs are named ``smollm2...``.

"none" is always there: the recognizer alone. The others are built by ``build-lms`` into
``env.cache_dir()/lms`` (or ``$RECOVER_LMS``), never committed: "pretrained" (generic text),
"oracle" (adapted on clean news train sentences, the in-domain upper bound) and the adapted
LMs of obfuscated news (vats2024 Table 6's rows). Each card records what the LM was trained
on and the fusion weights tuned for it on the dev split.
"""
from __future__ import annotations

import functools
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from recover_core import atomic, env
from recover_core.errors import RecoverError

NONE = "none"
_LOCK = threading.Lock()


def lm_dir() -> Path:
    """The LM store (not created by looking: the app lists it at startup)."""
    return Path(os.environ.get("RECOVER_LMS") or env.cache_path() / "lms")


@dataclass(frozen=True)
class LMCard:
    name: str
    description: str
    preset: dict
    lm_weight: float = 0.3  # λ, tuned on the dev split by build-lms
    word_bonus: float = 0.5  # β
    trained_on: str = ""
    perplexity: float | None = None
    masking: str = ""  # the grid cell an adapted LM comes from ("" for pretrained and oracle)
    method: str = ""
    family: str = "transformer"  # or "smollm2"
    adapter: bool = False  # smollm2: a LoRA adapter in NAME.adapter/ (else the base as it ships)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _complete(path: Path) -> bool:
    """A card whose weights are there (the card is written last, so this is rarely false)."""
    try:
        c = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if c.get("family", "transformer") == "transformer":
        return path.with_suffix(".pt").exists()
    return not c.get("adapter") or (path.parent / f"{path.stem}.adapter" / "adapter_config.json").exists()


def available() -> list[str]:
    """"none" first, then every built LM in a stable order."""
    folder = lm_dir()
    built = sorted(p.stem for p in folder.glob("*.json") if _complete(p)) if folder.is_dir() else []
    order = {"pretrained": 0, "oracle": 1, "smollm2": 2, "smollm2-oracle": 3}
    return [NONE] + sorted(built, key=lambda n: (order.get(n, 4), n))


def card(name: str) -> LMCard:
    if name == NONE:
        return LMCard(NONE, "the recognizer alone (no LM)", {}, 0.0, 0.0)
    path = lm_dir() / f"{name}.json"
    if not path.exists() or not _complete(path):
        have = ", ".join(available())
        raise RecoverError(f"LM {name!r} is not available here (available: {have}). "
                           "Build the LMs with `python -m recover_core build-lms`.")
    return LMCard(**json.loads(path.read_text()))


@functools.lru_cache(maxsize=8)
def _load(name: str, stamp: float):
    import torch

    from recover_core.lm.model import LMConfig, TransformerLM

    c = card(name)
    if c.family == "smollm2":
        from recover_core.lm.pretrained import BASE, PretrainedLM

        return PretrainedLM.load(c.preset.get("base") or BASE, adapter_dir(name) if c.adapter else None)
    model = TransformerLM(LMConfig(**c.preset))
    model.load_state_dict(torch.load(lm_dir() / f"{name}.pt", weights_only=True))
    return model.eval()


def load(name: str):
    """The LM's model (None for "none"), built once per process."""
    if name == NONE:
        return None
    c = card(name)  # a clear message if it is missing
    with _LOCK:
        return _load(c.name, (lm_dir() / f"{name}.json").stat().st_mtime)


def adapter_dir(name: str) -> Path:
    return lm_dir() / f"{name}.adapter"


def save(model, c: LMCard) -> Path:
    """Weights first, the card last (atomically): a card means a complete LM."""
    import torch

    folder = lm_dir()
    if c.family == "smollm2":
        if c.adapter:
            with atomic.directory(adapter_dir(c.name)) as tmp:
                model.save(tmp)
        atomic.write_text(folder / f"{c.name}.json", json.dumps(c.to_dict(), indent=1))
        return folder / f"{c.name}.json"
    with atomic.replacing(folder / f"{c.name}.pt") as tmp:
        torch.save(model.state_dict(), tmp)
    atomic.write_text(folder / f"{c.name}.json", json.dumps(c.to_dict(), indent=1))
    return folder / f"{c.name}.pt"
