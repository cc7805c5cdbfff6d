"""Running the command line as a user does, on real files, and its JSON summary.

``run`` calls the command's ``main`` in this process, with its own stdout and stderr, as
``python -m recover_core`` would: arguments, files, exit codes and messages are the
command's own, and the models it loads are loaded once for the whole test session (a
subprocess per call loaded spaCy and the fillers again, most of the suite's time). What
needs a process of its own (a kill, a signal, worker processes, another environment) runs
as one: ``run(..., process=True)``, and any call with ``--workers`` or ``--engine``.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN_PROCESS = ("--workers", "--engine", "--threads")  # processes or thread pools of their own


def run(*args, check: bool = True, process: bool = False) -> subprocess.CompletedProcess:
    argv = [str(a) for a in args]
    if process or any(a in OWN_PROCESS for a in argv):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        p = subprocess.run([sys.executable, "-m", "recover_core", *argv], capture_output=True,
                           text=True, env=env, cwd=ROOT, timeout=600)
    else:
        from recover_core.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(ROOT):
            try:
                rc = main(argv)
            except SystemExit as e:  # argparse's refusals exit, as they do for a user
                rc = e.code if isinstance(e.code, int) else 2
        p = subprocess.CompletedProcess(["python", "-m", "recover_core", *argv], rc, out.getvalue(), err.getvalue())
    if check and p.returncode != 0:
        raise AssertionError(p.stderr)
    return p


def summary(stderr: str) -> dict:
    return json.loads(stderr[stderr.index("{") : stderr.rindex("}") + 1])
