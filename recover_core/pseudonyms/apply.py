"""The pseudonym rules applied to a filler's output: ``consistent`` for a text,
``consistent_many`` for many, whose drawn people and places the tagger checks together."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Sequence

from recover_core.filling.base import Fill, Filled, at_sentence_start
from recover_core.filling.candidates import TypeCheck, near
from recover_core.data import countries, lexicons
from recover_core.pseudonyms.names import POSSESSIVES, TITLES, bare, title_gender
from recover_core.pseudonyms.policy import Pseudonyms
from recover_core.text.spans import GENERIC_LABELS, IDENTIFIER_LABELS

# A drawn substitute the tagger does not read as its type ("Ernestine" read as an
# organisation) is drawn again, this many times at most; the filler's candidates were
# checked already (candidates.same_type), the prior's draws are checked here.
DRAW_CHECKS = 8
# Bodies too: a drawn acronym the tagger reads as no body ("the KRZ delivered judgment" for "the
# EAT") is drawn again (TAB train+dev, substitute kind: 53 -> 44 of 1,017 misread).
CHECKED_LABELS = frozenset({"PERSON", "GPE", "LOC", "ORG"})


def consistent(filled: Filled, originals: Sequence[str], pseudonyms: Pseudonyms, check: TypeCheck | None = None
               ) -> Filled:
    """A filler's output with each substitute chosen under the rules above: under "prior" a
    draw of the right kind, tilted by the filler's scores; under "rank" the filler's own
    choice where it is acceptable and free, else its next candidate, else a draw.

    ``originals`` holds the original words under each fill (``quality.originals_per_fill``);
    they stay in memory. One ``Pseudonyms`` per text keeps that text consistent; share one to
    keep a whole run consistent. ``check`` (candidates.TypeCheck) has a drawn person or place
    read as its type where it stands (the NER_CONTEXT words each side), or drawn again
    (DRAW_CHECKS)."""
    return consistent_many([(filled, originals, pseudonyms)], check)[0]


def consistent_many(texts: Sequence[tuple], check: TypeCheck | None = None
                    ) -> list[Filled]:
    """``consistent`` for many texts, the same outcome draw for draw, with the tagger asked
    about many draws at once: one call per round instead of one per draw, which is where
    the prior's time went (issue 59). Texts that share a ``Pseudonyms`` are taken in order
    (a text's draws depend on those before it); texts with a mapping of their own are
    independent."""
    for t in texts:  # every original value of a scope is held before any is drawn (held.py)
        _hold(*t)
    if check is None:
        return [_Text(*t).run(None) for t in texts]
    # In rounds. Each text's draws run on; a draw whose verdict is known gets it, an unknown
    # one is taken as read right for now and asked. The round's questions go to the tagger
    # in one call. Where it refuses a draw taken as read right, that text's mapping is undone
    # (its journal) back to that fill, and the next round goes on from there with the
    # answers; a text of the same mapping after it starts again. Where it reads every such
    # draw right, the text is final as it stands. Either way every text ends with what the
    # tagger's own verdicts give.
    verdicts: dict[tuple[str, int, int, str], bool] = {}
    asked: dict[tuple[str, int, int, str], None] = {}  # this round's questions, in order, once each

    def ask(text: str, start: int, end: int, label: str) -> bool | None:
        q = (text, start, end, label)
        if q in verdicts:
            return verdicts[q]
        asked[q] = None
        return None

    queues: dict[int, list[int]] = {}
    for i, (_, _, pseudonyms, *_) in enumerate(texts):
        queues.setdefault(id(pseudonyms), []).append(i)
    runs: list[_Text | None] = [None] * len(texts)
    out: list[Filled] = [None] * len(texts)  # type: ignore[list-item]
    pending = [(q, 0, 0) for q in queues.values()]  # (a mapping's texts, the text and the fill to go on from)
    mappings = [texts[q[0]][2] for q in queues.values()]
    for m in mappings:
        m._checkpoint()
    try:
        while pending:
            again = []
            for queue, n, fill in pending:
                for pos in range(n, len(queue)):
                    i = queue[pos]
                    if pos == n and runs[i] is not None:
                        runs[i].rewind(fill)  # back to that fill: undoes this mapping's later draws too
                    else:
                        runs[i] = _Text(*texts[i])
                    out[i] = runs[i].run(ask, fill if pos == n else 0)
                again.append((queue, n))
            if asked:
                qs = list(asked)
                verdicts.update(zip(qs, check([q[:3] for q in qs], [q[3] for q in qs])))
                asked.clear()
            pending = []
            for queue, n in again:
                refused = next(((pos, j) for pos in range(n, len(queue)) for j, q in runs[queue[pos]].unsure
                                if not verdicts[q]), None)
                if refused is not None:
                    pending.append((queue, *refused))
    finally:
        for m in mappings:
            m._commit()
    return out


def _hold(filled: Filled, originals: Sequence[str], pseudonyms: Pseudonyms, scope: str = "") -> None:
    if len(originals) == len(filled.fills):
        pseudonyms.hold(zip(agreed_labels(filled.fills, originals), originals), scope)


class _Text:
    """One text under the rules, fill by fill; with a question asked, it can go back to any
    fill it has reached (``rewind``) and go on from there (``run``)."""

    def __init__(self, filled: Filled, originals: Sequence[str], pseudonyms: Pseudonyms, scope: str = ""):
        self.filled, self.originals, self.pseudonyms = filled, originals, pseudonyms
        self.scope = scope  # the document (or subject) whose one date shift this text's dates take
        self.paired = len(originals) == len(filled.fills)  # else nothing pairs the fills with their originals
        self.labels = agreed_labels(filled.fills, originals) if self.paired else []
        self.pieces: list[str] = []
        self.fills: list[Fill] = []
        self.at = 0
        self.marks: list[tuple[int, int, int, int]] = []  # before each fill: (journal mark, pieces, fills, at)
        self.unsure: list[tuple[int, tuple[str, int, int, str]]] = []  # (fill, question) taken as yes unasked
        if self.paired:
            pseudonyms.reserve([w for o in originals for w in o.split()])

    def rewind(self, fill: int) -> None:
        mark, n_pieces, n_fills, self.at = self.marks[fill]
        self.pseudonyms._rollback(mark)
        del self.pieces[n_pieces:], self.fills[n_fills:], self.marks[fill:]
        self.unsure = [(j, q) for j, q in self.unsure if j < fill]

    def run(self, ask: Callable[[str, int, int, str], bool | None] | None, start: int = 0) -> Filled:
        """The text with fills ``start`` on chosen. ``ask(text, begin, end, label)``: does the
        tagger read ``text[begin:end]`` as ``label`` (None: not known yet, taken as yes)?"""
        if not self.paired:
            return self.filled
        filled, pseudonyms, pieces = self.filled, self.pseudonyms, self.pieces
        for j in range(start, len(filled.fills)):
            f, original, label = filled.fills[j], self.originals[j], self.labels[j]
            pseudonyms.scope = self.scope  # texts of one mapping take turns: each draws in its own scope
            if ask is not None:
                self.marks.append((pseudonyms._checkpoint(), len(pieces), len(self.fills), self.at))
            prefer = [f.word] + [c.word for c in f.candidates if c.word != f.word]
            scores = {bare(c.word): c.score for c in reversed(f.candidates)}  # a word listed twice: its best score
            head = "".join(pieces) + filled.text[self.at: f.start]
            tries = DRAW_CHECKS if ask is not None and pseudonyms.choice == "prior" and label in CHECKED_LABELS else 1
            # The tagger reads a word's type from the words near it, as it does for the
            # filler's candidates (candidates.same_type_many): a short text tags faster.
            left, right = near(head, filled.text[f.end:]) if tries > 1 else ("", "")
            for attempt in range(tries):
                pseudonyms.attempt = attempt
                before = set(pseudonyms.mapping)
                if label == "PERSON":
                    word = " ".join(pseudonyms.person(original.split(), prefer, after_title(filled.text, f.start), scores,
                                                      gender_cue(filled.text, f.start, f.end)))
                else:
                    word = pseudonyms.other(original, label, prefer, scores)
                    if label not in IDENTIFIER_LABELS:  # "tom@example.com" stays lower case
                        word = word[:1].upper() + word[1:] if f.word[:1].isupper() else word  # a sentence start
                    head_word = original.split(" ", 1)[0]
                    if head_word[:1].islower() and word.lower().startswith(head_word + " ") and not at_sentence_start(head, len(head)):
                        word = head_word + word[len(head_word):]  # a kept word keeps its case: "the municipality of Palermo"
                if label not in IDENTIFIER_LABELS and original.islower():
                    # a transcript in lower case ("i called john smith"): a capitalised stand-in
                    # would read wrong and point at every replaced word
                    word = word.lower()
                new = [k for k in pseudonyms.mapping if k not in before]
                if not new or attempt == tries - 1:
                    break
                q = (left + word + right, len(left), len(left) + len(word), label)
                verdict = ask(*q)  # type: ignore[misc]
                if verdict is None:
                    self.unsure.append((j, q))
                if verdict is not False:
                    break
                pseudonyms.retract(new)  # drawn again, from the next attempt's stream
            pseudonyms.attempt = 0
            before = agree_article(filled.text[self.at: f.start], word)
            before = agree_the(before, word) if label in PLACE_ARTICLE_LABELS else before
            if label in ("EVENT_DATE", "DATE_OF_BIRTH") and re.fullmatch(r"\d{4}", word):  # "born on 1962" too
                before = re.sub(r"(?<![\w-])([Oo])n(\s+)$", lambda m: ("I" if m[1] == "O" else "i") + "n" + m[2], before)  # "on 1999"
            pieces.append(before)
            if _APOSTROPHE_ONLY.match(filled.text, f.end) and original.endswith("s") and not word.endswith("s"):
                word, f = word + filled.text[f.end] + "s", replace(f, end=f.end + 1)  # "Mr Peters' brother" -> "Mr Kelly's brother"
            start_at = sum(len(p) for p in pieces)
            pieces.append(word)
            self.fills.append(Fill(start_at, start_at + len(word), label, word, f.candidates, f.fallback, f.source))
            self.at = f.end
        return Filled("".join(pieces) + filled.text[self.at:], list(self.fills), filled.fallback)


_ARTICLE = re.compile(r"(?<![\w'’-])(an?|An?|AN?)(\s+)$")


def agree_article(before: str, word: str) -> str:
    """``before`` (the text up to a substitute) with an "a" or "an" right before it made to
    agree with the substitute: "an Englishman" -> "a Dutchman", "a Polish" -> "an Italian".
    Kept as it was, the original's article would tell its first sound, and read wrong. A word
    that is read letter by letter ("an FBI") or starts with no letter is left as it is."""
    m = _ARTICLE.search(before)
    if not m or not word[:1].isalpha() or (word[:2].isupper() and len(word.split()[0]) > 1):
        return before
    article = m.group(1)
    wanted = "an" if lexicons.takes_an(word) else "a"
    if article.lower() == wanted:
        return before
    # "AN" and "A" before a word in capitals are capitals; "A" or "An" starting a sentence, capitalised
    caps = article == "AN" or (article == "A" and word.isupper())
    cased = wanted.upper() if caps else wanted.capitalize() if article[0].isupper() else wanted
    return before[:m.start()] + cased + m.group(2)


PLACE_ARTICLE_LABELS = frozenset({"GPE", "LOC"})
_THE = re.compile(r"(?<![\w'’-])(the|The)(\s+)$")
_APOSTROPHE_ONLY = re.compile(r"['’](?!\w)")


def agree_the(before: str, word: str) -> str:
    """``before`` with a "the" right before a substituted country made to fit it: "into the
    United Kingdom" -> "into Germany", "to Poland" -> "to the Netherlands"."""
    m = _THE.search(before)
    takes = word.lower() in countries.THE_COUNTRIES
    if m and not takes and countries.is_country(word):
        return before[:m.start()]
    if not m and takes and re.search(r"(?<![\w'’-])[a-z]+\s+$", before):
        return before + "the "
    return before


_PRONOUN = re.compile(r"\b(he|him|his|himself|she|her|hers|herself)\b", re.I)


def gender_cue(text: str, start: int, end: int) -> str:
    """"m" or "f" as the title right before ``text[start:end]`` says ("Mr", "Mrs"), else as the
    first personal pronoun in the next sentence or so does; "" where neither says."""
    # the title stands before the name, or begins the name's own span ("Mr. Mustafa Dildar")
    before = text[:start].split()[-1:] + text[start:end].split()[:1]
    said = next((g for g in map(title_gender, before) if g), "")
    if said:
        return said
    m = _PRONOUN.search(text, end, end + 160)
    if not m:
        return ""
    return "m" if m.group(1).lower() in ("he", "him", "his", "himself") else "f"


def after_title(text: str, start: int) -> bool:
    """Does a title come right before ``text[start:]`` ("Mr Sharon": a surname follows)?
    "Sister Mary" is a title; "his sister Mary" is a relation, and Mary a first name."""
    before = [bare(w) for w in text[:start].split()[-2:]]
    return bool(before) and before[-1].rstrip(".") in TITLES and (len(before) < 2 or before[0] not in POSSESSIVES)


def agreed_labels(fills: Sequence[Fill], originals: Sequence[str]) -> list[str]:
    """One entity label per original within a text, for fills paired with their originals.

    A tagger may read one word two ways in one text ("Peter wrote to Marcus from Rome, and
    Marcus answered": GPE, then PERSON). Its substitute is one word for both, so it must
    be of one type: the label given most often; on a tie PERSON where every word of the
    original is a census name, else the first one given. Generic and NUMBER masks keep theirs."""
    entity = [f.label not in GENERIC_LABELS and f.label != "NUMBER" for f in fills]
    votes: dict[tuple[str, ...], dict[str, int]] = {}
    for f, o, e in zip(fills, originals, entity):
        if e:
            counts = votes.setdefault(_words(o), {})
            counts[f.label] = counts.get(f.label, 0) + 1
    agreed = {}
    for key, counts in votes.items():
        top = max(counts.values())
        tied = [lab for lab, n in counts.items() if n == top]  # in order of first appearance
        person = "PERSON" in tied and bool(key) and all(_census_name(w) for w in key)
        agreed[key] = "PERSON" if person else tied[0]
    return [agreed.get(_words(o), f.label) if e else f.label for f, o, e in zip(fills, originals, entity)]


def _census_name(word: str) -> bool:
    return word in lexicons.first_names() or word in lexicons.last_names()


def _words(original: str) -> tuple[str, ...]:
    return tuple(w for w in (bare(t).removesuffix("'s") for t in original.split()) if w)
