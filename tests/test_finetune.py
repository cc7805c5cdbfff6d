"""Fine-tuning mechanics on the tiny random BERT: the loss falls, artifacts reload, resume resumes."""
import json

import pytest
import torch

from recover_core.errors import RecoverError
from recover_core.models.adapters import load_mlm_adapter
from recover_core.training.config import FinetuneConfig
from recover_core.training.evaluate import evaluate_mlm
from recover_core.training.mlm import finetune_mlm

SENTENCES = [
    "The cat sat on the mat.",
    "The dog sat on the rug.",
    "A bird sang in the tree.",
    "The children played in the park.",
    "She reads a book every night.",
    "He drinks coffee in the morning.",
    "The train left the station at noon.",
    "We walked along the river.",
] * 6


from tiny import sentence_file  # tests/tiny.py, as conftest imports it

# Tiny models train fastest on one thread, and the results do not depend on a thread count.
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return sentence_file(tmp_path_factory.mktemp("corpus"), SENTENCES)


def config(tiny_bert, corpus, out, **kw):
    base = dict(out=out, model=tiny_bert, train_file=corpus, lora_r=4, steps=80, batch_size=8, lr=5e-2,
                warmup_steps=2, eval_every=0, eval_items=40, save_every=20, quiet=True, seed=0)
    return FinetuneConfig(**{**base, **kw})


def losses(out):
    recs = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in recs if "loss" in r]


