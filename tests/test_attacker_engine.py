"""What an attacker reads from the engine (issue 75): reprs that print originals, invisible
characters that split a name, identifiers that the paper's rules pass through, and the grid's
public key on corpora that are not public."""
from recover_core.masking import build, mask_text
from recover_core.spans import Span


# --- finding 4: no repr prints an original ------------------------------------------------------

def test_a_span_repr_shows_where_and_what_kind_but_not_the_words():
    shown = repr(Span(0, 17, "Darnell Whitcombe", "PERSON"))
    assert "Darnell" not in shown and "Whitcombe" not in shown
    assert "start=0" in shown and "end=17" in shown and "PERSON" in shown


def test_a_masked_repr_leaves_the_original_text_and_its_spans_out():
    m = mask_text("Zorblax Quendrick paid the bill.", build("vocabThres"))
    assert m.spans and m.original.startswith("Zorblax")  # still there, in memory
    shown = repr(m) + repr(m.spans) + repr(m.markers)
    assert "Zorblax" not in shown and "Quendrick" not in shown
    assert "[MASK]" in shown  # the masked text is what may be shown
