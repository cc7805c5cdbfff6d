"""The recognizer and operator registries, as a Python developer extends them (issue 76): the
contract from the issue runs as written, through the engine's defaults."""
from __future__ import annotations

import re

import pytest

from recover_core import Obfuscator, operators, recognizers
from recover_core.errors import RecoverError
from recover_core.text.spans import IDENTIFIER_LABELS, MARKER_RE


@pytest.fixture()
def tax_id():
    recognizers.add(recognizers.Pattern("TAX_ID", r"\b\d{2} \d{3} \d{3} \d{3}\b", context=("tax",)))
    operators.add("TAX_ID", lambda original, rng: "".join(str(rng.randrange(10)) if c.isdigit() else c
                                                          for c in original))
    yield
    if "TAX_ID" in recognizers.names():
        recognizers.remove("TAX_ID")
    operators.remove("TAX_ID")


def test_the_issue_contract_replaces_a_new_kind_in_its_shape(tax_id):
    r = Obfuscator().obfuscate("My tax ID is 12 345 678 901, Tom said.")
    assert "12 345 678 901" not in r.text and "Tom" not in r.text
    (rep,) = [x for x in r.replacements if x.label == "TAX_ID"]
    assert re.fullmatch(r"\d{2} \d{3} \d{3} \d{3}", rep.substitute) and r.text[rep.start:rep.end] == rep.substitute
    # class markers know the kind; removed, it is gone from the labels and the markers
    assert "[TAX_ID]" in Obfuscator(markers="class").mask("My tax ID is 12 345 678 901.").masked
    recognizers.remove("TAX_ID")
    assert "TAX_ID" not in IDENTIFIER_LABELS and not MARKER_RE.search("[TAX_ID]")
    assert "[TAX_ID]" not in Obfuscator(markers="class").mask("My tax ID is 12 345 678 901.").masked


def test_context_words_decide_and_the_operator_draws_under_the_key(tax_id):
    ob = Obfuscator(technique="allowList", key=b"k" * 32)
    assert not [s for s in ob.find("The score was 12 345 678 901 points.") if s.label == "TAX_ID"]
    a = Obfuscator(technique="allowList", key=b"a" * 32).obfuscate("My tax number: 12 345 678 901.")
    b = Obfuscator(technique="allowList", key=b"b" * 32).obfuscate("My tax number: 12 345 678 901.")
    assert a.text != b.text  # another key, another substitute: never a function of the original alone


def test_bad_registrations_say_what_is_wrong():
    with pytest.raises(RecoverError, match="regular expression"):
        recognizers.Pattern("TAX_ID", r"(\d")
    with pytest.raises(RecoverError, match="cannot label"):
        recognizers.add(recognizers.Pattern("person", r"\d+"))
    with pytest.raises(RecoverError, match="already registered"):
        recognizers.add(recognizers.Pattern("EMAIL", r"x", name="Email"))
    with pytest.raises(RecoverError, match="No recognizer finds"):
        operators.add("NOT_A_KIND", lambda o, rng: o)
    with pytest.raises(RecoverError, match="two arguments"):
        operators.add("EMAIL", lambda o: o)
    with pytest.raises(RecoverError, match="No recognizer named"):
        recognizers.remove("Nope")
    assert recognizers.names()[:3] == ["Email", "Url", "Handle"]
