"""recover: a live explorer of privacy-preserving masking and LLM-based recovery.

Runs as a Hugging Face Space, and fully offline here (`make demo`). Handlers only
convert formats; recover_core does the work. Nothing a user types is logged or
kept: it lives in memory for the length of one request.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import traceback
from pathlib import Path

from recover_core.runtime import env  # sets the offline environment before gradio/transformers load

# Uploads and outputs live in this process's own folder; folders of dead app processes go.
if "GRADIO_TEMP_DIR" not in os.environ:
    os.environ["GRADIO_TEMP_DIR"] = str(env.app_temp_dir())
import gradio as gr  # noqa: E402
import numpy as np

from recover_core.models import bundles
from recover_core.results import claims
from recover_core.explorer import sentence as explore
from recover_core.results import tables as results
from recover_core.runtime import threads
from recover_core.asr import audio as speech_audio
from recover_core.asr import compare, lms
from recover_core.errors import RecoverError
from recover_core.masking.vocab_thres import DEFAULT_N, MAX_N
from recover_core.text.validation import MAX_K

# What a privacy reviewer types first: a card number, an e-mail, a phone, a date of an event,
# an age, a sum, the same name twice; each with the protection profile it shows best.
EXAMPLES = [
    ["Call Tom Baker at 206-555-0147 or tom.baker@example.com; card 4111 1111 1111 1111.", "direct"],
    ["On 14 March 2021 Mrs Grace Okafor, aged 47, flew to Lagos, where Grace paid EUR 5,000 for the ticket.",
     "quasi"],
    ["Tom Baker, a 52-year-old teacher from Leeds, wrote to Anna on 3 May 2019; Tom signed as Dr. Baker.", "quasi"],
    ["Tom lives in Chicago and works for Microsoft with Maria Gonzalez since 1999.", "direct"],
]
ROOT = Path(__file__).resolve().parent
# The spaCy pipeline and the fillers are shared by every request: the events that use
# them run one at a time, in one group, and at most QUEUE_SIZE requests wait.
MODELS = {"concurrency_id": "models", "concurrency_limit": 1}
# The MLM columns: a small model and a fast group of their own (spaCy's blocks are locked
# process-wide in bundles.spacy_zone, so the two groups never share it at once).
FAST = {"concurrency_id": "mlm", "concurrency_limit": 1}
# The causal columns of up to SHARED users fill side by side: their forward passes go to the
# models thread, which runs every pending one of a model in one shared pass
# (filling/scheduler.py): 4 users cost about one batch, not four runs in a row, same words.
SHARED = 8
CAUSAL = {"concurrency_id": "causal", "concurrency_limit": SHARED}
CAUSAL_REQUESTS = threads.InFlight()
QUEUE_SIZE = 32


def where(e: BaseException) -> str:
    """Where an exception was raised, as file:line, without its message (which may quote the
    user's text): the last frame in this project's code, then the frame that raised, if another."""
    def ours(path: str) -> bool:
        return Path(path).resolve().is_relative_to(ROOT) and "site-packages" not in path

    def short(path: str) -> str:
        return str(Path(path).resolve().relative_to(ROOT)) if ours(path) else path.split("site-packages/")[-1]

    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if ours(f.filename)]
    picked = mine[-1:] + ([frames[-1]] if frames and (not mine or frames[-1] is not mine[-1]) else [])
    return ", raised at ".join(f"{short(f.filename)}:{f.lineno}" for f in picked) or "an unknown place"


def friendly(fn):
    """Every handler: a RecoverError becomes its message; anything else a short notice, never a
    traceback. Afterwards the shared models forget what the request showed them."""
    @contextlib.contextmanager
    def guard():
        try:
            yield
        except RecoverError as e:
            raise gr.Error(str(e), print_exception=False) from None
        except gr.Error:
            raise
        except Exception as e:  # noqa: BLE001
            # The kind of failure and where, never its message: the arguments hold the user's text.
            print(f"handler {fn.__name__} failed: {type(e).__name__} at {where(e)}", file=sys.stderr)
            raise gr.Error(f"Something went wrong inside the model ({type(e).__name__}). "
                           "Nothing you typed was kept.", print_exception=False) from None
        finally:
            bundles.forget_request_state()

    if inspect.isgeneratorfunction(fn):  # Gradio streams generators: keep the wrapper one too
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            with guard():
                yield from fn(*args, **kwargs)
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with guard():
            return fn(*args, **kwargs)
    return wrapper


@friendly
@threads.on_models_thread
def on_mask(text, technique, n, markers, protect="direct"):
    m = explore.mask(text, technique, n, markers, protect=protect)
    note = (f"Masked {len(m.spans)} of {m.n_words} words." if m.spans
            else "Nothing to mask: every word is kept by this technique. Try another technique.")
    note += explore.ner_path(text, technique)
    return explore.highlighted(m.masked, m.markers), note


def models_of(mlm_model: str, causal_model: str, instruct_model: str) -> dict:
    """The three model dropdowns, by the filler kind each serves."""
    return {"mlm": mlm_model, "infill": causal_model, "instruct": instruct_model}


def flat(columns: dict, which: list[int]) -> list:
    return [x for i in which for x in columns[i]]


def head_of(masked, answer, status) -> list:
    """The outputs above the columns: the engine's answer (its text, its note), the masked sentence, the status."""
    return [*answer, masked, status]


# The button fills the fast MLM columns in one event and the causal ones in the next, each
# in its own concurrency group: a user's MLM columns never wait behind others' causal work.
MLM_COLUMNS = [i for i in explore.FILL_ORDER if explore.COLUMNS[i].kind == "mlm"]
CAUSAL_COLUMNS = [i for i in explore.FILL_ORDER if explore.COLUMNS[i].kind != "mlm"]
ALL_COLUMNS = list(range(len(explore.COLUMNS)))


@friendly
def on_fill(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect="direct"):
    """All six columns in one call (the API's /fill), streamed: the masked sentence at once,
    the engine's answer, then each column as it is filled, the MLM ones first. As the causal
    step: a column runs on the models thread while its request is alone, else only its passes."""
    models = models_of(mlm_model, causal_model, instruct_model)
    with CAUSAL_REQUESTS:
        for head, answer, status, columns in explore.fill_steps(text, technique, n, markers, k, seed, models,
                                                                explore.FILL_ORDER, protect, answer=True,
                                                                through=CAUSAL_REQUESTS.run):
            yield head_of(head, answer, status) + flat(columns, ALL_COLUMNS)


@friendly
def on_fill_mlm(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect="direct"):
    """The button's first step: the masked sentence, the engine's answer and the MLM columns
    (the causal step marks its own columns as waiting when it starts: fewer outputs here)."""
    models = models_of(mlm_model, causal_model, instruct_model)
    for head, answer, status, columns in explore.fill_steps(text, technique, n, markers, k, seed, models,
                                                            MLM_COLUMNS, protect, answer=True):
        yield head_of(head, answer, status) + flat(columns, MLM_COLUMNS)


@friendly
def on_fill_causal(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect="direct"):
    """The button's second step: the causal columns (here, on a worker of its own; each forward
    pass on the models thread, shared with the other users' pending rows)."""
    models = models_of(mlm_model, causal_model, instruct_model)
    with CAUSAL_REQUESTS:  # alone, a column runs whole on the models thread; else its passes go there
        for _, _, status, columns in explore.fill_steps(text, technique, n, markers, k, seed, models, CAUSAL_COLUMNS,
                                                        protect, through=CAUSAL_REQUESTS.run):
            yield [status] + flat(columns, CAUSAL_COLUMNS)


@friendly
def on_resample(seed):
    return explore.seed_of(seed) + 1


@functools.lru_cache(maxsize=1)
def recognizer():
    """Whisper (and torch) load on the first Audio request, once; not when the app starts."""
    from recover_core.asr.recognize import Recognizer

    return Recognizer()


LM_CHOICES = lms.available()  # read once at start, like the results
SPEECH = ROOT / "assets" / "speech"
AUDIO_EXAMPLES = [[str(SPEECH / f"austen-{i}.flac"), None, "", str(SPEECH / "austen.dot")] for i in ("0880", "0930", "0920")]
ERROR_COLORS = {"S": "orange", "D": "red", "I": "violet"}


SPEECH_EXAMPLES = {p.name: p.read_bytes() for p in SPEECH.iterdir() if p.is_file()}


def is_example(path: Path) -> bool:
    """Gradio serves an example from its own cached copy, used again at the next click: keep it.
    The copy has the example's name and bytes; a user's file with the same bytes under its own
    name (which may say something about the user) is an upload, and goes."""
    try:
        return path.resolve().is_relative_to(ROOT) or SPEECH_EXAMPLES.get(path.name) == path.read_bytes()
    except OSError:
        return False


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


@contextlib.contextmanager
def uploads_removed(*paths):
    """Files a user uploaded live only for their request: removed when it ends, however it ends."""
    try:
        yield
    finally:
        for p in paths:
            if p and not is_example(Path(p)):
                Path(p).unlink(missing_ok=True)


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


SPEECH_MAX_SECONDS = 30.0
SPEECH_VOICES = ["auto", "piper-joe", "espeak-ng-us", "espeak-ng-us-f", "flite-slt", "flite-rms"]


@friendly
@threads.on_models_thread
def on_speech_find(recorded, technique, filler, mode, voice):
    """Transcribe and find the private words; the clip and plan stay in the session's state
    (memory, for the edit step), and the upload is deleted now."""
    from recover_core.speech import demo as speech_demo

    with uploads_removed(recorded):
        if not recorded:
            raise RecoverError("No audio: upload or record an utterance, or pick an example.")
        clip = speech_audio.load(recorded, max_seconds=SPEECH_MAX_SECONDS, name=Path(recorded).name, keep_native=True)
    ob = speech_demo.obfuscator(speech_demo.settings(technique, filler, mode, voice), recognizer())
    plan = ob.find(clip)
    note = (f"Found {len(plan.entities)} private span(s). Edit the substitutes below if you like; the audio is "
            "being rendered." if plan.entities else "No private words found: the output equals the input.")
    return (clip, plan), speech_demo.highlighted(plan), speech_demo.table(plan), note


@friendly
@threads.on_models_thread
def on_speech_render(state, edited, technique, filler, mode, voice, request: gr.Request = None):
    from recover_core.speech import demo as speech_demo

    if not state:
        raise RecoverError("Nothing to render: press \"Obfuscate\" first (a session's audio is kept 10 minutes).")
    clip, plan = state
    ob = speech_demo.obfuscator(speech_demo.settings(technique, filler, mode, voice), recognizer())
    result = ob.render(clip, speech_demo.apply_edits(plan, edited))
    original = clip.native if clip.native is not None else clip.samples
    second = result.second.text if result.second else "(no second pass: nothing was replaced)"
    players = played(request, original=(result.rate, original), obfuscated=(result.rate, result.samples))
    return (*players, speech_demo.waveform(original, result),
            second, speech_demo.checks(result), speech_demo.verdict(result), speech_demo.highlighted(plan),
            speech_demo.table(plan))  # a retry may have changed a substitute: the table shows what was rendered


def played_folder(request: gr.Request | None) -> Path:
    """The players' audio of one browser session, in Gradio's cache (so it is served as it is,
    not copied). Named by a hash: the folder's name is in the files' URLs."""
    import hashlib

    from gradio.utils import get_upload_folder

    session = getattr(request, "session_hash", None) or "no-session"
    return Path(get_upload_folder()) / f"played-{hashlib.sha256(session.encode()).hexdigest()[:20]}"


def played(request: gr.Request | None, **clips: tuple[int, np.ndarray]) -> list[str]:
    """Write the players' audio ourselves, not as Gradio's numpy outputs: those sat in its cache
    until the 10-minute sweep, and the "Original" player holds the names. A session keeps only
    its newest render (two renders of one session run one after another in the models group),
    and its folder goes when the tab closes (``forget_played``)."""
    import shutil

    folder = played_folder(request)
    shutil.rmtree(folder, ignore_errors=True)  # the last render's: its players are being replaced
    folder.mkdir(mode=0o700, parents=True)
    paths = []
    for name, (rate, x) in clips.items():
        path = folder / f"{name}-{os.urandom(6).hex()}.wav"  # a new URL per render: no stale browser cache
        speech_audio.write(path, x, rate, mode=0o600)
        paths.append(str(path))
    return paths


def forget_played(request: gr.Request):
    """The tab closed (or a client left): its players' audio goes now, not at the sweep."""
    import shutil

    shutil.rmtree(played_folder(request), ignore_errors=True)


RESULTS = results.load()  # read once at start: precomputed/ does not change while the app runs
ALL = "(all)"


@friendly
def on_results_metric(metric, view=results.HEADLINE):
    choices = results.datasets(results.view(RESULTS, view), metric)
    return gr.Dropdown(choices=choices, value=choices[0] if choices else None)


@friendly
def on_results_chart(metric, dataset, view=results.HEADLINE):
    return results.chart(results.view(RESULTS, view), metric, dataset)


@friendly
def on_results_claims(dataset, view=results.HEADLINE):
    # The headline grid is on news alone, so every claim is checked there (plain claims check
    # on news only WSJ's WER findings, as the paper draws its perplexity claims from Fisher/Reddit).
    return claims.claims_table(results.view(RESULTS, view), dataset, every=view == results.HEADLINE)


@friendly
def on_results_table(dataset, origin, metric):
    df = RESULTS
    for column, value in (("dataset", dataset), ("origin", origin), ("metric", metric)):
        if value and value != ALL:
            df = df[df[column] == value]
    return df.drop(columns=["origin"])


def speech_demo_choices(name: str) -> list[str]:
    # recover_core.speech.demo imports no torch: safe while the app starts.
    from recover_core.speech import demo as speech_demo

    return list(getattr(speech_demo, name))


def build_demo() -> gr.Blocks:
    # delete_cache: a backstop for uploads a request could not remove (a crashed worker, an
    # input Gradio rejected before our handler ran): every 10 minutes, files over 10 minutes old.
    with gr.Blocks(title="recover: masking and LLM recovery", delete_cache=(600, 600)) as demo:
        gr.Markdown(
            "# recover\nMask private words, then let language models suggest substitutes "
            "(Vats et al., ICASSP 2024; Preiss, Findings of ACL 2023). Your text is processed in memory "
            "and never stored.")
        with gr.Tab("Text"):
            with gr.Row():
                text = gr.Textbox(label="Sentence", lines=2, max_length=2000, scale=3,
                                  placeholder="Type a sentence with names, places or numbers")
                with gr.Column(scale=2):
                    technique = gr.Dropdown(explore.TECHNIQUES, value="entityTagger", label="Masking technique")
                    n = gr.Slider(1000, MAX_N, value=DEFAULT_N, step=1000, label="N for vocabThres")
                    markers = gr.Radio(["mask", "class"], value="mask", label="Markers",
                                       info="[MASK], or class markers such as [PERSON]")
                    protect = gr.Radio([(v, k) for k, v in explore.PROTECT.items()], value="direct",
                                       label="Protect", info="what is private beside the technique's words")
            gr.Examples(EXAMPLES, inputs=[text, protect], label="What a reviewer types first")
            with gr.Row():
                k = gr.Slider(1, MAX_K, value=10, step=1, label="K (Top-K samples among the best K)")
                seed = gr.Number(value=0, precision=0, label="Seed")
                mlm_model = gr.Dropdown(explore.model_choices("mlm"), value=explore.default_model("mlm"),
                                        label="Masked LM")
                causal_model = gr.Dropdown(explore.model_choices("infill"), value=explore.default_model("infill"),
                                           label="Causal LM (infill)")
                instruct_model = gr.Dropdown(explore.model_choices("instruct"), value=explore.default_model("instruct"),
                                             label="LoRA-tuned LLM")
            with gr.Row():
                mask_btn = gr.Button("Mask only")
                fill_btn = gr.Button("Mask and fill", variant="primary")
                resample_btn = gr.Button("Resample (seed + 1)")
            # The engine's own answer first (what `recover obfuscate` and Obfuscator.obfuscate give),
            # then the masks and how each of the papers' six fillers would fill them.
            engine_note = gr.Markdown("**Obfuscated** (the engine's answer)")
            obfuscated = gr.HighlightedText(label="Obfuscated", show_legend=True, combine_adjacent=False)
            gr.Markdown("The papers' fillers on the same masks (research: the engine above is what the product "
                        "gives).")
            masked = gr.HighlightedText(label="Masked", show_legend=True)
            status = gr.Markdown()
            col_outputs = []
            per_row = len(explore.FILLER_TITLES)  # a row of Top-1 columns, then a row of Top-K
            for r in range(0, len(explore.COLUMNS), per_row):
                with gr.Row(equal_height=False):
                    for col in explore.COLUMNS[r : r + per_row]:
                        with gr.Column(min_width=260):
                            header = gr.Markdown(f"**{col.title}**")
                            filled = gr.HighlightedText(label="Filled", show_legend=False)
                            table = gr.Dataframe(headers=explore.CANDIDATE_COLUMNS, label="Candidates", wrap=True)
                            col_outputs += [filled, header, table]
        with gr.Tab("Results"):
            gr.Markdown("Downstream judgement (vats2024 §4): perplexity of an LM adapted on each obfuscated "
                        "corpus, and WER of ASR fused with it. The papers' figures (left) beside ours on an open "
                        "stand-in corpus (right); every number is read from `precomputed/`."
                        + ("\n\nNot shown: " + "; ".join(results.SKIPPED) if results.SKIPPED else ""))
            with gr.Row():
                r_view = gr.Radio(list(results.VIEWS), value=results.HEADLINE, label="Our runs",
                                  info="the headline: vats2024's grid with a real pretrained LM (SmolLM2-135M, "
                                       "LoRA rank 8; seed 0, and seeds 1-2 where imported); the 16M LM grid: every "
                                       "dataset, 3 seeds")
                r_metric = gr.Radio(list(results.METRICS), value="Perplexity", label="Metric")
                first = results.datasets(results.view(RESULTS, results.HEADLINE), "Perplexity")
                r_dataset = gr.Dropdown(first, value=first[0] if first else None, label="Dataset")
            r_plot = gr.Plot(value=on_results_chart("Perplexity", first[0]) if first else None)
            # The rule a comparison is judged by, and the rows no claim may rest on, above the table.
            gr.Markdown(f"{claims.NOISE_RULE} The `seeds (n)` column gives the runs behind each compared cell.\n\n"
                        f"{claims.EXCLUDED}")
            r_claims = gr.Dataframe(value=on_results_claims(first[0]) if first else None, wrap=True,
                                    label="vats2024 §4.3's claims, checked on the paper's table and on ours")
            with gr.Row():
                t_dataset = gr.Dropdown([ALL] + sorted(RESULTS["dataset"].dropna().unique()), value=ALL, label="Dataset")
                t_origin = gr.Dropdown([ALL, "paper", "ours"], value=ALL, label="Origin")
                t_metric = gr.Dropdown([ALL] + sorted(RESULTS["metric"].dropna().unique()), value=ALL, label="Metric")
            gr.Markdown("### Speech obfuscation: preiss2023 Table 2 beside ours\n"
                        "Ours: `python bench/speech_obfuscation.py` (synthetic speech with census names; "
                        "details in docs/speech_obfuscation.md).")
            gr.Dataframe(value=results.speech_table(RESULTS), label="Named entities in speech", wrap=True)
            gr.Markdown("### Privacy audit: our own output attacked\n"
                        "Inversion: a dictionary of census names run through the tool and read backwards "
                        "(`python -m recover_core audit`). Canaries: secret sentences inserted 1, 4 and 16 times "
                        "into the news train split, then masked, filled and learned by SmolLM2 + LoRA; exposure "
                        "in bits, Carlini et al. 2019 (`audit --canaries-job`, docs/privacy.md).")
            gr.Plot(value=results.audit_chart(RESULTS))
            gr.Dataframe(value=results.audit_table(RESULTS), label="Privacy audit", wrap=True)
            r_table = gr.Dataframe(value=RESULTS.drop(columns=["origin"]), label="Tidy results", wrap=True)
            gr.Dataframe(value=results.provenance(), wrap=True,
                         label="Where each table came from: the commit that produced it, and whether one "
                               "obfuscation engine (the one the Text tab and the commands use) filled its corpora")
        with gr.Tab("Audio"):
            gr.Markdown(
                "Recognize one utterance with Whisper tiny.en, alone and with each LM fused into its beam "
                "search (vats2024 §4.2.2; the smollm2 LMs, a real pretrained LM with its own tokenizer, rescore "
                "the 8-best list instead), and score each transcript against the reference. Both sides are "
                "normalized with Whisper's English normalizer (lower case, no punctuation, numbers as digits) "
                "before WER and CER (jiwer). Up to 30 s; longer audio: `python -m recover_core transcribe`. "
                "Uploaded audio is deleted when the request ends and never logged.")
            with gr.Row():
                with gr.Column():
                    a_recorded = gr.Audio(sources=["upload", "microphone"], type="filepath", format=None,
                                          label="Utterance (WAV, FLAC, OGG, MP3)")
                    a_uploaded = without_empty_temp(gr.File(
                        label="…or a WSJ/SPHERE file (.wv1, .wv2, .sph)", type="filepath",
                        file_types=[".wv1", ".wv2", ".sph", ".nist", ".wav", ".flac"]))
                with gr.Column():
                    a_typed = gr.Textbox(label="Reference (what was said)", lines=2, max_length=2000)
                    a_transcript = without_empty_temp(gr.File(
                        label="…or its transcript (.dot, .lsn, .ptx, .txt): the utterance id is matched from the "
                              "audio file's name", type="filepath"))
                    a_lms = gr.CheckboxGroup(LM_CHOICES, value=LM_CHOICES[:2], label="LMs to compare",
                                             info="none = the recognizer alone; smollm2… = SmolLM2-135M as it ships "
                                                  "and adapted with LoRA on clean (oracle), masked (baseline1) or "
                                                  "masked-and-filled news (assets/lms, each with its model card); "
                                                  "build more with `python -m recover_core build-lms`")
                    a_engine = gr.Radio(list(compare.ENGINES), value=compare.ENGINES[0], label="Recognizer",
                                        info="emformer-rnnt: the paper's Emformer RNN-T (torchaudio), with each LM "
                                             "rescoring its 10-best; in a Space only, as its weights download")
                    a_button = gr.Button("Recognize and score (WER)", variant="primary")
            gr.Examples(AUDIO_EXAMPLES, inputs=[a_recorded, a_uploaded, a_typed, a_transcript],
                        label="LibriVox recordings (pocketsphinx test data)")
            a_status = gr.Markdown()
            a_plot = gr.Plot(label="WER per LM")
            a_columns = []
            with gr.Row(equal_height=False):
                for name in LM_CHOICES:
                    with gr.Column(min_width=220):
                        a_columns += [gr.Markdown(f"**{name}**"),
                                      gr.HighlightedText(label="Errors against the reference", color_map=ERROR_COLORS,
                                                         show_legend=True, combine_adjacent=False)]
            gr.Markdown(
                "## Obfuscate speech (preiss2023)\nFind the names in an utterance, replace each with a substitute "
                "spoken by the clearest offline voice in the speaker's pitch range (or a bleep, or silence), spliced in "
                "with matched loudness and crossfades; then a second recognition pass checks the result (a substitute "
                "it does not hear is replaced once by the next choice, kept if it does better). "
                "Voice cloning needs hub weights (in a Space: Coqui XTTS-v2 or YourTTS), so offline the voice is "
                "not the speaker's. Your audio is deleted when the request ends; the clip stays in this session's "
                "memory (10 minutes) so you can edit the substitutes and render again.")
            with gr.Row():
                with gr.Column():
                    s_audio = gr.Audio(sources=["upload", "microphone"], type="filepath", format=None,
                                       label="Speech with names (up to 30 s)")
                    gr.Examples([[str(SPEECH / "dashwood-0870.flac")]] if (SPEECH / "dashwood-0870.flac").exists()
                                else [], inputs=[s_audio], label="LibriVox: \"and Mister John Dashwood…\"")
                with gr.Column():
                    s_technique = gr.Dropdown(speech_demo_choices("TECHNIQUES"), value="entityTagger",
                                              label="Technique", info="entityTagger finds PERSON names")
                    s_filler = gr.Dropdown(speech_demo_choices("FILLERS"), value="mlm", label="Filler (substitutes)")
                    s_mode = gr.Radio(["substitute", "bleep", "silence"], value="substitute", label="Mode")
                    s_voice = gr.Dropdown(SPEECH_VOICES, value="auto", label="Voice",
                                          info="auto: the clearest voice in the speaker's pitch range")
                    s_button = gr.Button("Obfuscate", variant="primary")
            s_status = gr.Markdown()
            s_found = gr.HighlightedText(label="Transcript: private spans and their substitutes", combine_adjacent=False)
            s_table = gr.Dataframe(headers=["#", "label", "original", "substitute", "start (s)", "end (s)",
                                            "recognizer p"], label="Substitutes (edit the substitute column)",
                                   interactive=True, wrap=True)
            s_again = gr.Button("Render again with my edits")
            with gr.Row():
                s_original = gr.Audio(label="Original", interactive=False)
                s_output = gr.Audio(label="Obfuscated", interactive=False)
            s_plot = gr.Plot(label="Waveforms: replaced spans marked")
            s_verdict = gr.Markdown()
            s_second = gr.Textbox(label="Second pass (what the recognizer hears in the output)", interactive=False)
            s_checks = gr.Dataframe(label="Per-span checks", interactive=False)
            s_state = gr.State(time_to_live=600)
        speech_inputs = [s_technique, s_filler, s_mode, s_voice]
        render_outputs = [s_original, s_output, s_plot, s_second, s_checks, s_verdict, s_found, s_table]
        s_button.click(on_speech_find, [s_audio] + speech_inputs, [s_state, s_found, s_table, s_status],
                       api_name="speech_find", **MODELS).then(
            on_speech_render, [s_state, s_table] + speech_inputs, render_outputs, api_name="speech_render", **MODELS)
        s_again.click(on_speech_render, [s_state, s_table] + speech_inputs, render_outputs,
                      api_name="speech_rerender", **MODELS)
        demo.unload(forget_played)
        a_button.click(on_wer, [a_recorded, a_uploaded, a_typed, a_transcript, a_lms, a_engine],
                       [a_status, a_plot] + a_columns,
                       api_name="wer", **MODELS)
        for trigger, suffix in ((r_metric.change, "metric"), (r_view.change, "view")):
            trigger(on_results_metric, [r_metric, r_view], r_dataset, api_name=f"results_{suffix}").then(
                on_results_chart, [r_metric, r_dataset, r_view], r_plot, api_name=f"results_chart_after_{suffix}").then(
                on_results_claims, [r_dataset, r_view], r_claims, api_name=f"results_claims_after_{suffix}")
        r_dataset.change(on_results_chart, [r_metric, r_dataset, r_view], r_plot, api_name="results_chart")
        r_dataset.change(on_results_claims, [r_dataset, r_view], r_claims, api_name="results_claims")
        for f in (t_dataset, t_origin, t_metric):
            f.change(on_results_table, [t_dataset, t_origin, t_metric], r_table, api_name=f"results_table_{f.label.lower()}")
        fill_inputs = [text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect]
        head_outputs = [obfuscated, engine_note, masked, status]
        fill_outputs = head_outputs + col_outputs

        def outputs_of(which: list[int]) -> list:
            return [col_outputs[3 * i + j] for i in which for j in range(3)]
        mlm_outputs = head_outputs + outputs_of(MLM_COLUMNS)
        causal_outputs = [status] + outputs_of(CAUSAL_COLUMNS)
        mask_btn.click(on_mask, [text, technique, n, markers, protect], [masked, status], api_name="mask", **MODELS)
        # /fill: all six columns in one call, for API clients (a hidden trigger: the page
        # itself uses the two-step events below)
        api_fill = gr.Button(visible=False)
        api_fill.click(on_fill, fill_inputs, fill_outputs, api_name="fill", **CAUSAL)
        for trigger, suffix in ((fill_btn.click, ""), (text.submit, "_on_submit")):
            trigger(on_fill_mlm, fill_inputs, mlm_outputs, api_name=f"fill_mlm{suffix}", **FAST).success(
                on_fill_causal, fill_inputs, causal_outputs, api_name=f"fill_causal{suffix}", **CAUSAL)
        resample_btn.click(on_resample, seed, seed, api_name="resample").then(
            on_fill_mlm, fill_inputs, mlm_outputs, api_name="fill_mlm_after_resample", **FAST).success(
            on_fill_causal, fill_inputs, causal_outputs, api_name="fill_causal_after_resample", **CAUSAL)
    keep_built_files(demo)
    return demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=1)


