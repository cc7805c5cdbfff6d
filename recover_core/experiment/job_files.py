"""The job folder the grid hands to a machine with PyTorch only (lm_job.py, smollm2_job.py),
and what both jobs do the same way: gzipped line files, the n-best texts, the device, resuming
a cut-off job and running its cells in worker processes. Reads nothing of spaCy or the fillers."""
from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

from recover_core.runtime import atomic

JOB_FILE = "job.json"
# This machine's SmolLM2 tokenizer, written into the job folder at export. A GGUF file leaves
# the tokenizer to transformers, and versions read it differently: 5.17 takes <|im_start|>
# for the end token, 5.23 <|im_end|>, and that token frames every scored sentence. So both
# sides tokenize with this one, and every record names the end token it used.
TOKENIZER = "smollm2-tokenizer"


def write_lines(path: Path, lines: list[str]) -> None:
    with atomic.replacing(path) as tmp:
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            f.write("\n".join(lines))


def read_lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().split("\n")


def write_tokenizer(dest: Path) -> Path | None:
    """Copy this machine's SmolLM2 tokenizer into a job folder; None where SmolLM2 is absent."""
    import shutil

    from recover_core.models import bundles

    if not bundles._smollm2_present():
        return None
    folder = bundles._smollm2_dir()
    out = dest / TOKENIZER
    out.mkdir(exist_ok=True)
    for f in folder.iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "chat_template")):
            shutil.copyfile(f, out / f.name)
    return out


def nbest(src: Path, job: dict) -> dict | None:
    """The n-best lists' texts, which every LM of their dataset scores (grid_rescore.py)."""
    if not job.get("nbest"):
        return None
    with gzip.open(src / job["nbest"]["file"], "rt", encoding="utf-8") as f:
        return json.load(f)


def resolve_device(device: str) -> tuple[str, str]:
    """("cuda" or "cpu" for "auto", the device's name for the records)."""
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return device, torch.cuda.get_device_name(device) if device.startswith("cuda") else "cpu"


def resume(out: Path, cells: list[dict], same) -> tuple[dict, list[dict], list[dict]]:
    """A job cut off at a command's limit goes on where it stopped: OUT's records are kept when
    ``same(OUT)`` holds. Returns (OUT as read or {}, its kept records, the cells still to run)."""
    old = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    old = old if old and same(old) else {}
    kept = old.get("cells", [])
    ident = ("dataset", "masking", "method", "seed")
    done = {tuple(c[k] for k in ident) for c in kept}
    return old, kept, [c for c in cells if tuple(c[k] for k in ident) not in done]


def pool_cells(cells: list[dict], run_cell, result: dict, out: Path, t0: float, workers: int, init, initargs: tuple,
               desc: str) -> None:
    """Run ``run_cell`` on every cell in ``workers`` spawned processes (one worker: this
    process, which spares a second start of torch), adding each finished record to
    ``result`` and rewriting OUT after each one (None: past the deadline, left out)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    def keep(rec: dict | None) -> None:
        if rec is None:
            return
        result["cells"].append(rec)
        result["left"] -= 1
        result["seconds"] = round(time.time() - t0, 1)
        atomic.write_text(out, json.dumps(result))
        print(f"[{time.time() - t0:.0f} s] {rec['dataset']}/{rec['masking'] or '-'}/{rec['method']}/s"
              f"{rec['seed']}: perplexity {rec['perplexity']:.1f} in {rec.get('seconds', 0):.0f} s; "
              f"{result['left']} left", file=sys.stderr, flush=True)

    if not cells:
        return
    if workers == 1:
        init(*initargs)
        for c in tqdm(cells, desc=desc, mininterval=10):
            keep(run_cell(c))
        return
    ctx = mp.get_context("spawn")  # CUDA cannot be forked
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=init, initargs=initargs) as pool:
        futures = [pool.submit(run_cell, c) for c in cells]
        for f in tqdm(as_completed(futures), total=len(futures), desc=desc, mininterval=10):
            keep(f.result())
