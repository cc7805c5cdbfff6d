"""The app's files: a visitor's uploads, which live only for their request, and the players'
audio, which lives only as long as the players of one browser session. No UI here: the app
hands in the folders its web framework uses (Gradio's upload folder, a session's id).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SPEECH = ROOT / "assets" / "speech"
SPEECH_EXAMPLES = {p.name: p.read_bytes() for p in SPEECH.iterdir() if p.is_file()}


def is_example(path: Path) -> bool:
    """Gradio serves an example from its own cached copy, used again at the next click: keep it.
    The copy has the example's name and bytes; a user's file with the same bytes under its own
    name (which may say something about the user) is an upload, and goes."""
    try:
        return path.resolve().is_relative_to(ROOT) or SPEECH_EXAMPLES.get(path.name) == path.read_bytes()
    except OSError:
        return False


@contextlib.contextmanager
def uploads_removed(*paths):
    """Files a user uploaded live only for their request: removed when it ends, however it ends."""
    try:
        yield
    finally:
        for p in paths:
            if p and not is_example(Path(p)):
                Path(p).unlink(missing_ok=True)


def played_folder(upload_root: str | Path, session: str | None) -> Path:
    """The players' audio of one browser session, in the upload folder (so it is served as it
    is, not copied). Named by a hash: the folder's name is in the files' URLs."""
    session = session or "no-session"
    return Path(upload_root) / f"played-{hashlib.sha256(session.encode()).hexdigest()[:20]}"


def write_players(folder: Path, clips: dict[str, tuple[int, np.ndarray]]) -> list[str]:
    """The players' audio, written by us (a framework's own outputs sat in its cache until its
    sweep, and the "Original" player holds the names). A session keeps only its newest render:
    the folder is emptied first. Each file has a new name, so no browser plays a stale copy."""
    from recover_core.asr import audio as speech_audio

    shutil.rmtree(folder, ignore_errors=True)  # the last render's: its players are being replaced
    folder.mkdir(mode=0o700, parents=True)
    paths = []
    for name, (rate, x) in clips.items():
        path = folder / f"{name}-{os.urandom(6).hex()}.wav"
        speech_audio.write(path, x, rate, mode=0o600)
        paths.append(str(path))
    return paths


def forget_players(folder: Path) -> None:
    """The tab closed (or a client left): its players' audio goes now."""
    shutil.rmtree(folder, ignore_errors=True)