def keep_built_files(demo: gr.Blocks) -> None:
    """Gradio copies the examples into its cache while the app is built, without marking them
    to keep, so the delete_cache sweep removed them once they were older than its age, and an
    example clicked after that failed. Whatever is in the cache at build time is the app's own
    (no user has sent anything yet): keep it."""
    for block in demo.blocks.values():
        block.keep_in_cache.update(getattr(block, "temp_files", ()))


def warm_up_steps() -> list:
    """What a Space does once at start, in the background (recover_core/explorer/warm.py):
    `prepare` (merges, the name-shape model), the first two examples through every column,
    then the Audio tab's recognizer, voices and normalizer."""
    from recover_core.asr import wer
    from recover_core.explorer import warm
    from recover_core.speech import voices

    return [("models (prepare)", warm.prepare_models), *warm.text_steps([tuple(e) for e in EXAMPLES[:2]]),
            ("recognizer", lambda: recognizer().whisper), ("WER normalizer", wer.normalizer), ("voices", voices.available)]


def warm_up_wanted() -> bool:
    """In a Space (no visitor should pay for the first request's work), or when asked."""
    return os.environ.get("RECOVER_WARM_UP", "1" if env.in_space() else "0") == "1"


def server_name() -> str:
    """A Space's proxy reaches the app on the container's own interface, not its loopback."""
    return os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0" if env.in_space() else "127.0.0.1")


demo = build_demo()

if __name__ == "__main__":
    env.exit_on_sigterm()  # a stopped app removes its folder (the last outputs) as it goes
    threads.serve()  # the models group's work on one thread with every core; the MLM columns on one each
    if warm_up_wanted():
        from recover_core.explorer import warm

        warm.start(warm_up_steps())
    demo.launch(
        server_name=server_name(),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        share=False,  # privacy: never a public share link
        run_history=False,  # privacy: no run's text or audio is saved in the browser either
    )
