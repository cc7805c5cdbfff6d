"""The obfuscation engine: find private spans, propose substitutes, choose them under the rules.

Every path obfuscates through here: the Python API, the `mask`/`fill`/`obfuscate` commands,
the Text tab, the downstream grid and speech. As in Presidio, finding (``find``) and
replacing (``replace``) meet only in a list of spans.

One sentence goes through three steps:

1. mask: the technique finds spans, which become markers (``mask_many``);
2. propose: the filler fills the markers and lists its candidates (``propose``); it never
   sees the original words;
3. choose: under ``rules="ours"`` each substitute is chosen by the pseudonym rules
   (pseudonyms.consistent: a free, same-type, same-gender name, never an original); under
   ``rules="preiss"`` by the same rules read as preiss2023 §2.2 does (the filler's best
   candidate that the name lists accept, else a draw from the lists: speech's default);
   under ``rules="paper"`` the filler saw only [MASK] and its own choice stands (vats2024 §3.2).

Seeding has one rule, so every path gives the same text for the same settings: a line's
draws are seeded by the seed and the masked line itself (never the original words, never
its place in a file or batch), and the pseudonym rules by the seed and each original under
the secret key: a line's own subkey of it (named by the masked line) unless a run-wide
mapping keeps the run consistent, so one name on many lines is not one substitute.

The originals live in the returned ``Result`` and in a consistent run's mapping, in memory only.
"""
from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Iterable, Sequence

from recover_core.errors import RecoverError
from recover_core.filling import KINDS, get_filler
from recover_core.filling.candidates import ner_type_check
from recover_core.filling.base import (DEFAULT_K, DEFAULT_SAMPLING, Candidate, Filled, Filler, MaskInput,
                                       check_method, check_sampling)
from recover_core.masking import Masked, build, mask_many, names as technique_names
from recover_core.kinds.registry import PROFILES
from recover_core.masking.identifiers import WithIdentifiers, passed_identifiers
from recover_core.masking.document import joined, joined_masks, pieces, recurrences
from recover_core.masking.mask import render
from recover_core.masking.public_bodies import respondent_states
from recover_core.models import bundles
from recover_core.pseudonyms import CHOICES, DATE_POLICIES, Pseudonyms, consistent_many as apply_rules
from recover_core.pseudonyms.key import as_key, subkey
from recover_core.pseudonyms.quality import original_spans, originals_per_fill, private_words, without_originals
from recover_core.text import validation
from recover_core.text.spans import ENTITY_LABELS, IDENTIFIER_LABELS, IDENTIFIER_MASK, Span, words_shared

RULES = ("ours", "paper", "preiss")
MARKER_STYLES = ("mask", "class")


