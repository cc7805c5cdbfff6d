"""The grid's LM half as a job that runs wherever PyTorch does: a GPU machine with no spaCy, no
fillers and no model hub. The grid's two halves need different machines. Masking and filling
need spaCy, the word lists and the fillers; pretraining and adapting one LM per cell and seed
is where the hours go, and a GPU does them in minutes.

    # here: mask, fill and fine-tune every cell's train set (cached), then write the job
    python -m recover_core experiment --config C --corpora-only
    python -m recover_core experiment --config C --export-job DIR
    # there: torch and tokenizers only
    python -m recover_core.cli.jobs lm-job DIR OUT.json --workers 8
    # here: each record checked against the cell's own train set, then the CSV
    python -m recover_core experiment --config C --import-cells OUT.json

The job folder holds only obfuscated train sets (the originals never leave), the clean test
sets and pretraining corpus, the LM tokenizer, and the settings. The job pretrains once
(kept beside OUT as OUT.pretrained.pt: a second command reads it, not pretraining again),
then adapts and scores every cell in worker processes, and rewrites OUT.json after each
cell, so a job stopped at its time limit still hands back every finished cell.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import pickle
import shutil
import sys
import time
from pathlib import Path

from recover_core.data import corpora
from recover_core.errors import RecoverError
from recover_core.experiment.config import cells, import_from_its_commit, read_json, sha, texts_digest, usable
from recover_core.runtime import atomic, env
from recover_core.experiment.job_files import (JOB_FILE, nbest, pool_cells, read_lines, resolve_device, resume,
                                               write_lines, write_tokenizer)

NBEST_FILE = "nbest.json.gz"
# The settings the LM half reads; everything else in the grid's config shaped the corpora.
LM_SETTINGS = ("preset", "pretrain_epochs", "adapt_epochs", "batch_size", "lr", "adapt_lr", "bf16")


# -- here: export and import (these need the grid's runner) ------------------------------------

def export(runner, dest: Path, datasets: list[str] | None = None) -> Path:
    """Write the job folder for every cell of the runner's config (of ``datasets`` only, if
    given: one job per dataset keeps each dataset's cells on one pretrained LM). A train set
    not cached yet (``--corpora-only``) is made first."""
    from dataclasses import asdict

    from recover_core.lm import tokenizer as T

    cfg = runner.cfg
    datasets = list(datasets or cfg.datasets)
    unknown = sorted(set(datasets) - set(cfg.datasets))
    if unknown:
        raise RecoverError(f"{', '.join(unknown)}: not a dataset of this grid ({', '.join(cfg.datasets)}).")
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(T.tokenizer_file(), dest / "tokenizer.json")
    pretrain = usable(corpora.split(cfg.pretrain_corpus)[0])
    write_lines(dest / "pretrain.txt.gz", pretrain)
    tests = {}
    for d in datasets:
        tests[d] = f"test-{d}.txt.gz"
        write_lines(dest / tests[d], runner.split(d)[1])
    todo = []
    for d, m, meth, seed in (c for c in cells(cfg) if c[0] in datasets):
        texts, _ = runner.train_text(d, m, meth, seed)
        digest = texts_digest(texts)
        name = f"train-{digest[:16]}.txt.gz"  # Baseline0 and Baseline1 share one file
        if not (dest / name).exists():
            write_lines(dest / name, texts)
        todo.append({"dataset": d, "masking": m, "method": meth, "seed": seed, "corpus": name,
                     "train_sha": digest, "ignore_mask": meth == "baseline1"})
    settings = {k: v for k, v in asdict(cfg).items() if k in LM_SETTINGS}
    job = {"grid": cfg.name, "grid_key": runner.key, "settings": settings, "pretrain_seed": cfg.seeds[0],
           "pretrain_corpus": cfg.pretrain_corpus, "pretrain": "pretrain.txt.gz",
           "pretrain_sha": texts_digest(pretrain), "tests": tests, "cells": todo, "commit": env.source_commit()}
    if runner.nbest is not None and runner.nbest.dataset in datasets:
        # WER by rescoring: the n-best lists' texts travel, the audio and the recognizer stay here
        runner.nbest.build(runner.progress)
        with atomic.replacing(dest / NBEST_FILE) as tmp:
            with gzip.open(tmp, "wt", encoding="utf-8") as f:
                json.dump({"dataset": runner.nbest.dataset, "sha": runner.nbest.sha, "texts": runner.nbest.texts}, f)
        job["nbest"] = {"file": NBEST_FILE, "dataset": runner.nbest.dataset, "sha": runner.nbest.sha}
        write_tokenizer(dest)  # for smollm2_job, which scores the same texts with SmolLM2
    atomic.write_text(dest / JOB_FILE, json.dumps(job, indent=1))
    return dest


def import_cells(runner, path: Path) -> int:
    """Store a job's records as the grid's cells, each checked against the train set this
    machine made for it: a record for other settings or other text is refused."""
    if not path.is_file():
        raise RecoverError(f"{path} does not exist: give the file lm_job wrote.")
    out = read_json(path)
    if not out.get("cells"):
        raise RecoverError(f"{path} holds no finished cell of an LM job.")
    fields = ("dataset", "masking", "method", "seed", "train_sha", "perplexity")
    torn = [i for i, rec in enumerate(out["cells"]) if not isinstance(rec, dict) or not all(f in rec for f in fields)]
    if torn or not isinstance(out.get("pretrain"), dict):
        raise RecoverError(f"{path} is not an LM job's output: record {torn[0] if torn else 'pretrain'} lacks "
                           f"{', '.join(fields)}.")
    if out.get("grid_key") != runner.key:
        raise RecoverError(f"{path} was made for other grid settings (key {out.get('grid_key')}, "
                           f"this config's is {runner.key}).{import_from_its_commit(out.get('job_commit'))}")
    for rec in [out["pretrain"], *out["cells"]]:
        if "nbest_sha" in rec and (runner.nbest is None or rec["nbest_sha"] != runner.nbest.sha):
            raise RecoverError(f"{path} holds LM scores of n-best lists that are not this machine's "
                               f"({rec['nbest_sha']}): export the job again.")
    n = 0
    for rec in out["cells"]:
        d, m, meth, seed = rec["dataset"], rec["masking"], rec["method"], rec["seed"]
        texts, facts = runner.train_text(d, m, meth, seed)
        if texts_digest(texts) != rec["train_sha"]:
            raise RecoverError(f"{path}: the cell {d}/{m}/{meth}/s{seed} was trained on other text than "
                               f"this machine's train set for it.")
        cell = {**rec, "key": runner.key, "pretrained": out["pretrain"]["key"], "device": out.get("device"),
                "pretrained_weights": out["pretrain"].get("weights_sha"),
                **{k: v for k, v in facts.items() if k in ("fills", "leaks")}}
        atomic.write_text(runner.cell_path(d, m, meth, seed), json.dumps(cell))
        n += 1
    pre = dict(out["pretrain"])
    if "nbest_sha" in pre:  # the job's pretrained LM is the reference rows' LM, as a local run's would be
        from recover_core.experiment.grid_rescore import REFERENCE

        ref = {"key": runner.key, "nbest_sha": pre.pop("nbest_sha"), "pretrained": pre["key"],
               "nbest_logprobs": pre.pop("nbest_logprobs"), "device": out.get("device")}
        atomic.write_text(runner.root / "cells" / REFERENCE, json.dumps(ref))
    atomic.write_text(runner.root / "pretrained_job.json", json.dumps(pre))
    return n


# -- there: the job itself (torch and tokenizers only) -----------------------------------------

_W: dict = {}  # one worker's state: the tokenizer, the pretrained weights, the test sets


def _worker_init(src: str, base_path: str, settings: dict, deadline: float, device: str, threads: int) -> None:
    import torch

    from recover_core.lm import tokenizer as T

    torch.set_num_threads(threads)
    src_dir = Path(src)
    job = json.loads((src_dir / JOB_FILE).read_text(encoding="utf-8"))
    _W.update(tok=T.from_file(src_dir / "tokenizer.json"), settings=settings, deadline=deadline, device=device,
              src=src_dir, base=torch.load(base_path, map_location=device, weights_only=True),
              tests={d: read_lines(src_dir / f) for d, f in job["tests"].items()}, nbest=nbest(src_dir, job))


def _scores(model, tok, nbest: dict | None, dataset: str) -> dict:
    if nbest is None or dataset != nbest["dataset"]:
        return {}
    from recover_core.experiment.grid_rescore import lm_scores

    return {"nbest_sha": nbest["sha"], "nbest_logprobs": lm_scores(model, tok, nbest["texts"])}


def _run_cell(cell: dict) -> dict | None:
    from recover_core.lm.model import PRESETS
    from recover_core.lm.train import TrainConfig, new_model, perplexity, train

    if time.time() > _W["deadline"]:
        return None  # past the job's time: left for another run, not half-done
    t0, s, tok = time.time(), _W["settings"], _W["tok"]
    texts = read_lines(_W["src"] / cell["corpus"])
    model = new_model(PRESETS[s["preset"]], tok).to(_W["device"])
    model.load_state_dict(_W["base"])
    stats = train(model, tok, texts, TrainConfig(epochs=s["adapt_epochs"], batch_size=s["batch_size"],
                                                 lr=s["adapt_lr"], seed=cell["seed"], bf16=s["bf16"],
                                                 ignore_mask=cell["ignore_mask"]), progress=False)
    ppl = perplexity(model, tok, _W["tests"][cell["dataset"]])
    return {k: cell[k] for k in ("dataset", "masking", "method", "seed", "train_sha")} | {
        "perplexity": ppl["ppl_word"], "perplexity_token": ppl["ppl_token"], "train_sentences": len(texts),
        "adapt": stats} | _scores(model, tok, _W["nbest"], cell["dataset"]) | {"seconds": round(time.time() - t0, 1)}


def _pretrain(src: Path, job: dict, device: str, tok) -> tuple[dict, dict]:
    """The generic LM, once: (its weights, its facts)."""
    import torch

    from recover_core.lm.model import PRESETS
    from recover_core.lm.train import TrainConfig, new_model, train

    s = job["settings"]
    sents = read_lines(src / job["pretrain"])
    # Deterministic kernels: two jobs of one grid (one per dataset) on the same kind of GPU
    # then start from the same pretrained LM, and ``weights_sha`` shows whether they did.
    # (The CPU kernels used here are deterministic already; the switch imports the compiler,
    # 2.6 s of every CPU job.)
    if device != "cpu":
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(job["pretrain_seed"])
    model = new_model(PRESETS[s["preset"]], tok).to(device)
    stats = train(model, tok, sents, TrainConfig(epochs=s["pretrain_epochs"], batch_size=s["batch_size"], lr=s["lr"],
                                                 seed=job["pretrain_seed"], bf16=s["bf16"]),
                  desc=f"pretrain {job['pretrain_corpus']}", progress=sys.stderr.isatty())
    weights = {k: v.detach() for k, v in model.state_dict().items()}
    stats |= {"sentences": len(sents), "corpus_tokens": sum(len(x) for x in tok.encode_batch(sents)),
              "weights_sha": _weights_sha(weights), "key": _pretrain_key(job, device)}
    return weights, stats


def _weights_sha(weights: dict) -> str:
    digest = hashlib.sha1()
    for k in sorted(weights):
        digest.update(weights[k].float().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def _pretrain_key(job: dict, device: str) -> str:
    """What the pretrained LM is made from: its corpus, the settings, the seed, torch and the device."""
    import torch

    return sha(json.dumps([job["pretrain_sha"], job["settings"], job["pretrain_seed"], torch.__version__, device]))[:12]


def pretrained_path(out: Path) -> Path:
    """Where a job keeps its pretrained LM, beside OUT."""
    return out.with_name(out.name + ".pretrained.pt")


def _pretrained(src: Path, job: dict, device: str, tok, out: Path) -> tuple[dict, dict]:
    """The pretrained LM a command before this one saved beside OUT, where it was made from the
    same corpus, settings, seed, torch and device and its weights are whole; else pretrained
    here and saved there. A job resumed after its time limit then goes on from the LM its
    kept cells were adapted from, without pretraining again (minutes to hours on a CPU)."""
    import torch

    path = pretrained_path(out)
    if path.is_file():
        try:
            saved = torch.load(path, map_location=device, weights_only=True)
            if saved["key"] == _pretrain_key(job, device) and _weights_sha(saved["weights"]) == \
                    saved["stats"]["weights_sha"]:
                print(f"pretrained LM read from {path} (its {saved['stats']['steps']} steps took "
                      f"{saved['stats'].get('seconds_wall')} s)", file=sys.stderr, flush=True)
                return saved["weights"], saved["stats"]
        except (OSError, RuntimeError, KeyError, TypeError, ValueError, EOFError, pickle.UnpicklingError):
            pass  # torn or foreign: made again
    t0 = time.time()
    weights, stats = _pretrain(src, job, device, tok)
    stats["seconds_wall"] = round(time.time() - t0, 1)
    print(f"pretrained on {device} in {stats['seconds_wall']} s ({stats['steps']} steps)", file=sys.stderr, flush=True)
    with atomic.replacing(path) as tmp:
        torch.save({"key": stats["key"], "stats": stats, "weights": {k: v.cpu() for k, v in weights.items()}}, tmp)
    return weights, stats


def run(src: Path, out: Path, workers: int = 4, deadline_s: float | None = None, device: str = "auto",
        threads: int = 2) -> dict:
    """Pretrain once, then adapt and score every cell in ``workers`` processes. OUT is rewritten
    after each cell; cells not started by ``deadline_s`` (seconds from now) are left out."""
    import tempfile

    import torch

    from recover_core.lm import tokenizer as T

    t0 = time.time()
    job = json.loads((src / JOB_FILE).read_text(encoding="utf-8"))
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS's deterministic mode, before CUDA starts
    device, where = resolve_device(device)
    tok = T.from_file(src / "tokenizer.json")
    base, pre = _pretrained(src, job, device, tok, out)
    pre = dict(pre)
    if job.get("nbest"):
        from recover_core.lm.model import PRESETS
        from recover_core.lm.train import new_model

        model = new_model(PRESETS[job["settings"]["preset"]], tok).to(device)
        model.load_state_dict(base)
        pre |= _scores(model, tok, nbest(src, job), job["nbest"]["dataset"])
    # A job cut off at a command's limit goes on here: OUT's cells are kept where this run's
    # pretrained LM has the same weights (deterministic kernels), and only the others run.
    _, kept, todo = resume(out, job["cells"], lambda old: old.get("grid_key") == job["grid_key"] and old.get(
        "pretrain", {}).get("weights_sha") == pre["weights_sha"])
    result = {"grid": job["grid"], "grid_key": job["grid_key"], "job_commit": job.get("commit"), "device": where,
              "torch": torch.__version__, "pretrain": pre, "cells": kept, "left": len(todo)}
    deadline = t0 + deadline_s if deadline_s is not None else float("inf")
    if time.time() < deadline:  # past it already: no worker is started for nothing (as smollm2_job)
        with tempfile.TemporaryDirectory() as tmp:
            base_path = str(Path(tmp) / "base.pt")
            torch.save({k: v.cpu() for k, v in base.items()}, base_path)
            pool_cells(todo, _run_cell, result, out, t0, workers, _worker_init,
                       (str(src), base_path, job["settings"], deadline, device, threads), "cells")
    result["seconds"] = round(time.time() - t0, 1)
    atomic.write_text(out, json.dumps(result))
    return result

