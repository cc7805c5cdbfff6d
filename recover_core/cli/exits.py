"""How a command ends: a user's mistake is one line on stderr and exit status 2, Ctrl-C or
SIGTERM unwind so that no temporary file is left, and nothing shows a traceback."""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import contextmanager

from recover_core.errors import RecoverError


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
