"""Whether a substitute the prior may draw reads as its type: a property of the word, measured
once by the masking NER (spaCy md) in plain sentences and committed as a table, so that every
machine and a Space draw from the same pool.

A substitute a tagger misreads changes the text's entities ("Julia" read as nothing,
"Hamilton" as a person, "Toyota" as a company), and md's reads carry over to taggers no rule
consults: en_core_web_sm reads a name md read as a person in every sentence 71-85% of the
time (one md missed in three or more, 30%), a city md read as a place in every sentence 90%
of the time (the others, 38%).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Collection, Sequence

from recover_core.runtime import atomic
from recover_core.data import lexicons


def count_reads(nlp, words: Sequence[str], frames: Sequence[str], labels: Collection[str]) -> dict[str, int]:
    """In how many of ``frames`` (each with one ``{}``) ``nlp`` reads each word, title-cased,
    as an entity with one of ``labels`` that covers it."""
    texts = [t.format(w.title()) for w in words for t in frames]
    out = dict.fromkeys(words, 0)
    for i, doc in enumerate(nlp.pipe(texts, batch_size=256)):
        word = words[i // len(frames)]
        at = texts[i].index(word.title())
        out[word] += any(e.label_ in labels and e.start_char <= at and at + len(word) <= e.end_char for e in doc.ents)
    return out


def build_table(out: Path, groups: dict[str, Sequence[str]], measure: Callable[..., dict[str, int]], *,
                contexts: str, n: int, what: str, rebuild: str) -> Path:
    """Measure each group's words with spaCy md (``measure(nlp, words, group)``) and write the
    committed table: a header saying what and how, then "group<TAB>word<TAB>count" rows."""
    from recover_core.models import bundles

    nlp = bundles.load_ner("spacy-md")
    header = (f"# In how many of {contexts} (of {n}) spaCy en_core_web_md {nlp.meta['version']} reads each\n"
              f"# {what}\n# Rebuild: python -c '{rebuild}'\n")
    counts = {group: measure(nlp, list(words), group) for group, words in groups.items()}
    atomic.write_text(out, header + "".join(f"{group}\t{w}\t{k}\n" for group, found in counts.items()
                                            for w, k in found.items()))
    return out


def load_table(path: Path) -> dict[str, dict[str, int]]:
    """A table written from ``table_text``: group -> word -> sentences read as its type."""
    out: dict[str, dict[str, int]] = {}
    for line in lexicons.read_lines(path):
        group, word, k = line.split("\t")
        out.setdefault(group, {})[word] = int(k)
    return out
