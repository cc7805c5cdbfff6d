"""Committed chunks and a small progress record: what makes `--resume` exact.

While a run goes, its output grows in ``.NAME.part`` next to the target, and
``.NAME.progress.json`` says how much of it is committed: the input lines and bytes
consumed, a SHA-256 of those input bytes, the output bytes, and the running counts.
A commit appends a chunk, fsyncs it, then replaces the record (write, fsync, rename),
so after kill -9 at any instant the record names a prefix of the part file that is
complete. The record says where the run's secret key is, so a resumed run draws under the
same key: it names the --key-file, or the --mapping file that keeps it, and holds only the
key's fingerprint then; it copies the key only when nothing else keeps it (a fresh key).
`--resume` cuts the part file back to that prefix and reads on from there;
the finished output is renamed into place and both files go.

Both files are created mode 600: with --keep-originals the part file holds private
words, and it stays on disk after an interruption, for --resume, until the run ends
or the user deletes it. So does ``.NAME.mapping.json``, the run's originals -> substitutes
under --consistent without --mapping: saved before each commit, deleted when the run ends.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from recover_core.runtime import atomic
from recover_core.batch.job import Job, differences
from recover_core.errors import RecoverError
from recover_core.pseudonyms.key import fingerprint, new_key, read_key_file
from recover_core.pseudonyms.mapping import mapping_key

# 2: a line's draws are seeded by the masked line itself (obfuscator.line_id), not its number.
# 3: the substitutes are drawn under the run's secret key, which the record keeps.
VERSION = 3
HASH_BLOCK = 1 << 20


def part_path(output: Path) -> Path:
    return output.parent / f".{output.name}.part"


def record_path(output: Path) -> Path:
    return output.parent / f".{output.name}.progress.json"


def mapping_path(output: Path) -> Path:
    """Where --consistent keeps the run's mapping until the run ends (with no --mapping FILE)."""
    return output.parent / f".{output.name}.mapping.json"


def _where_key(job: Job, key: str) -> dict:
    """The record's entries that let --resume find ``key``: the key file or the mapping file
    that already keeps it is named (with the key's fingerprint, to notice a changed file),
    never copied; only a key nothing else keeps is written into the record."""
    kid = fingerprint(bytes.fromhex(key))
    if job.key_file and job.key == key:
        return {"key_file": job.key_file, "key_id": kid}
    if job.mapping and _mapping_key(job) == key:
        return {"key_from": "mapping", "key_id": kid}
    return {"key": key}


def _found_key(job: Job, old: dict) -> str:
    """The interrupted run's key, where its record says it is."""
    if old.get("key") or not (old.get("key_file") or old.get("key_from")):
        return old.get("key") or ""
    if old.get("key_file"):
        key = read_key_file(old["key_file"]).hex()
        where = f"the key file {old['key_file']}"
    else:
        key = _mapping_key(job) or ""
        where = f"the mapping file {job.mapping}"
    if not key or fingerprint(bytes.fromhex(key)) != old.get("key_id"):
        raise RecoverError(f"--resume needs the first run's key, and {where} no longer holds it (it changed since). "
                           "Put the first run's key back there, or use --restart.")
    return key


def _mapping_key(job: Job) -> str | None:
    """The key a --mapping file keeps: its later runs draw under the key its entries were drawn under."""
    if not job.mapping:
        return None
    kept = mapping_key(Path(job.mapping))
    return kept.hex() if kept else None


def _input_stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def prefix_sha(path: Path, n_bytes: int) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        left = n_bytes
        while left > 0:
            block = f.read(min(HASH_BLOCK, left))
            if not block:
                break
            h.update(block)
            left -= len(block)
    return h.hexdigest()


@dataclass
class Progress:
    lines_done: int = 0
    input_offset: int = 0
    output_bytes: int = 0
    counts: dict = field(default_factory=dict)
    seconds: float = 0.0


