"""The mapping kept across runs (``--mapping FILE``): read, and written atomically, owner only."""
from __future__ import annotations

import json
from pathlib import Path

from recover_core.runtime import atomic
from recover_core.errors import RecoverError
from recover_core.pseudonyms.key import as_key
from recover_core.pseudonyms.policy import CHOICES, Pseudonyms

MAPPING_FORMAT = "recover-pseudonyms/1"


def load_mapping(path: Path) -> dict[str, str]:
    """The originals -> substitutes of earlier runs; {} when the file does not exist yet.

    The file holds original private words and the run's key, so it must be readable by its
    owner only: a file that others can read is refused (as ssh refuses a readable private key)."""
    return _read_mapping(path)[0]


def mapping_key(path: Path) -> bytes | None:
    """The key a mapping file keeps (None: no file yet, or a file from before keys)."""
    return _read_mapping(path)[2]


def load_pseudonyms(path: Path, seed: int | str = 0, choice: str = CHOICES[0],
                    key: bytes | str | None = None) -> Pseudonyms:
    """A ``Pseudonyms`` in the state ``save_mapping`` left: its choices, every original it
    had seen and its key. All three decide later choices (no original, nor a word that sounds
    like one, ever becomes a substitute; new originals are drawn under the same key), so a
    resumed run chooses as the uninterrupted one would. A new file takes ``key`` (a fresh
    one by default); a file's own key wins, and a different ``key`` is refused."""
    mapping, reserved, kept = _read_mapping(path)
    if kept is not None and key is not None and as_key(key) != kept:
        raise RecoverError(f"--mapping {path} was made under another key than the one given (--key-file); its "
                           "substitutes could not be extended consistently. Drop one of the two.")
    p = Pseudonyms(seed, mapping, choice, key=kept if kept is not None else key)
    p._remember(reserved)
    return p


def _read_mapping(path: Path) -> tuple[dict[str, str], list[str], bytes | None]:
    path = Path(path)
    if not path.exists():
        return {}, [], None
    if not path.is_file():
        raise RecoverError(f"--mapping {path}: not a file.")
    loose = path.stat().st_mode & 0o077
    if loose:
        raise RecoverError(f"--mapping {path}: other users can read or write it (mode {path.stat().st_mode & 0o777:o}), "
                           f"and it holds original private words. Run `chmod 600 {path}` and try again.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RecoverError(f"--mapping {path}: not a mapping file written by recover ({e}).") from None
    entries = data.get("mapping") if isinstance(data, dict) and data.get("format") == MAPPING_FORMAT else None
    reserved = data.get("reserved", []) if isinstance(data, dict) else None  # absent in files of 2026-11-23
    if not isinstance(entries, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items()) \
            or not isinstance(reserved, list) or not all(isinstance(w, str) for w in reserved):
        raise RecoverError(f"--mapping {path}: not a mapping file written by recover (expected format "
                           f"{MAPPING_FORMAT!r}).")
    kept = data.get("key")  # absent in files written before keys (2026-11-28): a fresh key from now on
    try:
        return entries, reserved, as_key(kept) if kept is not None else None
    except RecoverError as e:
        raise RecoverError(f"--mapping {path}: {e}") from None


def save_mapping(path: Path, pseudonyms: Pseudonyms) -> None:
    """Write the mapping, its key, and the originals seen that have no entry of their own (the words
    of a place "New York", whose entry is the whole name), atomically, created mode 600
    (owner only), flushed to disk: a run resumed after a kill must find every choice its
    committed output used, and everything those choices depended on."""
    reserved = sorted(pseudonyms.originals - pseudonyms.mapping.keys())
    data = json.dumps({"format": MAPPING_FORMAT, "key": pseudonyms.key.hex(), "mapping": pseudonyms.mapping,
                       "reserved": reserved}, ensure_ascii=False, indent=0)
    atomic.write_bytes(Path(path), data.encode("utf-8"), mode=atomic.PRIVATE, fsync=True)
