"""build-lms: the fusable LMs come from the grid's own recipe and land in the LM store."""
import pytest

from recover_core.errors import RecoverError


def test_build_lms_makes_named_lms_with_cards(tmp_path, monkeypatch):
    import torch

    from recover_core.asr import build_lms, lms

    cfg = tmp_path / "tiny.toml"
    cfg.write_text("""
[grid]
datasets = ["news"]
maskings = ["vocabThres"]
methods = ["oracle", "baseline1"]
[lm]
preset = "tiny"
pretrain_corpus = "news"
pretrain_epochs = 0.2
adapt_epochs = 0.5
max_train = 64
max_test = 16
""")
    monkeypatch.setenv("RECOVER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "lms"))
    built = build_lms.build(["oracle", "vocabThres/baseline1"], cfg, pretrain_epochs=None, progress=False)
    assert built == ["pretrained", "oracle", "vocabThres-baseline1"]
    assert lms.available() == ["none", "pretrained", "oracle", "vocabThres-baseline1"]
    card = lms.card("vocabThres-baseline1")
    assert "masked by vocabThres and filled by baseline1" in card.description and card.perplexity > 1
    assert (card.lm_weight, card.word_bonus) == build_lms.fusion_weights("adapted")
    lp, past = lms.load("oracle").step(torch.tensor([50256]))
    assert lp.shape[-1] == lms.load("oracle").config.vocab_size
    assert build_lms.build(["oracle"], cfg, pretrain_epochs=None, progress=False) == []  # built ones are kept
    with pytest.raises(RecoverError, match="not available here"):
        lms.card("entityTagger-baseline0")
    with pytest.raises(RecoverError, match="'oracle' or MASKING/METHOD"):
        build_lms.build(["baseline0"], cfg, pretrain_epochs=None, progress=False)
