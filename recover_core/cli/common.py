"""What every command shares: reading records, writing atomically, argument types."""
from __future__ import annotations

import argparse
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from recover_core.runtime import atomic
from recover_core.batch.pipeline import decode_record
from recover_core.errors import RecoverError
from recover_core.pseudonyms import DATE_POLICIES


# --- input and output -------------------------------------------------------------

def is_jsonl(path: Path, fmt: str | None) -> bool:
    return fmt == "jsonl" if fmt else path.suffix == ".jsonl"


def read_records(path: Path, fmt: str | None, field: str) -> Iterator[dict | None]:
    """One dict per line ({field: text, ...}); None for a blank line. Lines are decoded as
    the batch engines decode them (batch.pipeline.decode_record)."""
    if not path.is_file():
        raise RecoverError(f"Input file {str(path)!r} does not exist.")
    jsonl = is_jsonl(path, fmt)
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            yield decode_record(raw, jsonl, field, n)


@contextmanager
def atomic_output(path: Path):
    """Write next to the target and rename at the end: a failed run leaves nothing behind.
    The file is created mode 600 (it may hold private words until it is complete)."""
    with atomic.writing(path, suffix=".part", perms=atomic.PRIVATE) as f:
        yield f


def chunks(records: Iterator, size: int) -> Iterator[list]:
    buf = []
    for r in records:
        buf.append(r)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def positive(v: str) -> int:
    i = int(v)
    if i < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return i


def protect_arg(p: argparse.ArgumentParser) -> None:
    """--protect, as mask, obfuscate and obfuscate-audio take it (obfuscator.Settings.protect)."""
    p.add_argument("--protect", choices=["direct", "quasi"], default="direct",
                   help="direct (default): names and identifiers; quasi: also dates of events (each document's "
                        "shifted by one secret offset), ages, case numbers, sums, durations, nationalities and "
                        "organisations tied to a place (TAB's quasi-identifiers)")
    p.add_argument("--dates", choices=list(DATE_POLICIES), default=DATE_POLICIES[0],
                   help="dates of events under --protect quasi: jitter (default) moves each document's dates by "
                        "one secret offset of its own and a secret warp of up to 90 days that keeps their order; "
                        "shift by the offset alone, so intervals hold exactly (and one known date gives the "
                        "others); year keeps the year alone (HIPAA Safe Harbor). What each lets an attacker do: "
                        "docs/privacy.md#dates")
