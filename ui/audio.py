"""The Audio tab's handlers: recognition with each LM fused (vats2024 §4.2.2), and speech
obfuscation (preiss2023). Uploads live only for their request (recover_core/explorer/files.py)."""
from __future__ import annotations

import functools
from pathlib import Path

import gradio as gr
import numpy as np

from recover_core.asr import audio as speech_audio
from recover_core.asr import compare, lms
from recover_core.errors import RecoverError
from recover_core.explorer import files
from recover_core.explorer.files import SPEECH, is_example, uploads_removed  # noqa: F401  (app's API)
from recover_core.runtime import threads
from ui.common import friendly

@functools.lru_cache(maxsize=1)
def recognizer():
    """Whisper (and torch) load on the first Audio request, once; not when the app starts."""
    from recover_core.asr.recognize import Recognizer

    return Recognizer()


LM_CHOICES = lms.available()  # read once at start, like the results
AUDIO_EXAMPLES = [[str(SPEECH / f"austen-{i}.flac"), None, "", str(SPEECH / "austen.dot")] for i in ("0880", "0930", "0920")]
ERROR_COLORS = {"S": "orange", "D": "red", "I": "violet"}
SPEECH_MAX_SECONDS = 30.0
SPEECH_VOICES = ["auto", "clone", "piper-joe", "espeak-ng-us", "espeak-ng-us-f", "flite-slt", "flite-rms"]


def without_empty_temp(f: gr.File) -> gr.File:
    """A gr.File(type="filepath") without the empty temp file that Gradio 6.31's preprocess
    opens (NamedTemporaryFile(delete=False)) and never uses: one was left per upload until the
    app stopped. The handler gets the upload's own path, which ``uploads_removed`` deletes.
    Patched on the instance: a subclass of a Gradio component makes Gradio write an app.pyi
    beside app.py."""
    from gradio.utils import NamedString
    from gradio_client.utils import is_valid_file

    gradios_own = f._process_single_file

    def process(data):
        if f.type != "filepath" or f.file_types and not is_valid_file(data.path, f.file_types):
            return gradios_own(data)  # Gradio's own message for a wrong file type
        return NamedString(data.path)

    f._process_single_file = process
    return f


def lm_column(name: str, message: str) -> list:
    return [f"**{name}** · {message}", []]


@friendly
@threads.on_models_thread
def on_wer(recorded, uploaded, typed_reference, transcript_file, chosen, engine=compare.ENGINES[0]):
    """A generator: each LM's column appears as soon as that LM has decoded."""
    path = uploaded or recorded
    with uploads_removed(recorded, uploaded, transcript_file):
        if not path:
            raise RecoverError("No audio: upload or record an utterance, or pick an example.")
        name = Path(path).name
        clip = speech_audio.load(path, max_seconds=compare.MAX_SECONDS, name=name)
        reference = compare.reference_text(typed_reference, transcript_file, name)
    chosen = compare.check_lms(chosen)
    columns = {n: lm_column(n, "waiting…" if n in chosen else "not chosen") for n in LM_CHOICES}
    done = []
    yield [f"{clip.seconds:.1f} s of audio; decoding with {len(chosen)} LM(s)…", None] + [x for c in columns.values() for x in c]
    for r in compare.compare(recognizer(), clip, reference, chosen, engine=engine):
        done.append(r)
        s = r.score
        columns[r.name] = [f"**{r.name}** · WER **{s.wer:.1f}%** · CER {s.cer:.1f}% · S {s.substitutions} · "
                           f"D {s.deletions} · I {s.insertions} · λ {r.lm_weight:g}, β {r.word_bonus:g} · "
                           f"{r.seconds:.1f} s\n\n{r.text}", compare.highlighted(r)]
        status = f"{clip.seconds:.1f} s of audio; {len(done)} of {len(chosen)} LMs decoded."
        yield [status, compare.chart(done)] + [x for c in columns.values() for x in c]


