"""build-lms: the fusable LMs come from the grid's own recipe and land in the LM store."""
import pytest

from recover_core.errors import RecoverError
from recover_core.experiment.config import fusion_weights


TINY_GRID = """
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
"""


def test_build_lms_makes_named_lms_with_cards(tmp_path, monkeypatch, own_cache):
    import torch

    from recover_core.asr import lms
    from recover_core.experiment import build_lms

    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY_GRID)
    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "lms"))
    built = build_lms.build(["oracle", "vocabThres/baseline1"], cfg, pretrain_epochs=None, progress=False)
    assert built == ["pretrained", "oracle", "vocabThres-baseline1"]
    assert lms.built() == ["oracle", "pretrained", "vocabThres-baseline1"]
    assert lms.available()[:3] == ["none", "pretrained", "oracle"]
    card = lms.card("vocabThres-baseline1")
    assert "masked by vocabThres and filled by baseline1" in card.description and card.perplexity > 1
    assert (card.lm_weight, card.word_bonus) == fusion_weights("adapted")
    lp, past = lms.load("oracle").step(torch.tensor([50256]))
    assert lp.shape[-1] == lms.load("oracle").config.vocab_size
    assert build_lms.build(["oracle"], cfg, pretrain_epochs=None, progress=False) == []  # built ones are kept
    with pytest.raises(RecoverError, match="not available here"):
        lms.card("entityTagger-baseline0")
    with pytest.raises(RecoverError, match="'oracle' or MASKING/METHOD"):
        build_lms.build(["baseline0"], cfg, pretrain_epochs=None, progress=False)


def test_the_smollm2_family_builds_the_same_conditions_with_lora(tmp_path, monkeypatch, tiny_llama, own_cache):
    """--family smollm2 on a tiny causal LM in SmolLM2's place: the un-adapted LM and the
    adapted ones, each with a card, only the adapters on disk."""
    from recover_core.asr import lms
    from recover_core.experiment import build_lms
    from recover_core.lm.pretrained import PretrainedLM

    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY_GRID)
    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "lms"))
    built = build_lms.build_smollm2(["oracle", "vocabThres/baseline1"], cfg, progress=False, base=tiny_llama)
    assert built == ["smollm2", "smollm2-oracle", "smollm2-vocabThres-baseline1"]
    assert lms.built() == ["smollm2", "smollm2-oracle", "smollm2-vocabThres-baseline1"]
    assert sorted(p.name for p in (tmp_path / "lms").glob("*.adapter")) == [
        "smollm2-oracle.adapter", "smollm2-vocabThres-baseline1.adapter"]
    card = lms.card("smollm2-vocabThres-baseline1")
    assert card.family == "smollm2" and card.adapter and card.perplexity > 1
    assert "masked by vocabThres and filled by baseline1" in card.description
    assert (card.lm_weight, card.word_bonus) == fusion_weights("smollm2-adapted")
    assert isinstance(lms.load("smollm2"), PretrainedLM)
    assert build_lms.build_smollm2(["pretrained"], cfg, progress=False, base=tiny_llama) == []


def test_shipped_lms_are_found_with_no_build(tmp_path, monkeypatch, tiny_llama, own_cache):
    """build-lms --ship copies a SmolLM2 LM into the shipped store: the adapter in float16 with
    a model card. A fresh clone (nothing built) then offers and loads it."""
    import torch
    from safetensors.torch import load_file

    from recover_core.runtime import env
    from recover_core.asr import lms
    from recover_core.experiment import build_lms
    from recover_core.lm.pretrained import PretrainedLM

    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY_GRID)
    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "lms"))
    build_lms.build_smollm2(["oracle"], cfg, progress=False, base=tiny_llama, rank=4)
    assets = tmp_path / "assets"
    build_lms.ship(["smollm2", "smollm2-oracle"], "the command", dest=assets / lms.SHIPPED)
    adapter = assets / lms.SHIPPED / "smollm2-oracle.adapter"
    assert {v.dtype for v in load_file(str(adapter / "adapter_model.safetensors")).values()} == {torch.float16}
    card = (adapter / "README.md").read_text()
    assert "rank 4" in card and "`the command`" in card and "Word perplexity" in card

    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "fresh"))  # a fresh clone: nothing built
    monkeypatch.setattr(env, "assets_dir", lambda: assets)
    assert lms.built() == [] and lms.available() == ["none", "smollm2", "smollm2-oracle"]
    assert isinstance(lms.load("smollm2-oracle"), PretrainedLM)
    with pytest.raises(RecoverError, match="not available here"):
        lms.card("smollm2-entityTagger-baseline1")


