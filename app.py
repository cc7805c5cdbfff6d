"""recover: a live explorer of privacy-preserving masking and LLM-based recovery.

Runs as a Hugging Face Space, and fully offline here (`make demo`). One function per tab builds
its components and wires its events beside them; the handlers, which only convert formats, are
in ui/ (recover_core does the work, and keeps the files: recover_core/explorer/files.py). Nothing
a user types is logged or kept: it lives in memory for the length of one request.
"""
from __future__ import annotations

import os

from recover_core.runtime import env  # sets the offline environment before gradio/transformers load

# Uploads and outputs live in this process's own folder; folders of dead app processes go.
if "GRADIO_TEMP_DIR" not in os.environ:
    os.environ["GRADIO_TEMP_DIR"] = str(env.app_temp_dir())
import gradio as gr  # noqa: E402

from recover_core.explorer import sentence as explore  # noqa: E402
from recover_core.masking.vocab_thres import DEFAULT_N, MAX_N  # noqa: E402
from recover_core.results import claims, tables as results  # noqa: E402
from recover_core.runtime import threads  # noqa: E402
from recover_core.text.validation import MAX_K  # noqa: E402
from ui.audio import (AUDIO_EXAMPLES, ERROR_COLORS, LM_CHOICES, SPEECH, SPEECH_VOICES, compare, forget_played,  # noqa: E402
                      on_speech_compare, on_speech_find, on_speech_render, on_wer, recognizer, speech_demo_choices,
                      without_empty_temp)
from ui.common import CAUSAL, FAST, MODELS, QUEUE_SIZE, SHARED, friendly  # noqa: E402,F401
from ui.serve import keep_built_files, server_name, warm_up_steps, warm_up_wanted  # noqa: E402
from ui.results import ALL, RESULTS, on_results_chart, on_results_claims, on_results_metric, on_results_table  # noqa: E402
from ui.text import (CAUSAL_COLUMNS, EXAMPLES, MLM_COLUMNS, RESAMPLE, on_example, on_fill,  # noqa: E402
                     on_fill_causal, on_fill_mlm, on_load, on_mask)


def text_tab(demo: gr.Blocks) -> None:
    """Mask one sentence; the engine's answer; the papers' six columns (two events: the fast MLM
    columns in a group of their own, then the causal ones)."""
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
    examples = gr.Examples(EXAMPLES, inputs=[text, protect], label="What a reviewer types first")
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
        resample_btn = gr.Button("Resample (seed + 1)", elem_id=RESAMPLE)
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
    fill_inputs = [text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect]
    head_outputs = [obfuscated, engine_note, masked, status]

    def outputs_of(which: list[int]) -> list:
        return [col_outputs[3 * i + j] for i in which for j in range(3)]
    mask_btn.click(on_mask, [text, technique, n, markers, protect], [masked, status], api_name="mask", **MODELS)
    # /fill: all six columns in one call, for API clients (a hidden trigger: the page uses the two steps)
    gr.Button(visible=False).click(on_fill, fill_inputs, head_outputs + col_outputs, api_name="fill", **CAUSAL)
    # The button, Enter in the sentence and Resample fill alike (Resample with the next seed, which
    # /fill_mlm also returns): the MLM columns first, in their own group, then the causal ones.
    gr.on([fill_btn.click, text.submit, resample_btn.click], on_fill_mlm, fill_inputs,
          head_outputs + outputs_of(MLM_COLUMNS) + [seed], api_name="fill_mlm", **FAST).success(
        on_fill_causal, fill_inputs, [status] + outputs_of(CAUSAL_COLUMNS), api_name="fill_causal", **CAUSAL)
    # An example fills as it is clicked, at once from the warm-up's cache; the page opens on the first one.
    examples.load_input_event.then(on_example, fill_inputs, head_outputs + col_outputs, api_name="example", **CAUSAL)
    demo.load(on_load, None, [text, protect] + head_outputs + col_outputs, api_name="first_example")


def results_tab() -> None:
    """The papers' figures beside ours, the claims checked, the speech and privacy tables."""
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
    # A new metric or view: its datasets and the first one's chart. The chart and the claims are
    # events of their own, so that one that fails leaves the other drawn.
    gr.on([r_metric.change, r_view.change], on_results_metric, [r_metric, r_view], [r_dataset, r_plot],
          api_name="results_metric")
    r_dataset.change(on_results_chart, [r_metric, r_dataset, r_view], r_plot, api_name="results_chart")
    gr.on([r_dataset.change, r_view.change], on_results_claims, [r_dataset, r_view], r_claims,
          api_name="results_claims")
    gr.on([t_dataset.change, t_origin.change, t_metric.change], on_results_table, [t_dataset, t_origin, t_metric],
          r_table, api_name="results_table")


