"""The filling contract: masked text plus marker spans in, filled text plus candidates out.

A filler never sees the original words; it gets the keep-list (if any) as data.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Container, Literal, Sequence

from recover_core.text import validation
from recover_core.errors import RecoverError
from recover_core.text.spans import GENERIC_LABELS, IDENTIFIER_MASK, MARKER_RE as _MARKER_RE, Span

Method = Literal["top1", "topk"]
METHODS = ("top1", "topk")
# How Top-K draws from its K best: vats2024 says "randomly choose a token from the top-K"
# (uniform); weighting by the model's scores keeps more fluent words (our default outside
# the paper-faithful grid, where it was the behaviour before both were offered).
Sampling = Literal["uniform", "weighted"]
SAMPLINGS = ("uniform", "weighted")
DEFAULT_SAMPLING: Sampling = "weighted"
DEFAULT_K = 10
MARKER_RE = _MARKER_RE  # group 1 is the label


@dataclass(frozen=True)
class Candidate:
    word: str
    score: float  # the filler's probability for this word among its candidates


@dataclass
class Fill:
    start: int  # in the filled text
    end: int
    label: str
    word: str
    candidates: list[Candidate]
    fallback: bool = False  # no candidate passed the rules; the best one was used anyway
    source: str | None = None  # the filler that proposed the candidates, where another did (instruct -> "infill")


@dataclass
class Filled:
    text: str
    fills: list[Fill] = field(default_factory=list)
    fallback: str | None = None  # the filler that did the work instead (instruct -> "infill")


@dataclass
class MaskInput:
    """What a filler reads: text with markers, and where they are."""

    text: str
    markers: list[Span]

    @classmethod
    def parse(cls, text: str) -> "MaskInput":
        """Find [MASK] / [PERSON] / ... markers in already-masked text (CLI and UI input)."""
        text = validation.check_text(text, allow_markers=True, what="masked text")
        markers = [Span(m.start(), m.end(), m.group(), m.group(1)) for m in MARKER_RE.finditer(text)]
        if not markers:
            raise RecoverError("Nothing to fill: the text has no [MASK] (or [PERSON], ...) marker.")
        validation.check_mask_count(len(markers), what="masked text")
        return cls(text, markers)


class TopOnePath:
    """A causal filler's sentence as it is filled, and the Top-1 path beside it: the same
    sentence with the best candidate of each earlier mask in place. Every mask's candidates
    are asked on the path, whatever the method, so Top-1 and Top-K share one candidate
    computation (issue 12) and Top-K draws from the list Top-1 shows; a drawn word changes
    the output, never the next mask's context. For Top-1 the two are the same text."""

    def __init__(self, item: MaskInput):
        self.text, self.markers = item.text, list(item.markers)
        self.path, self.path_markers = item.text, list(item.markers)
        self.fills: list[Fill] = []

    def gap(self, t: int) -> tuple[str, str, str, bool]:
        """What the filler reads around mask ``t`` on the path: the text before it, the text
        after it up to the next mask, the whole sentence with the gap as ``___`` and later
        masks as ``…`` (the fill-in-the-blank prompt's view), and whether it starts a sentence."""
        m = self.path_markers[t]
        nxt = self.path_markers[t + 1].start if t + 1 < len(self.path_markers) else len(self.path)
        left = self.path[: m.start]
        return (left, self.path[m.end : nxt], left + "___" + MARKER_RE.sub("…", self.path[m.end :]),
                at_sentence_start(self.path, m.start))

    def place(self, t: int, cands: list[Candidate], pick: int, fallback: bool, source: str | None = None) -> None:
        """Candidate ``pick`` into the output at mask ``t``, the best one into the path."""
        m = self.markers[t]
        word = surface(cands[pick].word, m.label, at_sentence_start(self.text, m.start))
        self.fills.append(Fill(m.start, m.start + len(word), m.label, word, cands, fallback, source))
        self.text, self.markers = _put(self.text, self.markers, t, word)
        best = surface(cands[0].word, m.label, at_sentence_start(self.path, self.path_markers[t].start))
        self.path, self.path_markers = _put(self.path, self.path_markers, t, best)

    def filled(self) -> Filled:
        return Filled(self.text, self.fills)


def _put(text: str, markers: Sequence[Span], t: int, word: str) -> tuple[str, list[Span]]:
    """``text`` with ``word`` in place of marker ``t``, and the markers after it moved to match."""
    m = markers[t]
    delta = len(word) - (m.end - m.start)
    moved = [type(s)(s.start + delta, s.end + delta, s.text, s.label) for s in markers[t + 1 :]]
    return text[: m.start] + word + text[m.end :], list(markers[: t + 1]) + moved


