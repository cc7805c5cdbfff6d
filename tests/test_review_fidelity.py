"""vats2024 fidelity fixes: clitics under allowList, Top-K sampling readings, merged labels,
one rank table for every vocabThres N."""
import random
from collections import Counter

import pytest

from recover_core.data import lexicons
from recover_core.filling.base import Candidate, MaskInput, choose, merge_consecutive, merged_label
from recover_core.masking import build, mask_text
from recover_core.masking.base import RankedKeep, clitic_parts
from recover_core.text.spans import Span


def masked_words(technique, text, **kw):
    return [s.text for s in mask_text(text, build(technique, **kw)).spans]


@pytest.mark.parametrize("word,parts", [
    ("don't", ("do", "not")), ("can't", ("can", "not")), ("won't", ("will", "not")), ("king's", ("king", None)),
    ("it's", ("it", None)), ("i'm", ("i", "am")), ("they're", ("they", "are")), ("we'll", ("we", "will")),
    ("happiness", None),
])
def test_clitics_split_into_their_base(word, parts):
    assert clitic_parts(word) == parts


def test_allow_list_keeps_contractions_and_possessives_whose_base_it_keeps():
    text = "I don't think it's the king's horse, and I'm sure they won't come."
    assert masked_words("allowList", text) == []
    # ... but a private base still leaks nothing: Zorblax's is masked whole.
    assert masked_words("allowList", "I met Zorblax's brother and didn't say Zorblax's name.") == ["Zorblax's", "Zorblax's"]
    assert masked_words("allowList", "Curly’s dog") == ["Curly’s"]


def test_vocab_thres_uses_one_rank_table_for_every_n():
    a, b = build("vocabThres", n=1000).keep, build("vocabThres", n=50_000).keep
    assert isinstance(a, RankedKeep) and a.ranks is b.ranks  # shared, not a new set per N
    assert "the" in a and "the" in b
    rare = next(w for w, r in lexicons.word_ranks().items() if 1000 <= r < 50_000)
    assert rare not in a and rare in b
    assert "zorblaxia" not in b


def test_union_keep_list_is_the_intersection():
    keep = build("allowList+vocabThres", n=1000).keep
    assert "the" in keep
    only_ngsl = next(w for w in sorted(lexicons.allow_list()) if w not in build("vocabThres", n=1000).keep)
    assert only_ngsl not in keep


CANDS = [Candidate("alpha", 0.90), Candidate("beta", 0.05), Candidate("gamma", 0.03), Candidate("delta", 0.02)]


def draw(sampling, n=4000):
    rng = random.Random(0)
    return Counter(CANDS[choose(CANDS, "topk", 4, rng, None, sampling)[0]].word for _ in range(n))


def test_topk_uniform_is_the_papers_reading_and_weighted_follows_scores():
    uniform, weighted = draw("uniform"), draw("weighted")
    assert all(800 < uniform[c.word] < 1200 for c in CANDS), uniform  # about 1/4 each
    assert weighted["alpha"] > 3300 and weighted["delta"] < 200, weighted


def test_topk_redraws_off_the_keep_list_under_both_samplings():
    for sampling in ("uniform", "weighted"):
        rng = random.Random(1)
        picks = {CANDS[choose(CANDS, "topk", 4, rng, {"alpha", "beta"}, sampling)[0]].word for _ in range(200)}
        assert picks == {"gamma", "delta"}


@pytest.mark.parametrize("labels,want", [
    (["NUMBER", "MASK"], "MASK"),  # "1999 Zorblax" is no number
    (["MASK", "NUMBER"], "MASK"),
    (["NUMBER", "NUMBER"], "NUMBER"),
    (["PERSON", "MASK"], "PERSON"),  # "Maria [MASK]": most likely one name
    (["MASK", "PERSON", "PERSON"], "PERSON"),
    (["PERSON", "GPE"], "MASK"),  # two types: no guess
    (["NUMBER", "GPE"], "GPE"),
    (["MASK", "MASK"], "MASK"),
])
def test_merged_label_never_takes_one_label_blindly(labels, want):
    assert merged_label(labels) == want


def test_merged_span_of_number_and_word_is_not_filled_as_a_number():
    text = "In [NUMBER] [MASK] came."
    item = MaskInput(text, [Span(3, 11, "[NUMBER]", "NUMBER"), Span(12, 18, "[MASK]", "MASK")])
    merged = merge_consecutive(item)
    assert [(m.start, m.end, m.label) for m in merged.markers] == [(3, 18, "MASK")]
