"""The masking contract: a technique finds spans; it never replaces anything."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, ClassVar, Iterable

from recover_core.errors import RecoverError
from recover_core.spans import Span, words

_REGISTRY: dict[str, type["Masker"]] = {}


class Masker(ABC):
    """Finds private words. Subclasses are small and registered by name."""

    name: ClassVar[str]
    # Words a filler should avoid proposing (vats2024 §3.2, Top-K resampling);
    # None for techniques without a keep-list.
    keep: frozenset[str] | None = None

    @abstractmethod
    def find(self, text: str) -> list[Span]:
        """Spans of ``text`` to mask, sorted, one per word."""

    def find_many(self, texts: list[str]) -> list[list[Span]]:
        """Batch form; NER overrides it to stream through spaCy's pipe."""
        return [self.find(t) for t in texts]


def register(cls: type[Masker]) -> type[Masker]:
    _REGISTRY[cls.name] = cls
    return cls


def names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def get(name: str) -> type[Masker]:
    _load_all()
    if name not in _REGISTRY:
        raise RecoverError(f"Unknown masking technique {name!r}. Known: {', '.join(sorted(_REGISTRY))}.")
    return _REGISTRY[name]


def _load_all() -> None:
    # Importing the modules runs their @register decorators.
    from recover_core.masking import allow_list, entity_tagger, vocab_thres  # noqa: F401


def number_label(word: str) -> str:
    return "NUMBER" if word[:1].isdigit() else "MASK"


class KeepListMasker(Masker):
    """Mask every word not on a keep-list (allowList and vocabThres differ only in the list)."""

    def __init__(self, keep: Iterable[str]):
        self.keep = frozenset(w.lower() for w in keep)

    def find(self, text: str) -> list[Span]:
        return [
            Span(w.start, w.end, w.text, number_label(w.text), self.name)
            for w in words(text)
            if not self._kept(w.text)
        ]

    def _kept(self, word: str) -> bool:
        w = word.lower().replace("’", "'")
        if w in self.keep:
            return True
        # Hyphenated compounds are safe when every part is ("well-known").
        return "-" in w and all(p in self.keep for p in w.split("-") if p)


MaskerFactory = Callable[..., Masker]