@dataclass(frozen=True)
class Settings:
    """Everything that decides an obfuscation's output. Checked by ``check``."""

    technique: str = "entityTagger"  # a masking technique, or several joined by '+'
    n: int | None = None  # vocabThres: keep the N most frequent words
    ner_model: str | None = None  # entityTagger and the type check: spacy-md (default) or spacy-sm
    types: tuple[str, ...] | None = None  # entityTagger: only these entity types
    markers: str = "mask"  # how masked text reads: [MASK], or [PERSON]/[NUMBER]/...
    filler: str = "mlm"  # mlm | infill | instruct
    model: str | None = None  # the filler's model; None: its default
    method: str = "top1"  # top1 | topk
    k: int = DEFAULT_K
    sampling: str = DEFAULT_SAMPLING  # Top-K: uniform | weighted
    type_check: bool = True  # ours: an entity substitute must read as the masked type to the NER
    one_pass: bool = False  # mlm: every mask of a line from one forward pass
    # ours: the pseudonym rules; paper: vats2024's plain procedure; preiss: preiss2023's (§2.2),
    # the pseudonym rules with the "rank" choice and no NER type check (the name lists judge)
    rules: str = "ours"
    choice: str = "prior"  # ours: drawn as real names occur (prior), or the filler's best acceptable candidate (rank)
    seed: int = 0
    keep_list: str | None = None  # `fill` alone: Top-K avoids this technique's keep-list
    # Cards, e-mails, phones, IBANs, IDs, addresses ... (kinds/) masked beside the technique, each
    # replaced by one of its shape. None: on under rules="ours", off under "paper" (the grid).
    identifiers: bool | None = None
    # What is private beside the technique's words (kinds/registry.PROFILES): "direct", names and
    # identifiers; "quasi" adds TAB's quasi-identifiers (dates, ages, sums ...), each in its shape.
    protect: str = "direct"
    # Dates of events under protect="quasi" (pseudonyms.DATE_POLICIES, docs/privacy.md#dates): "jitter"
    # moves a document's dates by a secret offset and order-keeping warp; "shift" by the offset alone.
    dates: str = "jitter"

    def check(self) -> "Settings":
        """These settings, or a RecoverError that says which one is wrong and what is allowed."""
        for part in self.technique.split("+") if isinstance(self.technique, str) else [self.technique]:
            validation.check_choice("masking technique", part.strip() if isinstance(part, str) else part,
                                    technique_names())
        validation.check_choice("filler", self.filler, list(KINDS))
        check_method(self.method)
        check_sampling(self.sampling)
        validation.check_k(self.k)
        validation.check_choice("rules", self.rules, list(RULES))
        validation.check_choice("substitute choice", self.choice, list(CHOICES))
        validation.check_choice("markers", self.markers, list(MARKER_STYLES))
        if self.ner_model is not None and not Path(str(self.ner_model)).is_dir():  # a spaCy folder of one's own
            validation.check_choice("NER model", self.ner_model, bundles.names("ner"))
        if self.n is not None and (isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1):
            raise RecoverError(f"n (vocabThres's vocabulary size) must be a whole number of at least 1, not {self.n!r}.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise RecoverError(f"The seed must be a whole number, not {self.seed!r}.")
        for t in self.types or ():
            validation.check_choice("entity type", t, list(ENTITY_LABELS))
        if self.one_pass and self.filler != "mlm":
            raise RecoverError(f"one_pass is for the MLM filler (filler='mlm'); {self.filler} fills word by word.")
        if self.keep_list not in (None, "none"):
            validation.check_choice("keep-list technique", self.keep_list, ["allowList", "vocabThres"])
        validation.check_choice("protection profile", self.protect, list(PROFILES))
        validation.check_choice("date policy", self.dates, list(DATE_POLICIES))
        if self.protect != "direct" and not self.masks_identifiers:
            raise RecoverError(f"protect={self.protect!r} masks quasi-identifiers beside the identifiers, which "
                               "need rules='ours' and identifiers on.")
        if self.identifiers not in (None, True, False):
            raise RecoverError(f"identifiers is True, False or None (on under our rules), not {self.identifiers!r}.")
        if self.identifiers and self.rules == "paper":
            raise RecoverError("identifiers=True needs rules='ours': under the paper's rules the filler's word "
                               "stands, and a filler must not invent a card number or a phone.")
        return self

    @property
    def masks_identifiers(self) -> bool:
        """Whether identifiers are masked: as set, or by default under our rules only."""
        return self.rules == "ours" if self.identifiers is None else self.identifiers

    @property
    def chooses(self) -> str:
        """How the rules choose (pseudonyms.CHOICES): preiss2023 takes the filler's best
        candidate the lists accept, whatever ``choice`` says; our rules as ``choice`` says."""
        return "rank" if self.rules == "preiss" else self.choice


SETTING_NAMES = tuple(f.name for f in fields(Settings))


@dataclass(frozen=True)
class Replacement:
    """One private span and what stands in its place. ``start``/``end`` are in ``Result.text``."""

    start: int
    end: int
    label: str
    original: str = field(repr=False)  # the private words (in memory only; never in a repr or a log)
    substitute: str = ""
    candidates: tuple[Candidate, ...] = field(default=(), repr=False)  # the filler's, best first
    fallback: bool = False  # no candidate passed the rules: a drawn or best-anyway word
    source: str | None = None  # the filler that proposed the candidates, where another did


@dataclass
class Result:
    """One obfuscated text. ``replacements`` hold the originals: keep a Result in memory only,
    and write ``public()``."""

    text: str
    masked: str = ""  # the text with markers, before filling
    replacements: list[Replacement] = field(default_factory=list)
    filled_by: str | None = None  # the filler that did the whole text's work instead (instruct -> infill)
    # Identifiers (card numbers, e-mails, phones, ...) of the original left unmasked, whole or in
    # part, counted under rules="paper" (0 where they are masked, or identifiers=False says it is
    # meant); ``leaks`` never sees them.
    identifiers_passed: int = 0

    @property
    def leaks(self) -> int:
        """Substitutes equal to the word they replace (0 under our rules). Words never masked
        are not counted here: see ``identifiers_passed``."""
        return sum(r.original.lower() == r.substitute.lower() for r in self.replacements if r.original)

    def public(self, candidates: bool = False) -> dict:
        """What may be written out: the text and each substitute, never an original word."""
        rec: dict = {"text": self.text, "fills": []}
        if self.filled_by:
            rec["filled_by"] = self.filled_by
        for r in self.replacements:
            d: dict = {"start": r.start, "end": r.end, "label": r.label, "word": r.substitute}
            if r.fallback:
                d["fallback"] = True
            if r.source:
                d["filled_by"] = r.source
            if candidates:
                d["candidates"] = [[c.word, round(c.score, 5)] for c in r.candidates]
            rec["fills"].append(d)
        return rec


def line_id(masked: str) -> int:
    """The number that seeds a line's draws: from the masked line alone, so a line gives the
    same text whichever file, batch, chunk or request it comes in, and no original word
    (which the masked line no longer holds) can be read back from a seed."""
    return int.from_bytes(hashlib.blake2b(masked.encode("utf-8"), digest_size=6).digest(), "big")


def masked_line(filled: Filled) -> str:
    """The masked line a filler's output was filled from, as the filler read it: its text with
    each fill a marker of its label again. A line that no run-wide mapping keeps consistent
    draws its substitutes under a subkey of this (``Obfuscator.new_mapping``): it holds no
    original word and not the line's place in a file or batch, and every path (the engine,
    the batch pipeline, which passes no masked text) can rebuild it from what it has."""
    out, at = [], 0
    for f in sorted(filled.fills, key=lambda f: f.start):
        out += [filled.text[at:f.start], "[", f.label, "]"]
        at = f.end
    out.append(filled.text[at:])
    return "".join(out)


class Obfuscator:
    """Masks private words and fills each with a substitute, with models built once, on first use.

    >>> ob = Obfuscator(technique="entityTagger", filler="mlm", method="topk", k=10, seed=0)
    >>> r = ob.obfuscate("Tom lives in Chicago with his sister Margaret.")  # doctest: +SKIP
    """

    def __init__(self, settings: Settings | None = None, *, key: bytes | str | None = None, **kw) -> None:
        unknown = sorted(set(kw) - set(SETTING_NAMES))
        if unknown:
            raise RecoverError(f"Unknown setting {unknown[0]!r}. Known: {', '.join(SETTING_NAMES)}.")
        if "types" in kw and kw["types"] is not None:
            kw["types"] = tuple(kw["types"].split(",") if isinstance(kw["types"], str) else kw["types"])
        self.settings = (replace(settings, **kw) if settings else Settings(**kw)).check()
        self._masker = self._keep = self._type_check = None
        self._keep_built = False
        # The secret under which every substitute is drawn (pseudonyms/key.py): a fresh one per
        # engine unless the caller keeps one. Never in a repr, never in the settings.
        self._key = as_key(key)
        self.mapping = self.new_mapping()  # consistent=True: one run-wide mapping, in memory

    def __repr__(self) -> str:
        return f"Obfuscator({self.settings})"

    def new_mapping(self, key: bytes | None = None, *, line: str | None = None) -> Pseudonyms:
        """An empty mapping from originals to substitutes under these settings' rules, drawn
        under this engine's key, or ``key`` (a request's own, as the app's). With ``line`` (a
        masked line, ``masked_line``) it draws under that line's subkey of the key: under one
        key for a whole run, each draw an HMAC of the original alone, one name on 20 lines got
        3 distinct substitutes (issue 75), and the lines could be linked by them. The masked
        line, not the line's index, names the subkey, so a line's output does not depend on
        its place in a batch; two lines with the same masked text share it, and they are
        linked only as far as any deterministic output links equal inputs."""
        key = key or self._key
        if line is not None:
            key = subkey(key, "line:" + line)
        mapping = Pseudonyms(self.settings.seed, choice=self.settings.chooses, key=key)
        mapping.dates = self.settings.dates
        return mapping

    # --- models, built on first use ------------------------------------------------------

    @property
    def masker(self):
        if self._masker is None:
            s = self.settings
            self._masker = build(s.technique, n=s.n, ner_model=s.ner_model, types=list(s.types) if s.types else None)
            # Our rules (and preiss2023's) read the technique's spans as a reader would: public
            # bodies stay, a person's initials and "O’Brien" go with the name, a month in a date is
            # no person; identifiers first, winning where they overlap. vats2024's procedure
            # (rules="paper") masks what the paper masked.
            if s.rules != "paper" or s.masks_identifiers:
                self._masker = WithIdentifiers(self._masker, s.protect, identifiers=s.masks_identifiers)
        return self._masker

    @property
    def filler(self) -> Filler:
        return get_filler(self.settings.filler, self.settings.model)

    @property
    def keep(self):
        """The words Top-K must not draw (§3.2): the masking technique's keep-list."""
        if not self._keep_built:
            s = self.settings
            if s.keep_list not in (None, "none"):
                self._keep = build(s.keep_list, n=s.n).keep
            elif s.keep_list is None:
                self._keep = self.masker.keep
            self._keep_built = True
        return self._keep

    @property
    def type_check(self):
        """Entity substitutes must read as the masked type to the same NER that masks (ours only)."""
        if not (self.settings.type_check and self.settings.rules == "ours"):
            return None
        if self._type_check is None:
            self._type_check = ner_type_check(bundles.load_ner(self.settings.ner_model or "spacy-md"))
        return self._type_check

    # --- analyze ---------------------------------------------------------------------------

    def find(self, text: str) -> list[Span]:
        """The private spans of ``text`` (Presidio's analyze), a sentence or a whole document.
        Each span holds its words. A document's spans are in ``validation.check_document(text)``'s
        offsets, which are the text's own unless it held invisible characters."""
        if validation.is_document(text):
            return self.mask(text).spans
        return self.masker.find(validation.check_text(text))

    def mask(self, text: str) -> Masked:
        """``text`` with markers: a sentence, or a document of any length (``is_document``)."""
        if validation.is_document(text):
            doc = validation.check_document(text)
            parts, masked = self._document_masks(doc)
            return joined_masks(doc, parts, masked)
        return self.mask_many([validation.check_text(text)])[0]

    def _document_masks(self, doc: str) -> tuple[list[tuple[int, str]], list[Masked]]:
        """A checked document cut into pieces (masking/document.py), each masked, with every
        recurrence of what was found anywhere in the document masked too."""
        parts = pieces(doc)
        texts = [validation.check_text(p, what=f"paragraph at character {at:,}") for at, p in parts]
        with words_shared():
            found = recurrences(parts, self.masker.find_many(texts))
            return parts, [render(t, spans, self.settings.markers) for t, spans in zip(texts, found)]

    def mask_many(self, texts: Sequence[str]) -> list[Masked]:
        """Masked lines; texts must already be checked (``validation.check_text``)."""
        return mask_many(list(texts), self.masker, self.settings.markers)

    # --- anonymize -------------------------------------------------------------------------

    def obfuscate(self, text: str) -> Result:
        """One text, masked and filled: a sentence, or a document of any length."""
        return self.obfuscate_many([text])[0]

    def obfuscate_many(self, texts: Iterable[str], *, consistent: bool = False, subject: str | None = None
                       ) -> list[Result]:
        """Many texts, masked and filled in batches. ``consistent=True`` gives one original one
        substitute across this call and every earlier consistent call (``self.mapping``). Dates
        of events move by each text's own shift, unless ``subject`` names whom they are all
        about: then by that subject's one shift (docs/privacy.md#dates).
        A document (``validation.is_document``: several lines, or longer than a sentence may be)
        keeps its paragraphs, and one original has one substitute throughout it."""
        texts = list(texts)
        if any(validation.is_document(t) for t in texts if isinstance(t, str)):
            return [self.obfuscate_document(t, consistent=consistent, subject=subject) if isinstance(t, str) and
                    validation.is_document(t) else self.obfuscate_many([t], consistent=consistent, subject=subject)[0]
                    for t in texts]
        checked = [validation.check_text(t, what=f"text {i + 1}") for i, t in enumerate(texts)]
        return self.fill(self.mask_many(checked), consistent=consistent, scope=_subject_scope(subject))

    def obfuscate_document(self, text: str, *, consistent: bool = False, subject: str | None = None) -> Result:
        """A document of any length: its pieces masked and filled together under one mapping,
        so a person, a place or a date shift is the same in every paragraph; line breaks and
        the space between paragraphs stay as they were."""
        doc = validation.check_document(text)
        parts, masked = self._document_masks(doc)
        whole = joined_masks(doc, parts, masked)
        # One mapping per document, under its own subkey (named by its masked text): a shift or a
        # pseudonym reused across documents would link them. A consistent run keeps its own.
        mapping = self.mapping if consistent else self.new_mapping(line="document:" + whole.masked)
        mapping.reserve(sorted(respondent_states([p for _, p in parts])))  # it stays: never a substitute
        # Its dates move by the document's own shift, also in a consistent run: a run-wide shift let
        # one known date undo every document (issue 83). A named subject shares one shift.
        results = self.fill(masked, mapping=mapping, scope=_subject_scope(subject) or "document:" + whole.masked)
        text_out, at = joined(doc, parts, [r.text for r in results])
        reps = [replace(x, start=x.start + off, end=x.end + off) for r, off in zip(results, at) for x in r.replacements]
        return Result(text_out, whole.masked, reps, next((r.filled_by for r in results if r.filled_by), None),
                      sum(r.identifiers_passed for r in results))

    def replace(self, text: str, spans: Iterable[Span | tuple | dict]) -> Result:
        """Substitutes for spans found anywhere: another detector's, or spans a person edited
        (Presidio's anonymize). Every substitute rule applies as for ``obfuscate``."""
        text = validation.check_text(text)
        return self.fill([render(text, validation.check_spans(text, spans), self.settings.markers)])[0]

    def fill(self, masked: Sequence[Masked], *, consistent: bool = False, key: bytes | None = None,
             mapping: Pseudonyms | None = None, scope: str | None = None) -> list[Result]:
        """Masked lines (``mask_many``, or spans made into markers) filled and chosen; ``key``
        draws them under a key of their own (one request's) rather than the engine's;
        ``mapping`` keeps them consistent with each other (one document's pieces)."""
        for m in masked:
            validation.check_mask_count(len(m.markers), what="masked text")
        todo = [i for i, m in enumerate(masked) if m.markers]
        filled = self.propose([MaskInput(masked[i].masked, masked[i].markers) for i in todo])
        out = [Result(m.masked, m.masked) for m in masked]
        mapping = mapping or (self.mapping if consistent else None)
        chosen = self.choose_many(filled, [(masked[i].original, masked[i].spans) for i in todo], mapping,
                                  masked=[masked[i].masked for i in todo], key=key, scope=scope)
        for i, r in zip(todo, chosen):
            out[i] = r
        if self.settings.rules == "paper" and self.settings.identifiers is None:
            self._count_passed_identifiers(masked, out)
        return out

    def _count_passed_identifiers(self, masked: Sequence[Masked], out: list[Result]) -> None:
        """rules="paper" leaves identifiers unmasked, and ``leaks`` cannot see a word never
        masked (issue 75): count in each Result the identifiers its text kept, and warn once per
        call with counts only (never an identifier's text). identifiers=False says it is meant
        (the grid, on public corpora): neither, and no time spent (the recognizers take ~1 ms a line)."""
        for m, r in zip(masked, out):
            r.identifiers_passed = passed_identifiers(m.original, m.spans)
        n = sum(r.identifiers_passed for r in out)
        if n:
            texts = sum(bool(r.identifiers_passed) for r in out)
            warnings.warn(f"rules='paper' does not mask identifiers: {n} (card numbers, e-mail addresses, phones, "
                          f"IDs, ...) in {texts} of {len(out)} texts pass through unmasked (Result.identifiers_passed "
                          "counts them). Use rules='ours' to replace them, or identifiers=False if this is meant.",
                          IdentifierWarning, stacklevel=3)

    def propose(self, items: Sequence[MaskInput]) -> list[Filled]:
        """The filler's fills and candidates for masked items (step 2: no original is seen).
        Under the paper's rules the filler reads every marker as [MASK]."""
        if not items:
            return []
        s = self.settings
        items = self.filler_inputs(items)
        extra = {"one_pass": True} if s.one_pass else {}  # the MLM filler's own option
        return self.filler.fill(items, method=s.method, k=s.k, seed=s.seed, keep=self.keep,
                                first_id=[line_id(it.text) for it in items], type_check=self.type_check,
                                sampling=s.sampling, **extra)

    def filler_inputs(self, items: Sequence[MaskInput]) -> list[MaskInput]:
        """What the filler reads. vats2024's fillers see [MASK] and nothing else (class markers
        are its future work, §5); under our rules each mask also carries the masker's label."""
        if self.settings.rules == "paper":
            return [MaskInput(it.text, [replace(m, label="MASK") for m in it.markers]) for it in items]
        # An identifier's substitute keeps its shape and never comes from a filler (``choose``
        # puts the label back): the filler reads it as a plain mask.
        return [MaskInput(it.text, [replace(m, label=IDENTIFIER_MASK) if m.label in IDENTIFIER_LABELS else m
                                    for m in it.markers]) for it in items]

    def choose(self, filled: Filled, originals: tuple[str, list[Span]] | None = None,
               mapping: Pseudonyms | None = None, *, masked: str = "") -> Result:
        """Step 3: each substitute chosen under the rules, where the originals are known.
        ``mapping`` keeps a whole run consistent; by default each text has its own."""
        return self.choose_many([filled], [originals], mapping, masked=[masked])[0]

    def choose_many(self, filled: Sequence[Filled], originals: Sequence[tuple[str, list[Span]] | None],
                    mapping: Pseudonyms | None = None, *, masked: Sequence[str] | None = None,
                    key: bytes | None = None, scope: str | None = None) -> list[Result]:
        """``choose`` for many texts, the tagger's checks of their draws made together
        (pseudonyms.consistent_many). Each text has a mapping of its own, drawn under its masked
        line's subkey of ``key`` where given (else of the engine's key), unless ``mapping``
        keeps them all consistent (in order). Dates of events move by one shift per ``scope``: by
        default each text's own (named by its masked line), so a run-wide mapping shares no shift."""
        words = [originals_per_fill(o[0], o[1], f) if o else None for f, o in zip(filled, originals)]
        filled = list(filled)
        if self.settings.rules != "paper":  # ours, or preiss2023's reading of them
            ruled = [i for i, w in enumerate(words) if w is not None]
            # A text without a run-wide mapping draws under its own line's subkey (new_mapping),
            # named by the masked line as the filler read it, before identifiers are relabelled.
            lines = {i: masked_line(filled[i]) for i in ruled}
            for i in ruled:
                filled[i] = identifier_labels(filled[i], originals[i][0], originals[i][1])  # type: ignore[index]
            done = apply_rules([(filled[i], words[i], mapping or self.new_mapping(key, line=lines[i]),
                                 scope or "text:" + lines[i]) for i in ruled], self.type_check)
            for i, f in zip(ruled, done):
                filled[i] = f
        # The text's own originals, and a run's originals read in place (a long consistent
        # run's mapping grows: copying it for every line would make the run quadratic); they
        # include this call's later texts, which no candidate list should name either.
        out = []
        for f, w, m in zip(filled, words, masked or [""] * len(filled)):
            w = w if w is not None and len(w) == len(f.fills) else [""] * len(f.fills)
            text_words, text_sounds = private_words(w)
            private = ((text_words, mapping.originals), (text_sounds, mapping._sounds)) if mapping \
                else ((text_words,), (text_sounds,))
            reps = [Replacement(x.start, x.end, x.label, o, x.word, without_originals(x.candidates, private),
                                x.fallback, x.source)
                    for x, o in zip(f.fills, w)]
            out.append(Result(f.text, m, reps, f.fallback))
        return out

    # --- checks ----------------------------------------------------------------------------

class IdentifierWarning(UserWarning):
    """Identifiers passed through unmasked (rules="paper" with identifiers left at its default)."""


def identifier_labels(filled: Filled, original: str, spans: list[Span]) -> Filled:
    """The fills that stand exactly where an identifier was, labelled as that identifier again
    (the filler read them as [MASK]), so the pseudonym rules give them a substitute of its shape.
    The filler's words for such a slot ("approved" for a card number) are dropped: none can
    be its substitute, and a candidate list that shows them would say otherwise."""
    ids = {(s.start, s.end): s.label for s in spans if s.label in IDENTIFIER_LABELS}
    if not ids or len(filled.fills) > len(spans):
        return filled
    fills = [replace(f, label=ids[r], candidates=[]) if r in ids else f
             for f, r in zip(filled.fills, original_spans(original, spans, filled))]
    return replace(filled, fills=fills)


def _subject_scope(subject: str | None) -> str | None:
    """The date scope a caller's subject names ("patient 17": all of its texts share one shift)."""
    if subject is None:
        return None
    if not isinstance(subject, str) or not subject.strip():
        raise RecoverError(f"subject names whom the texts are about (a non-empty string), not {subject!r}.")
    return "subject:" + subject.strip()


def obfuscate(text: str, **settings) -> Result:
    """The one-off form: ``recover_core.obfuscate("Tom met Ann.", method="topk")``."""
    return Obfuscator(**settings).obfuscate(text)


__all__ = ["Obfuscator", "Result", "Replacement", "Settings", "obfuscate", "line_id", "RULES", "IdentifierWarning"]