@friendly
@threads.on_models_thread
def on_speech_find(recorded, technique, filler, mode, voice, conversion="world", protect="direct"):
    """Transcribe and find the private words; the clip and plan stay in the session's state
    (memory, for the edit step), and the upload is deleted now."""
    from recover_core.speech import demo as speech_demo

    with uploads_removed(recorded):
        if not recorded:
            raise RecoverError("No audio: upload or record an utterance, or pick an example.")
        clip = speech_audio.load(recorded, max_seconds=SPEECH_MAX_SECONDS, name=Path(recorded).name, keep_native=True)
    ob = speech_demo.obfuscator(speech_demo.settings(technique, filler, mode, voice, conversion, protect), recognizer())
    plan = ob.find(clip)
    note = (f"Found {len(plan.entities)} private span(s). Edit the substitutes below if you like; the audio is "
            "being rendered." if plan.entities else "No private words found: the output equals the input.")
    return (clip, plan), speech_demo.highlighted(plan), speech_demo.table(plan), note


@friendly
@threads.on_models_thread
def on_speech_render(state, edited, technique, filler, mode, voice, conversion="world", protect="direct", request: gr.Request = None):
    from recover_core.speech import demo as speech_demo

    if not state:
        raise RecoverError("Nothing to render: press \"Obfuscate\" first (a session's audio is kept 10 minutes).")
    clip, plan = state
    ob = speech_demo.obfuscator(speech_demo.settings(technique, filler, mode, voice, conversion, protect), recognizer())
    result = ob.render(clip, speech_demo.apply_edits(plan, edited))
    original = clip.native if clip.native is not None else clip.samples
    second = result.second.text if result.second else "(no second pass: nothing was replaced)"
    players = played(request, original=(result.rate, original), obfuscated=(result.rate, result.samples))
    return (*players, speech_demo.waveform(original, result),
            second, speech_demo.checks(result), speech_demo.verdict(result), speech_demo.highlighted(plan),
            speech_demo.table(plan))  # a retry may have changed a substitute: the table shows what was rendered


@friendly
@threads.on_models_thread
def on_speech_compare(state, edited, technique, filler, mode, voice, conversion="world", protect="direct", request: gr.Request = None):
    """The same substitutes in the stock voice, then in the speaker's (a generator: the clone
    takes seconds more), each insert's similarity beside them (ui/voices.py)."""
    from recover_core.speech import demo as speech_demo
    from ui import voices

    if not state:
        raise RecoverError("Nothing to compare: press \"Obfuscate\" first (a session's audio is kept 10 minutes).")
    clip, plan = state
    if mode != "substitute" or not plan.entities:
        yield None, None, None, voices.table(None), "Voices are compared where names are replaced by substitutes."
        return
    # the stock voice and the clone, whatever the voice chosen above; the clone by the conversion chosen
    settings = speech_demo.settings(technique, filler, mode, "clone", conversion, protect)
    original = clip.native if clip.native is not None else clip.samples
    stock = voices.render(clip, plan, edited, settings, recognizer(), "auto")
    yield (*compared(request, original=(stock.rate, original), stock=(stock.rate, stock.samples)), None,
           voices.table(stock), voices.note(stock))
    clone = voices.render(clip, plan, edited, settings, recognizer(), "clone")
    yield (*compared(request, original=(stock.rate, original), stock=(stock.rate, stock.samples),
                     clone=(clone.rate, clone.samples)), voices.table(stock, clone), voices.note(stock, clone))


def played_folder(request: gr.Request | None) -> Path:
    """The players' audio of one browser session, in Gradio's cache (files.played_folder)."""
    from gradio.utils import get_upload_folder

    return files.played_folder(get_upload_folder(), getattr(request, "session_hash", None))


def played(request: gr.Request | None, **clips: tuple[int, np.ndarray]) -> list[str]:
    """The players' audio, written by us (files.write_players); its folder goes when the tab
    closes (``forget_played``). Two renders of one session run one after another in the models group."""
    return files.write_players(played_folder(request), clips)


def compared(request: gr.Request | None, **clips: tuple[int, np.ndarray]) -> list[str]:
    """The voice comparison's players, in a folder of their own beside the render's (each
    replaces only its own last files); gone with the session, like the render's."""
    return files.write_players(compared_folder(request), clips)


def compared_folder(request: gr.Request | None) -> Path:
    folder = played_folder(request)
    return folder.with_name(folder.name.replace("played-", "voices-", 1))


def forget_played(request: gr.Request):
    """The tab closed (or a client left): its players' audio goes now, not at the sweep."""
    files.forget_players(played_folder(request))
    files.forget_players(compared_folder(request))


def speech_demo_choices(name: str) -> list[str]:
    # recover_core.speech.demo imports no torch: safe while the app starts.
    from recover_core.speech import demo as speech_demo

    return list(getattr(speech_demo, name))
