"""The pseudonym rules (see the package's doc): ``Pseudonyms`` chooses each original's
substitute and keeps the mapping; ``consistent`` applies it to a filler's output for a text."""
from __future__ import annotations

import random
from typing import Sequence

from recover_core import lexicons, shapes
from recover_core.filling.base import Fill, Filled
from recover_core.filling.candidates import PLACE_LABELS, acceptable, fallback_word
from recover_core.pseudonyms.key import as_key, keyed_rng
from recover_core.pseudonyms.names import (POSSESSIVES, TITLES, _accept_sets, _pools, bare, census_share, genders,
                                          own_case, prior_pools, roles, sound)
from recover_core.pseudonyms import identifiers
from recover_core.pseudonyms.places import _kind_of, drawn_places_of_kind, named, place_kind, place_prior
from recover_core.spans import GENERIC_LABELS, IDENTIFIER_LABELS

# How a substitute is chosen among those that pass the rules (type, gender, kind, free):
# "prior" (the default) draws it as names and places occur, the filler's context score
# tilting the draw; "rank" takes the filler's first acceptable candidate, and its favourites
# ("Lee", "Moses") then stand in for hundreds of different names (issue 46).
CHOICES = ("prior", "rank")

# The prior is the census share of people bearing a name in its slot (a place: how often
# text names it), raised to PRIOR_POWER, over the names a tagger reads as people wherever
# they stand (names.prior_pools). At 1 the commonest names come back too often for a text's
# many names; at 0.5, 429 name words of bench/fill_quality.py's names set (3 seeds) get
# 0.79-0.82 distinct words per word against the originals' 0.93, the commonest word 0.9-1.4%
# (docs/measurements.md, "Substitutes as varied as real names").
PRIOR_POWER = 0.5
# The filler's context: its scores, renormalised so its best acceptable candidate has 1,
# multiply a name's prior by (1 + CONTEXT_WEIGHT * score). A substitute's share of all
# substitutes thus never exceeds (1 + CONTEXT_WEIGHT) times its share in the prior.
CONTEXT_WEIGHT = 1.0


def _cased(word: str, like: str) -> str:
    return word.upper() if like.isupper() and len(like) > 1 else word[:1].upper() + word[1:]


