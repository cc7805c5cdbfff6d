"""Batch obfuscation of whole corpora: `mask`, `fill` and `obfuscate` over files.

One pipeline (pipeline.py), two engines: local (local.py: this process, or N worker
processes) and Ray Data (ray_engine.py). Both commit whole chunks through a Checkpoint,
so an interrupted run continues with `--resume` and writes the same bytes as one that
never stopped.
"""
from __future__ import annotations

import dataclasses
import time

from recover_core.batch.checkpoint import Checkpoint
from recover_core.batch.job import Job
from recover_core.errors import RecoverError
from recover_core.filling import DEFAULT_MODEL

ENGINES = ("local", "ray")


class Interrupted(RecoverError):
    pass


def run(job: Job, *, engine: str = "local", workers: int = 1, resume: bool = False,
        restart: bool = False, threads: int | None = None) -> dict:
    """Run ``job`` to the end and return its summary. On any failure the committed chunks
    stay for --resume, and the error says where they are."""
    from recover_core.batch.local import count_lines

    if engine not in ENGINES:
        raise RecoverError(f"Unknown engine {engine!r}. Known: {', '.join(ENGINES)}.")
    if engine == "ray" and job.consistent:
        raise RecoverError("--consistent and --mapping keep one mapping for the whole run, which needs one ordered "
                           "pass: the local engine makes it (with any --workers); Ray's shards run apart. "
                           "Use --engine local.")
    total = count_lines(job.input)
    ckpt = Checkpoint(job, resume=resume, restart=restart)
    job = dataclasses.replace(job, key=ckpt.key)  # the run's key: given, kept by --mapping, or the first run's
    t0 = time.time()
    try:
        if engine == "ray":
            from recover_core.batch.ray_engine import run_ray

            info = run_ray(job, ckpt, total, actors=workers, threads=threads)
        else:
            from recover_core.batch.local import run_local

            info = run_local(job, ckpt, total, workers=workers, threads=threads)
        ckpt.finish()
    except RecoverError as e:
        ckpt.discard_if_empty()
        raise RecoverError(f"{e} {_kept(ckpt)}") from None
    except OSError as e:  # a full disk, an unwritable folder
        ckpt.discard_if_empty()
        raise RecoverError(f"{e.strerror or e}: {e.filename or job.output}. {_kept(ckpt)}") from None
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM through cli.exits.terminate_cleanly
        ckpt.discard_if_empty()
        e.kept = ckpt.kept_message()  # type: ignore[attr-defined]
        raise
    return summary(job, ckpt, total, time.time() - t0, info)


def _kept(ckpt: Checkpoint) -> str:
    return ckpt.kept_message().capitalize().rstrip(".") + "."


def summary(job: Job, ckpt: Checkpoint, total: int, seconds: float, info: dict) -> dict:
    c = dict(ckpt.progress.counts)
    base = {"command": job.command, "lines": total, "blank": c.get("blank", 0), "bad": c.get("bad", 0)}
    if job.command == "mask":
        words, masked = c.get("words", 0), c.get("masked_words", 0)
        by_label = dict(sorted(c.get("by_label", {}).items(), key=lambda kv: -kv[1]))
        out = {"command": "mask", "technique": _technique(job), **{k: base[k] for k in ("lines", "blank", "bad")},
               "words": words, "masked_words": masked, "mask_rate": round(masked / words, 4) if words else 0.0,
               "by_label": by_label}
    else:
        n = {k: c.get(k, 0) for k in ("no_mask", "words", "masked_words", "fills", "fallbacks", "infill_fallbacks",
                                       "infill_masks", "leaks", "leak_checked")}
        out = {"command": job.command, "filler": info.get("filler") or _filler(job), "method": job.engine.method,
               "k": job.engine.k, "sampling": job.engine.sampling, "seed": job.engine.seed, **base, **n}
        if job.engine.one_pass:
            out["one_pass"] = True
        if job.command == "obfuscate":
            out["technique"] = _technique(job)
            out["mask_rate"] = round(n["masked_words"] / n["words"], 4) if n["words"] else 0.0
        out["leak_rate"] = round(n["leaks"] / n["leak_checked"], 4) if n["leak_checked"] else None
        if out["leak_rate"] is None:
            out["leak_rate_note"] = "originals not available: mask with --keep-originals, or use obfuscate"
    out["seconds"] = round(ckpt.progress.seconds, 2)
    out["lines_per_second"] = round(total / ckpt.progress.seconds, 1) if ckpt.progress.seconds else None
    out |= {k: v for k, v in info.items() if k != "filler"}
    out["output"] = str(job.output)
    return out


def _technique(job: Job) -> str:
    return "+".join(p.strip() for p in job.engine.technique.split("+"))


def _filler(job: Job) -> str:
    kind = job.engine.filler
    return f"{kind}:{job.engine.model or DEFAULT_MODEL[kind]}"
