"""Where the dates of a mapping's scope (a document, or a subject) move, under each date policy.

``DateMoves`` is the part of ``Pseudonyms`` that moves dates: the keyed offset of a scope, the
"jitter" policy's warp and nudges, the age offset that birth dates and stated ages share. The
operators that parse and write dates (quasi.event_date, identifiers.date_of_birth) ask it.
"""
from __future__ import annotations

import hashlib
import random
from collections import OrderedDict
from datetime import date, timedelta
from typing import Callable

from recover_core.pseudonyms.held import TRIES, first_free, keyed_order
from recover_core.text.spoken import values

# How dates of events are written (``Pseudonyms.dates``; docs/privacy.md#dates says what each keeps):
# "jitter" (the default) moves every date of a document by one keyed offset and a smooth keyed
# warp (``JITTER_DAYS``) that never reverses two dates' order, so one known date gives away
# almost none of the others; "shift" by the offset alone (intervals kept exactly, and one known
# date gives every other); "year" keeps its year alone, as HIPAA Safe Harbor does.
DATE_POLICIES = ("jitter", "shift", "year")
# The warp of "jitter": knots JITTER_KNOT days apart (their grid keyed), each moved by up to
# ±JITTER_DAYS, linear between. Its slope stays under 2 * 90 / 548 = 0.33, so a date never passes
# another, "the day after" stays a day after (or the same day, or two days after) and a year apart
# stays 12 months ± 6. Two dates more than a knot apart get independent moves: a known date's
# offset undoes another only by chance (1 in 181); nearer ones share more of theirs.
JITTER_DAYS, JITTER_KNOT = 90, 548
# Beyond the warp, no two dates of a scope more than JITTER_NEAR days apart move by the same number
# of days (a date is nudged up to 12 days, never past another): one known date's offset then undoes
# none of them. "The day after" may share its day's, so that it can stay the day after.
JITTER_NEAR = 1
# The scopes (documents) whose moved dates a mapping remembers, the most recent first.
_SCOPES_KEPT = 64

def _fits(day: int, move: int, moves: dict[int, int], apart: int, gap: int = 1) -> bool:
    """Whether ``day`` may move by ``move`` days among a scope's ``moves``: it stays ``gap`` days
    or more from every other date, on its side, and no date more than JITTER_NEAR days away moves
    within ``apart`` - 1 days as much."""
    return all((abs(move - m) >= apart or abs(day - other) <= JITTER_NEAR) and
               (other + m + gap <= day + move if other < day else other + m >= day + move + gap)
               for other, m in moves.items())


