"""Reference transcripts: plain text, JSONL, or WSJ's ``.dot``, ``.lsn`` and ``.ptx`` files.

WSJ lines are ``TEXT (uttid)``. WSJ0's text carries reading conventions that were never
spoken as written, and this reader turns each into what a listener heard:
- verbalized punctuation (",COMMA", ".PERIOD", "\"DOUBLE-QUOTE"): in the utterances that
  have it the reader *said* the word, so it becomes that word ("comma", "double quote");
- noise markers ("[loud_breath]", "[<door_slam]"): dropped;
- words the reader left out ("<the>"): dropped; mispronounced or lengthened words
  ("*word*", "wo:rd") and fragments ("~"): the word's letters;
- ``\\`` escapes before a character: the character.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from recover_core.errors import RecoverError

_ID_END = re.compile(r"^(?P<text>.*?)\s*\((?P<id>[^()\s]+)\)\s*$")
_ID_START = re.compile(r"^\s*\((?P<id>[^()\s]+)\)\s*(?P<text>.*)$")
_VERBAL = re.compile(r"^[^\w\s]+(?P<name>[A-Z][A-Z-]*[A-Z])$")  # ,COMMA .PERIOD "DOUBLE-QUOTE


def clean_wsj(text: str) -> str:
    out = []
    for tok in text.split():
        if tok.startswith("[") or tok.endswith("]"):
            continue  # noise marker
        if tok.startswith("<") and tok.endswith(">"):
            continue  # a word the reader omitted
        tok = tok.replace("\\", "")
        m = _VERBAL.match(tok)
        if m:
            out.append(m.group("name").replace("-", " ").lower())
            continue
        tok = tok.strip("*~").replace(":", "")
        if tok and any(c.isalnum() for c in tok):
            out.append(tok)
    return " ".join(out)


def parse_line(line: str) -> tuple[str | None, str]:
    """(utterance id or None, text) of one transcript line."""
    for pattern in (_ID_END, _ID_START):
        m = pattern.match(line)
        if m:
            return m.group("id"), m.group("text")
    return None, line


def read(path: str | Path) -> dict[str, str]:
    """Utterance id -> cleaned reference text. A plain text file without ids gives
    its lines numbered "1", "2", ...; JSONL needs a "text" and an "id" or "path" field."""
    path = Path(path)
    if not path.is_file():
        raise RecoverError(f"{path}: no such transcript file.")
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raw = path.read_text(encoding="latin-1")  # WSJ's files are ASCII; old copies are Latin-1
    out: dict[str, str] = {}
    lines = [ln for ln in raw.splitlines() if ln.strip()]
    if path.suffix.lower() == ".jsonl":
        for n, ln in enumerate(lines, 1):
            try:
                rec = json.loads(ln)
            except ValueError as e:
                raise RecoverError(f"{path}:{n}: not valid JSON ({e}).") from None
            if isinstance(rec, dict) and "error" in rec and "text" not in rec:  # transcribe --skip-bad's record
                raise RecoverError(f"{path}:{n}: {rec.get('path')} was not transcribed ({rec['error']}).")
            if not isinstance(rec, dict) or not isinstance(rec.get("text"), str) or not (rec.get("id") or rec.get("path")):
                raise RecoverError(f"{path}:{n}: a JSONL line needs \"text\" and \"id\" or \"path\".")
            out[str(rec.get("id") or Path(rec["path"]).name.split(".")[0])] = rec["text"]
        return out
    for n, ln in enumerate(lines, 1):
        uid, text = parse_line(ln)
        out[uid if uid is not None else str(n)] = clean_wsj(text)
    return out


def for_audio(path: str | Path, audio_name: str) -> str:
    """The reference for one audio file, matched by utterance id (the file name's stem)."""
    refs = read(path)
    stem = Path(audio_name).name.split(".")[0].lower()
    by_id = {k.lower(): v for k, v in refs.items()}
    if stem in by_id:
        return by_id[stem]
    if len(refs) == 1 and next(iter(refs)) == "1":
        return next(iter(refs.values()))  # a one-line transcript without an id
    sample = ", ".join(list(refs)[:3])
    raise RecoverError(f"{Path(path).name} has no utterance {stem!r} (the audio file's name); it holds "
                       f"{len(refs)} utterance(s), such as {sample}.")
