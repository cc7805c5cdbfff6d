"""Names no list holds, found by how they are spelled.

The name lists know about 60,000 names; a new user's colleagues and callers have names they
do not know (Hocheol, Oddstein, Salimbay). Spelling carries much of what makes a word a
name: a character n-gram model trained on the lists tells "Aerlaend" from "pneumonia".
bench/ner_recall.py measures it on held-out names from a source the lists never read.

The model is a logistic regression over hashed character 2-5-grams (scikit-learn), trained
here on the recognizers' own lists: positives are the census and Faker names that are not
everyday words, negatives wordfreq's 50,000 commonest English words that no name or place
list holds. It trains in about 10 s, once per machine (``prepare`` does it), and is kept in
the cache under a key of its data and settings.

entityTagger asks it only about words the NER and the lists left alone, that are
capitalised (or were capitalised by the truecaser) and are not everyday words. A word in
the middle of a sentence needs less evidence than one at its start, where every word is
capitalised.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import asdict, dataclass

import numpy as np

from recover_core.runtime import atomic
from recover_core.data import lexicons
from recover_core.runtime.env import cache_dir
from recover_core.data.lexicons import everyday


@dataclass(frozen=True)
class ShapeConfig:
    ngrams: tuple[int, int] = (2, 5)
    features: int = 2 ** 19
    C: float = 4.0  # the regularisation chosen on the lists: held-out names vs rare English words
    negatives: int = 50_000  # wordfreq's commonest English words
    # P(name) a candidate needs: mid-sentence, a capital is already evidence; at a sentence's
    # start, or capitalised only by the truecaser, the spelling must say more.
    inside: float = 0.25
    initial: float = 0.6
    version: int = 1


CONFIG = ShapeConfig()


def training_words(cfg: ShapeConfig = CONFIG) -> tuple[list[str], list[str]]:
    """(names, English words): the lists' names that are not everyday words, and wordfreq's
    commonest words that no name or place list holds."""
    from wordfreq import top_n_list

    names = lexicons.first_names() | lexicons.last_names() | lexicons.world_first_names() | \
        lexicons.world_last_names()
    pos = sorted(w for w in names if w.isalpha() and len(w) > 2 and not everyday(w))
    places = lexicons.place_names()
    neg = sorted({w for w in top_n_list("en", cfg.negatives) if w.isalpha() and len(w) > 2}
                 - names - places)
    return pos, neg


class NameShape:
    """P(a word is a name) from its spelling."""

    def __init__(self, vectorizer, classifier) -> None:
        self.vectorizer, self.classifier = vectorizer, classifier

    def score(self, words: list[str]) -> np.ndarray:
        """One probability per word (case does not matter)."""
        if not words:
            return np.zeros(0)
        x = self.vectorizer.transform([w.lower() for w in words])  # (n_words, features)
        return self.classifier.predict_proba(x)[:, 1]


def _vectorizer(cfg: ShapeConfig):
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(analyzer="char_wb", ngram_range=cfg.ngrams, n_features=cfg.features,
                             alternate_sign=False, norm="l2")


def train(cfg: ShapeConfig = CONFIG) -> NameShape:
    from sklearn.linear_model import LogisticRegression

    pos, neg = training_words(cfg)
    vec = _vectorizer(cfg)
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    clf = LogisticRegression(C=cfg.C, max_iter=2000, class_weight="balanced")
    clf.fit(vec.transform(pos + neg), y)
    return NameShape(vec, clf)


@functools.lru_cache(maxsize=1)
def model(cfg: ShapeConfig = CONFIG) -> NameShape:
    """The trained model, from the cache or trained now and cached. scikit-learn is imported
    here, not at the top: masking is imported by every command, most never need it."""
    import joblib
    import sklearn

    pos, neg = training_words(cfg)
    trained = {k: v for k, v in asdict(cfg).items() if k not in ("inside", "initial")}  # thresholds: no retraining
    key = hashlib.sha1(repr((trained, sklearn.__version__, pos, neg)).encode()).hexdigest()[:12]
    path = cache_dir() / f"name-shape-{key}.joblib"
    if path.is_file():
        return NameShape(_vectorizer(cfg), joblib.load(path))
    shape = train(cfg)
    with atomic.replacing(path) as tmp:
        joblib.dump(shape.classifier, tmp)
    return shape
