"""OUT/metrics.jsonl and the run's messages.

Every step's loss and learning rate, and every held-out evaluation, go to metrics.jsonl,
one JSON object per line, for the record and for plotting. Messages go to stderr, so
stdout stays free for results. On ``--resume`` the records a killed run wrote after its
last checkpoint are dropped, since those steps are trained again.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from recover_core.runtime import atomic


class RunLog:
    """metrics.jsonl for the record; messages to stderr (stdout stays free for results)."""

    def __init__(self, path: Path):
        self.path = path

    def write(self, rec: dict) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def truncate(self, round_: int, step: int) -> None:
        """Keep the records up to (round, step), dropping the ones a killed run wrote after it."""
        if not self.path.exists():
            return
        keep = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if isinstance(rec.get("step"), int) and (rec["round"], rec["step"]) <= (round_, step):
                keep.append(line)
        atomic.write_text(self.path, "".join(k + "\n" for k in keep))

    def say(self, msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)
