"""Is a word heard in the second recognition pass? Digits said one by one ("five five five",
"double four"), numbers read by value in words or figures, and how many checks a render missed."""
from __future__ import annotations

from recover_core.kinds.spoken_digits import DIGIT_WORDS, REPEATS
from recover_core.pseudonyms import bare
from recover_core.speech.plan import DATE_LABELS, Entity, Result
from recover_core.text import spoken


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
