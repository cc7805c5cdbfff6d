"""Atomic writing: write beside the target, then rename over it.

A reader (or the next run, after a kill) sees the old file or the new one, never half
of one: outputs, caches, model folders and checkpoints are all written this way, and
they all do it here, so the rules are the same everywhere:

- the temporary file is a hidden sibling (``.NAME.tmp``, or ``NAME.tmp`` when NAME is
  already hidden): same folder, so the rename is atomic, and ``ls`` does not show it;
- it is renamed with ``os.replace`` only when the writing finished without an error,
  and removed when it did not;
- ``mode`` creates it with those permissions (0o600 for files that hold private words),
  ``unique`` gives it a random name created mode 0o600 (``tempfile.mkstemp``), and
  ``fsync`` flushes it to disk before the rename (progress records that --resume trusts).

Folders (a model, an adapter, a checkpoint) are swapped in by ``directory``: the new
folder is written under ``.NAME.tmp``, the old one moves to ``.NAME.old`` (``previous``)
and is deleted once the new one is in place.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterator


def temp_path(path: Path, suffix: str = ".tmp") -> Path:
    """The hidden sibling that ``path`` is written to first."""
    path = Path(path)
    hidden = path.name if path.name.startswith(".") else f".{path.name}"
    return path.with_name(hidden + suffix)


def previous(target: Path) -> Path:
    """Where ``directory`` keeps the old folder during a swap (a kill between the two
    renames leaves the complete old folder here)."""
    target = Path(target)
    return target.with_name(f".{target.name}.old")


@contextlib.contextmanager
def replacing(path: Path, *, suffix: str = ".tmp", mode: int | None = None, unique: bool = False,
              fsync: bool = False) -> Iterator[Path]:
    """Yield the temporary path to write ``path`` through (any writer: torch.save,
    soundfile, pandas); it replaces ``path`` when the block ends without an error.

    ``suffix`` ends the temporary name (".tmp.wav" where the writer reads the format
    from it); ``mode`` creates the file with those permissions; ``unique`` picks a
    random name (mode 0o600) so two writers of one target cannot collide."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if unique:
        fd, name = tempfile.mkstemp(prefix=temp_path(path, ".").name, suffix=suffix, dir=path.parent)
        os.close(fd)
        tmp = Path(name)
    else:
        tmp = temp_path(path, suffix)
        if mode is not None:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode))
    try:
        yield tmp
        if fsync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def writing(path: Path, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None,
            **kw) -> Iterator[IO]:
    """Yield an open file whose content replaces ``path`` when the block ends without an
    error. ``kw``: as for ``replacing`` (suffix, unique, fsync)."""
    with replacing(path, **kw) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else encoding, newline=newline) as f:
            yield f


def write_bytes(path: Path, data: bytes, *, mode: int | None = None, fsync: bool = False) -> None:
    """Replace ``path`` with ``data``."""
    with replacing(path, mode=mode, fsync=fsync) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


def write_text(path: Path, text: str, *, encoding: str = "utf-8", mode: int | None = None,
               fsync: bool = False) -> None:
    """Replace ``path`` with ``text``."""
    write_bytes(path, text.encode(encoding), mode=mode, fsync=fsync)


@contextlib.contextmanager
def directory(target: Path) -> Iterator[Path]:
    """Yield an empty temporary folder; when the block ends without an error it becomes
    ``target`` (the old ``target``, if any, is deleted); when it fails it is deleted."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp, old = temp_path(target), previous(target)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)
