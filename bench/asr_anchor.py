"""The recognizer's correctness anchor: with no LM (λ = 0), does our beam search give
faster-whisper's transcripts?

    python bench/asr_anchor.py [--utterances 400]

Two comparisons on the news speech test set (or the pocketsphinx recordings if it is not
built), same Whisper tiny.en weights, beam 4, float32, 2 threads:
1. CTranslate2's beam search (faster-whisper's decoder, `model.generate`) on the very same
   log-mel features as ours: token sequences compared exactly.
2. faster-whisper's `transcribe()` end to end: texts compared exactly. Its features differ
   from Whisper's own: it pads the *spectrogram* of a short utterance with zeros to 30 s,
   where openai/whisper and transformers pad the *audio* with silence (a log-mel of 0 is not
   silence after Whisper's normalization). Near-ties then go the other way.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import recover_core  # noqa: E402,F401


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--utterances", type=int, default=400)
    args = ap.parse_args()
    import ctranslate2
    import numpy as np
    import torch
    from faster_whisper import WhisperModel

    sys.path.insert(0, str(ROOT / "bench"))
    from asr_speed import clips

    from recover_core.asr.decode import DecodeConfig
    from recover_core.asr.recognize import Recognizer

    torch.set_num_threads(2)
    audios, source = clips(args.utterances)
    refs = references_for(len(audios)) if source.startswith("news") else None
    ours_texts, fw_texts = [], []
    rec = Recognizer()
    w = rec.whisper
    fw = WhisperModel(str(rec.bundle.offline_dir()), device="cpu", compute_type="float32", cpu_threads=2)
    same_tokens = same_text = 0
    diffs = []
    for at in range(0, len(audios), 8):
        batch = audios[at:at + 8]
        enc, frames = rec.encode([a.samples for a in batch])
        ours = rec.decode(enc, frames, DecodeConfig(beam_size=4), times=False)
        feats = w.features([a.samples for a in batch], sampling_rate=16000, return_tensors="np").input_features
        ct2 = fw.model.generate(ctranslate2.StorageView.from_array(np.ascontiguousarray(feats)),
                                [w.special.prompt] * len(batch), beam_size=4, patience=1, length_penalty=1,
                                suppress_tokens=list(w.special.suppress), suppress_blank=True, max_length=448)
        for a, (toks, _), r in zip(batch, ours, ct2):
            same_tokens += toks == r.sequences_ids[0]
            text = w.token_text(toks).strip()
            theirs = "".join(s.text for s in fw.transcribe(a.samples, beam_size=4, without_timestamps=True,
                                                          temperature=0.0, condition_on_previous_text=False,
                                                          vad_filter=False)[0]).strip()
            same_text += text == theirs
            ours_texts.append(text), fw_texts.append(theirs)
            if text != theirs and len(diffs) < 5:
                diffs.append((text, theirs))
    n = len(audios)
    print(f"audio: {source}")
    print(f"1. same features, CTranslate2's beam search: {same_tokens}/{n} identical token sequences "
          f"({100 * same_tokens / n:.1f}%)")
    print(f"2. faster-whisper transcribe(): {same_text}/{n} identical texts ({100 * same_text / n:.1f}%)")
    for ours_text, theirs in diffs:
        print(f"   ours:  {ours_text}\n   fw:    {theirs}")
    if refs:  # which padding of the features recognizes better
        from recover_core.asr import wer

        print(f"WER on these utterances: ours (Whisper's audio padding) {wer.score(refs, ours_texts).wer:.2f}%, "
              f"faster-whisper transcribe() (spectrogram padding) {wer.score(refs, fw_texts).wer:.2f}%")


def references_for(n: int) -> list[str]:
    from recover_core.experiment import speech_set

    rows = speech_set.load_manifest(speech_set.set_dir("news", 2000, 400))
    return [r.text for r in rows if r.split == "test"][:n]


if __name__ == "__main__":
    main()