class DateMoves:
    """Date moves for a mapping that has ``keyed``, ``scope``, ``dates`` and ``_moves`` (Pseudonyms)."""

    scope: str
    dates: str
    _moves: OrderedDict[str, dict[int, int]]
    keyed: Callable[[str], random.Random]  # a stream keyed by a string under the mapping's secret

    def birth_moved(self, born: date) -> date:
        """Where a birth date of this scope moves: back by ``age_offset`` years, then by the event
        shift. Every stated age then reads ``age_offset`` more than it was and agrees with the shown
        birth and event dates (event - birth = age + offset), and neither tells the true age. One
        run-wide shift let one known birth date give away the others (issue 75); the shift is now
        one document's."""
        year = born.year - self.age_offset
        if self.dates == "year":
            return date(year, 7, 2)  # events keep their years: only the age offset moves a birth
        try:
            back = born.replace(year=year)
        except ValueError:  # 29 February
            back = born.replace(year=year, day=28)
        return back + timedelta(days=self.event_shift)  # no warp: a birth date shows no event

    @property
    def age_offset(self) -> int:
        """Years every stated age of this scope reads more (or less) than it was: 1 to 3, keyed per
        scope, against the event shift's sign, so a birth date always moves by over a year."""
        return self.fixed("age offset", self._age_offset)  # type: ignore[attr-defined, return-value]

    def _age_offset(self) -> int:
        """The keyed offset (1-3), or where it would carry one held age onto another ("a four year
        old and a seven year old" by 3; "38, 39 maybe" by -1), the next in keyed order that carries
        none, then 4 up (held.py)."""
        rng = self.keyed("age offset" + (f":{self.scope}" if self.scope else ""))
        sign = -1 if self.event_shift > 0 else 1
        ages = self.held_values("AGE")  # type: ignore[attr-defined]
        order = keyed_order(rng, rng.choice((1, 2, 3)), (1, 2, 3)) + list(range(4, 4 + TRIES))
        return sign * first_free(order, lambda k: any(max(1, a + sign * k) in ages for a in ages))  # type: ignore[operator]

    def date_key(self, original: str) -> str:
        """The mapping's key for an event date: the date within its scope, so that one date in two
        documents of a consistent run moves by each document's own shift."""
        return f"{original.strip().lower()}\x1f{self.scope}" if self.scope else original.strip().lower()

    @property
    def event_shift(self) -> int:
        """Days every date of an event in this mapping moves by (protect="quasi") before the warp of
        "jitter": one keyed shift per mapping, that is per document (or per line where no run-wide
        mapping is kept); never 0. A shift reused across documents would link them, and one known
        date would give away the rest. At least 190 days after the warp: a year said alone moves
        as its middle day does, and a shorter shift left it as it was (one document in seven kept
        every "in 1962")."""
        return self.fixed(f"event shift:{self.dates}", self._event_shift)  # type: ignore[attr-defined, return-value]

    def _event_shift(self) -> int:
        """The keyed shift, or where it would carry a year said alone ("in 98") onto a year the
        scope holds ("from 98 to 99" by a year), the next keyed draw that carries none (held.py)."""
        rng = self.keyed("event date shift" + (f":{self.scope}" if self.scope else ""))
        pad = JITTER_DAYS if self.dates == "jitter" else 0

        def draw() -> int:
            days, sign = rng.randint(190, 1095), rng.choice((-1, 1))
            return sign * (days + pad)

        def year(v: int) -> int:
            return v if v >= 100 else (1900 if v >= 30 else 2000) + v  # "98", "06"

        held = [values(o, years=True) for o in self.held("EVENT_DATE")]  # type: ignore[attr-defined]
        years = {year(v) for vs in held for v in vs if v > 31}
        alone = {year(vs[0]) for vs in held if len(vs) == 1 and vs[0] > 31}
        margin = pad + 12 if pad else 0  # the warp and a nudge may move it that much more or less

        def collides(shift: int) -> bool:
            return any((date(y, 7, 2) + timedelta(days=shift + w)).year in years for y in alone for w in (-margin, margin))
        return first_free((draw() for _ in range(TRIES + 1)), collides)  # type: ignore[return-value]

    def event_moved(self, d: date) -> date:
        """Where the date of an event ``d`` moves: by ``event_shift``, and under "jitter" by the
        scope's keyed warp at ``d`` too (never past another date: see ``JITTER_KNOT``), then
        nudged a few days off the move of every other date of the scope more than ``JITTER_NEAR``
        days away (what order allows)."""
        if self.dates != "jitter":
            return d + timedelta(days=self.event_shift)
        # under a digest: a scope holds a document's masked text, which no cache may keep
        scope_id = hashlib.blake2b(self.scope.encode(), digest_size=16).hexdigest()
        moves = self._moves.setdefault(scope_id, {})
        self._moves.move_to_end(scope_id)
        while len(self._moves) > _SCOPES_KEPT:
            self._moves.popitem(last=False)
        day = d.toordinal()
        if day not in moves:
            scope = f":{self.scope}" if self.scope else ""
            at = day + self.keyed("date warp grid" + scope).randrange(JITTER_KNOT)
            knot, into = divmod(at, JITTER_KNOT)
            a, b = (self.keyed(f"date warp:{k}{scope}").randint(-JITTER_DAYS, JITTER_DAYS) for k in (knot, knot + 1))
            warped = self.event_shift + round(a + (b - a) * into / JITTER_KNOT)
            # apart by two days where a nudge allows, else by one (a document with many dates has
            # few moves left near its warp), else in order only; two days never made one if avoidable
            near = [warped + n for k in range(13) for n in ((k, -k) if k else (0,))]
            # and off every day of the month the scope holds ("the 9th" never says another date's
            # original "9th"), where its order allows (held.py)
            days = {v for v in self.held_values("DATE") if v <= 31}  # type: ignore[attr-defined]
            tiers = ((2, 1, days), (1, 1, days), (0, 1, days), (2, 1, ()), (1, 1, ()), (0, 1, ()), (0, 0, days), (0, 0, ()))
            moves[day] = next((m for apart, gap, off in tiers for m in near
                               if (d + timedelta(days=m)).day not in off and _fits(day, m, moves, apart, gap)), warped)
        return d + timedelta(days=moves[day])
