"""How the app starts: the files Gradio made at build time kept, the background warm-up (in a
Space), and the address it binds."""
from __future__ import annotations

import os

import gradio as gr

from recover_core.runtime import env
from ui.audio import recognizer
from ui.text import EXAMPLES


def keep_built_files(demo: gr.Blocks) -> None:
    """Gradio copies the examples into its cache while the app is built, without marking them
    to keep, so the delete_cache sweep removed them once they were older than its age, and an
    example clicked after that failed. Whatever is in the cache at build time is the app's own
    (no user has sent anything yet): keep it."""
    for block in demo.blocks.values():
        block.keep_in_cache.update(getattr(block, "temp_files", ()))


def warm_up_steps() -> list:
    """What a Space does once at start, before its port opens (recover_core/explorer/warm.py):
    `prepare` (merges, the name-shape model), the examples through every column (kept for a click;
    they load every model the Text tab's defaults use), then the Audio tab's recognizer,
    normalizer, voices and speaker encoder (in a Space, its weights' pinned download)."""
    from recover_core.asr import wer
    from recover_core.explorer import warm
    from recover_core.speech import speaker, voices

    return [("models (prepare)", warm.prepare_models), *warm.text_steps([tuple(e) for e in EXAMPLES]),
            ("recognizer", lambda: recognizer().whisper), ("WER normalizer", wer.normalizer), ("voices", voices.available),
            ("speaker encoder", speaker.available)]


def warm_up_wanted() -> bool:
    """In a Space (no visitor should pay for the first request's work), or when asked."""
    return os.environ.get("RECOVER_WARM_UP", "1" if env.in_space() else "0") == "1"


def server_name() -> str:
    """A Space's proxy reaches the app on the container's own interface, not its loopback."""
    return os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0" if env.in_space() else "127.0.0.1")
