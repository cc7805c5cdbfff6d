"""bench/tab.py's scoring follows TAB's evaluation.py (issue 74): checked on tiny hand-made
documents, with hand-made tokens and POS tags (no TAB data, no model)."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from recover_core.text.spans import Span

_SPEC = importlib.util.spec_from_file_location("tab_bench", Path(__file__).resolve().parent.parent / "bench" / "tab.py")
tab = importlib.util.module_from_spec(_SPEC)
sys.modules["tab_bench"] = tab  # dataclasses look their module up by name
_SPEC.loader.exec_module(tab)

TEXT = "Mr Kaya sued the Ankara Court in application no. 36110/97. Kaya won."
#       0123456789012345678901234567890123456789012345678901234567890123456789


def toks(text: str, pos: dict[str, str]) -> list:
    """Whitespace-and-punctuation tokens, POS from ``pos`` (else NOUN)."""
    import re

    return [tab.Token(m.start(), m.end(), pos.get(m.group(), "NOUN"), m.group().lower())
            for m in re.finditer(r"\w+|[^\w\s]", text)]


def at(word: str, nth: int = 0) -> tuple[int, int]:
    i = -1
    for _ in range(nth + 1):
        i = TEXT.index(word, i + 1)
    return i, i + len(word)


def doc(mentions: list, annotators=("a",)) -> "tab.GoldDoc":
    ms = [tab.Mention(*span, ident, ety, eid, ann) for span, ident, ety, eid, ann in mentions]
    return tab.GoldDoc("d1", "train", TEXT, tab.build_entities(ms), tuple(annotators))


TOKENS = toks(TEXT, {"the": "DET", "in": "ADP"})
GOLD = doc([
    (at("Mr Kaya"), "DIRECT", "PERSON", "e1", "a"),
    (at("Kaya", 1), "DIRECT", "PERSON", "e1", "a"),
    (at("the Ankara Court"), "QUASI", "ORG", "e2", "a"),
    (at("no. 36110/97"), "QUASI", "CODE", "e3", "a"),
])


def test_an_entity_counts_only_when_every_mention_is_masked():
    # "Kaya" masked in the first mention only: the person is not masked
    sc = tab.score_document(GOLD, TOKENS, [at("Kaya")])
    assert sc.recall("direct") == (0, 1)
    sc = tab.score_document(GOLD, TOKENS, [at("Kaya"), at("Kaya", 1)])
    assert sc.recall("direct") == (1, 1)  # "Mr" may stay (TOKENS_TO_IGNORE)
    # a mention half covered is not masked
    sc = tab.score_document(GOLD, TOKENS, [at("Kaya"), (at("Kaya", 1)[0], at("Kaya", 1)[0] + 2)])
    assert sc.recall("direct") == (0, 1)


def test_determiners_adpositions_titles_and_punctuation_may_stay():
    sc = tab.score_document(GOLD, TOKENS, [at("Ankara Court"), at("36110")])
    # "the" (DET) and "no" (a token to ignore), "." and "/" ... but "97" is a word: not masked
    assert sc.recall("quasi", "ORG") == (1, 1) and sc.recall("quasi", "CODE") == (0, 1)
    sc = tab.score_document(GOLD, TOKENS, [at("Ankara Court"), at("36110/97")])
    assert sc.recall("quasi") == (2, 2) and sc.recall("direct") == (0, 1)
    # a content word left out is a miss, and it is listed for the error analysis
    sc = tab.score_document(GOLD, TOKENS, [at("Ankara")])
    assert sc.recall("quasi", "ORG") == (0, 1)
    assert ("d1", "ORG", "the Ankara Court", True) in sc.misses


def test_only_mentions_that_need_masking_are_checked_and_types_come_from_the_first():
    gold = doc([
        (at("Ankara Court"), "NO_MASK", "ORG", "e2", "a"),  # first mention: NO_MASK, ORG
        (at("Kaya", 1), "QUASI", "PERSON", "e2", "a"),
    ])
    (ent,) = gold.entities
    assert ent.need_masking and not ent.is_direct and ent.entity_type == "ORG"
    sc = tab.score_document(gold, TOKENS, [at("Kaya", 1)])  # the NO_MASK mention may stay
    assert sc.recall("quasi") == (1, 1)
    nothing = doc([(at("Ankara Court"), "NO_MASK", "ORG", "e9", "a")])
    assert tab.score_document(nothing, TOKENS, [at("Ankara Court")]).recall() == (0, 0)


def test_token_precision_is_uniform_and_micro_averaged_over_annotators():
    sc = tab.score_document(GOLD, TOKENS, [(at("sued")[0], at("Court")[1])])  # sued the Ankara Court
    assert sc.precision() == (3, 4)  # the, Ankara, Court (the mention holds "the"); "sued" is wrong
    two = doc([
        (at("Ankara Court"), "QUASI", "ORG", "a_e1", "a"),
        (at("Ankara"), "QUASI", "LOC", "b_e1", "b"),
        (at("Kaya", 1), "NO_MASK", "PERSON", "b_e2", "b"),  # not masked by b: a wrong mask for b
    ], annotators=("a", "b"))
    sc = tab.score_document(two, TOKENS, [at("Ankara Court"), at("Kaya", 1)])
    # Ankara: a and b; Court: a; Kaya: nobody -> 3 of 3 tokens x 2 annotators
    assert sc.precision() == (3, 6)
    assert sc.recall() == (2, 2)  # each annotator's entity is counted once
    # overlapping spans (Presidio) count each token once
    assert tab.score_document(GOLD, TOKENS, [at("Ankara Court"), at("Ankara")]).precision() == (2, 2)


def _record(split: str, text, entities) -> str:
    return json.dumps({"entities": entities, "text": text,
                       "metadata": {"provenance": {"dataset_type": split, "doc_id": f"{split}-1", "annotator": "annotator1"}}})


def test_the_loader_drops_other_splits_unread_and_refuses_the_test_split(tmp_path):
    good = [{"start_offset": 3, "end_offset": 7, "identifier_type": "DIRECT", "entity_type": "PERSON",
             "entity_id": "e1", "annotator": ""}]
    path = tmp_path / "tab.jsonl"
    # the test record is malformed on purpose: were it read past its split, loading would fail
    path.write_text("\n".join([_record("train", TEXT, good), _record("test", None, [{"bad": 1}]),
                               _record("dev", TEXT, good)]) + "\n", encoding="utf-8")
    docs = tab.load_tab(path)
    assert [(d.split, d.annotators) for d in docs] == [("train", ("annotator1",)), ("dev", ("annotator1",))]
    assert [d.split for d in tab.load_tab(path, ["dev"])] == ["dev"]
    with pytest.raises(ValueError, match="not used"):
        tab.load_tab(path, ["train", "test"])
    with pytest.raises(FileNotFoundError, match="maisonOP/spia"):
        tab.load_tab(tmp_path / "missing.jsonl")
    with pytest.raises(SystemExit):
        tab.parse_args(["--splits", "test"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_record("train", TEXT, [dict(good[0], end_offset=999)]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad offsets"):
        tab.load_tab(bad)


def test_spans_of_a_normalised_piece_are_placed_back_and_long_paragraphs_are_cut():
    piece = "  Mr Kaya …\n  met Ms Ünal."
    # check_text strips, collapses the line break and NFKC turns "…" into "...": offsets move
    norm = "Mr Kaya ... met Ms Ünal."
    spans = [Span(norm.index("Kaya"), norm.index("Kaya") + 4, "Kaya", "PERSON"),
             Span(norm.index("Ünal"), norm.index("Ünal") + 4, "Ünal", "PERSON")]
    placed, lost = tab.align_spans(piece, spans)
    assert lost == 0 and [piece[s:e] for s, e, _ in placed] == ["Kaya", "Ünal"]
    text = "First para.\n\n" + "A sentence here. " * 30 + "\nLast."
    cut = list(tab.pieces(text, 100))
    assert all(len(p) <= 100 for _, p in cut) and all(text[o:o + len(p)] == p for o, p in cut)
    assert "".join(p for _, p in cut).replace(" ", "") == text.replace("\n", "").replace(" ", "")
