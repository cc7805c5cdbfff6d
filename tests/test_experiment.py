"""The grid: config errors are clear, cells resume without recomputing, the CSV is tidy."""
import json

import pytest

from recover_core import experiment as X
from recover_core.errors import RecoverError
from recover_core.results.tables import TIDY_COLUMNS


def write(tmp_path, text):
    p = tmp_path / "grid.toml"
    p.write_text(text)
    return p


def tiny_config(tmp_path, tiny_bert):
    return write(tmp_path, f"""
[grid]
datasets = ["news"]
maskings = ["vocabThres"]
methods = ["oracle", "baseline0", "baseline1", "mlm:{tiny_bert}:top1", "mlm-ft:{tiny_bert}:topk"]
ft_steps = 10
seeds = [0, 1]
[lm]
preset = "tiny"
pretrain_corpus = "news"
pretrain_epochs = 0.05  # a few steps: the tests check mechanics, not the LM
adapt_epochs = 1
max_train = 64
max_test = 16
bf16 = false
[output]
output = "{tmp_path / 'out' / 'grid.csv'}"
""")


@pytest.mark.parametrize("text,msg", [
    ("[grid]\ndatasets=['news']\nmaskings=['vocabThres']\n", "methods"),
    ("[grid]\ndatasets=['reddit']\nmaskings=['vocabThres']\nmethods=['oracle']\n", "Unknown dataset"),
    ("[grid]\ndatasets=['news']\nmaskings=['regex']\nmethods=['oracle']\n", "Unknown masking"),
    ("[grid]\ndatasets=['news']\nmaskings=['vocabThres']\nmethods=['bert']\n", "kind:model"),
    ("[grid]\ndatasets=['news']\nmaskings=['vocabThres']\nmethods=['oracle']\n[lm]\nlayers=3\n", "unknown setting"),
    ("[grid\n", "not valid TOML"),
    ("[grid]\ndatasets=['news']\nmaskings=['vocabThres']\nmethods=['oracle']\nsampling='softmax'\n", "sampling"),
    ("[grid]\ndatasets=['news']\nmaskings=['vocabThres']\nmethods=['oracle']\nseeds=[1, 1]\n", "distinct"),
    ("[grid]\ndatasets=['news']\nmaskings=['vocabThres']\nmethods=['oracle']\nseeds=[]\n", "seeds"),
])
def test_bad_configs_get_clear_messages(tmp_path, text, msg):
    with pytest.raises(RecoverError, match=msg):
        X.load_config(write(tmp_path, text))


