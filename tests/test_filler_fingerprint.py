"""No filler the grid uses has seen a sentence of a grid split (issue 58).

Each filler that the grid's configs and the SmolLM2 grid's rows name is looked up in assets/:
its model card's ``data:`` line names the corpora it trained on, whose train splits are
fingerprinted (a hash of each sentence, case and spacing folded) against every sentence of
every grid corpus, train and test alike. A filler that overlaps is a failure, unless it is in
``results.TAINTED_FILLERS``: its rows are then marked, kept out of the claims, and the grid
refuses to fill with it until it is retrained (and then this test says to take it off the list).
"""
import functools
import hashlib
import re
from pathlib import Path

import pytest

from recover_core.data import corpora
from recover_core.runtime import env
from recover_core.results.tables import RETRAINED, TAINTED_FILLERS, method_parts

ROOT = Path(__file__).resolve().parents[1]
GRID_CORPORA = ("news", "fortunes", "scripture")  # the grid's datasets (assets/experiments/*.toml)
# Fillers whose training text cannot be had here, and why (each one said, none skipped silently).
UNCHECKABLE = {"smollm2-135m": "SmolLM2-135M-Instruct as it ships: pretrained by its makers on web text "
                               "(SmolLM-Corpus), not available offline; the grid uses it untuned (causal infill)"}


def grid_fillers() -> set[str]:
    """Every filler model a grid config or the SmolLM2 grid's CSV names."""
    import tomllib

    import pandas as pd

    methods = set()
    for toml in (ROOT / "assets" / "experiments").glob("*.toml"):
        methods |= set(tomllib.loads(toml.read_text()).get("grid", {}).get("methods", []))
    for csv in (ROOT / "precomputed" / "ours").glob("smollm2_*.csv"):
        methods |= set(pd.read_csv(csv)["method"].dropna())
    named = {Path(p.model).name for m in methods if (p := method_parts(m)) is not None}
    return named | {RETRAINED[f] for f in named if f in RETRAINED}  # and what takes a tainted one's place


def card_corpora(model: str) -> list[str]:
    """The corpora a shipped filler trained on, from its model card's ``- data:`` line."""
    card = env.assets_dir() / model / "model_card.md"
    line = re.search(r"^- data: ([^;(\n]+)", card.read_text(), re.M)
    assert line, f"{card} names no training data"
    names = [c.strip() for c in line.group(1).split(",")]
    assert names and all(c in corpora.CORPORA for c in names), names
    return names


def fingerprint(sentences) -> set[str]:
    return {hashlib.sha1(" ".join(s.lower().split()).encode()).hexdigest()[:16] for s in sentences}


@functools.lru_cache(maxsize=None)
def grid_prints() -> dict[str, set[str]]:
    return {d: fingerprint(corpora.split(d)[0]) | fingerprint(corpora.split(d)[1]) for d in GRID_CORPORA}


def seen(model: str) -> dict[str, int]:
    """Grid corpus -> how many of its sentences the filler trained on (train splits of its corpora)."""
    train = set().union(*(fingerprint(corpora.split(c)[0]) for c in card_corpora(model)))
    return {d: n for d, prints in grid_prints().items() if (n := len(train & prints))}


def test_every_grid_filler_is_checked():
    fillers = grid_fillers()
    assert {"minilm-wiki", "smollm2-fill", "smollm2-fill-wiki"} <= fillers
    unknown = {f for f in fillers - set(UNCHECKABLE) if not (env.assets_dir() / f / "model_card.md").is_file()}
    assert not unknown, f"a grid filler with no model card to read its training data from: {unknown}"


@pytest.mark.parametrize("model", sorted(grid_fillers() - set(UNCHECKABLE) - set(TAINTED_FILLERS)))
def test_no_filler_of_the_grid_saw_a_grid_split(model):
    assert seen(model) == {}, f"{model} trained on sentences of the grid's splits"


@pytest.mark.parametrize("model", sorted(TAINTED_FILLERS))
def test_known_tainted_fillers_did_see_a_split_and_the_grid_refuses_them(model, tmp_path, own_cache):
    overlap = seen(model)
    assert overlap.get("news", 0) > 1000, (f"{model} no longer overlaps the grid's splits ({overlap}): "
                                           f"retrained? Take it off results.TAINTED_FILLERS")
    from recover_core.errors import RecoverError
    from recover_core.experiment import Runner, load_config

    cfg = tmp_path / "g.toml"
    cfg.write_text('[grid]\ndatasets = ["news"]\nmaskings = ["vocabThres"]\nmethods = ["oracle"]\n'
                   '[lm]\npreset = "tiny"\npretrain_corpus = "news"\nmax_train = 8\nmax_test = 4\n')
    run = Runner(load_config(cfg), "test", progress=False)
    with pytest.raises(RecoverError, match="refuses it until it is retrained") as refused:
        run.train_text("news", "vocabThres", f"instruct:{model}:topk", 0)
    if model in RETRAINED:  # and says what to use instead
        assert f"instruct:{RETRAINED[model]}:topk" in str(refused.value)
