"""The secret that keys every pseudonym choice.

A substitute drawn from a public seed and the original is a public function of the original:
anyone with the code runs it over a name dictionary and reads the mapping backwards
(docs/privacy.md, the inversion attack; presidio #1845). So every draw that depends on an
original is seeded by an HMAC of it under a secret key: a fresh random key per run unless
the user keeps one (``--key-file``, the ``--mapping`` file, ``Obfuscator(key=...)``).
Whoever holds the key can redo the mapping: a published key undoes the protection.

A key file holds the key as hex on one line, is written mode 600, and is refused when
others can read it, as the mapping file is.
"""
from __future__ import annotations

import hashlib
import hmac
import random
import secrets
from pathlib import Path

from recover_core.runtime import atomic
from recover_core.errors import RecoverError

KEY_BYTES = 32  # a fresh key: 256 bits
MIN_KEY_BYTES = 16  # a given key shorter than 128 bits is refused: it could be searched


def new_key() -> bytes:
    """A fresh random key, from the operating system's secret source."""
    return secrets.token_bytes(KEY_BYTES)


def as_key(key: bytes | str | None) -> bytes:
    """A key given as bytes or hex; None gives a fresh one. Too short a key is refused."""
    if key is None:
        return new_key()
    if isinstance(key, str):
        try:
            key = bytes.fromhex(key.strip())
        except ValueError:
            raise RecoverError("A key is hex text (64 hex digits from `python -m recover_core key FILE`); "
                               "this one is not hex.") from None
    if not isinstance(key, (bytes, bytearray)):
        raise RecoverError(f"A key is bytes or hex text, not {type(key).__name__}.")
    if len(key) < MIN_KEY_BYTES:
        raise RecoverError(f"The key is {len(key)} bytes; at least {MIN_KEY_BYTES} are needed "
                           f"(`python -m recover_core key FILE` writes a {KEY_BYTES}-byte one).")
    return bytes(key)


def read_key_file(path: Path | str) -> bytes:
    """The key kept in ``path``, checked: it exists, is a file, only its owner can read it,
    and holds a long enough hex key."""
    path = Path(path)
    if not path.exists():
        raise RecoverError(f"--key-file {path}: no such file. Make one with `python -m recover_core key {path}`.")
    if not path.is_file():
        raise RecoverError(f"--key-file {path}: not a file.")
    mode = path.stat().st_mode
    if mode & 0o077:
        raise RecoverError(f"--key-file {path}: other users can read or write it (mode {mode & 0o777:o}), and "
                           f"whoever reads it can undo the pseudonyms. Run `chmod 600 {path}` and try again.")
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as e:
        raise RecoverError(f"--key-file {path}: unreadable ({getattr(e, 'strerror', None) or e}).") from None
    try:
        return as_key(text)
    except RecoverError as e:
        raise RecoverError(f"--key-file {path}: {e}") from None


def write_key_file(path: Path | str, key: bytes | None = None) -> bytes:
    """Write ``key`` (a fresh one by default) to ``path``, atomically, mode 600; never over an
    existing file, whose key may be the only way to redo an earlier run's mapping."""
    path = Path(path)
    if path.exists():
        raise RecoverError(f"{path} exists; a key file is never overwritten. Choose another name.")
    key = as_key(key)
    atomic.write_bytes(path, (key.hex() + "\n").encode("ascii"), mode=atomic.PRIVATE, fsync=True)
    return key


def keyed_rng(key: bytes, message: str) -> random.Random:
    """A random stream for ``message`` (which may hold an original) under ``key``: unknown
    and unguessable without the key, the same for the same key and message."""
    digest = hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()
    return random.Random(int.from_bytes(digest, "big"))


def subkey(key: bytes, label: str) -> bytes:
    """A key of its own for one part of a run (``label``: one line's draws), derived from
    ``key`` by an HMAC: without ``key`` it tells nothing of the key or of any other label's
    subkey, so draws under two labels cannot be linked, and with ``key`` it is remade."""
    return hmac.new(key, b"recover-subkey:" + label.encode("utf-8"), hashlib.sha256).digest()


def fingerprint(key: bytes) -> str:
    """A short public name for a key (to tell two key files apart), from which the key
    cannot be read back."""
    return hashlib.sha256(b"recover-key-id:" + key).hexdigest()[:12]


__all__ = ["KEY_BYTES", "MIN_KEY_BYTES", "as_key", "fingerprint", "keyed_rng", "new_key", "read_key_file",
           "subkey", "write_key_file"]
