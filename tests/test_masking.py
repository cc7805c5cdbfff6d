"""The three techniques on the real word lists and the real spaCy models."""
import pytest

from recover_core.data import lexicons
from recover_core.errors import RecoverError
from recover_core.masking import build, mask_many, mask_rate, mask_text, names

SENT = "Tom lives in Chicago and works for Microsoft with Maria Gonzalez since 1999."


def masked_words(technique, text=SENT, **kw):
    return [s.text for s in mask_text(text, build(technique, **kw)).spans]


def test_registry_lists_the_paper_techniques():
    assert names() == ["allowList", "entityTagger", "vocabThres"]


def test_allow_list_is_the_shipped_ngsl_list():
    keep = lexicons.allow_list()
    assert 8000 < len(keep) < 10000
    assert {"lives", "works", "since", "happiness"} <= keep and "chicago" not in keep
    assert masked_words("allowList") == ["Tom", "Chicago", "Microsoft", "Maria", "Gonzalez", "1999"]


def test_vocab_thres_n_controls_the_keep_list():
    small, large = masked_words("vocabThres", n=1000), masked_words("vocabThres", n=100_000)
    assert set(large) < set(small)
    assert "Gonzalez" in small and "lives" not in small
    with pytest.raises(RecoverError, match="N for vocabThres"):
        build("vocabThres", n=5)


@pytest.mark.parametrize("model", ["spacy-sm", "spacy-md"])
def test_entity_tagger_finds_people_places_orgs(model):
    m = mask_text(SENT, build("entityTagger", ner_model=model), "class")
    labels = {s.text: s.label for s in m.spans}
    assert labels["Tom"] == "PERSON" and labels["Maria"] == "PERSON" and labels["Chicago"] == "GPE"
    assert "1999" not in labels  # DATE is not a default type
    assert m.masked.startswith("[PERSON] lives in [GPE]")


def test_entity_types_are_configurable():
    only_people = masked_words("entityTagger", types=["PERSON"])
    assert "Chicago" not in only_people and "Tom" in only_people
    with_dates = masked_words("entityTagger", types=["PERSON", "DATE"])
    assert "1999" in with_dates
    with pytest.raises(RecoverError, match="Unknown entity type"):
        build("entityTagger", types=["CELEBRITY"])


def test_name_list_backs_up_ner():
    from recover_core.masking.entity_tagger import name_list_spans

    text = "Will you ask Mark whether Grace and Desmond can come?"
    found = [s.text for s in name_list_spans(text)]
    assert "Mark" in found and "Grace" in found and "Desmond" in found
    assert "Will" not in found  # a common word at the start of a sentence


def test_combinations_and_class_markers():
    m = mask_text("Maria bought 3 books in Leeds.", build("allowList+entityTagger"), "class")
    assert m.masked == "[PERSON] bought [NUMBER] books in [GPE]."


def test_originals_are_kept_only_in_memory():
    m = mask_text(SENT, build("entityTagger"))
    public = str(m.public())
    assert "Maria" not in public and "Chicago" not in public
    assert [s.text for s in m.spans][:2] == ["Tom", "Chicago"]


def test_mask_rate_counts_words(news_sentences):
    res = mask_many(news_sentences[:200], build("allowList"))
    r = mask_rate(res)
    assert r["sentences"] == 200 and 0.1 < r["mask_rate"] < 0.5
    assert r["masked_words"] == sum(len(x.spans) for x in res)
