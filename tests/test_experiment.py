"""The grid: config errors are clear, cells resume without recomputing, the CSV is tidy."""
import json

import pytest

from recover_core import experiment as X
from recover_core.errors import RecoverError
from recover_core.results import TIDY_COLUMNS


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
[lm]
preset = "tiny"
pretrain_corpus = "news"
pretrain_epochs = 0.5
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
])
def test_bad_configs_get_clear_messages(tmp_path, text, msg):
    with pytest.raises(RecoverError, match=msg):
        X.load_config(write(tmp_path, text))


def test_grid_runs_resumes_and_writes_tidy_csv(tmp_path, tiny_bert, monkeypatch):
    import pandas as pd

    from recover_core.lm import train as T

    cfg = X.load_config(tiny_config(tmp_path, tiny_bert))
    cells = X.cells(cfg)
    assert len(cells) == 5 and cells[0] == ("news", "", "oracle")  # Oracle once, not per masking
    root = tmp_path / "cache"
    first = X.Runner(cfg, "test", progress=False, root=root)
    for c in cells[:2]:  # a run killed after two cells
        first.run_cell(*c)
    calls = []
    real = T.train
    monkeypatch.setattr(T, "train", lambda *a, **k: calls.append(k.get("desc")) or real(*a, **k))
    again = X.Runner(cfg, "test", progress=False, root=root)
    out = again.run()
    # The pretrained LM came from the cache; only the three unfinished cells were adapted.
    assert len(calls) == 3 and all(d.startswith("adapt") for d in calls), calls
    df = pd.read_csv(out)
    assert list(df.columns) == TIDY_COLUMNS
    ppl = df[df.metric == "perplexity"]
    assert sorted(ppl.method) == sorted(cfg.methods) and (ppl.value > 1).all()
    assert {"n_sentences_train", "n_sentences_test", "mask_rate_percent", "leak_rate_percent"} <= set(df.metric)
    assert (df.scale.str.contains("tiny")).all() and (df.command == "test").all()
    # Baseline1 trained on the same text as Baseline0, with the mask targets ignored.
    cell = json.loads(again.cell_path("news", "vocabThres", "baseline1").read_text())
    assert cell["train_sentences"] == 64
    # FT (vats2024): the MLM was fine-tuned on the cell's filled obfuscation corpus, never on
    # the originals, and the fill came from the fine-tuned model.
    ft = next((root).glob("*/ft/news__vocabThres__*__topk"))
    trained_on = (ft.parent / f"{ft.name}.txt").read_text().splitlines()
    assert trained_on == [m.masked for m in again.masked("news", "vocabThres")[0]]
    assert (ft / "model" / "config.json").exists() and (ft / "round-1" / "filled.txt").exists()
