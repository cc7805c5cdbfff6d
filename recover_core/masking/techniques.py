"""The masking techniques by name (vats2024 §3.1): the registry imports each technique, never
the other way round, as Presidio's registry imports its recognizers."""
from __future__ import annotations

from recover_core.errors import RecoverError
from recover_core.masking.allow_list import AllowList
from recover_core.masking.base import Masker
from recover_core.masking.entity_tagger import EntityTagger
from recover_core.masking.vocab_thres import VocabThres

_REGISTRY: dict[str, type[Masker]] = {cls.name: cls for cls in (AllowList, VocabThres, EntityTagger)}


def register(cls: type[Masker]) -> type[Masker]:
    """Add a technique of one's own (a Masker subclass with a ``name``)."""
    _REGISTRY[cls.name] = cls
    return cls


def names() -> list[str]:
    return sorted(_REGISTRY)


def get(name: str) -> type[Masker]:
    if name not in _REGISTRY:
        raise RecoverError(f"Unknown masking technique {name!r}. Known: {', '.join(sorted(_REGISTRY))}.")
    return _REGISTRY[name]
