"""Recognizer speed on 2 cores: real-time factor (seconds of compute per second of audio) with
no LM and with a cpu-preset LM fused (beam 4), against faster-whisper (CTranslate2) on the
same audio in the same run; and the Audio tab's live case, one 10 s utterance with 4 LMs.

    python bench/asr_speed.py [--utterances 40]

Audio: the news speech test set if built (`python -m recover_core speech-set`), else the
pocketsphinx recordings. Speed does not depend on an LM's weights, only on its shape, so a
cpu-preset LM is used as built (`build-lms`) or freshly initialized if there is none.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import recover_core  # noqa: E402,F401  (offline environment)


def clips(n: int):
    from recover_core.asr import audio
    from recover_core.experiment import speech_set

    try:
        folder = speech_set.set_dir("news", 2000, 400)
        rows = [r for r in speech_set.load_manifest(folder) if r.split == "test"][:n]
        return [audio.load(folder / r.path) for r in rows], f"news speech test set, first {len(rows)} utterances"
    except Exception:  # noqa: BLE001  (not built: fall back to the real recordings)
        files = sorted(Path("/usr/share/pocketsphinx/test/data").glob("*/*.wav"))
        return [audio.load(p) for p in files], f"pocketsphinx recordings ({len(files)})"


def cpu_lm():
    from recover_core.asr import lms
    from recover_core.lm import tokenizer as T
    from recover_core.lm.model import PRESETS
    from recover_core.lm.train import new_model

    if "pretrained" in lms.available():
        return lms.load("pretrained"), "pretrained (built)"
    return new_model(PRESETS["cpu"], T.load()).eval(), "cpu preset, untrained (same shape and speed)"


def timed(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--utterances", type=int, default=40)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tab-lms", default="",
                    help="the Audio tab case with these built LMs (e.g. none,pretrained,oracle,smollm2: the tab's "
                         "default four) instead of the cpu-preset LM three times")
    args = ap.parse_args()
    import torch
    from faster_whisper import WhisperModel

    from recover_core.asr import compare
    from recover_core.asr.decode import DecodeConfig
    from recover_core.asr.recognize import Recognizer

    torch.set_num_threads(args.threads)
    audios, source = clips(args.utterances)
    seconds = sum(a.seconds for a in audios)
    rec = Recognizer()
    rec.whisper  # noqa: B018
    lm, lm_name = cpu_lm()
    fw = WhisperModel(str(rec.bundle.offline_dir()), device="cpu", compute_type="float32", cpu_threads=args.threads)

    def run_fw():
        for a in audios:
            list(fw.transcribe(a.samples, beam_size=4, without_timestamps=True, temperature=0.0,
                               condition_on_previous_text=False, vad_filter=False)[0])

    rec.transcribe(audios[:2])  # warm-up
    t_fw = timed(run_fw)
    t_none = timed(lambda: rec.transcribe(audios, DecodeConfig(beam_size=4)))
    t_fused = timed(lambda: rec.transcribe(audios, DecodeConfig(beam_size=4, lm_weight=0.3, word_bonus=0.5), lm=lm))
    print(f"audio: {source}, {seconds:.1f} s; threads {args.threads}; fused LM: {lm_name}")
    print(f"faster-whisper (CTranslate2, float32, beam 4): {t_fw:7.1f} s  RTF {t_fw / seconds:.3f}")
    print(f"ours, no LM (beam 4, batch 8):                 {t_none:7.1f} s  RTF {t_none / seconds:.3f}  "
          f"= {t_none / t_fw:.2f}x faster-whisper")
    print(f"ours, fused cpu-preset LM (λ 0.3, β 0.5):      {t_fused:7.1f} s  RTF {t_fused / seconds:.3f}  "
          f"= {t_fused / t_none:.2f}x our no-LM time (goal: RTF <= 0.5, <= 2x)")

    # The Audio tab: one ~10 s utterance, 4 LMs (none + 3 fused), end to end from the file's samples.
    import numpy as np

    from recover_core.asr import audio as A
    from recover_core.asr import lms

    ten = np.concatenate([a.samples for a in audios])[: 10 * 16000]
    clip = A.Audio(ten, 16000, 1)
    if args.tab_lms:  # the LMs as built, each with its own λ, β (a rescoring LM searches beam 8)
        names = [n.strip() for n in args.tab_lms.split(",") if n.strip()]
        compare.check_lms(names)
        for n in names:
            lms.load(n)  # loaded once, as the app keeps them, before the timed runs
    else:
        names = ["none", "x1", "x2", "x3"]
        lms.card = lambda n, _card=lms.card: lms.LMCard(n, "bench", {}, 0.3, 0.5) if n != "none" else _card(n)  # noqa: E731
        lms.load = lambda n: None if n == "none" else lm  # noqa: E731
    runs = [timed(lambda: list(compare.compare(rec, clip, "reference words", names))) for _ in range(5)]
    print(f"Audio tab: {clip.seconds:.0f} s utterance, LMs {', '.join(names)}: p50 {statistics.median(runs):.1f} s "
          f"(goal <= 10 s); runs {', '.join(f'{r:.1f}' for r in runs)}")


if __name__ == "__main__":
    main()