def test_grid_runs_resumes_and_writes_tidy_csv(tmp_path, tiny_bert, monkeypatch):
    import pandas as pd

    from recover_core.lm import train as T

    cfg = X.load_config(tiny_config(tmp_path, tiny_bert))
    assert cfg.seeds == (0, 1) and cfg.sampling == "uniform"  # the paper's reading by default
    cells = X.cells(cfg)
    assert len(cells) == 10 and cells[0] == ("news", "", "oracle", 0)  # Oracle once per seed, not per masking
    assert cells[1] == ("news", "", "oracle", 1) and cells[2] == ("news", "vocabThres", "baseline0", 0)
    root = tmp_path / "cache"
    first = X.Runner(cfg, "test", progress=False, root=root)
    for c in cells[:2]:  # a run killed after two cells
        first.run_cell(*c)
    calls = []
    real = T.train
    monkeypatch.setattr(T, "train", lambda *a, **k: calls.append(k.get("desc")) or real(*a, **k))
    again = X.Runner(cfg, "test", progress=False, root=root)
    out = again.run()
    # The pretrained LM came from the cache; only the eight unfinished cells were adapted.
    assert len(calls) == 8 and all(d.startswith("adapt") for d in calls), calls
    df = pd.read_csv(out)
    assert list(df.columns) == TIDY_COLUMNS
    ppl = df[df.metric == "perplexity"]
    assert sorted(ppl.method) == sorted(cfg.methods * 2) and (ppl.value > 1).all()
    assert sorted(ppl.seed.unique()) == [0, 1]
    assert {"n_sentences_train", "n_sentences_test", "mask_rate_percent", "leak_rate_percent",
            "pretrain_tokens_unique", "pretrain_tokens_seen"} <= set(df.metric)
    assert (df.scale.str.contains("tiny")).all() and (df.scale.str.contains("sampling uniform")).all()
    assert (df.command == "test").all()
    # Baseline1 trained on the same text as Baseline0, with the mask targets ignored.
    cell = json.loads(again.cell_path("news", "vocabThres", "baseline1", 0).read_text())
    assert cell["train_sentences"] == 64
    # FT (vats2024): the MLM was fine-tuned on exactly the corpus the cell's Top-K method made
    # (same seed), never on the originals, and the fill came from the fine-tuned model.
    for seed in (0, 1):
        ft = next(root.glob(f"*/ft/news__vocabThres__*__topk__s{seed}"))
        trained_on = (ft.parent / f"{ft.name}.txt").read_text().splitlines()
        topk = again.train_text("news", "vocabThres", f"mlm:{tiny_bert}:topk", seed)[0]
        assert trained_on == topk
        assert (ft / "model" / "config.json").exists()
    # Seeds redraw Top-K: the two seeds' corpora differ.
    assert again.train_text("news", "vocabThres", f"mlm:{tiny_bert}:topk", 0)[0] != \
        again.train_text("news", "vocabThres", f"mlm:{tiny_bert}:topk", 1)[0]


def test_paper_fillers_see_mask_only_and_typed_methods_see_labels(tmp_path):
    from recover_core.filling import MaskInput
    from recover_core.obfuscator import Obfuscator

    runner = X.Runner(X.ExperimentConfig(name="t", datasets=("news",), maskings=("vocabThres",), methods=("oracle",),
                                         max_train=20, max_test=5), progress=False, root=tmp_path)
    masked = Obfuscator(technique="vocabThres", n=1000).mask_many(["Maria flew to Paris in 1999."])
    assert {s.label for s in masked[0].markers} >= {"NUMBER"}
    items = [MaskInput(m.masked, m.markers) for m in masked]
    paper = runner.engine("vocabThres", X.MethodSpec.parse("mlm:minilm-wiki:topk"), 0).filler_inputs(items)
    typed = runner.engine("vocabThres", X.MethodSpec.parse("mlm:minilm-wiki:topk+typed"), 0).filler_inputs(items)
    assert {s.label for s in paper[0].markers} == {"MASK"}
    assert [s.label for s in typed[0].markers] == [s.label for s in masked[0].markers]
    spec = X.MethodSpec.parse("mlm-ft:minilm-wiki:topk+typed")
    assert (spec.kind, spec.model, spec.how, spec.typed) == ("mlm-ft", "minilm-wiki", "topk", True)
    assert spec.name("mlm") == "mlm:minilm-wiki:topk+typed" and X.MethodSpec.parse("oracle") is None


