"""Open text corpora that install here, as lists of sentences.

None of them is Fisher, Reddit or WSJ: they are stand-ins with the same roles.
"""
from __future__ import annotations

import functools
from pathlib import Path

from recover_core.bundles import package_dir


@functools.lru_cache(maxsize=1)
def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(text: str) -> list[str]:
    return [s.text.strip() for s in _sentencizer()(text).sents if s.text.strip()]


@functools.lru_cache(maxsize=1)
def news() -> tuple[str, ...]:
    """The Lee background corpus (Australian news, 300 documents) shipped in gensim's test data."""
    path = package_dir("gensim") / "test" / "test_data" / "lee_background.cor"
    out: list[str] = []
    for doc in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        out += [s for s in split_sentences(doc) if 4 <= len(s.split()) <= 60]
    return tuple(out)


CORPORA = {"news": news}
