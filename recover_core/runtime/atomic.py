"""Atomic writing: write beside the target, then rename over it.

A reader (or the next run, after a kill) sees the old file or the new one, never half
of one: outputs, caches, model folders, keys, mappings and checkpoints are all written
this way, and they all do it here, so the rules are the same everywhere:

- the temporary file is made by ``tempfile.mkstemp`` in the target's folder (so the
  rename is atomic): a random hidden name, ``.NAME.XXXXXXXX.tmp``, opened with
  O_CREAT|O_EXCL|O_NOFOLLOW and mode 0o600. No name is predictable, so a link or a file
  planted beside the target can neither receive what is written nor lend it its mode
  (issue 75, finding 2: a link at the old ``.NAME.tmp`` received a new key, and a 0644
  file there gave a 0644 mapping);
- when the writing is done the file gets its final mode through its own descriptor
  (``fchmod``): ``mode`` (``PRIVATE``, 0o600, for anything that holds a key or an
  original), else what a plain ``open`` would give (0o666 less the umask). Until then it
  is 0o600, so no one else can read a file while it is being written;
- ``fsync`` flushes it to disk before the rename (keys, mappings, and the progress
  records that --resume trusts);
- it is renamed with ``os.replace`` only when the writing finished without an error,
  and removed when it did not.

Folders (a model, an adapter, a checkpoint) are swapped in by ``directory``: the new
folder is made by ``tempfile.mkdtemp`` beside the target (random name, mode 0o700), the
old one moves to ``.NAME.old`` (``previous``) and is deleted once the new one is in place.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import IO, Iterator

PRIVATE = 0o600  # owner only: keys, mappings, progress records, manifests, outputs that hold originals


def _hidden(name: str) -> str:
    return name if name.startswith(".") else f".{name}"


def previous(target: Path) -> Path:
    """Where ``directory`` keeps the old folder during a swap (a kill between the two
    renames leaves the complete old folder here)."""
    target = Path(target)
    return target.with_name(f".{target.name}.old")


def umask() -> int:
    """The process's umask, read without changing it where Linux says it (changing it, even
    for an instant, would loosen files that other threads create meanwhile)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o077)
    os.umask(old)
    return old


def _create(path: Path, suffix: str) -> tuple[int, Path]:
    """A new temporary file beside ``path``: (its descriptor, its path)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # mkstemp: random name, O_CREAT|O_EXCL|O_NOFOLLOW, mode 0o600, whatever the umask
    fd, name = tempfile.mkstemp(prefix=_hidden(path.name) + ".", suffix=suffix, dir=path.parent)
    return fd, Path(name)


def _finish(fd: int, tmp: Path, path: Path, mode: int | None, fsync: bool) -> None:
    """Give ``tmp`` its final mode, flush it if asked, and rename it onto ``path``."""
    st, now = os.fstat(fd), os.lstat(tmp)
    if (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino) or not stat.S_ISREG(now.st_mode):
        # A writer that made a new file at ``tmp`` instead of writing into ours: seal that one
        # (never through a link), as ours would have been.
        fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{tmp} is not a regular file")
            _finish(fd, tmp, path, mode, fsync)
        finally:
            os.close(fd)
        return
    os.fchmod(fd, mode if mode is not None else 0o666 & ~umask())
    if fsync:
        os.fsync(fd)
    os.replace(tmp, path)


@contextlib.contextmanager
def _through(path: Path, suffix: str, mode: int | None, fsync: bool) -> Iterator[tuple[int, Path]]:
    """The temporary file's descriptor and path; it replaces ``path`` when the block ends
    without an error, and is removed when it ends with one."""
    fd, tmp = _create(path, suffix)
    try:
        yield fd, tmp
        _finish(fd, tmp, path, mode, fsync)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(path: Path, *, suffix: str = ".tmp", mode: int | None = None, fsync: bool = False) -> Iterator[Path]:
    """Yield the temporary path to write ``path`` through (any writer that opens a path:
    torch.save, soundfile, pandas); it replaces ``path`` when the block ends without an error.

    ``suffix`` ends the temporary name (".tmp.wav" where the writer reads the format from
    it); ``mode`` is the file's final mode (PRIVATE for keys and originals; default: as
    ``open`` would make it); ``fsync`` flushes it to disk before the rename."""
    with _through(Path(path), suffix, mode, fsync) as (_, tmp):
        yield tmp


@contextlib.contextmanager
def writing(path: Path, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None,
            suffix: str = ".tmp", perms: int | None = None, fsync: bool = False) -> Iterator[IO]:
    """Yield an open file whose content replaces ``path`` when the block ends without an
    error. It is the temporary file's own descriptor, never a reopened path. ``perms``:
    the final mode, as ``replacing``'s ``mode``."""
    binary = "b" in mode
    with _through(Path(path), suffix, perms, fsync) as (fd, _):
        with open(os.dup(fd), mode, encoding=None if binary else encoding, newline=None if binary else newline) as f:
            yield f


