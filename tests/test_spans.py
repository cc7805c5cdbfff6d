from recover_core.text import spans
from recover_core.text.spans import Span, apply, merge, shift, words, words_shared


def test_words_keep_offsets_and_inner_apostrophes():
    text = "Don't tell Jean-Luc: 3.5 is 42!"
    ws = words(text)
    assert [w.text for w in ws] == ["Don't", "tell", "Jean-Luc", "3.5", "is", "42"]
    assert all(text[w.start : w.end] == w.text for w in ws)


def test_apply_right_to_left_and_shift():
    text = "Tom lives in Chicago."
    spans = [Span(0, 3, "Tom", "PERSON"), Span(13, 20, "Chicago", "GPE")]
    out = apply(text, spans, ["[PERSON]", "[GPE]"])
    assert out == "[PERSON] lives in [GPE]."
    moved = shift(spans, text, ["[PERSON]", "[GPE]"])
    assert [out[s.start : s.end] for s in moved] == ["[PERSON]", "[GPE]"]


def test_merge_unites_overlaps_and_prefers_specific_labels():
    a = Span(0, 5, "Grace", "MASK", "allowList")
    b = Span(0, 5, "Grace", "PERSON", "entityTagger")
    c = Span(10, 14, "Leed", "MASK")
    assert merge([c, a, b]) == [Span(0, 5, "Grace", "PERSON", "entityTagger"), c]


def test_words_are_split_once_within_a_batch_and_forgotten_after_it():
    text = "Call Maria Kowalski tomorrow"
    with words_shared():
        first = words(text)
        assert words(text) is first  # one split, shared by the recognizers
        assert text in spans._WORDS.get()
    assert spans._WORDS.get() is None  # the user's text is gone with the batch
    assert words(text) == first and words(text) is not first
