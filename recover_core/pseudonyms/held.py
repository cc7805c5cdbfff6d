"""The original values a scope (a document, a recording) holds of each quasi kind, so that no
substitute says one of them.

Ages, dates and sums move by one keyed parameter per scope (an age offset, a date shift, a
factor per unit), which keeps them in agreement (an age with its birth date, intervals,
proportions). One parameter can still carry one value onto another original of the same kind:
"a four year old and a seven year old" moved by 3 said "seven", "38, 39 maybe" moved by -1 said
"38", "November 2nd ... the 9th" said "the ninth". A listener then hears an original value,
though in another place. So every original of a scope is held before any is drawn
(``apply.consistent_many``), and each parameter is chosen, in its keyed order, as the first that
carries no held value onto a held value of its kind; a date is nudged off every held day of the
month (dates.DateMoves.event_moved). The parameter stays keyed by the secret (never drawn from an
original): the originals only rule some of its keyed candidates out. A parameter, once chosen,
stays the scope's (a subject's later texts keep its shift and its ages).
"""
from __future__ import annotations

import hashlib
import random
from collections import OrderedDict
from typing import Callable, Iterable

from recover_core.text.spoken import values

# The kind whose values a label's substitutes must not say: ages among ages, dates among dates
# (a birth date's day among the events' days too), each quantity among its own label's.
FAMILIES = {"AGE": "AGE", "EVENT_DATE": "DATE", "DATE_OF_BIRTH": "DATE", "AMOUNT": "AMOUNT",
            "DURATION": "DURATION", "COUNT": "COUNT"}
_SCOPES_KEPT = 64
# How many keyed candidates a parameter tries before it keeps its first (every one collides: a
# document with every age from 30 to 45 leaves no small offset that says none of them).
TRIES = 40


class HeldValues:
    """Held originals and chosen parameters, per scope, for a mapping with ``scope`` (Pseudonyms)."""

    scope: str

    def _scope_state(self) -> dict:
        states = self.__dict__.setdefault("_held_scopes", OrderedDict())
        # under a digest: a scope names a document's masked text, which no cache may keep
        sid = hashlib.blake2b(self.scope.encode(), digest_size=16).hexdigest()
        state = states.setdefault(sid, {"originals": {}, "fixed": {}})
        states.move_to_end(sid)
        while len(states) > _SCOPES_KEPT:
            states.popitem(last=False)
        return state

    def hold(self, pairs: Iterable[tuple[str, str]], scope: str) -> None:
        """Hold each (label, original) of a quasi kind as an original of ``scope``. Not for a
        subject's scope: its texts come in calls over time and in runs resumed from a mapping,
        and every release must move its dates and ages by the same parameters, a function of the
        key and the subject alone (the first keyed candidate). A text, a document or a recording
        is held whole, since all its values are known at once."""
        if scope.startswith("subject:"):
            return
        kept, self.scope = self.scope, scope
        try:
            state = self._scope_state()
            for label, original in pairs:
                if label in FAMILIES:
                    state["originals"].setdefault(label, set()).add(original.strip())
                    state.pop("values", None)
        finally:
            self.scope = kept

    def held(self, *labels: str) -> list[str]:
        """The held originals of these labels in the current scope, in a fixed order."""
        originals = self._scope_state()["originals"]
        return sorted({o for label in labels for o in originals.get(label, ())})

    def held_values(self, family: str) -> frozenset[int]:
        """Every number the held originals of ``family`` say ("thirty eight, thirty nine" 38 and 39)."""
        cache = self._scope_state().setdefault("values", {})  # read once per scope and family
        if family not in cache:
            labels = [k for k, f in FAMILIES.items() if f == family]
            cache[family] = frozenset(v for o in self.held(*labels) for v in values(o, years=family == "DATE"))
        return cache[family]

    def fixed(self, what: str, choose: Callable[[], object]) -> object:
        """The scope's parameter ``what``, chosen once (``choose``) and kept."""
        fixed = self._scope_state()["fixed"]
        if what not in fixed:
            fixed[what] = choose()
        return fixed[what]


def first_free(candidates: Iterable, collides: Callable[[object], bool]) -> object:
    """The first of ``candidates`` (a keyed order, TRIES at most) that ``collides`` rules out not;
    the first candidate where every one does."""
    first = None
    for n, c in enumerate(candidates):
        if n == 0:
            first = c
        if n >= TRIES:
            break
        if not collides(c):
            return c
    return first


def keyed_order(rng: random.Random, first: int, rest: Iterable[int]) -> list[int]:
    """``first``, then ``rest`` in ``rng``'s order."""
    rest = [r for r in rest if r != first]
    rng.shuffle(rest)
    return [first] + rest


class HeldQuantities(HeldValues):
    """The factor each unit's quantities are scaled by, off the scope's held values."""

    keyed: Callable[[str], random.Random]

    def quantity_scale(self, unit: str) -> float:
        """The factor every quantity of ``unit`` ("money:eur", "time:year", "count:package") in this
        scope is scaled by: keyed, between 0.6 and 1.6 and never within 15% of 1, so that one
        known sum gives away only the sums of its own unit in its own document; the next keyed
        draw where it would say a value a held quantity of the same kind says ("from 14 to 12
        years" scaled by 0.86)."""
        return self.fixed("quantity scale:" + unit, lambda: self._quantity_scale(unit))  # type: ignore[return-value]

    def _quantity_scale(self, unit: str) -> float:
        from recover_core.kinds.quantities import quantity_unit
        from recover_core.kinds.registry import REGISTRY

        rng = self.keyed(f"quantity scale:{unit}" + (f":{self.scope}" if self.scope else ""))

        def draw() -> float:
            return rng.uniform(1.15, 1.6) if rng.random() < 0.5 else rng.uniform(0.6, 0.87)

        mine = [(label, o) for label in ("AMOUNT", "DURATION", "COUNT") for o in self.held(label)
                if quantity_unit(o) == unit]
        said = {label: self.held_values(FAMILIES[label]) for label, _ in mine}

        def collides(factor: float) -> bool:
            trial = _Scaled(self, unit, factor)
            for label, o in mine:
                try:
                    sub = REGISTRY.operators[label](o, random.Random(0), trial)  # the factor alone decides it
                except (ValueError, IndexError, KeyError):
                    continue
                if set(values(sub)) & said[label]:
                    return True
            return False
        return first_free((draw() for _ in range(TRIES + 1)), collides)  # type: ignore[return-value]


class _Scaled:
    """A mapping as an operator sees it, with ``unit``'s factor on trial."""

    def __init__(self, base: HeldQuantities, unit: str, factor: float):
        self._base, self._unit, self._factor = base, unit, factor

    def quantity_scale(self, unit: str) -> float:
        return self._factor if unit == self._unit else self._base.quantity_scale(unit)

    def __getattr__(self, name: str):
        return getattr(self._base, name)
