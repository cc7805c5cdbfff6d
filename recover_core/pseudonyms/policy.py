"""The pseudonym rules (see the package's doc): ``Pseudonyms`` chooses each original's
substitute and keeps the mapping (``apply.py`` applies it to a filler's output)."""
from __future__ import annotations

import functools
from collections import OrderedDict
import random
import re
from typing import Sequence

from recover_core.data import countries, lexicons
from recover_core.text import shapes
from recover_core.filling.candidates import PLACE_LABELS, acceptable, fallback_word
from recover_core.pseudonyms.key import as_key, keyed_rng
from recover_core.pseudonyms.names import (_accept_sets, _pools, bare, census_share, genders,
                                          own_case, prior_pools, roles, sound, title_gender)
from recover_core.kinds import redraw
from recover_core.kinds.registry import REGISTRY
from recover_core.pseudonyms.dates import DATE_POLICIES, DateMoves
from recover_core.pseudonyms.held import HeldQuantities
from recover_core.pseudonyms.places import _kind_of, drawn_places_of_kind, named, place_kind, place_prior
from recover_core.text.spans import GENERIC_LABELS, IDENTIFIER_LABELS

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


# A body's name with a gloss in brackets: its translation, or its name in its own language
_GLOSSED = re.compile(r"(.+?) \([^()]+\)")


def _cased(word: str, like: str) -> str:
    return word.upper() if like.isupper() and len(like) > 1 else word[:1].upper() + word[1:]


def _initials(word: str, like: str) -> str | None:
    """An initial for an initial ("M." -> "J.", "C.-H." -> "R."), from the drawn name, and never
    the original's letter; "K" for a bare capital ("Mr K." masked as "Mr K": it gave "Mr
    Slater."); None where ``like`` is no initial."""
    if not re.fullmatch(r"(?:[^\W\d_]\.-?){1,3}", like) and not (len(like) == 1 and like.isupper()):
        return None
    own = {c.lower() for c in like if c.isalpha()}
    letter = next((c for c in word if c.isalpha() and c.lower() not in own), None) or \
        next(c for c in "jmrsktdl" if c not in own)
    return letter.upper() + ("." if "." in like else "")


_ACRONYM = re.compile(r"[A-Z]{3,5}")


# Labels whose substitute depends on the scope (the document) and not on the original alone.
SCOPED_LABELS = frozenset({"EVENT_DATE", "AMOUNT", "DURATION", "COUNT", "AGE", "DATE_OF_BIRTH", "CASE_NUMBER"})


