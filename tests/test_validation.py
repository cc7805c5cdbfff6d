import pytest

from recover_core.errors import RecoverError
from recover_core.filling import MaskInput
from recover_core.masking import build, mask_text
from recover_core.text.validation import check_k, check_text


@pytest.mark.parametrize("text,msg", [
    ("", "empty"),
    ("   \n ", "empty"),
    ("x" * 2001, "limit is 2,000"),
    ("Tom met [MASK] today.", "already contains the marker"),
    ("Send it to [PERSON] now.", "already contains the marker"),
    ("Meet me in Москва tomorrow.", "Latin script"),
    ("I love this 😀 so much.", "Emoji"),
    ("Sunny ☀ today.", "Emoji"),
    ("東京に行きます", "Latin script"),
])
def test_bad_text_gets_a_clear_message(text, msg):
    with pytest.raises(RecoverError, match=msg):
        check_text(text)


def test_accented_latin_is_fine():
    assert check_text("José met Zoë in Zürich.") == "José met Zoë in Zürich."


def test_the_symbols_of_ordinary_text_are_fine():
    """A degree sign was refused as a pictograph, so no temperature and no coordinates got in."""
    for text in ("It was 20°C at 40.7128° N, 74.0060° W.", "© 2024 Acme™, see § 3 → page 2."):
        assert check_text(text) == text


@pytest.mark.parametrize("k", [0, 51, -3, 2.5, "ten", True])
def test_k_out_of_range(k):
    with pytest.raises(RecoverError, match="K must"):
        check_k(k)


def test_nothing_to_fill_and_unknown_technique():
    with pytest.raises(RecoverError, match="Nothing to fill"):
        MaskInput.parse("No markers here.")
    with pytest.raises(RecoverError, match="Unknown masking technique 'regex'"):
        build("regex")


def test_nothing_to_mask_is_not_an_error():
    m = mask_text("I like it here.", build("allowList"))
    assert m.spans == [] and m.masked == "I like it here."


def test_mask_count_limit():
    from recover_core.runtime.env import MAX_MASKS
    from recover_core.text.validation import check_mask_count, count_masks

    assert count_masks("[PERSON] [PERSON] met <mask> in [GPE].") == 4
    assert check_mask_count(MAX_MASKS) == MAX_MASKS
    line = ", ".join(["[MASK]"] * 250)
    assert len(line) <= 2000 and count_masks(line) == 250
    with pytest.raises(RecoverError, match=f"has 250 masks; the limit is {MAX_MASKS} per sentence.*Split it"):
        check_mask_count(count_masks(line), what="line")
