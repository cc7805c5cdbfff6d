"""The masking contract: a technique finds spans; it never replaces anything."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, ClassVar, Container, Iterable, Mapping

from recover_core.text.spans import Span, words

class Masker(ABC):
    """Finds private words. Subclasses are small and registered by name."""

    name: ClassVar[str]
    # Words a filler should avoid proposing (vats2024 §3.2, Top-K resampling), asked as
    # ``word.lower() in keep``; None for techniques without a keep-list.
    keep: Container[str] | None = None

    @abstractmethod
    def find(self, text: str) -> list[Span]:
        """Spans of ``text`` to mask, sorted, one per word."""

    def find_many(self, texts: list[str]) -> list[list[Span]]:
        """Batch form; NER overrides it to stream through spaCy's pipe."""
        return [self.find(t) for t in texts]


def number_label(word: str) -> str:
    return "NUMBER" if word[:1].isdigit() else "MASK"


class RankedKeep:
    """The ``n`` most frequent words of a rank table, as a keep-list: one shared table for
    every N, instead of a set per N."""

    def __init__(self, ranks: Mapping[str, int], n: int):
        self.ranks, self.n = ranks, n

    def __contains__(self, word: object) -> bool:
        return self.ranks.get(word, self.n) < self.n  # type: ignore[arg-type]


class AllOf:
    """Words on every one of several keep-lists (techniques combined with '+')."""

    def __init__(self, lists: Iterable[Container[str]]):
        self.lists = tuple(lists)

    def __contains__(self, word: object) -> bool:
        return all(word in k for k in self.lists)


# English clitics, and what they stand for where the host word changes ("won't" = will not).
CLITICS = ("n't", "'s", "'re", "'ve", "'ll", "'d", "'m")
CLITIC_WORDS = {"n't": "not", "'re": "are", "'ve": "have", "'ll": "will", "'m": "am"}
NT_HOSTS = {"ca": "can", "wo": "will", "sha": "shall", "ai": "am"}


def clitic_parts(word: str) -> tuple[str, str | None] | None:
    """(host, the clitic's own word or None) for a contraction or possessive, else None.

    "don't" -> ("do", "not"); "king's" -> ("king", None): a possessive (or "it's" = "it is")
    adds no word of its own that could be private."""
    for c in CLITICS:
        if word.endswith(c) and len(word) > len(c):
            host = word[: -len(c)]
            if c == "n't":
                host = NT_HOSTS.get(host, host)
            return host, CLITIC_WORDS.get(c)
    return None


class KeepListMasker(Masker):
    """Mask every word not on a keep-list (allowList and vocabThres differ only in the list)."""

    def __init__(self, keep: Iterable[str] | Container[str]):
        # A plain list becomes a lower-cased set; a prepared container (RankedKeep) is used as is.
        self.keep = keep if isinstance(keep, (frozenset, RankedKeep)) else frozenset(w.lower() for w in keep)

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
        # A contraction or possessive is kept when its base is: "don't" when "do" and "not"
        # are, "king's" when "king" is (the word pattern keeps clitics inside the word, and
        # no keep-list spells out every contraction).
        parts = clitic_parts(w)
        if parts is not None:
            host, clitic = parts
            return self._kept(host) and (clitic is None or clitic in self.keep)
        # Hyphenated compounds are safe when every part is ("well-known").
        return "-" in w and all(p in self.keep for p in w.split("-") if p)


MaskerFactory = Callable[..., Masker]
