"""entityTagger (vats2024 §3.1): mask the words of named entities found by NER.

Recall is what matters (every missed name leaks), so the statistical NER is
backed by a name-list recognizer: a capitalised word that is a census first name
is a person, unless it is also a common word at the start of the sentence
("Will you come?"). bench/ner_recall.py measures the combinations.
"""
from __future__ import annotations

from typing import Iterable

from recover_core import bundles, lexicons
from recover_core.errors import RecoverError
from recover_core.masking.base import Masker, register
from recover_core.spans import ENTITY_LABELS, Span, WORD_RE, merge, words

DEFAULT_TYPES = ("PERSON", "GPE", "LOC", "ORG", "FAC", "NORP")
ALL_TYPES = ENTITY_LABELS
NUMERIC_TYPES = {"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"}


@register
class EntityTagger(Masker):
    name = "entityTagger"

    def __init__(self, model: str = "spacy-md", types: Iterable[str] = DEFAULT_TYPES, name_list: bool = True):
        types = tuple(types)
        unknown = [t for t in types if t not in ALL_TYPES]
        if unknown or not types:
            raise RecoverError(f"Unknown entity type(s) {unknown or '(none given)'}. Known: {', '.join(ALL_TYPES)}.")
        if bundles.get(model).kind != "ner":
            raise RecoverError(f"{model!r} is not an NER model. NER models: {', '.join(bundles.names('ner'))}.")
        self.model, self.types, self.name_list = model, frozenset(types), name_list
        self._nlp = None

    @property
    def nlp(self):
        if self._nlp is None:
            self._nlp = bundles.load_ner(self.model)
        return self._nlp

    def find(self, text: str) -> list[Span]:
        return self.find_many([text])[0]

    def find_many(self, texts: list[str]) -> list[list[Span]]:
        """One memory zone per batch: the words spaCy learns from the texts (a name it had
        never seen) leave its shared vocabulary when the batch is done. Spans hold plain
        strings, made inside the zone."""
        with bundles.spacy_zone(self.nlp) as nlp:
            found = [self._entity_spans(doc) for doc in nlp.pipe(texts, batch_size=64)]
        out = []
        for text, spans in zip(texts, found):
            if self.name_list and "PERSON" in self.types:
                spans += name_list_spans(text, self.name)
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


def name_list_spans(text: str, source: str = "nameList") -> list[Span]:
    """Capitalised census first names, and a capitalised census surname right after one.

    A possessive "'s" is looked past ("Grace's" -> "Grace") and left out of the span.
    Day and month names the census lists as first names but that are hardly ever
    given names (Sunday, January, September) are not names; April, May, June and
    August are, and follow the common-word rule.
    """
    firsts, lasts, common = lexicons.first_names(), lexicons.last_names(), lexicons.top_words(5000)
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
            if low in firsts and not (low in common and (initial or low in lexicons.FUNCTION_WORDS)):
                hit = True
            elif prev_hit and low in lasts:
                hit = True
        if hit:
            out.append(Span(w.start, w.start + len(t), t, "PERSON", source))
        prev_hit = hit
    return out