class Checkpoint:
    """The part file, its progress record, and the input's identity while it is read."""

    def __init__(self, job: Job, *, resume: bool, restart: bool):
        self.job = job
        self.part, self.record = part_path(job.output), record_path(job.output)
        if not job.input.is_file():
            raise RecoverError(f"Input file {str(job.input)!r} does not exist.")
        self.progress = Progress()
        self._hash = hashlib.sha256()
        job.output.parent.mkdir(parents=True, exist_ok=True)
        self._sweep()
        old = self._read_record() if resume or not restart else None  # --restart trusts nothing left
        if old is not None and resume:
            self._resume_from(old)
        elif old is not None and not restart:
            raise RecoverError(
                f"An interrupted run of this command left {old.get('lines_done', 0):,} finished lines in "
                f"{self.part}. Add --resume to continue it, or --restart to start over (which deletes them).")
        else:
            self._start()
        self.stamp = _input_stamp(job.input)

    def _sweep(self) -> None:
        """A kill -9 while a record, the part or the mapping was being replaced leaves that
        write's temporary (which can hold the key or originals): a run removes them as it starts
        and ends."""
        for target in (self.part, self.record, mapping_path(self.job.output), self.job.output):
            atomic.sweep(target)

    # --- starting ----------------------------------------------------------------------

    def _read_record(self) -> dict | None:
        if not self.record.exists() and not self.record.is_symlink():
            self.part.unlink(missing_ok=True)  # a part without a record holds nothing committed
            return None
        try:
            # never through a link, and only this user's own owner-only record: a record planted
            # by someone else could name a key they know
            fd = os.open(self.record, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with open(fd, encoding="utf-8") as f:
                st = os.fstat(f.fileno())
                text = f.read()
        except (OSError, ValueError):
            raise RecoverError(f"The progress record {self.record} is unreadable; use --restart.") from None
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise RecoverError(f"The progress record {self.record} is not this user's own mode-600 file, so it is "
                               "not trusted; use --restart.")
        try:
            return json.loads(text)
        except ValueError:
            raise RecoverError(f"The progress record {self.record} is unreadable; use --restart.") from None

    def _start(self) -> None:
        mapping_path(self.job.output).unlink(missing_ok=True)  # a fresh run starts a fresh mapping
        self.key = self.job.key or _mapping_key(self.job) or new_key().hex()
        self.where_key = _where_key(self.job, self.key)
        # made by the atomic rules (random temporary name, 0o600, renamed in): a link or a
        # looser file planted at the part's name is replaced, never written through
        atomic.write_bytes(self.part, b"", mode=atomic.PRIVATE)
        self._commit_record()

    def _resume_from(self, old: dict) -> None:
        if old.get("version") != VERSION:
            raise RecoverError(f"{self.record} was written by another version of recover; use --restart.")
        diff = differences(old.get("settings", {}), self.job.settings())
        if diff:
            raise RecoverError("--resume needs the first run's settings; these differ: " + "; ".join(diff)
                               + ". Rerun with the first run's settings, or use --restart.")
        self.key = _found_key(self.job, old)
        self.where_key = {k: old[k] for k in ("key", "key_file", "key_from", "key_id") if k in old}
        if self.job.key and self.job.key != self.key:
            raise RecoverError("--resume needs the first run's key: the --key-file given is another one. Rerun "
                               "with the first run's key file (or none), or use --restart.")
        p = Progress(old["lines_done"], old["input_offset"], old["output_bytes"], old["counts"], old["seconds"])
        if prefix_sha(self.job.input, p.input_offset) != old["input_sha256"]:
            raise RecoverError(f"The first {p.lines_done:,} lines of {self.job.input} are not the ones the "
                               "interrupted run read: the input changed since. Use --restart.")
        if not self.part.exists() or self.part.stat().st_size < p.output_bytes:
            raise RecoverError(f"The partial output {self.part} is missing or shorter than its record says; "
                               "use --restart.")
        with self._open_part() as f:  # what was written after the last commit is not committed
            f.truncate(p.output_bytes)
        with self.job.input.open("rb") as f:  # the running hash goes on from the committed prefix
            left = p.input_offset
            while left > 0:
                block = f.read(min(HASH_BLOCK, left))
                self._hash.update(block)
                left -= len(block)
        self.progress = p

    # --- committing --------------------------------------------------------------------

    def commit(self, text: str, raw_lines: list[bytes], counts: dict, seconds: float) -> None:
        """Append one chunk's output and record it as done."""
        from recover_core.batch.pipeline import add_counts

        if _input_stamp(self.job.input) != self.stamp:
            raise RecoverError(f"{self.job.input} changed while it was being read (its size or time changed). "
                               f"The {self.progress.lines_done:,} lines before the change are kept in {self.part}; "
                               "rerun with --restart once the file is complete.")
        data = text.encode("utf-8")
        with self._open_part() as f:
            f.seek(self.progress.output_bytes)
            f.write(data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
        p = self.progress
        for raw in raw_lines:
            self._hash.update(raw)
        p.lines_done += len(raw_lines)
        p.input_offset += sum(len(r) for r in raw_lines)
        p.output_bytes += len(data)
        add_counts(p.counts, counts)
        p.seconds = seconds
        self._commit_record()

    def _open_part(self) -> IO[bytes]:
        """The part file for reading and writing, never through a link."""
        return open(os.open(self.part, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC), "r+b")

    def _commit_record(self) -> None:
        p = self.progress
        rec = {"version": VERSION, "command": self.job.command, "settings": self.job.settings(),
               "input": str(self.job.input), "lines_done": p.lines_done, "input_offset": p.input_offset,
               "input_sha256": self._hash.hexdigest(), "output_bytes": p.output_bytes, "counts": p.counts,
               "seconds": round(p.seconds, 3),
               # where the run's secret key is, for --resume (the key itself only when nothing else
               # keeps it); this record is mode 600 and goes when the run ends
               **self.where_key}
        atomic.write_bytes(self.record, json.dumps(rec).encode(), mode=atomic.PRIVATE, fsync=True)

    def finish(self) -> None:
        """The whole input is done: the part file becomes the output, the record goes."""
        if _input_stamp(self.job.input) != self.stamp:
            raise RecoverError(f"{self.job.input} changed while it was being read; rerun with --restart.")
        with self._open_part() as f:
            os.fchmod(f.fileno(), 0o644 if not self.job.keep_originals else atomic.PRIVATE)
        os.replace(self.part, self.job.output)
        self.record.unlink(missing_ok=True)
        mapping_path(self.job.output).unlink(missing_ok=True)
        self._sweep()

    def kept_message(self) -> str:
        """For an interrupted run: where the finished lines are, and how to go on."""
        p = self.progress
        if not p.lines_done:
            return "no line was finished"
        warn = " It holds the original private words (--keep-originals): delete it if you will not resume." \
            if self.job.keep_originals else ""
        if self.job.consistent and not self.job.mapping:
            warn += (f" {mapping_path(self.job.output)} (mode 600) holds the run's originals and substitutes for "
                     "--resume: delete it if you will not resume.")
        return (f"{p.lines_done:,} finished lines are kept in {self.part} (mode 600); rerun the same command with "
                f"--resume to continue, or delete it.{warn}")

    def discard_if_empty(self) -> None:
        """Nothing committed: leave nothing behind."""
        if not self.progress.lines_done:
            self.part.unlink(missing_ok=True)
            self.record.unlink(missing_ok=True)
            mapping_path(self.job.output).unlink(missing_ok=True)
            self._sweep()
