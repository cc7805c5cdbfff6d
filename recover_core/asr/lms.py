"""The LMs a recognizer can fuse, by name: a folder of LMs with a card each.

Two families: "transformer", our own TransformerLM (``NAME.pt``), fused token by token; and
"smollm2", the pretrained SmolLM2-135M (lm/pretrained.py), plain or with a LoRA adapter
(``NAME.adapter/``), which rescores the n-best list. Its LMs are named ``smollm2...``.

"none" is always there: the recognizer alone. Two stores hold the others:
  * the shipped one, ``assets/lms/``: SmolLM2 as it ships and small LoRA adapters of it (Oracle,
    Baseline1, the engine's fills), each with a model card, so that a fresh clone or a Space
    compares real LMs with no build step;
  * the built one, ``env.cache_dir()/lms`` (or ``$RECOVER_LMS``), never committed, written by
    ``build-lms``: "pretrained" (generic text), "oracle" (adapted on clean news train
    sentences, the in-domain upper bound) and the adapted LMs of obfuscated news (vats2024
    Table 6's rows). An LM built here wins over a shipped one of the same name.
Each card records what the LM was trained on and the fusion weights tuned for it on the dev split.
"""
from __future__ import annotations

import functools
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from recover_core.runtime import atomic
from recover_core.runtime import env
from recover_core.errors import RecoverError

NONE = "none"
_LOCK = threading.Lock()


SHIPPED = "lms"  # assets/lms/


def lm_dir() -> Path:
    """The built LM store (not created by looking: the app lists it at startup)."""
    return Path(os.environ.get("RECOVER_LMS") or env.cache_path() / "lms")


def stores() -> list[Path]:
    """Where LMs are found, in order: the built store, then the shipped one."""
    return [lm_dir(), env.assets_dir() / SHIPPED]


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
    seed: int = 0  # the adapted LM's seed (LoRA's initialisation, data order, Top-K draws)

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


def _names(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.json") if _complete(p)} if folder.is_dir() else set()


def built() -> list[str]:
    """The LMs built on this machine (build-lms skips these)."""
    return sorted(_names(lm_dir()))


def available() -> list[str]:
    """"none" first, then every built or shipped LM in a stable order."""
    names = set().union(*(_names(f) for f in stores()))
    order = {"pretrained": 0, "oracle": 1, "smollm2": 2, "smollm2-oracle": 3}
    return [NONE] + sorted(names, key=lambda n: (order.get(n, 4), n))


def card_path(name: str) -> Path:
    """The card of the LM ``name``: the built one if there is one, else the shipped one."""
    for folder in stores():
        path = folder / f"{name}.json"
        if path.exists() and _complete(path):
            return path
    raise RecoverError(f"LM {name!r} is not available here (available: {', '.join(available())}). "
                       "Build the LMs with `python -m recover_core build-lms`.")


def card(name: str) -> LMCard:
    if name == NONE:
        return LMCard(NONE, "the recognizer alone (no LM)", {}, 0.0, 0.0)
    return LMCard(**json.loads(card_path(name).read_text()))


@functools.lru_cache(maxsize=8)
def _load(name: str, stamp: float):
    import torch

    from recover_core.lm.model import LMConfig, TransformerLM

    c = card(name)
    if c.family == "smollm2":
        from recover_core.lm.pretrained import BASE, PretrainedLM

        return PretrainedLM.load(c.preset.get("base") or BASE, adapter_of(name) if c.adapter else None)
    model = TransformerLM(LMConfig(**c.preset))
    model.load_state_dict(torch.load(card_path(name).with_suffix(".pt"), weights_only=True))
    return model.eval()


def load(name: str):
    """The LM's model (None for "none"), built once per process."""
    if name == NONE:
        return None
    c = card(name)  # a clear message if it is missing
    with _LOCK:
        return _load(c.name, card_path(name).stat().st_mtime)


def adapter_of(name: str) -> Path:
    """The adapter folder of the LM ``name`` where its card was found (built or shipped)."""
    return card_path(name).with_suffix(".adapter")


def lora_rank(name: str) -> int | None:
    """The LoRA rank of an adapted SmolLM2 LM (None for any other): LMs of two ranks are two
    recipes, whose WERs are never pooled as if they were seeds of one cell."""
    if name == NONE or not card(name).adapter:
        return None
    config = json.loads((adapter_of(name) / "adapter_config.json").read_text())
    return int(config["r"])


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