class Pseudonyms(HeldQuantities, DateMoves):
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
        # Dates of events (protect="quasi"), as dates.DATE_POLICIES say, per scope: the document (or
        # text, or the subject a caller names) being drawn; a run-wide mapping shares names, never a shift.
        self.dates = DATE_POLICIES[0]
        self.scope = ""
        self.mapping: dict[str, str] = dict(mapping or {})
        self.used: set[str] = {w.lower() for w in self.mapping.values()}
        self.originals: set[str] = set()  # an earlier original never becomes a substitute,
        self._sounds: set[str] = set()  # nor a word that sounds like one
        # Under "jitter", each recent scope's moved dates: day (ordinal) -> days moved (event_moved)
        self._moves: OrderedDict[str, dict[int, int]] = OrderedDict()
        # While set, how to undo each change since ``_checkpoint`` (``consistent_many`` draws
        # ahead of the tagger's verdicts and takes back what a refusal changes).
        self._journal: list[tuple] | None = None
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
            self._add(self.originals, w)
            if key := sound(w):
                self._add(self._sounds, key)

    def _add(self, into: set[str], item: str) -> None:
        if item not in into:
            into.add(item)
            if self._journal is not None:
                self._journal.append((into.discard, item))

    def _checkpoint(self) -> int:
        """A mark that ``_rollback`` returns this mapping to; changes are recorded from the
        first mark until ``_commit``."""
        if self._journal is None:
            self._journal = []
        return len(self._journal)

    def _rollback(self, mark: int) -> None:
        assert self._journal is not None
        while len(self._journal) > mark:
            undo, *args = self._journal.pop()
            undo(*args)

    def _commit(self) -> None:
        self._journal = None

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
                word = self.mapping.pop(k)
                if self._journal is not None:
                    self._journal.append((self.mapping.__setitem__, k, word))
                if word.lower() in self.used:
                    self.used.discard(word.lower())
                    if self._journal is not None:
                        self._journal.append((self.used.add, word.lower()))

    def restore(self, undo: dict[str, str]) -> None:
        self.mapping.update(undo)

    def _take(self, original: str, word: str) -> str:
        self.mapping[original] = word  # always a new key: every caller draws for unmapped originals only
        if self._journal is not None:
            self._journal.append((self.mapping.pop, original))
        self._add(self.used, word.lower())
        self._remember([original])
        return word

    def person(self, tokens: Sequence[str], candidates: Sequence[str], title_before: bool = False,
               scores: dict[str, float] | None = None, gender_cue: str = "") -> list[str]:
        """A substitute for each word of a name: titles stay. "prior": each name drawn as
        people bear it, a free one of the slot's role and gender, the filler's ``scores``
        (bare word -> score) tilting the draw. "rank": the first name slot takes the filler's
        best acceptable candidate; other slots (and a slot with none) are drawn. A first name the
        census gives no gender takes ``gender_cue`` ("m"/"f": the title or pronouns around the
        name), so "Mr Arvid Lindqvist ... he" does not become "Mr Krystina Gardner"; a gendered
        title among ``tokens`` decides before the census."""
        out = []
        offered = list(candidates)
        parts = roles(tokens, title_before)
        # A title inside the name says its gender first: the masker gives "Mr" to the person's
        # span, where ``gender_cue`` (read from the filled text) no longer sees it
        said = next((g for t, r in zip(tokens, parts) if r == "title" and (g := title_gender(t))), "")
        for token, role in zip(tokens, parts):
            key = bare(token)
            if role == "title" or not key:
                out.append(token)
                continue
            if key not in self.mapping:
                gender = (said or genders().get(key, "") or gender_cue) if role == "first" else ""
                if self.choice == "prior":
                    pick = self._draw(role, gender, key, scores or {})
                    self._take(key, pick)
                    out.append(_initials(self.mapping[key], token) or _cased(self.mapping[key], token))
                    continue
                # Only common census names of the right kind: the MLM's favourites include
                # everyday words that the census also lists ("love", "man") and famous
                # one-offs ("jesus", "lincoln"), which read as odd substitutes.
                pool = self._accepted(role, gender)
                fits = [c for c in (bare(c) for c in offered) if c in pool and self._free(c, key)]
                pick = fits[0] if fits else self._draw(role, gender, key)
                self._take(key, pick)
                offered = [c for c in offered if bare(c) != pick]
            out.append(_initials(self.mapping[key], token) or _cased(self.mapping[key], token))
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
        glossed = _GLOSSED.fullmatch(original) if label in ("ORG", "FAC") else None
        if glossed:  # "the Dev-Yol (Revolutionary Way)": the body's substitute, as where it stands without its gloss
            return self.other(glossed[1], label, candidates, scores)
        country = countries.country_name(original) if label in PLACE_LABELS and _ACRONYM.fullmatch(original) else None
        if country:  # "the USA": the country's name, so "the" agrees and it shares the substitute of "the United States"
            return self.other(country.title(), label, candidates, scores)
        area = lexicons.admin_of(original) if label in PLACE_LABELS else None
        if area:  # "District of Kyrenia" -> "District of Palermo": the area word stays, the places are their own
            within, _, word = area[0].rpartition(" ")  # "London Borough of Islington": London's own substitute
            return f"{self.other(within, label, ()) + ' ' if within else ''}{word} of {self.other(area[1], label, ())}"
        placed = _placed_body(original) if label in ("ORG", "FAC") else None
        if placed:  # "Ankara Security Directorate" -> "Bursa Security Directorate": a body of its kind
            place, body = placed
            return f"{self.other(place, 'GPE', ())} {body}"
        if key not in self.mapping:
            rng = self._rng(key)
            kind = place_kind(original) if label in PLACE_LABELS else None
            if label == "LOC" and kind is None:  # "Middle East", "Southern Highlands": a region
                kind = "region"
            elif label == "GPE" and kind is None and original[:1].isupper() and not _ACRONYM.fullmatch(original) \
                    and not lexicons.INSTITUTION_WORDS & set(original.lower().split()):
                # every country and state is known: one that is not is a town ("Erlenbach"), unless
                # it names a body ("the United States Government"), a region ("Europe") or a land
                # within a country ("England", "Bavaria", "Kurdistan"), which a country stands in for
                kind = "region" if original.lower() in lexicons.regions() else \
                    "country" if re.search(r"(?:land|ia|stan)$", original) else "city"
            # Plain words may share a stand-in; a capitalised original under [MASK] is most often an entity
            # whose merged label is generic ("South Australia's Riverland"): a drawn city, not a shared "thing"
            generic = label in GENERIC_LABELS and original == original.lower()

            # A town named like a person ("Alice", Texas) reads as a person: only where the original does
            name_like = kind is not None and key not in lexicons.first_names()

            # A group keeps its number and its kind: "Palestinians" becomes "Australians", not "Liberals".
            plural = (key.endswith("s") and not key.endswith("ss")) or key in lexicons.plural_groups() \
                if label == "NORP" else None
            group = lexicons.group_kind(original) if label == "NORP" else None
            # A candidate the tagger refused in this sentence would come back on every attempt
            # (only places are retried here): a retry draws instead ("The Bush says" for "The
            # United States Government says").
            offered = candidates if self.attempt == 0 else ()
            if label == "ORG" and _named_after_people(original):
                offered = ()  # a firm named after its partners ("Pierce Glynn") is drawn as a firm, not "Congress"
            kind_word = lexicons.institution_word(original) if label in ("ORG", "FAC") else None
            if label in ("ORG", "FAC") and kind_word in _TOWN_NAMED:
                offered = ()  # "Wronki Prison" -> "Tulsa Prison", not "Maddox Prison" (a person's) or "Ministry Prison"
            elif label in ("ORG", "FAC") and _ACRONYM.fullmatch(original):
                offered = [c for c in offered if len(bare(c)) <= 5]  # "the PKK" -> "the AURA", not "the CONGREGATION"

            def fits(c: str) -> bool:
                w = bare(c)
                if label in ("ORG", "FAC") and not original.isupper() and (w in lexicons.first_names() or " " not in w and w in lexicons.last_names()
                                                and w not in lexicons.place_names()):
                    return False  # a person's name for a body ("the Phillip court") changes its kind; "BBC" -> "AURA" does not
                return acceptable(c, label) and (kind is None or _kind_of(w) == kind) and (
                    not name_like or w not in lexicons.first_names()) and (
                    plural is None or (w in lexicons.plural_groups()) == plural) and (
                    group is None or lexicons.group_kind(w) == group) and (
                    self._free(w, key) or (generic and w not in self.originals and w != key))
            # "from LHR", "the FBI": other capitals, where a drawn firm ("from Carney Company") or town
            # ("Flight BA12 BRUSSELS") reads garbled
            code = bool(_ACRONYM.fullmatch(original)) and (label in ("ORG", "FAC") or label == "GPE" and kind is None)
            pick = None
            if code and label == "GPE":
                pick = redraw.scramble(original, rng)  # an airport's code gets a code, before any drawn town
            if pick is None and self.choice == "prior" and kind in ("city", "country", "state"):
                prior = place_prior(kind)
                free = [p for p in prior if self._free(p, key) and fits(p)]
                pick = self._drawn(free, [prior[p] ** PRIOR_POWER for p in free], scores or {}, key)
            if pick is None:
                pick = next((own_case(c) for c in offered if fits(c)), None)
            if pick is None and (kind is not None or (label in GENERIC_LABELS and not generic)):
                pool = [p for p in drawn_places_of_kind(kind or "city") if self._free(p, key)]
                pick = rng.choice(pool) if pool else None
            if pick is None and kind_word in _TOWN_NAMED:  # a well-known town, not one that reads as a person
                pick = next((p for p in (fallback_word("GPE", rng) for _ in range(100)) if place_kind(p) == "city"), None)
            for _ in range(1000):  # a fallback of the right type, drawn until one is free
                if pick is not None and (self._free(pick.lower(), key) or (generic and pick.lower() not in self.originals)):
                    break
                if code:
                    pick = redraw.scramble(original, rng)
                    continue
                pick = named(label, rng, group) or bare(fallback_word(label, rng))
                if plural:  # "Finnish" has no plural noun of its own form: draw again
                    pick = (lexicons.group_plural(pick) or "").lower() or None
                if label == "NUMBER" and pick in self.used:
                    pick = str(rng.randint(2, 9999))
            if label in ("ORG", "FAC") and pick and pick.isalpha() and pick.islower() and len(pick) <= 3 \
                    and not lexicons.everyday(pick):
                pick = pick.upper()  # an uncased filler's "fbi" is "FBI" (it had become "the Fbi")
            if kind_word and pick and not pick.endswith(kind_word):
                drawn = pick.split()[-1] in lexicons.COMPANY_SUFFIXES + lexicons.FACILITY_WORDS  # "Hughes Group"
                name = " ".join(w[:1].upper() + w[1:] for w in (pick.split()[:-1] if drawn else pick.split()))
                pick = f"{name} {kind_word}"
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
        """An identifier's substitute (kinds/, through the registry), drawn with the original's
        keyed stream; one per original in the mapping, never an original or a used one."""
        key = self.date_key(original) if label in SCOPED_LABELS else original.strip().lower()
        if key not in self.mapping:
            rng = self._rng(key)
            pick = original
            for _ in range(20):
                pick = REGISTRY.substitute(label, original.strip(), rng, self)
                low = pick.lower()
                if low != original.strip().lower() and low not in self.used and low not in self.originals:
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

    def keyed(self, what: str) -> random.Random:
        """A stream for a part of identifiers (``what``: "domain:acme.com"), keyed like every
        draw (its own prefix keeps it apart from any original's stream): the same domain in
        two e-mails gets the same stand-in within this mapping."""
        return keyed_rng(self.key, f"identifier-part:{self.seed}:{what}")

    def case_offset(self, digits: int) -> int:
        """What application numbers of ``digits`` digits in this scope move by: keyed, a few percent
        of their range, never 0, so joined applications keep their order and distance."""
        rng = self.keyed(f"case offset:{digits}" + (f":{self.scope}" if self.scope else ""))
        return rng.randint(max(1, 10 ** (digits - 1) // 20), max(2, 10 ** digits // 8))

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
        if scores is None:
            pool = self._pool(role, gender)
            free = [n for n in pool if self._free(n, original)]
            if not free:
                return f"{pool[0]}{len(self.used)}"
            freq = lexicons.name_share()
            return self._rng(original).choices(free, weights=[freq[n] for n in free])[0]
        # ``_free`` inlined over the slot's table (each name's sound and weight computed once):
        # a draw runs through about a thousand names, and the "prior" draws many.
        names, sounds, tempered = _prior_table(slot)
        own, used, originals, heard = sound(original), self.used, self.originals, self._sounds
        keep = [i for i, (n, k) in enumerate(zip(names, sounds)) if n not in used and n not in originals
                and n != original and (not k or (k not in heard and k != own))]
        if not keep:
            return f"{names[0]}{len(self.used)}"
        return self._drawn([names[i] for i in keep], [tempered[i] for i in keep], scores, original)

    def _drawn(self, free: list[str], tempered: list[float], scores: dict[str, float], original: str) -> str | None:
        """One of ``free``, drawn by its prior ** PRIOR_POWER (``tempered``) * (1 +
        CONTEXT_WEIGHT * the filler's score, its best candidate among ``free`` scoring 1),
        seeded by the original."""
        if not free:
            return None
        among = set(free) if scores else set()
        scored = [w for w in scores if w in among]
        top = max((scores[w] for w in scored), default=0.0)
        if len(scored) < len(free):  # a name the filler did not score counts as 0
            top = max(top, 0.0)
        weights = [t * (1.0 + CONTEXT_WEIGHT * (scores[w] / top)) if w in scores else t
                   for w, t in zip(free, tempered)] if top > 0 else tempered
        return self._rng(original).choices(free, weights=weights)[0]


# Bodies named after the town they stand in: a drawn town keeps them one ("Tulsa Prison"); a
# surname reads as a person's ("Maddox Prison" was tagged PERSON in the output).
_TOWN_NAMED = frozenset({"Prison", "Airport", "Station", "Court", "Tribunal", "Police", "Council", "Hospital",
                         "Municipality", "Governorship"})

_BODY_WORDS = frozenset(w.capitalize() for w in lexicons.INSTITUTION_WORDS | lexicons.BODY_KIND_WORDS) | \
    lexicons.INSTITUTION_KINDS | frozenset({"Prison", "Directorate", "Hospital", "Municipality", "Governorship",
                                            "Prosecutor’s", "Prosecutor's", "Office", "Security", "Public", "Of", "of"})


def _named_after_people(original: str) -> bool:
    """Two or more capitalised words, none an everyday or an institution word, one of them a known
    first or last name: a firm's partners ("Pierce Glynn"; not "Islamic Jihad")."""
    words = original.split()
    return len(words) >= 2 and any(w.lower() in lexicons.first_names() or w.lower() in lexicons.last_names()
                                   for w in words) and all(w[:1].isupper() and not lexicons.everyday(w.lower()) and
                                   w.lower() not in lexicons.INSTITUTION_WORDS and w not in lexicons.INSTITUTION_KINDS
                                   and w not in lexicons.COMPANY_SUFFIXES for w in words)


def _placed_body(original: str) -> tuple[str, str] | None:
    """(place, body) of a public body named by its place ("Ankara Security Directorate", "Leeds
    City Council", "Van State Hospital"): the place is redrawn as a place of its kind and the body
    kept, so a directorate stays a directorate. None where the rest is not a body's words."""
    words = original.split()
    for i in range(min(3, len(words) - 1), 0, -1):
        head, rest = " ".join(words[:i]), words[i:]
        if place_kind(head) in ("city", "country", "state") and any(w in lexicons.INSTITUTION_KINDS or
                                                                   w.lower() in lexicons.INSTITUTION_WORDS for w in rest) \
                and all(w in _BODY_WORDS for w in rest):
            return head, " ".join(rest)
    return None


@functools.lru_cache(maxsize=8)
def _prior_table(slot: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[float, ...]]:
    """A "prior" draw's names for a slot (names.prior_pools), how each sounds, and its census
    share in the slot ** PRIOR_POWER."""
    names = tuple(prior_pools()[slot])
    share = census_share("last" if slot == "last" else "first")
    return names, tuple(sound(n) for n in names), tuple(share[n] ** PRIOR_POWER for n in names)
