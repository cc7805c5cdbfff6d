"""The command line: ``python -m recover_core COMMAND``. Argument parsing and printing only.

Nothing in recover_core imports this package: each command builds the library's objects
from its flags and prints what they return.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from recover_core.cli.exits import run


def parser() -> argparse.ArgumentParser:
    # Imported here, not at the top: the commands' modules pull in the engine (phonenumbers,
    # python-stdnum, ...), which a GPU machine running only `python -m recover_core.cli.jobs` lacks.
    from recover_core.cli import asr, audit, claims, evaluate, experiment, jobs, speech, text, training

    # `recover` when installed (pyproject's console script), else the module form.
    prog = "recover" if Path(sys.argv[0]).name == "recover" else "python -m recover_core"
    ap = argparse.ArgumentParser(prog=prog, description=text.__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    text.add_parser(sub)  # prepare, models, mask, fill, obfuscate, mask-rates
    training.add_parser(sub)  # finetune-mlm, evaluate-mlm, finetune-llm
    evaluate.add_parser(sub)  # evaluate-fillers: every filler on the same items
    experiment.add_parser(sub)  # the downstream grid (vats2024 §4)
    claims.add_parser(sub)  # claims: vats2024 §4.3 checked on any tidy results
    asr.add_parser(sub)  # transcribe, wer, asr-eval, build-lms, speech-set (vats2024 §4.2.2)
    speech.add_parser(sub)  # obfuscate-audio (preiss2023)
    audit.add_parser(sub)  # audit: our own output attacked
    jobs.add_parser(sub)  # lm-job, smollm2-job, canaries-job: where a GPU is
    return ap


def main(argv: list[str] | None = None) -> int:
    return run(parser(), argv)