def merge_consecutive(item: MaskInput) -> MaskInput:
    """Markers separated only by spaces become one (vats2024 §4.2.4): 'Maria [MASK] [MASK]'
    is one masked name, and one substitute reads better than two."""
    groups: list[list[Span]] = []
    for m in item.markers:
        if groups and not item.text[groups[-1][-1].end : m.start].strip() and \
                IDENTIFIER_MASK not in (m.label, groups[-1][-1].label):  # an identifier stands alone
            groups[-1].append(m)
        else:
            groups.append([m])
    merged = [Span(g[0].start, g[-1].end, item.text[g[0].start : g[-1].end], merged_label([m.label for m in g]))
              for g in groups]
    return MaskInput(item.text, merged)


def merged_label(labels: Sequence[str]) -> str:
    """The label of one substitute for several consecutive masks.

    One entity type with generic masks around it keeps that type ("[PERSON] [MASK]" is most
    likely one name). A number only stays a number when every part is one: "1999 Zorblax"
    is not a number. Two different entity types ("[PERSON] [GPE]") give no type at all:
    choosing either one would be a guess."""
    specific = {lb for lb in labels if lb not in GENERIC_LABELS}
    if len(specific) == 1 and specific == {"NUMBER"}:
        return "NUMBER" if all(lb == "NUMBER" for lb in labels) else "MASK"
    specific.discard("NUMBER")
    if len(specific) == 1:
        return specific.pop()
    return "MASK"


def choose(cands: Sequence[Candidate], method: Method, k: int, rng: random.Random,
           keep: Container[str] | None, sampling: Sampling = DEFAULT_SAMPLING) -> tuple[int, bool]:
    """Index of the chosen candidate, and whether the keep-list forced a fallback.

    Top-1 takes the best. Top-K draws from the best K, uniformly (vats2024's reading) or in
    proportion to their scores, and redraws while the word is on the keep-list (§3.2)."""
    if not cands:
        raise ValueError("no candidates")
    if method == "top1":
        return 0, False
    pool = list(range(min(k, len(cands))))
    while pool:
        i = _draw(pool, cands, rng, sampling)
        if keep is None or cands[i].word.lower() not in keep:
            return i, False
        pool.remove(i)
    return 0, True


def _draw(pool: list[int], cands: Sequence[Candidate], rng: random.Random, sampling: Sampling) -> int:
    if sampling == "uniform":
        return pool[rng.randrange(len(pool))]
    return rng.choices(pool, weights=[max(cands[i].score, 1e-12) for i in pool])[0]


def rng_for(seed: int, item: int, mask: int) -> random.Random:
    # Seeded per (item, mask), so a result does not depend on batch size or order.
    return random.Random(f"{seed}:{item}:{mask}")


def surface(word: str, label: str, sentence_start: bool) -> str:
    """Case the substitute like the word it replaces: names capitalised, sentences too."""
    if label not in GENERIC_LABELS and label != "NUMBER" and word[:1].islower():
        word = word[:1].upper() + word[1:]
    if sentence_start:
        word = word[:1].upper() + word[1:]
    return word


def at_sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?\"“"


class Filler(ABC):
    """Fills every marker of a batch of sentences."""

    name: ClassVar[str]

    @abstractmethod
    def fill(self, items: Sequence[MaskInput], *, method: Method = "top1", k: int = DEFAULT_K,
             seed: int = 0, keep: Container[str] | None = None, first_id: int | Sequence[int] = 0,
             type_check=None, sampling: Sampling = DEFAULT_SAMPLING) -> list[Filled]:
        """``first_id`` numbers items for seeding, so batches of a stream stay reproducible:
        item i is number ``first_id + i``, or ``first_id[i]`` where a sequence is given (a
        batch command passes each item's line number, so no line's draw depends on which
        other lines share its chunk; ``item_ids``).
        ``type_check`` (candidates.TypeCheck) keeps entity substitutes of the masked type.
        ``sampling`` is how Top-K draws (uniform or weighted); Top-1 ignores it."""


def item_ids(first_id: int | Sequence[int], n: int) -> list[int]:
    """The seeding number of each of ``n`` items (``Filler.fill``'s ``first_id``)."""
    if isinstance(first_id, int):
        return list(range(first_id, first_id + n))
    ids = list(first_id)
    if len(ids) != n:
        raise ValueError(f"{len(ids)} item ids for {n} items")
    return ids


def check_method(method: str) -> Method:
    return validation.check_choice("filling method", method, list(METHODS))  # type: ignore[return-value]


def check_sampling(sampling: str) -> Sampling:
    return validation.check_choice("Top-K sampling", sampling, list(SAMPLINGS))  # type: ignore[return-value]