def test_cache_keys_cover_assets_versions_and_corpora(tmp_path, monkeypatch):
    from recover_core.runtime import env

    cfg = X.ExperimentConfig(name="t", datasets=("news",), maskings=("vocabThres",), methods=("oracle",))
    base = X.settings_key(cfg, "corpus-a")
    assert X.settings_key(cfg, "corpus-b") != base  # the corpora's content
    assets = tmp_path / "assets"
    (assets / "minilm-wiki").mkdir(parents=True)
    (assets / "minilm-wiki" / "head.safetensors").write_bytes(b"one")
    (assets / "allowlist_ngsl.txt").write_text("a\n")
    monkeypatch.setattr(env, "assets_dir", lambda: assets)
    k1 = X.settings_key(cfg, "corpus-a")
    (assets / "minilm-wiki" / "head.safetensors").write_bytes(b"two")  # a retrained head
    k2 = X.settings_key(cfg, "corpus-a")
    (assets / "allowlist_ngsl.txt").write_text("a\nb\n")  # a changed keep-list
    k3 = X.settings_key(cfg, "corpus-a")
    monkeypatch.setattr(X.config, "versions", lambda: {"torch": "0.0"})  # another library version
    k4 = X.settings_key(cfg, "corpus-a")
    assert len({k1, k2, k3, k4}) == 4
    # A shipped downstream LM (assets/lms) is read by no fill: shipping one refills nothing.
    (assets / "lms" / "smollm2-oracle.adapter").mkdir(parents=True)
    (assets / "lms" / "smollm2-oracle.adapter" / "adapter_model.safetensors").write_bytes(b"lora")
    (assets / "lms" / "smollm2-oracle.json").write_text("{}")
    assert X.settings_key(cfg, "corpus-a") == k4
    # Adding a seed or a method keeps the finished cells: they are files of their own.
    more = X.ExperimentConfig(name="t", datasets=("news",), maskings=("vocabThres", "allowList"),
                              methods=("oracle", "baseline0"), seeds=(0, 1, 2))
    assert X.settings_key(more, "corpus-a") == k4


def test_cached_cells_are_checked_not_trusted(tmp_path, tiny_bert):
    cfg = X.load_config(tiny_config(tmp_path, tiny_bert))
    runner = X.Runner(cfg, "test", progress=False, root=tmp_path / "cache")
    path = runner.cell_path("news", "", "oracle", 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"perplexity": 1.0, "key": "someone-else"}))  # a foreign record
    assert runner.cell("news", "", "oracle", 0) is None
    path.write_text("{torn")
    assert runner.cell("news", "", "oracle", 0) is None
    rec = runner.run_cell("news", "", "oracle", 0)
    assert rec["perplexity"] > 1 and rec["key"] == runner.key and runner.cell("news", "", "oracle", 0) == rec


def test_a_killed_fill_goes_on_where_it_stopped(tmp_path, tiny_bert):
    """A causal filler takes hours over a cell on 2 cores: the lines filled so far are kept,
    for this settings key only, and a fill killed half-way resumes after them."""
    runner = X.Runner(X.load_config(tiny_config(tmp_path, tiny_bert)), "test", progress=False, root=tmp_path / "c")
    cell = ("news", "vocabThres", f"mlm:{tiny_bert}:topk", 0)
    whole, facts = runner.train_text(*cell)
    corpus = runner.root / "corpora" / runner.cell_path(*cell).with_suffix(".txt").name
    partial = corpus.with_suffix(".partial.json")
    assert not partial.exists()  # a finished fill leaves none behind
    kept = ["a line filled before the kill"] + whole[1:10]
    for key, expected in (("another run's key", whole), (facts["key"], kept + whole[10:])):
        corpus.unlink()
        partial.write_text(json.dumps({"key": key, "texts": kept, "fills": 0, "leaks": 0}))
        assert runner.train_text(*cell)[0] == expected
        assert not partial.exists()


def test_the_engines_corpora_are_keyed_by_its_read_tables(tmp_path, tiny_bert, monkeypatch):
    """The engine's rules draw only names and places the masking NER reads as such, from
    committed tables: a rebuilt table refills the engine's corpora and cells, and leaves the
    paper's procedure, which never reads it, alone."""
    from recover_core.runtime import env
    from recover_core.pseudonyms import places

    runner = X.Runner(X.load_config(tiny_config(tmp_path, tiny_bert)), "test", progress=False, root=tmp_path / "c")
    paper, ours = (("news", "vocabThres", f"mlm:{tiny_bert}:top1{t}", 0) for t in ("", "+typed"))
    before = {c: runner.train_text(*c)[1]["key"] for c in (paper, ours)}
    path = runner.cell_path(*ours)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"perplexity": 9.0, "key": runner.key, "engine_tables": X.runner.engine_tables()}))
    assert runner.cell(*ours) is not None

    table = tmp_path / places.READ_FILE  # the same table with one more place read as one
    table.write_text((env.assets_dir() / places.READ_FILE).read_text(encoding="utf-8") + "city\tatlantis\t12\n")
    monkeypatch.setattr(places, "READ_FILE", str(table))
    after = {c: runner.train_text(*c)[1]["key"] for c in (paper, ours)}
    assert after[paper] == before[paper] and after[ours] != before[ours]
    assert runner.cell(*ours) is None