def test_perplexity_rows_of_adapters_for_the_results_tab(tmp_path, monkeypatch, tiny_llama, own_cache):
    from recover_core.asr import lms
    from recover_core.experiment import build_lms
    from recover_core.results.tables import TIDY_COLUMNS

    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY_GRID)
    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "lms"))
    build_lms.build_smollm2(["oracle"], cfg, progress=False, base=tiny_llama, rank=4)
    rows = build_lms.perplexity_rows(["smollm2", "smollm2-oracle"], "the command")
    assert len(rows) == 1 and set(rows[0]) == set(TIDY_COLUMNS)  # the LM as it ships is no cell
    assert rows[0]["method"] == "oracle" and rows[0]["model"] == "smollm2-135m+lora-r4"
    assert rows[0]["value"] == lms.card("smollm2-oracle").perplexity and "LoRA rank 4" in rows[0]["scale"]


def test_a_causal_cell_adapts_every_seed_on_its_one_fill_and_says_so():
    """Issue 58: a causal Top-K fill is hours per seed on 2 cores, so its seeds vary LoRA only;
    an MLM cell's seed is its fill's too."""
    from recover_core.experiment.build_lms import fill_seed, perplexity_row

    assert fill_seed("infill:smollm2-135m:topk", 2) == 0 and fill_seed("mlm:minilm-wiki:topk", 2) == 2
    assert fill_seed("baseline1", 1) == 1 and fill_seed("instruct:smollm2-fill:topk+typed", 1) == 0
    causal = perplexity_row("allowList", "infill:smollm2-135m:topk", 101.04, 8, 1, "cmd")
    assert "seed 0" in causal["note"] and causal["value"] == 101.0
    assert "note" not in perplexity_row("allowList", "infill:smollm2-135m:topk", 101.0, 8, 0, "cmd")


def test_csv_rows_merge_by_cell_seed_and_metric(tmp_path):
    """build-lms --csv and --import-job write into the grid's one CSV, built over many commands:
    a new row replaces the same cell, seed and metric, and every other row keeps its bytes."""
    from recover_core.experiment.build_lms import perplexity_row
    from recover_core.results.tables import merge_rows

    csv = tmp_path / "grid.csv"
    merge_rows(csv, [perplexity_row("vocabThres", "baseline1", 92.44, 8, 0, "first"),
                     perplexity_row("vocabThres", "infill:smollm2-135m:topk", 101.0, 8, 1, "first"),
                     perplexity_row("", "oracle", 68.0, 8, 0, "first")])
    before = csv.read_text().splitlines()
    merge_rows(csv, [perplexity_row("vocabThres", "baseline1", 95.0, 8, 0, "second"),
                     perplexity_row("vocabThres", "baseline1", 90.0, 8, 1, "second")])
    after = csv.read_text().splitlines()
    assert after[0] == before[0] and before[2:] == after[1:3]  # untouched rows, byte for byte
    assert len(after) == 5 and after[3].startswith("news,vocabThres,baseline1,perplexity,95.0,")
    assert after[4].startswith("news,vocabThres,baseline1,perplexity,90.0,") and "second" in after[4]
    assert "seed 0's" in before[2] and ",92.4," in before[1]  # the causal row's note; values as rounded


def test_asr_eval_adds_an_lms_rows_to_its_file_and_refuses_another_scale(tmp_path):
    """asr-eval -o into a file of earlier runs: a run for one new LM keeps the other LMs' rows
    and replaces its own; a run of another scale (fewer utterances) is refused, not mixed in,
    since the file's WERs are compared with each other."""
    import pandas as pd

    from recover_core.asr import lms, wer
    from recover_core.errors import RecoverError
    from recover_core.experiment import asr_eval
    from recover_core.results.tables import merge_rows

    def rows(name, masking, hyp, scale="400 utterances"):
        card = lms.LMCard(name, "", {}, 0.5, 0.0, masking=masking, method=name.split("-", 2)[-1], family="smollm2")
        return asr_eval._rows_for(name, wer.score(["a b c d"], [hyp]), (0.0, 1.0), 1, scale, "cmd", card, 8)

    csv = tmp_path / "asr.csv"
    merge_rows(csv, rows("smollm2-vocabThres-baseline1", "vocabThres", "a b c d")
               + rows("smollm2-allowList-baseline1", "allowList", "a b c"), one_scale=True)
    merge_rows(csv, rows("smollm2-vocabThres-baseline1", "vocabThres", "a b"), one_scale=True)
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    wers = df[df.metric == "wer_percent"].set_index("masking").value.to_dict()
    assert wers == {"allowList": "25.0", "vocabThres": "50.0"} and len(df) == 10
    with pytest.raises(RecoverError, match="another run's scale"):
        merge_rows(csv, rows("smollm2-vocabThres-baseline0", "vocabThres", "a", "40 utterances"), one_scale=True)
    assert len(pd.read_csv(csv)) == 10
    (tmp_path / "notes.csv").write_text("what,when\nlunch,noon\n")
    with pytest.raises(RecoverError, match="not a results CSV.*no dataset"):
        merge_rows(tmp_path / "notes.csv", rows("smollm2-vocabThres-baseline0", "vocabThres", "a"))
