"""Word and character error rates, from jiwer, after Whisper's English normalizer on both sides.

The normalizer (transformers' ``EnglishTextNormalizer``) lowercases, drops punctuation and
fillers, spells numbers as digits ("ten" and "10" both become 10), and expands contractions,
so that a WER counts recognition errors rather than style. In a Space it also maps British to
American spellings (the hub's normalizer.json); offline that list is not installed and the
mapping is empty, which can only count a "colour"/"color" pair as an error.
"""
from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass, field
from typing import Sequence

from recover_core.runtime import env
from recover_core.errors import RecoverError


@functools.lru_cache(maxsize=1)
def normalizer():
    from transformers.models.whisper.english_normalizer import EnglishTextNormalizer

    mapping: dict = {}
    if not env.offline():
        import json

        from recover_core.asr.whisper import HUB_ID
        from recover_core.models.sources import hub_file

        mapping = json.loads(open(hub_file(HUB_ID, "normalizer.json")).read())  # at its pinned revision
    return EnglishTextNormalizer(mapping)


def normalize(text: str) -> str:
    return " ".join(normalizer()(text).split())


def check_reference(text: str, name: str = "reference") -> str:
    """A reference must hold English words in Latin script: the recognizer is English-only."""
    if not text or not text.strip():
        raise RecoverError(f"The {name} is empty: type what was said, or upload its .dot/.lsn transcript.")
    letters = [c for c in text if c.isalpha()]
    latin = sum("LATIN" in unicodedata.name(c, "") for c in letters)
    if letters and latin < 0.5 * len(letters):
        raise RecoverError(f"The {name} is not in Latin script; the recognizer (Whisper tiny.en) is English-only.")
    if not any(c.isalnum() for c in normalize(text)):
        raise RecoverError(f"The {name} has no words left after normalization (only punctuation or fillers).")
    return text


@dataclass
class Score:
    wer: float  # percent
    cer: float  # percent
    substitutions: int
    deletions: int
    insertions: int
    hits: int
    ref_words: int
    # One list per utterance of (op, reference word, hypothesis word); op is
    # equal / substitute / delete / insert (jiwer's alignment, flattened).
    alignment: list[list[tuple[str, str, str]]] = field(default_factory=list)

    def to_dict(self, with_alignment: bool = False) -> dict:
        d = {"wer_percent": round(self.wer, 2), "cer_percent": round(self.cer, 2), "substitutions": self.substitutions,
             "deletions": self.deletions, "insertions": self.insertions, "hits": self.hits,
             "ref_words": self.ref_words}
        if with_alignment:
            d["alignment"] = self.alignment
        return d


def score(references: Sequence[str], hypotheses: Sequence[str]) -> Score:
    """Corpus-level WER and CER (errors summed over utterances, not averaged)."""
    import jiwer

    if len(references) != len(hypotheses):
        raise RecoverError(f"{len(references)} references but {len(hypotheses)} hypotheses.")
    refs, hyps = [normalize(r) for r in references], [normalize(h) for h in hypotheses]
    keep = [i for i, r in enumerate(refs) if r]
    if not keep:
        raise RecoverError("Every reference is empty after normalization: there is nothing to score against.")
    refs, hyps = [refs[i] for i in keep], [hyps[i] for i in keep]
    words = jiwer.process_words(refs, hyps)
    chars = jiwer.process_characters(refs, hyps)
    alignment = []
    for r, h, chunks in zip(words.references, words.hypotheses, words.alignments):
        row = []
        for c in chunks:
            if c.type == "insert":
                row += [("insert", "", h[j]) for j in range(c.hyp_start_idx, c.hyp_end_idx)]
            elif c.type == "delete":
                row += [("delete", r[i], "") for i in range(c.ref_start_idx, c.ref_end_idx)]
            else:
                row += [(c.type, r[i], h[j]) for i, j in zip(range(c.ref_start_idx, c.ref_end_idx),
                                                             range(c.hyp_start_idx, c.hyp_end_idx))]
        alignment.append(row)
    n = words.hits + words.substitutions + words.deletions
    return Score(100 * words.wer, 100 * chars.cer, words.substitutions, words.deletions, words.insertions,
                 words.hits, n, alignment)