class Pseudonyms:
    """One mapping from originals to substitutes; share it to keep a batch consistent.

    Holds original words in memory; only ``save_mapping`` writes them, to a file the user
    asked for (``--mapping``), never into the output."""

    def __init__(self, seed: int | str = 0, mapping: dict[str, str] | None = None, choice: str = CHOICES[0],
                 key: bytes | str | None = None):
        if choice not in CHOICES:
            raise ValueError(f"choice must be one of {CHOICES}, not {choice!r}")
        self.seed = seed
        # Every draw is keyed by this secret (key.py): a fresh one unless the caller keeps one.
        self.key = as_key(key)
        self.choice = choice
        self.attempt = 0  # a draw the tagger refused is drawn again with the next attempt's stream
        self.mapping: dict[str, str] = dict(mapping or {})
        self.used: set[str] = {w.lower() for w in self.mapping.values()}
        self.originals: set[str] = set()  # an earlier original never becomes a substitute,
        self._sounds: set[str] = set()  # nor a word that sounds like one
        self._remember(self.mapping)

    def __repr__(self) -> str:  # the mapping and the key stay out of every repr and log
        return f"Pseudonyms(choice={self.choice!r}, {len(self.mapping)} entries)"

    def _rng(self, key: str) -> random.Random:
        """The stream for one original's draws: an HMAC under the run's secret key, so that
        nobody without the key can tell which original a substitute stands for."""
        return keyed_rng(self.key, f"pseudonyms:{self.seed}:{key}" + (f":{self.attempt}" if self.attempt else ""))

    def reserve(self, originals: Sequence[str]) -> None:
        """Words that must never become a substitute: every original of the recording."""
        self._remember(bare(w) for w in originals)

    def _remember(self, originals) -> None:
        for w in originals:
            self.originals.add(w)
            if key := sound(w):
                self._sounds.add(key)

    def _free(self, w: str, original: str) -> bool:
        if w in self.used or w in self.originals or w == original:
            return False
        key = sound(w)
        return not key or (key not in self._sounds and key != sound(original))

    def key_of(self, original: str, label: str) -> str:
        """The mapping's key for a non-person original (``other``)."""
        if label in shapes.SHAPED_LABELS and shapes.has_shape(original):
            return original.strip().lower()
        return bare(original)

    def forget(self, keys: Sequence[str]) -> dict[str, str]:
        """Unmap these originals so the rules choose again; their old substitutes stay used
        (never chosen again). Returns what ``restore`` needs to undo it."""
        return {k: self.mapping.pop(k) for k in keys if k in self.mapping}

    def retract(self, keys: Sequence[str]) -> None:
        """Take back the choices just made for these originals, as if never made (their
        substitutes are free again): a refused draw leaves no trace in a saved mapping."""
        for k in keys:
            if k in self.mapping:
                self.used.discard(self.mapping.pop(k).lower())

    def restore(self, undo: dict[str, str]) -> None:
        self.mapping.update(undo)

    def _take(self, original: str, word: str) -> str:
        self.mapping[original] = word
        self.used.add(word.lower())
        self._remember([original])
        return word

    def person(self, tokens: Sequence[str], candidates: Sequence[str], title_before: bool = False,
               scores: dict[str, float] | None = None) -> list[str]:
        """A substitute for each word of a name: titles stay. "prior": each name drawn as
        people bear it, a free one of the slot's role and gender, the filler's ``scores``
        (bare word -> score) tilting the draw. "rank": the first name slot takes the filler's
        best acceptable candidate; other slots (and a slot with none) are drawn."""
        out = []
        offered = list(candidates)
        for token, role in zip(tokens, roles(tokens, title_before)):
            key = bare(token)
            if role == "title" or not key:
                out.append(token)
                continue
            if key not in self.mapping:
                gender = genders().get(key, "") if role == "first" else ""
                if self.choice == "prior":
                    pick = self._draw(role, gender, key, scores or {})
                    self._take(key, pick)
                    out.append(_cased(self.mapping[key], token))
                    continue
                # Only common census names of the right kind: the MLM's favourites include
                # everyday words that the census also lists ("love", "man") and famous
                # one-offs ("jesus", "lincoln"), which read as odd substitutes.
                pool = self._accepted(role, gender)
                fits = [c for c in (bare(c) for c in offered) if c in pool and self._free(c, key)]
                pick = fits[0] if fits else self._draw(role, gender, key)
                self._take(key, pick)
                offered = [c for c in offered if bare(c) != pick]
            out.append(_cased(self.mapping[key], token))
        return out

    def other(self, original: str, label: str, candidates: Sequence[str], scores: dict[str, float] | None = None) -> str:
        """A substitute for any other private word: the first acceptable, free candidate. A
        place keeps its kind; under "prior" a place of known kind is drawn as often as text
        names it, the filler's ``scores`` tilting the draw. Plain masked words ([MASK]) only need
        to be consistent: two everyday words may share a substitute, as long as it is not one
        of the originals."""
        if label in IDENTIFIER_LABELS:  # a card, phone, e-mail ...: its own shape, never a filler's word
            return self._identifier(original, label)
        key = self.key_of(original, label)
        if label in shapes.SHAPED_LABELS and shapes.has_shape(original):
            return self._shaped(key, original, candidates)
        if key not in self.mapping:
            rng = self._rng(key)
            kind = place_kind(original) if label in PLACE_LABELS else None
            if label == "LOC" and kind is None:  # "Middle East", "Southern Highlands": a region
                kind = "region"
            # Plain words may share a stand-in; a capitalised original under [MASK] is most often an entity
            # whose merged label is generic ("South Australia's Riverland"): a drawn city, not a shared "thing"
            generic = label in GENERIC_LABELS and original == original.lower()

            # A town named like a person ("Alice", Texas) reads as a person: only where the original does
            name_like = kind is not None and key not in lexicons.first_names()

            # A group keeps its number and its kind: "Palestinians" becomes "Australians", not "Liberals".
            plural = key.endswith("s") and not key.endswith("ss") if label == "NORP" else None
            group = lexicons.group_kind(original) if label == "NORP" else None
            # A candidate the tagger refused in this sentence would come back on every attempt
            # (only places are retried here): a retry draws instead ("The Bush says" for "The
            # United States Government says").
            offered = candidates if self.attempt == 0 else ()

            def fits(c: str) -> bool:
                w = bare(c)
                return acceptable(c, label) and (kind is None or _kind_of(w) == kind) and (
                    not name_like or w not in lexicons.first_names()) and (
                    plural is None or (w in lexicons.plural_groups()) == plural) and (
                    group is None or lexicons.group_kind(w) == group) and (
                    self._free(w, key) or (generic and w not in self.originals and w != key))
            pick = None
            if self.choice == "prior" and kind in ("city", "country", "state"):
                prior = place_prior(kind)
                free = [p for p in prior if self._free(p, key) and fits(p)]
                pick = self._drawn(free, [prior[p] for p in free], scores or {}, key)
            if pick is None:
                pick = next((own_case(c) for c in offered if fits(c)), None)
            if pick is None and (kind is not None or (label in GENERIC_LABELS and not generic)):
                pool = [p for p in drawn_places_of_kind(kind or "city") if self._free(p, key)]
                pick = rng.choice(pool) if pool else None
            for _ in range(1000):  # a fallback of the right type, drawn until one is free
                if pick is not None and (self._free(pick.lower(), key) or (generic and pick.lower() not in self.originals)):
                    break
                pick = named(label, rng, group) or bare(fallback_word(label, rng))
                if plural:  # "Finnish" has no plural noun of its own form: draw again
                    pick = (lexicons.group_plural(pick) or "").lower() or None
                if label == "NUMBER" and pick in self.used:
                    pick = str(rng.randint(2, 9999))
            self._take(key, pick)
        word = self.mapping[key]
        if word != word.lower():  # a drawn organisation or group comes cased ("Hughes Group")
            return word
        return _cased(word, original) if original[:1].isupper() else word

    def _shaped(self, key: str, original: str, candidates: Sequence[str]) -> str:
        """A numeric entity: the filler's word where it has the original's shape, else the
        original redrawn piece by piece (``shapes.reshape``)."""
        if key not in self.mapping:
            pick = next((c for c in candidates if shapes.same_shape(c, original) and self._free(c.lower(), key)), None)
            rng = self._rng(key)
            for _ in range(100):
                if pick is not None and self._free(pick.lower(), key):
                    break
                pick = shapes.reshape(original, rng)
            self._take(key, pick)
        return self.mapping[key]

    def _identifier(self, original: str, label: str) -> str:
        """An identifier's substitute (pseudonyms/identifiers.py), drawn with the original's
        keyed stream; one per original in the mapping, never an original or a used one."""
        key = original.strip().lower()
        if key not in self.mapping:
            rng = self._rng(key)
            pick = original
            for _ in range(20):
                pick = identifiers.substitute(label, original.strip(), rng, self)
                low = pick.lower()
                if low != key and low not in self.used and low not in self.originals:
                    break
            self._take(key, pick)
        return self.mapping[key]

    def rename(self, tokens: Sequence[str]) -> list[str | None]:
        """The pseudonym of each token that is a name (masked elsewhere in the text, or a known
        first or last name), for the names inside an e-mail or URL; None for other tokens."""
        def is_name(t: str) -> bool:
            low = t.lower()
            return len(low) > 1 and (low in self.originals or low in lexicons.first_names() or
                                     low in lexicons.last_names())
        if len(tokens) == 2 and any(is_name(t) for t in tokens) and all(len(t) > 2 for t in tokens):
            is_name = lambda t: True  # noqa: E731  "darnell.whitcombe": a first and a last name
        names = [t for t in tokens if is_name(t)]
        subs = iter(self.person([t.capitalize() for t in names], ())) if names else iter(())
        return [next(subs).lower() if is_name(t) else None for t in tokens]

    @property
    def date_shift(self) -> int:
        """Days every birth date of the run moves by: keyed like every draw, never 0."""
        rng = self._rng("date of birth shift")
        return rng.randint(30, 730) * rng.choice((-1, 1))

    def _accepted(self, role: str, gender: str) -> frozenset[str]:
        """The names a filler's candidate may be (draws come from the wider ``_pool``)."""
        return _accept_sets()["last" if role == "last" else f"first:{gender}"]

    def _pool(self, role: str, gender: str) -> list[str]:
        return _pools()["last" if role == "last" else f"first:{gender}"]

    def _draw(self, role: str, gender: str, original: str, scores: dict[str, float] | None = None) -> str:
        """A free name of the role and gender, drawn as often as people bear it: a common
        name sounds real (and a tagger knows it), a rare one ("Oralia") sounds invented.
        With ``scores`` (the "prior" choice), the tempered prior tilted by the filler."""
        slot = "last" if role == "last" else f"first:{gender}"
        pool = self._pool(role, gender) if scores is None else prior_pools()[slot]
        free = [n for n in pool if self._free(n, original)]
        if not free:
            return f"{pool[0]}{len(self.used)}"
        if scores is None:
            freq = lexicons.name_share()
            return self._rng(original).choices(free, weights=[freq[n] for n in free])[0]
        slot = "last" if role == "last" else "first"  # each slot's own census list
        return self._drawn(free, [census_share(slot)[n] for n in free], scores, original)

    def _drawn(self, free: list[str], prior: list[float], scores: dict[str, float], original: str) -> str | None:
        """One of ``free``, drawn by prior ** PRIOR_POWER * (1 + CONTEXT_WEIGHT * the filler's
        score, its best candidate among ``free`` scoring 1), seeded by the original."""
        if not free:
            return None
        top = max((scores.get(w, 0.0) for w in free), default=0.0)
        weights = [p ** PRIOR_POWER * (1.0 + CONTEXT_WEIGHT * (scores.get(w, 0.0) / top if top > 0 else 0.0))
                   for w, p in zip(free, prior)]
        return self._rng(original).choices(free, weights=weights)[0]