def test_typed_methods_run_only_where_the_masking_has_types():
    cfg = X.ExperimentConfig(name="t", datasets=("news",), maskings=("vocabThres", "entityTagger"),
                             methods=("mlm:m:topk", "mlm:m:topk+typed"), seeds=(0,))
    assert X.cells(cfg) == [("news", "vocabThres", "mlm:m:topk", 0), ("news", "entityTagger", "mlm:m:topk", 0),
                            ("news", "entityTagger", "mlm:m:topk+typed", 0)]


def test_grid_wer_per_cell_on_real_speech(tmp_path, tiny_bert, recordings, monkeypatch):
    """[asr] wer_utterances: each news cell's adapted LM is fused into the recognizer and
    scored on the spoken test set (vats2024 Table 6), with the recognizer alone and the
    pretrained LM scored once on the same utterances; a resumed run decodes nothing again."""
    import pandas as pd

    from conftest import PSPHINX
    from recover_core.runtime import env
    from recover_core.asr import references
    from recover_core.experiment import speech_set
    from recover_core.experiment.grid_wer import GridWER

    monkeypatch.setattr(env, "cache_dir", lambda: tmp_path / "home-cache")
    # Where `speech-set` would put the TTS set, real recordings with their transcripts.
    folder = speech_set.set_dir("news", 64, 16)
    folder.mkdir(parents=True)
    table = references.read(PSPHINX / "librivox" / "transcription")
    rows = [speech_set.Utterance(p.stem, "test", "librivox", p.stem, table[p.stem].replace("<s>", "")
                                 .replace("</s>", "").strip(), 3.0, str(p)) for p in recordings[:2]]
    (folder / "manifest.jsonl").write_text("".join(json.dumps(r.__dict__) + "\n" for r in rows))
    text = tiny_config(tmp_path, tiny_bert).read_text()
    text = text.replace(f'"mlm:{tiny_bert}:top1", "mlm-ft:{tiny_bert}:topk"', "").replace("seeds = [0, 1]", "seeds = [0]")
    cfg = X.load_config(write(tmp_path, text + "[asr]\nwer_utterances = 2\n"))
    out = X.Runner(cfg, "test", progress=False, root=tmp_path / "cache").run()
    df = pd.read_csv(out)
    w = df[df.metric == "wer_percent"]
    assert sorted(w.method) == ["ASR-without-LM", "Pre-Trained-LM", "baseline0", "baseline1", "oracle"]
    assert (w.value >= 0).all() and w[w.method == "ASR-without-LM"].value.iloc[0] < 30  # LibriVox: 6.6% alone
    assert set(df[df.metric == "cer_percent"].method) == set(w.method)
    assert w.scale.str.contains("WER on 2 spoken news test utterances").all()
    assert not df[df.metric == "perplexity"].scale.str.contains("WER on").any()  # never pooled with asr-eval's
    calls = []
    monkeypatch.setattr(GridWER, "score", lambda *a, **k: calls.append(a) or {})
    X.Runner(cfg, "test", progress=False, root=tmp_path / "cache").run()
    assert calls == []
    bad = write(tmp_path, text + "[asr]\nwer_utterances = 2\nwer_dataset = 'fortunes'\n")
    with pytest.raises(RecoverError, match="not one of the grid's datasets"):
        X.load_config(bad)