@pytest.fixture(scope="module")
def trained(tiny_bert, corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("ft")
    finetune_mlm(config(tiny_bert, corpus, out))
    return out


def test_loss_falls_and_everything_is_saved(trained):
    ls = losses(trained)
    assert len(ls) == 80
    assert sum(ls[-5:]) / 5 < sum(ls[:5]) / 5 - 1.0, ls
    assert (trained / "model" / "config.json").exists() and (trained / "model" / "model_card.md").exists()
    for f in ("adapter_config.json", "adapter_model.safetensors", "head.safetensors", "model_card.md"):
        assert (trained / "adapter" / f).exists(), f
    card = (trained / "adapter" / "model_card.md").read_text()
    assert "LoRA r=4" in card and "top-10" in card
    assert not list(trained.glob(".*tmp"))  # no half-written folder left behind



def test_init_adapter_continues_from_where_the_adapter_ended(trained, tiny_bert, corpus, tmp_path):
    """--init-adapter: the continued run starts from the adapter's own weights (its held-out
    numbers before training are the first run's after), and refuses another rank."""
    out = tmp_path / "more"
    finetune_mlm(config(tiny_bert, corpus, out, steps=2, init_adapter=trained / "adapter"))
    first = [json.loads(x) for x in (trained / "metrics.jsonl").read_text().splitlines()]
    again = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    ended = next(r["eval"] for r in first if r.get("step") == "final")
    started = next(r["eval"] for r in again if r.get("step") == 0 and "eval" in r)
    fresh = next(r["eval"] for r in first if r.get("step") == 0 and "eval" in r)
    assert started == ended and started != fresh
    assert "continued training" in (out / "adapter" / "model_card.md").read_text()
    with pytest.raises(RecoverError, match="lora_r 4 .this run: 8"):
        finetune_mlm(config(tiny_bert, corpus, tmp_path / "other", lora_r=8, init_adapter=trained / "adapter"))
    with pytest.raises(RecoverError, match="not a finetune-mlm adapter"):
        finetune_mlm(config(tiny_bert, corpus, tmp_path / "none", init_adapter=tmp_path))

def test_adapter_reloads_with_identical_outputs(trained):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    merged = AutoModelForMaskedLM.from_pretrained(str(trained / "model")).eval()
    tok = AutoTokenizer.from_pretrained(str(trained / "model"))
    again, _ = load_mlm_adapter(trained / "adapter")
    again2, _ = load_mlm_adapter(trained / "adapter")
    batch = tok(["The cat sat on the [MASK].", "We walked along the [MASK] today."], padding=True,
                return_tensors="pt")
    with torch.no_grad():
        a = merged(**batch).logits
        b = again(**batch).logits
        c = again2(**batch).logits
    assert torch.equal(b, c)  # reloading is deterministic
    assert torch.allclose(a, b, atol=1e-4)  # merging LoRA changes only rounding
    assert evaluate_mlm(trained / "adapter", SENTENCES, 8, 0) == evaluate_mlm(trained / "model", SENTENCES, 8, 0)


def test_resume_continues_from_the_checkpoint(tiny_bert, corpus, tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    finetune_mlm(config(tiny_bert, corpus, whole, steps=12, save_every=4))
    finetune_mlm(config(tiny_bert, corpus, split, steps=12, save_every=4, stop_after=6))
    state = json.loads((split / "checkpoint" / "state.json").read_text())
    assert state["step"] == 6 and not (split / "model").exists()
    with (split / "metrics.jsonl").open("a") as f:  # what a run killed after the checkpoint leaves
        f.write(json.dumps({"round": 1, "step": 7, "loss": 0.0}) + "\n")
    with pytest.raises(RecoverError, match="--resume"):
        finetune_mlm(config(tiny_bert, corpus, split, steps=12, save_every=4))
    finetune_mlm(config(tiny_bert, corpus, split, steps=12, save_every=4, resume=True))
    # Same data order, masking, dropout and optimizer state as the run that was never stopped.
    assert len(losses(split)) == 12 and losses(split) == losses(whole)
    from safetensors.torch import load_file

    w, s = load_file(str(whole / "model" / "model.safetensors")), load_file(str(split / "model" / "model.safetensors"))
    assert all(torch.allclose(w[k], s[k], atol=1e-6) for k in w)


def test_filled_mode_refills_each_round(tiny_bert, tmp_path):
    masked = tmp_path / "masked.txt"
    masked.write_text("\n".join(["[PERSON] sat on the mat.", "The dog sat near [GPE].", *SENTENCES[:8]]) + "\n")
    out = tmp_path / "filled"
    finetune_mlm(FinetuneConfig(out=out, model=tiny_bert, train_file=masked, mode="filled", rounds=2,
                                lora_r=0, steps=3, batch_size=4, eval_every=0, eval_items=10, quiet=True))
    for r in (1, 2):
        filled = (out / f"round-{r}" / "filled.txt").read_text().splitlines()
        assert len(filled) == 2 and not any("[" in f for f in filled)
    assert (out / "round-1" / "model" / "config.json").exists() and (out / "model" / "config.json").exists()
    assert not (out / "adapter").exists()  # full fine-tune: the model is the artifact


def test_cli_commands_and_errors(tiny_bert, corpus, tmp_path, capsys):
    from recover_core.cli import main

    assert main(["evaluate-mlm", "--model", tiny_bert, "--test-file", str(corpus), "--items", "5"]) == 0
    out = capsys.readouterr().out
    assert "overall" in out and "content" in out
    assert main(["finetune-mlm", "--out", str(tmp_path / "x")]) == 2
    assert "--from-minilm" in capsys.readouterr().err
    assert main(["finetune-mlm", "--model", tiny_bert, "--train-file", str(tmp_path / "missing.txt"),
                 "--out", str(tmp_path / "y")]) == 2
    assert "does not exist" in capsys.readouterr().err
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9 au lait\n")
    for flag in ("--test-file", "--heldout-file"):  # every sentence file: one reader, one message
        cmd = ["evaluate-mlm", "--model", tiny_bert, flag, str(latin), "--items", "5"] if flag == "--test-file" else \
            ["finetune-mlm", "--model", tiny_bert, "--train-file", str(corpus), flag, str(latin), "--out", str(tmp_path / "z")]
        assert main(cmd) == 2
        assert "latin.txt is not UTF-8 text" in capsys.readouterr().err


def test_heldout_file_is_evaluated_on_and_kept_out_of_training(tiny_bert, corpus, tmp_path):
    """--heldout-file stands in for the corpora's held-out mix on a machine without their
    packages: its sentences are scored and never trained on."""
    from recover_core.training.sentences import training_sentences

    held = sentence_file(tmp_path, SENTENCES[:3])
    cfg = config(tiny_bert, corpus, tmp_path / "ft", heldout_file=held)
    clean, _ = training_sentences(cfg)
    assert set(clean) == set(SENTENCES) - set(SENTENCES[:3])
    finetune_mlm(config(tiny_bert, corpus, tmp_path / "ft", heldout_file=held, steps=2))
    first = json.loads((tmp_path / "ft" / "metrics.jsonl").read_text().splitlines()[0])
    assert first["step"] == 0 and first["eval"]["items"] <= 3  # one masked word per held-out sentence
    with pytest.raises(RecoverError, match="does not exist"):
        finetune_mlm(config(tiny_bert, corpus, tmp_path / "ft2", heldout_file=tmp_path / "none.txt"))


def test_device_flag_and_heldout_export(tiny_bert, corpus, tmp_path, capsys):
    from recover_core.cli import main

    assert main(["finetune-mlm", "--model", tiny_bert, "--train-file", str(corpus), "--device", "tpu",
                 "--out", str(tmp_path / "x")]) == 2
    assert "--device must be auto, cpu, cuda" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main(["finetune-mlm", "--model", tiny_bert, "--train-file", str(corpus), "--device", "cuda",
                     "--out", str(tmp_path / "y")]) == 2
        assert "sees no CUDA GPU" in capsys.readouterr().err
    out = tmp_path / "held.txt"
    assert main(["evaluate-mlm", "--export-heldout", str(out), "--corpus", "news"]) == 0
    from recover_core.training.evaluate import heldout_sentences

    assert out.read_text(encoding="utf-8").splitlines() == heldout_sentences(("news",))