def write_bytes(path: Path, data: bytes, *, mode: int | None = None, fsync: bool = False) -> None:
    """Replace ``path`` with ``data``. ``mode``: PRIVATE for a key or originals."""
    with writing(path, "wb", perms=mode, fsync=fsync) as f:
        f.write(data)


def write_text(path: Path, text: str, *, encoding: str = "utf-8", mode: int | None = None,
               fsync: bool = False) -> None:
    """Replace ``path`` with ``text``."""
    write_bytes(path, text.encode(encoding), mode=mode, fsync=fsync)


def open_private(path: Path) -> IO[bytes]:
    """``path`` opened to read and to append to, owner only: created mode 0o600 when it does
    not exist, never through a link, refused when another user owns it or it is not a regular
    file, and tightened to 0o600 when it is looser (a file from before this rule). For a log
    that grows a line at a time, synced after each (a manifest), and holds private words."""
    path = Path(path)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            raise PermissionError(errno.EPERM, "not a regular file of this user's own", str(path))
        if stat.S_IMODE(st.st_mode) != PRIVATE:
            os.fchmod(fd, PRIVATE)
        return open(fd, "a+b")
    except BaseException:
        os.close(fd)
        raise


def _left_by_kills(target: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """This user's temporaries of ``target`` that a killed write left: ``mkstemp``'s and
    ``mkdtemp``'s exact names (prefix, 8 random characters, a suffix starting ".tmp"), so a
    neighbour such as ``.NAME.progress.json.XXXXXXXX.tmp`` is not taken for one of ``NAME``'s."""
    name = re.compile(re.escape(_hidden(target.name)) + r"\.[a-z0-9_]{8}\.tmp(\.\w+)?")
    for left in target.parent.glob(f"{_hidden(target.name)}.*.tmp*"):
        try:
            st = left.lstat()
        except OSError:
            continue
        if name.fullmatch(left.name) and st.st_uid == os.getuid():
            yield left, st


def sweep(target: Path, *, folders_only: bool = False) -> None:
    """Delete the temporary files and folders that writes of ``target`` killed mid-way left
    (their names are random, so no later write replaces them, and they can hold a key or
    originals). Only for a target that one process writes at a time, such as a run's
    checkpoint files: another writer's temporary in flight would go too. ``folders_only``:
    the folders that killed swaps left (``directory``)."""
    for left, st in _left_by_kills(Path(target)):
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(left, ignore_errors=True)
        elif not folders_only:
            left.unlink(missing_ok=True)


@contextlib.contextmanager
def directory(target: Path) -> Iterator[Path]:
    """Yield an empty temporary folder; when the block ends without an error it becomes
    ``target`` (the old ``target``, if any, is deleted); when it fails it is deleted."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep(target, folders_only=True)
    tmp = Path(tempfile.mkdtemp(prefix=_hidden(target.name) + ".", suffix=".tmp", dir=target.parent))
    old = previous(target)
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~umask())  # as mkdir would have made it
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)
