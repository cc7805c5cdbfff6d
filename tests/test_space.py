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


# --- what the hub reads to build the Space ---------------------------------------------------

def front_matter() -> dict:
    import yaml

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def test_the_space_preloads_every_hub_model_at_its_pinned_revision():
    from recover_core.models.sources import HUB_REVISIONS, UNPINNED

    entries = {e.split()[0]: e.split()[1:] for e in front_matter()["preload_from_hub"]}
    # spacy-sm installs from PyPI in a Space, so its hub copy is not downloaded.
    used = {repo: rev for repo, rev in HUB_REVISIONS.items() if repo != "spacy/en_core_web_sm"}
    assert set(entries) == set(used)
    for repo, rev in used.items():
        assert entries[repo][-1:] == ([] if rev == UNPINNED else [rev]), repo  # an unpinned repo: whole, at main


def test_the_space_installs_its_voices_and_sends_binaries_to_lfs():
    import subprocess

    assert {"espeak-ng", "flite"} <= set((ROOT / "packages.txt").read_text().split())
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    binary = [f.decode() for f in files if f and b"\0" in (ROOT / f.decode()).read_bytes()[:8000]]
    assert binary  # the adapters, the audio and the images
    attrs = subprocess.run(["git", "check-attr", "filter", "--", *binary], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    plain = [a.split(":")[0] for a in attrs if not a.endswith(": lfs")]
    assert not plain, f"binary files the hub would refuse (add their type to .gitattributes): {plain}"


def test_a_space_warms_up_from_the_examples_and_logs_no_text(capsys):
    from recover_core.explorer import warm

    ran = []
    steps = [("one", lambda: ran.append(1)), ("two", lambda: 1 / 0)]
    warm.DONE.clear()
    warm.run_steps(steps)
    err = capsys.readouterr().err
    assert ran == [1] and warm.DONE.is_set()
    assert "warm-up: one ready" in err and "warm-up: two failed (ZeroDivisionError)" in err and "warm-up: done" in err
