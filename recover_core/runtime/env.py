"""Process-wide environment: offline switches, cache folder, size limits."""
from __future__ import annotations

import os
from pathlib import Path

# The largest text one request may carry. A sentence is short; this bounds a
# pasted paragraph in the UI and one line of a batch file.
MAX_CHARS = 2000

# The most masks one request may fill. Each mask is a step of a filler (the infill filler
# runs several model passes per mask, the instruct filler's output grows with them), and
# a MAX_CHARS line of nothing but markers holds hundreds ('[MASK] ' * 285). Real sentences
# stay far below: of the 41,850 sentences of news, fortunes and scripture, the most masked
# by any technique (allowList+entityTagger) has 31 masks, and one in a thousand more than
# 19; the limit is twice the most seen. A pasted paragraph near MAX_CHARS may need
# splitting into sentences.
MAX_MASKS = 64


def in_space() -> bool:
    """True inside a Hugging Face Space, where the hub is reachable."""
    return bool(os.environ.get("SPACE_ID"))


def offline() -> bool:
    """True where no model hub can be reached. A Space always reaches the hub: there,
    HF_HUB_OFFLINE only makes the hub libraries read their own cache (a Space that ships
    its models pre-downloaded, or tests/test_space.py), so hub ids stay the models' source."""
    if in_space():
        return False
    return os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")


def install_advice(here: str, space: str) -> str:
    """What to do about something missing, in the terms of where the app runs: in a Space no
    one can run `make` or install requirements-offline.txt; what it lacks comes from its own
    packages.txt, requirements.txt or the hub (README's preload_from_hub)."""
    return space if in_space() else here


def configure() -> None:
    """Set quiet, offline defaults unless the user (or the Space) chose otherwise."""
    if not in_space():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # Gradio 6 keeps every run's inputs and outputs in the browser (or a hub bucket) by default:
    # the user's sentences and audio would outlive the request, on a shared demo machine too.
    os.environ.setdefault("GRADIO_RUN_HISTORY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def cache_path() -> Path:
    """Where the cache is, without creating it (for looking, e.g. at startup)."""
    return Path(os.environ.get("RECOVER_CACHE", Path.home() / ".cache" / "recover"))


def cache_dir() -> Path:
    """Converted model files live here, outside git; created on first use."""
    root = cache_path()
    root.mkdir(parents=True, exist_ok=True)
    return root


def assets_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "assets"


def source_commit() -> str | None:
    """The git commit this code runs from, or None (no git checkout, or no git): a job
    exported here names it, so that its records can be imported from the same code and
    shipped assets after later commits changed them."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


_BF16_WARNED = False


def bf16_autocast(requested: bool) -> bool:
    """Whether to train under bfloat16 autocast: only where asked and where the CPU has native
    bfloat16 (AVX512-BF16 or AMX). Without it PyTorch emulates bfloat16, which we measured
    about 40x slower than float32 (a Zen 3 EPYC: 52 s against ~1 s per LM pretraining step),
    so float32 is used instead, and said once."""
    global _BF16_WARNED
    if not requested:
        return False
    import torch

    native = bool(getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)()) or \
        bool(getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)())
    if not native and not _BF16_WARNED:
        import sys

        print("bf16 asked for, but this CPU has no native bfloat16 (AVX512-BF16/AMX): training in float32, "
              "which is faster here.", file=sys.stderr)
        _BF16_WARNED = True
    return native


APP_TEMP_PREFIX = "recover-gradio-"


def app_temp_dir(root: Path | None = None) -> Path:
    """A folder of this process's own for Gradio's uploads and outputs, after removing the
    folders of earlier app processes that are gone. Gradio's ``delete_cache`` sweeps only
    the files its own server made, and only while it runs: a server killed mid-request
    left the user's audio behind for good. A folder per process, named by its pid, can be
    swept safely at the next start, even with another app running beside it. An app that
    exits normally (Ctrl-C) removes its own folder as it goes: until the next start it would
    hold the last outputs, which are the user's own speech outside the names.

    The folder is made by ``tempfile.mkdtemp``: a random name after the pid, created here
    and now, mode 0o700, owned by this user. A predictable name, used as it is when it
    already exists, would put the user's speech in a folder someone else made and can read
    (issue 75, finding 13). The sweep removes only this user's own real folders."""
    import atexit
    import shutil
    import stat
    import tempfile

    root = Path(root or tempfile.gettempdir())
    for old in root.glob(APP_TEMP_PREFIX + "*"):
        pid = old.name[len(APP_TEMP_PREFIX):].split("-")[0]  # PREFIX<pid>-<random> (PREFIX<pid> before)
        try:
            st = old.lstat()
        except OSError:
            continue
        if pid.isdigit() and stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    mine = Path(tempfile.mkdtemp(prefix=f"{APP_TEMP_PREFIX}{os.getpid()}-", dir=root))
    atexit.register(shutil.rmtree, mine, True)
    return mine


def exit_on_sigterm() -> None:
    """Make SIGTERM (how ``kill``, ``docker stop`` and service managers stop the app) a normal
    exit, so that atexit handlers run and ``app_temp_dir``'s folder goes with the process;
    Python's default for SIGTERM is to die without them."""
    import signal
    import sys

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process, or no such number
        return True
    return True
