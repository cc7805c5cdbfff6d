"""The code path a Hugging Face Space takes, tested without a hub.

A Space loads `bert-base-uncased` through `from_pretrained` and the hub cache. Here an
HF_HOME cache is laid out as the hub lays one out (refs/main -> snapshots/<commit>/), with
a small local model saved under the hub id `bert-base-uncased`: a stand-in that tests the
loading path, not the model. Its output bias makes it answer one word, "elephant", so that
the MLM column can only have come from it. The app is started with SPACE_ID set, as in a
Space, and driven with gradio_client."""
import os
import shutil
from pathlib import Path

import pytest
from conftest import serve_app

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "0123456789abcdef0123456789abcdef01234567"
STAND_IN_WORD = "elephant"


def hub_cache(home: Path, repo: str, model_dir: Path) -> Path:
    """``model_dir``'s files in HF_HOME as huggingface_hub caches ``repo`` at the commit the app
    pins for it (models/sources.py), with refs/main pointing there."""
    from recover_core.models.sources import HUB_REVISIONS

    commit = HUB_REVISIONS.get(repo, COMMIT)
    root = home / "hub" / f"models--{repo.replace('/', '--')}"
    snapshot = root / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for f in model_dir.iterdir():
        shutil.copy(f, snapshot / f.name)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(commit)
    return snapshot


def stand_in(tiny_bert: str, out: Path) -> Path:
    import torch
    from transformers import AutoTokenizer, BertForMaskedLM

    tok = AutoTokenizer.from_pretrained(tiny_bert)
    model = BertForMaskedLM.from_pretrained(tiny_bert)
    word_id = tok.convert_tokens_to_ids(STAND_IN_WORD)
    assert word_id != tok.unk_token_id
    with torch.no_grad():
        model.cls.predictions.bias[word_id] = 100.0
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def space_url(tiny_bert, tmp_path_factory):
    home = tmp_path_factory.mktemp("hf_home")
    hub_cache(home, "bert-base-uncased", stand_in(tiny_bert, tmp_path_factory.mktemp("stand-in")))
    env = {k: v for k, v in os.environ.items() if k != "TRANSFORMERS_OFFLINE"}
    # SPACE_ID as a Space sets it; HF_HUB_OFFLINE so that the hub libraries read the cache
    # instead of trying a network this machine does not have.
    # No warm-up here: the Space check (bench/space_check.py) times it; this test is about loading.
    env |= {"SPACE_ID": "someone/recover", "HF_HOME": str(home), "HF_HUB_OFFLINE": "1", "RECOVER_WARM_UP": "0"}
    with serve_app(env) as (url, _):
        yield url


def test_a_space_resolves_bert_base_uncased_from_the_hub_cache(space_url):
    from gradio_client import Client

    import app
    from recover_core.explorer.sentence import COLUMNS
    from test_app import text_of

    client = Client(space_url, verbose=False)
    # allowList masks the made-up word as a plain [MASK]: any word may fill it. The MLM columns
    # only (the page's first step): the causal ones do not read the MLM's hub cache.
    out = client.predict("The zorblax moved slowly.", "allowList", 10000, "mask", 5, 0,
                         "bert-base-uncased", "smollm2-135m", "smollm2-fill", api_name="/fill_mlm")
    # outputs: the engine's answer, its note, the masked text, the status, then the columns
    cols = {COLUMNS[i].title: out[4 + 3 * j : 7 + 3 * j] for j, i in enumerate(app.MLM_COLUMNS)}
    filled, header, table = cols["MLM · Top-1"]
    assert "bert-base-uncased" in header and "cannot reach" not in header, header
    assert text_of(filled).lower() == f"the {STAND_IN_WORD} moved slowly."
    assert table["data"][0][2] == STAND_IN_WORD
