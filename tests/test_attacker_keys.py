"""What an attacker links or reads back from substitutes (issue 75, findings 5 and 10).

5: without a run-wide mapping, each line draws under a subkey of its masked line: under one
key for the whole run, one name on 20 lines got 3 distinct substitutes, which linked the lines.
10: an identifier's substitute keeps nothing of the original an attacker could match: a
domain's length and hyphens, one date shift for every birth date, a state beside its ZIP code.
"""
from __future__ import annotations

import os

import pytest

from recover_core import Obfuscator
from recover_core.batch.job import Job
from recover_core.batch.pipeline import write_filled
from recover_core.filling.base import Candidate, Fill, Filled, MaskInput
from recover_core.obfuscator import masked_line
from recover_core.pseudonyms import Pseudonyms
from recover_core.pseudonyms.key import subkey
from recover_core.spans import Span

NAME = "Darnell"
# 20 different lines, one name in each: what a corpus of one person's messages looks like.
CONTEXTS = ["called me yesterday.", "is late again.", "sent the report.", "left the office early.",
            "wants a raise.", "fixed the printer.", "booked the flight.", "lost his keys.", "won the raffle.",
            "moved to a new desk.", "signed the lease.", "missed the bus.", "cooked dinner for us.",
            "asked about the budget.", "met the new manager.", "paid the invoice.", "forgot the meeting.",
            "bought a bike.", "painted the fence.", "answered the phone."]
LINES = [f"{NAME} {c}" for c in CONTEXTS]


def _filled(context: str, offered: tuple[str, ...] = ("Marcus", "Tyrone", "Andre")) -> tuple[Filled, tuple]:
    """A filler's output for "[PERSON] <context>" (no model: the candidates are given) and the
    original line with its span, as the engine's choose step receives them."""
    word = offered[0]
    fill = Fill(0, len(word), "PERSON", word, [Candidate(w, 0.5 / (i + 1)) for i, w in enumerate(offered)])
    original = f"{NAME} {context}"
    return Filled(f"{word} {context}", [fill]), (original, [Span(0, len(NAME), NAME, "PERSON")])


def _subs(results) -> list[str]:
    return [r.substitute for res in results for r in res.replacements if r.original == NAME]


# --- finding 5: one key per run linked the lines ------------------------------------------

def test_one_name_on_twenty_lines_gets_many_substitutes_unless_consistent():
    ob = Obfuscator(key=os.urandom(32), type_check=False)
    filled, originals = zip(*(_filled(c) for c in CONTEXTS))
    apart = _subs(ob.choose_many(filled, originals))
    assert len(apart) == 20 and len(set(apart)) >= 15, f"{len(set(apart))} distinct substitutes on 20 lines"
    assert NAME not in apart
    together = _subs(ob.choose_many(filled, originals, ob.mapping))  # consistent=True's run-wide mapping
    assert len(together) == 20 and len(set(together)) == 1


def test_a_lines_substitutes_do_not_depend_on_its_place_in_a_batch():
    """The subkey is named by the masked line, never by the line's index: the same line gives
    the same substitutes whichever batch, chunk or position it comes in, under one key."""
    ob = Obfuscator(key=os.urandom(32), type_check=False)
    filled, originals = zip(*(_filled(c) for c in CONTEXTS))
    forward = _subs(ob.choose_many(filled, originals))
    backward = _subs(ob.choose_many(filled[::-1], originals[::-1]))[::-1]
    alone = [_subs(ob.choose_many([f], [o]))[0] for f, o in zip(filled, originals)]
    assert forward == backward == alone
    other_key = _subs(Obfuscator(key=os.urandom(32), type_check=False).choose_many(filled, originals))
    assert sum(a == b for a, b in zip(forward, other_key)) <= 5


def test_the_line_subkey_is_named_by_the_masked_line_alone():
    key = os.urandom(32)
    a, _ = _filled("called me yesterday.", ("Marcus",))
    b, _ = _filled("called me yesterday.", ("Tyrone",))  # another fill of the same masked line
    assert masked_line(a) == masked_line(b) == "[PERSON] called me yesterday."
    assert NAME not in masked_line(a)
    assert subkey(key, "line:x") != subkey(key, "line:y") and subkey(key, "line:x") == subkey(key, "line:x")
    assert len(subkey(key, "line:x")) == 32 and subkey(key, "line:x") != key


@pytest.fixture(scope="module")
def engine(tiny_bert) -> Obfuscator:
    """The default engine (entityTagger, identifiers, our rules) with a tiny MLM: its fills
    are noise, which is all these tests need (the rules choose the substitutes)."""
    return Obfuscator(key=os.urandom(32), model=tiny_bert)


def test_the_engine_and_the_batch_pipeline_draw_each_line_apart(tmp_path, tiny_bert, engine):
    """The issue's measure, end to end: the engine's obfuscate_many (the CLI default) and the
    batch pipeline, which calls choose_many without the masked text, under one key."""
    ob = engine
    key = ob._key
    apart = _subs(ob.obfuscate_many(LINES))
    assert len(apart) == 20 and len(set(apart)) >= 15, apart
    together = _subs(ob.obfuscate_many(LINES, consistent=True))
    assert len(together) == 20 and len(set(together)) == 1

    # The batch pipeline's choose step (what Pipeline.run calls on a chunk without --consistent)
    job = Job(command="obfuscate", input=tmp_path / "in.txt", output=tmp_path / "out.txt", in_jsonl=False,
              out_jsonl=False, key=key.hex(), model=tiny_bert)
    masked = ob.mask_many(LINES)
    prepared = [("fill", i, (m.original, m.spans), i + 1) for i, m in enumerate(masked)]
    filled = ob.propose([MaskInput(m.masked, m.markers) for m in masked])
    out = write_filled(job, ob, prepared, filled, {"no_mask": 0})
    assert out == [r.text for r in ob.obfuscate_many(LINES)]  # one rule on every path
    assert len({line.split(" ", 1)[0] for line in out}) >= 15
