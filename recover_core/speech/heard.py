"""Is a word heard in the second recognition pass? Digits said one by one ("five five five",
"double four"), numbers read by value in words or figures, and how many checks a render missed."""
from __future__ import annotations

from typing import TYPE_CHECKING

from recover_core.kinds.spoken_digits import DIGIT_WORDS, REPEATS
from recover_core.pseudonyms import TITLES, bare
from recover_core.speech.plan import DATE_LABELS, NEAR_S, NUMBER_LABELS, Entity, Result
from recover_core.text import spoken
from recover_core.text.spans import IDENTIFIER_LABELS

if TYPE_CHECKING:
    from recover_core.asr.alignment import Word


def misses(r: Result) -> tuple[int, int]:
    """Originals heard, then substitutes not heard: fewer is better."""
    return (sum(bool(e.original_heard) for e in r.entities), sum(e.substitute_heard is False for e in r.entities))


def digits(tokens: list[str]) -> str:
    """The digits that words say, in order: digit words ("oh" is 0, "double four" 44) and
    numerals ("555-12"); words of no digit add nothing."""
    out, repeat = [], 1
    for t in tokens:
        low = t.lower().strip(".,;:!?\"'()")
        if low in REPEATS:
            repeat = REPEATS[low]
            continue
        if low in DIGIT_WORDS:
            out.append(str(DIGIT_WORDS[low]) * repeat)
        else:
            out.append("".join(c for c in low if c.isdigit()))
        repeat = 1
    return "".join(out)


def in_a_row(run: list[int], heard: list[int]) -> bool:
    """Whether the values ``run`` occur in ``heard`` one after another."""
    n = len(run)
    return n > 0 and any(heard[i:i + n] == run for i in range(len(heard) - n + 1))


def heard_by_value(e: Entity, nearby: list[str], substitute: bool) -> bool:
    """Sets ``e``'s original_heard (and substitute_heard, with ``substitute``) by the numbers
    said near its place, read by value in words or figures (text/spoken.values): a number's
    words are shared with its substitute ("years old", "months", "pounds"), so comparing words
    reports the original heard whenever its unit is, and "the 25th" is the same as "twenty
    fifth". False, leaving both unset, where the original says no number ("a few months")."""
    years = e.label in DATE_LABELS
    original = spoken.values(e.original, years=years)
    if not original:
        return False
    said = spoken.values(" ".join(nearby), years=years)
    sub = spoken.values(e.substitute, years=years)
    # a substitute of the original's own value (a policy that kept it) is heard as itself
    e.original_heard = in_a_row(original, said) and original != sub
    if substitute:
        e.substitute_heard = in_a_row(sub, said) if sub else all(bare(t) in {bare(w) for w in nearby}
                                                                   for t in e.substitute.split())
        e.unheard = () if e.substitute_heard else (e.substitute,)
    return True


def judge(e: Entity, words: list[Word], start: float, end: float, substitute: bool) -> None:
    """Sets ``e``'s original_heard (and, with ``substitute``, substitute_heard and unheard) from
    recognized ``words``, by those within ``NEAR_S`` of its place [start, end) in seconds.
    The second pass judges a render so; ``audition`` judges candidate inserts the same way."""
    near_words = [w for w in words if w.start < end + NEAR_S and w.end > start - NEAR_S]
    nearby = [bare(w.word) for w in near_words]
    if e.label in NUMBER_LABELS:  # as written, for values: "2.5" and "300,000" keep their marks
        if heard_by_value(e, [w.word for w in near_words], substitute):
            return
    if e.label in IDENTIFIER_LABELS and len(digits(e.original.split())) >= 4:
        # A digit string's substitute says digit words too: what must not be heard is the
        # original's digits in their order, however written ("five five five one two",
        # "555-12"), and what must be heard is the substitute's.
        said = digits(nearby)
        e.original_heard = digits(e.original.split()) in said
        if substitute:
            e.substitute_heard = digits(e.substitute.split()) in said
            e.unheard = () if e.substitute_heard else (e.substitute,)
        return
    near = set(nearby)
    e.original_heard = any(n in near for n in _name_words(e.original))
    if substitute:
        e.unheard = tuple(n for n in _name_words(e.substitute) if n not in near)
        e.substitute_heard = not e.unheard


def _name_words(text: str) -> list[str]:
    return [bare(t) for t in text.split() if bare(t).rstrip(".") not in TITLES]