# A drawn substitute the tagger does not read as its type ("Ernestine" read as an
# organisation) is drawn again, this many times at most; the filler's candidates were
# checked already (candidates.same_type), the prior's draws are checked here.
DRAW_CHECKS = 8
CHECKED_LABELS = frozenset({"PERSON", "GPE", "LOC"})


def consistent(filled: Filled, originals: Sequence[str], pseudonyms: Pseudonyms, check=None) -> Filled:
    """A filler's output with each substitute chosen under the rules above: under "prior" a
    draw of the right kind, tilted by the filler's scores; under "rank" the filler's own
    choice where it is acceptable and free, else its next candidate, else a draw.

    ``originals`` holds the original words under each fill (``quality.originals_per_fill``);
    they stay in memory. One ``Pseudonyms`` per text keeps that text consistent; share one to
    keep a whole run consistent. ``check`` (candidates.TypeCheck) has a drawn person or place
    read as its type in the sentence, or drawn again (DRAW_CHECKS)."""
    if len(originals) != len(filled.fills):  # nothing to pair the fills with: leave them
        return filled
    pseudonyms.reserve([w for o in originals for w in o.split()])
    pieces, at, fills = [], 0, []
    for f, original, label in zip(filled.fills, originals, agreed_labels(filled.fills, originals)):
        prefer = [f.word] + [c.word for c in f.candidates if c.word != f.word]
        scores = {bare(c.word): c.score for c in reversed(f.candidates)}  # a word listed twice: its best score
        head = "".join(pieces) + filled.text[at: f.start]
        tries = DRAW_CHECKS if check is not None and pseudonyms.choice == "prior" and label in CHECKED_LABELS else 1
        for attempt in range(tries):
            pseudonyms.attempt = attempt
            before = set(pseudonyms.mapping)
            if label == "PERSON":
                word = " ".join(pseudonyms.person(original.split(), prefer, after_title(filled.text, f.start), scores))
            else:
                word = pseudonyms.other(original, label, prefer, scores)
                if label not in IDENTIFIER_LABELS:  # "tom@example.com" stays lower case
                    word = word[:1].upper() + word[1:] if f.word[:1].isupper() else word  # a sentence start
            new = [k for k in pseudonyms.mapping if k not in before]
            if not new or attempt == tries - 1 or check([(head + word + filled.text[f.end:], len(head),
                                                          len(head) + len(word))], label)[0]:
                break
            pseudonyms.retract(new)  # drawn again, from the next attempt's stream
        pseudonyms.attempt = 0
        pieces.append(filled.text[at: f.start])
        start = sum(len(p) for p in pieces)
        pieces.append(word)
        fills.append(Fill(start, start + len(word), label, word, f.candidates, f.fallback, f.source))
        at = f.end
    pieces.append(filled.text[at:])
    return Filled("".join(pieces), fills, filled.fallback)


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
