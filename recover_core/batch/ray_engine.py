"""The Ray engine: the same chunks and Pipeline as the local engine, run by Ray Data actors.

The driver plans the chunks (byte ranges of the input, cut where the local engine cuts);
Ray Data runs them through ``map_batches`` on a pool of actors, each building its models
once; the driver commits the results in input order through the same Checkpoint, so the
output equals the local engine's byte for byte and `--resume` works the same way.

Ray is local (``ray.init()``) unless RAY_ADDRESS names a cluster. On a cluster every node
needs the project's requirements installed and the input at the same path (a shared
file system): actors read their own chunks from it, and only results travel.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import recover_core
from recover_core.batch.checkpoint import Checkpoint
from recover_core.batch.job import Job, KeyArg
from recover_core.batch.local import WarmRate, read_chunks
from recover_core.batch import pipeline
from recover_core.errors import RecoverError


class ChunkActor:
    """One Ray actor: a Pipeline built once, run on each chunk it is given."""

    def __init__(self, job: dict, threads: int, key: KeyArg | None = None):
        import torch

        torch.set_num_threads(threads)
        self.job = Job.from_dict(job, key)
        self.pipeline = pipeline.Pipeline(self.job)

    def __call__(self, batch: dict) -> dict:
        out: dict[str, list] = {"index": [], "text": [], "counts": [], "error": [], "started": [], "ended": []}
        with self.job.input.open("rb") as f:
            for index, first, offset, size in zip(batch["index"], batch["first_line"], batch["offset"],
                                                  batch["size"]):
                f.seek(int(offset))
                res = self.pipeline.run(pipeline.Chunk(int(index), int(first), _lines(f.read(int(size)))))
                out["index"].append(int(index))
                out["text"].append(res.text)
                out["counts"].append(json.dumps(res.counts))
                out["error"].append(res.error or "")
                out["started"].append(res.started)
                out["ended"].append(res.ended)
        return out


def _lines(data: bytes) -> list[bytes]:
    """Raw lines ending at b"\\n" only, as the local engine reads them (not bytes.splitlines,
    which also ends lines at \\r and \\x0b)."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def plan(job: Job, ckpt: Checkpoint) -> list[dict]:
    """Each chunk not yet committed, as (index, first line, byte offset, byte size)."""
    p = ckpt.progress
    rows, offset = [], p.input_offset
    for chunk in read_chunks(job.input, job.batch_size, p.lines_done, p.input_offset):
        size = sum(len(r) for r in chunk.lines)
        rows.append({"index": chunk.index, "first_line": chunk.first_line, "offset": offset, "size": size})
        offset += size
    return rows


def init_ray() -> dict:
    """ray.init() once: a local Ray, or the cluster RAY_ADDRESS names."""
    try:
        import ray
    except ImportError:
        raise RecoverError("--engine ray needs Ray: pip install -r requirements.txt installs it.") from None
    if not ray.is_initialized():
        kwargs: dict = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if os.environ.get("RAY_ADDRESS"):
            kwargs["runtime_env"] = {"py_modules": [str(Path(recover_core.__file__).parent)]}
        try:
            ray.init(**kwargs)
        except (ConnectionError, RuntimeError) as e:
            raise RecoverError(f"Could not start or reach Ray ({e}). Without RAY_ADDRESS a local Ray "
                               "starts; with it, `ray start --head` must be running there.") from None
    res = ray.cluster_resources()
    return {"ray_cpus": int(res.get("CPU", 0)), "ray_nodes": len([n for n in ray.nodes() if n.get("Alive")])}


def run_ray(job: Job, ckpt: Checkpoint, total: int, actors: int = 2, threads: int | None = None) -> dict:
    import ray

    cluster = init_ray()
    rows = plan(job, ckpt)
    t_start = time.time()
    t0 = t_start - ckpt.progress.seconds
    warm = WarmRate()
    if rows:
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True  # commit in input order, as the local engine does
        ctx.enable_progress_bars = not job.quiet
        threads = threads or (max(1, cluster["ray_cpus"] // max(actors, 1)) if cluster["ray_nodes"] <= 1 else 1)
        ds = ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows), 4 * actors)))
        ds = ds.map_batches(ChunkActor, batch_size=1, concurrency=actors, num_cpus=1,
                            fn_constructor_kwargs={"job": job.to_dict(), "key": KeyArg(job.key),
                                                   "threads": threads})
        chunks = read_chunks(job.input, job.batch_size, ckpt.progress.lines_done, ckpt.progress.input_offset)
        for row, chunk in zip(ds.iter_rows(), chunks):
            if int(row["index"]) != chunk.index:
                raise RecoverError(f"Ray returned chunk {row['index']} where {chunk.index} was due.")
            if row["error"]:
                raise RecoverError(f"{row['error']} Use --skip-bad to write an empty line for such lines instead.")
            ckpt.commit(row["text"], chunk.lines, json.loads(row["counts"]), time.time() - t0)
            warm.add(len(chunk.lines), float(row["started"]), float(row["ended"]))
    return {"engine": "ray", "ray_actors": actors, **cluster, "ray_seconds": round(time.time() - t_start, 2),
            **warm.info()}