def recognition_tab() -> None:
    """One utterance recognized alone and with each LM fused, scored against its reference."""
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
    a_button.click(on_wer, [a_recorded, a_uploaded, a_typed, a_transcript, a_lms, a_engine],
                   [a_status, a_plot] + a_columns, api_name="wer", **MODELS)


def speech_tab(demo: gr.Blocks) -> None:
    """Find the names in speech, replace them (substitute, bleep, silence), check the result."""
    gr.Markdown(
        "## Obfuscate speech (preiss2023)\nFind the names in an utterance, replace each with a substitute "
        "spoken by the clearest offline voice in the speaker's pitch range (or a bleep, or silence), spliced in "
        "with matched loudness and crossfades; then a second recognition pass checks the result (a substitute "
        "it does not hear is replaced once by the next choice, kept if it does better). "
        "Voice clone: that stock voice moved toward the speaker's own (WORLD vocoder); below, both are "
        "played side by side with each insert's speaker similarity. Your audio is deleted when the request "
        "ends; the clip stays in this session's memory (10 minutes) so you can edit the substitutes and "
        "render again.")
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
                                  info="auto: the clearest voice in the speaker's pitch range; clone: "
                                       "moved toward the speaker's voice")
            s_conversion = gr.Dropdown(speech_demo_choices("TAB_CONVERSIONS"), value="world", label="Clone conversion",
                                       info="world: pitch and formants moved; knn-cmn: also the speaker's own "
                                            "sounds, nearer the voice but heard less often")
            s_protect = gr.Radio([(v, k) for k, v in explore.PROTECT.items()], value="direct", label="Protect",
                                 info="quasi: dates, ages and sums said aloud too, said back as the speaker said them")
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
    gr.Markdown("### Stock voice or the speaker's voice\nThe same substitutes, rendered again after each render.")
    with gr.Row():
        v_players = [gr.Audio(label=name, interactive=False) for name in
                     ("Original", "Stock voice (auto)", "Speaker's voice (clone)")]
    v_table = gr.Dataframe(headers=["#", "label", "substitute", "similarity stock", "similarity clone"],
                           label="Speaker similarity of each insert", interactive=False)
    v_note = gr.Markdown()
    s_state = gr.State(time_to_live=600)
    speech_inputs = [s_technique, s_filler, s_mode, s_voice, s_conversion, s_protect]
    render_outputs = [s_original, s_output, s_plot, s_second, s_checks, s_verdict, s_found, s_table]
    # Render follows a find that succeeded; a click on "Render again" renders the edited table.
    rendered = s_button.click(on_speech_find, [s_audio] + speech_inputs, [s_state, s_found, s_table, s_status],
                              api_name="speech_find", **MODELS).success(
        on_speech_render, [s_state, s_table] + speech_inputs, render_outputs, api_name="speech_render", **MODELS)
    rerendered = s_again.click(on_speech_render, [s_state, s_table] + speech_inputs, render_outputs,
                               api_name="speech_rerender", **MODELS)
    # The voices compared after either render, as an event of its own (the clone takes seconds more).
    compare_io = ([s_state, s_table] + speech_inputs, v_players + [v_table, v_note])
    rendered.success(on_speech_compare, *compare_io, api_name="speech_compare", **MODELS)
    rerendered.success(on_speech_compare, *compare_io, api_name="speech_recompare", api_visibility="undocumented",
                       **MODELS)
    demo.unload(forget_played)


def build_demo() -> gr.Blocks:
    # delete_cache: a backstop for uploads a request could not remove (a crashed worker, an
    # input Gradio rejected before our handler ran): every 10 minutes, files over 10 minutes old.
    with gr.Blocks(title="recover: masking and LLM recovery", delete_cache=(600, 600)) as demo:
        gr.Markdown(
            "# recover\nMask private words, then let language models suggest substitutes "
            "(Vats et al., ICASSP 2024; Preiss, Findings of ACL 2023). Your text is processed in memory "
            "and never stored.")
        with gr.Tab("Text"):
            text_tab(demo)
        with gr.Tab("Results"):
            results_tab()
        with gr.Tab("Audio"):
            recognition_tab()
            speech_tab(demo)
    keep_built_files(demo)
    return demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=1)


demo = build_demo()

if __name__ == "__main__":
    env.exit_on_sigterm()  # a stopped app removes its folder (the last outputs) as it goes
    threads.serve()  # the models group's work on one thread with every core; the MLM columns on one each
    if warm_up_wanted():  # before the port opens: no visitor waits for it (recover_core/explorer/warm.py)
        from recover_core.explorer import warm

        warm.run_steps(warm_up_steps())
    demo.launch(
        server_name=server_name(),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        share=False,  # privacy: never a public share link
        run_history=False,  # privacy: no run's text or audio is saved in the browser either
    )
