"""The command line: ``python -m recover_core COMMAND``. Argument parsing and printing only.

Nothing in recover_core imports this package: each command builds the library's objects
from its flags and prints what they return.
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from recover_core.errors import RecoverError


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


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) during a command: unwinds like Ctrl-C, so every temporary file
    is removed on the way out (atomic_output; with --keep-originals its .part file holds
    the private words)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def terminate_cleanly():
    """For the duration of a command, turn SIGTERM and SIGHUP into ``Terminated``. Only the
    first signal raises: a second one while the first unwinds must not cut the cleanup short."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread (main() called from a worker)
        return
    fired = []

    def handler(signum, frame):
        if not fired:
            fired.append(signum)
            raise Terminated(signum)

    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), handler) for n in names}
    try:
        yield
    finally:
        for n, h in previous.items():
            signal.signal(getattr(signal, n), h)


def main(argv: list[str] | None = None) -> int:
    return run(parser(), argv)


def run(ap: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Parse ``argv`` with ``ap`` and run its command: a user's mistake is one line on stderr
    and exit status 2, never a traceback."""
    args = ap.parse_args(argv)
    try:
        with terminate_cleanly():
            args.fn(args)
    except RecoverError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"error: {getattr(args, 'input', None) or getattr(args, 'config', 'the input')} is not UTF-8 text. "
              "Nothing was written.", file=sys.stderr)
        return 2
    except OSError as e:  # unreadable input, unwritable output, full disk
        print(f"error: {e.strerror or e}: {e.filename or ''}. Nothing was written.", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print(("terminated" if isinstance(e, Terminated) else "interrupted") + ": "
              + getattr(e, "kept", "no output was written")
              + (" (the last checkpoint is kept: add --resume)" if args.command in ("finetune-mlm", "finetune-llm") else ""),
              file=sys.stderr)
        return 128 + e.signum if isinstance(e, Terminated) else 130
    return 0
