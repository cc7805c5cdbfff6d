"""Running the command line as a user does: a subprocess on real files, and its JSON summary."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "recover_core", *map(str, args)], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(p.stderr)
    return p


def summary(stderr: str) -> dict:
    return json.loads(stderr[stderr.index("{") : stderr.rindex("}") + 1])
