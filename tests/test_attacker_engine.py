"""What an attacker reads from the engine (issue 75): reprs that print originals, invisible
characters that split a name, identifiers that the paper's rules pass through, and the grid's
public key on corpora that are not public."""
import pytest

from recover_core import validation
from recover_core.errors import RecoverError
from recover_core.masking import build, mask_text
from recover_core.obfuscator import Obfuscator
from recover_core.spans import Span


# --- finding 3: invisible characters split a name -----------------------------------------------

SPLIT = "Dar\u200bnell Whit\u00adcombe called me yesterday."


def test_format_characters_are_dropped_and_words_are_nfkc():
    assert validation.check_text(SPLIT) == "Darnell Whitcombe called me yesterday."
    hidden = "\ufeffDar\u200dnell\u2060 \u202eWhit\u200ccombe\u202c\u034f called\ufe0f me."
    assert validation.check_text(hidden) == "Darnell Whitcombe called me."
    assert validation.check_text("\uff24\uff41\uff52\uff4e\uff45\uff4c\uff4c called.") == "Darnell called."
    assert validation.check_text("Gri\ufb03ths wrote to jane\uff20example\uff0ecom.") == \
        "Griffiths wrote to jane@example.com."
    assert validation.check_text("Jose\u0301 came.") == "Jos\u00e9 came."
    # Symbols and other numbers stay as typed: they hide no word, and the public corpora hold them.
    assert validation.check_text("Add \u00bd cup, x\u00b2 \u00b4twice\u00b4.") == "Add \u00bd cup, x\u00b2 \u00b4twice\u00b4."
    with pytest.raises(RecoverError, match="empty"):
        validation.check_text("\u200b\u00ad \u2060")
    plain = "Tom met Ann in Paris, caf\u00e9 au lait."
    assert validation.check_text(plain) == plain  # normal text is as it was


def test_a_name_split_by_invisible_characters_is_masked_whole():
    spans = Obfuscator().find(SPLIT)
    assert {(s.text, s.label) for s in spans} >= {("Darnell", "PERSON"), ("Whitcombe", "PERSON")}
    assert not any("nell" in s.text and s.text != "Darnell" or s.text == "combe" for s in spans)


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
