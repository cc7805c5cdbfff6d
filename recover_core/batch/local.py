"""The local engine: chunks through one Pipeline here, or through N worker processes.

The input is read a chunk at a time and at most ``2 * workers`` chunks are in flight, so
memory is set by the batch size, not the file. Chunks are committed in input order.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from recover_core import pseudonyms
from recover_core.batch.checkpoint import Checkpoint, mapping_path
from recover_core.batch.job import Job
from recover_core.batch.pipeline import Chunk, ChunkResult, Pipeline, engine_settings, finish
from recover_core.errors import RecoverError
from recover_core.obfuscator import Obfuscator


def count_lines(path: Path) -> int:
    """Lines as the engines read them: each ended by "\\n" (the last one need not be)."""
    if not path.is_file():
        raise RecoverError(f"Input file {str(path)!r} does not exist.")
    n, last = 0, b"\n"
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def read_chunks(path: Path, size: int, start_line: int, start_offset: int) -> Iterator[Chunk]:
    """Chunks of ``size`` raw lines from byte ``start_offset`` (line ``start_line``). Chunk
    boundaries fall at multiples of ``size`` whatever the start, so a resumed run cuts the
    file exactly where an uninterrupted one does."""
    with path.open("rb") as f:
        f.seek(start_offset)
        lines: list[bytes] = []
        first = start_line
        for raw in f:  # binary lines end at b"\n" only
            lines.append(raw)
            if len(lines) == size:
                yield Chunk(first // size, first, lines)
                first += size
                lines = []
        if lines:
            yield Chunk(first // size, first, lines)


# --- worker processes ------------------------------------------------------------------

_PIPELINE: Pipeline | None = None


def _init_worker(job: Job, threads: int) -> None:
    global _PIPELINE
    import torch

    torch.set_num_threads(threads)  # N workers share the cores instead of each taking all of them
    _PIPELINE = Pipeline(job)


def _run_chunk(chunk: Chunk) -> ChunkResult:
    assert _PIPELINE is not None
    return _PIPELINE.run(chunk)


class _InProcess:
    def __init__(self, job: Job, threads: int | None):
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.pipeline = Pipeline(job)

    def submit(self, chunk: Chunk) -> Future:
        fut: Future = Future()
        fut.set_result(self.pipeline.run(chunk))
        return fut

    def close(self) -> None:
        pass


class _Workers:
    def __init__(self, job: Job, workers: int, threads: int | None):
        threads = threads or max(1, (os.cpu_count() or 1) // workers)
        # spawn: a forked copy of a process holding torch's thread pools can hang
        self.pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_init_worker,
                                        initargs=(job, threads))

    def submit(self, chunk: Chunk) -> Future:
        return self.pool.submit(_run_chunk, chunk)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


class WarmRate:
    """Lines per second of the workers once their models are loaded: lines done over the
    time from the first chunk's start to the last one's end. What a long run sees, and
    what benchmarks project from."""

    def __init__(self) -> None:
        self.start = float("inf")
        self.end = 0.0
        self.lines = 0

    def add(self, n: int, started: float, ended: float) -> None:
        self.lines += n
        self.start, self.end = min(self.start, started), max(self.end, ended)

    def info(self) -> dict:
        dt = self.end - self.start
        return {"warm_lines_per_second": round(self.lines / dt, 1) if self.lines and dt > 0 else None}


class RunMapping:
    """--consistent: one Pseudonyms for the run, applied here, in input order, whatever
    worker filled the chunk. The mapping is saved (mode 600) before each commit, so after a
    kill it holds every choice of the committed output, and a resumed run chooses alike."""

    def __init__(self, job: Job, ckpt: Checkpoint):
        self.job = job
        self.engine = Obfuscator(engine_settings(job), key=job.key)  # its rules only: no model is built here
        self.path = Path(job.mapping) if job.mapping else mapping_path(job.output)
        self.pseudonyms = pseudonyms.load_pseudonyms(self.path, job.engine.seed, job.engine.choice, key=job.key)
        self.saved = -1  # entries and originals on disk; -1: the file is not written yet

    def finish(self, res: ChunkResult) -> ChunkResult:
        res = finish(self.job, self.engine, res, self.pseudonyms)
        # Entries and originals are only ever added: a chunk that added none need not rewrite the file
        size = len(self.pseudonyms.mapping) + len(self.pseudonyms.originals)
        if size != self.saved:
            pseudonyms.save_mapping(self.path, self.pseudonyms)
            self.saved = size
        return res

    def info(self) -> dict:
        """For the summary: how many originals the mapping holds, and that no two share a
        substitute (counts only: the words stay in the mapping)."""
        m = self.pseudonyms.mapping
        return {"scope": "mapping file" if self.job.mapping else "run", "originals": len(m),
                "distinct_substitutes": len({v.lower() for v in m.values()})}


def run_local(job: Job, ckpt: Checkpoint, total: int, workers: int = 1, threads: int | None = None) -> dict:
    """Every chunk after the committed ones, committed in order."""
    t0 = time.time() - ckpt.progress.seconds
    p = ckpt.progress
    warm = WarmRate()
    run_mapping = RunMapping(job, ckpt) if job.consistent else None
    runner = _InProcess(job, threads) if workers == 1 else _Workers(job, workers, threads)
    in_flight: list[tuple[Chunk, Future]] = []
    try:
        with tqdm(total=total, initial=p.lines_done, desc=job.command, unit="line", disable=job.quiet,
                  smoothing=0.1) as bar:
            def commit_first() -> None:
                chunk, fut = in_flight.pop(0)
                res = fut.result()
                if res.error:
                    raise RecoverError(f"{res.error} Use --skip-bad to write an empty line for such lines instead.")
                if run_mapping:
                    res = run_mapping.finish(res)
                ckpt.commit(res.text, chunk.lines, res.counts, time.time() - t0)
                warm.add(len(chunk.lines), res.started, res.ended)
                bar.update(len(chunk.lines))

            for chunk in read_chunks(job.input, job.batch_size, p.lines_done, p.input_offset):
                in_flight.append((chunk, runner.submit(chunk)))
                if len(in_flight) >= 2 * workers:
                    commit_first()
            while in_flight:
                commit_first()
    finally:
        runner.close()
    info = {"engine": "local", "workers": workers, **warm.info()}
    if run_mapping:
        info["pseudonyms"] = run_mapping.info()
    return info
