"""The recognizer on real recorded speech (Debian's pocketsphinx-testdata): the decoder against
CTranslate2's beam search on the same features, shallow fusion, word times, and WER."""
from __future__ import annotations

import numpy as np
import pytest

from recover_core.asr import audio, references, wer
from recover_core.asr.decode import DecodeConfig

PSPHINX_REFS = ("librivox/transcription", "cards/cards.transcription")


@pytest.fixture(scope="module")
def recognizer():
    from recover_core.asr.recognize import Recognizer

    r = Recognizer()
    r.whisper  # noqa: B018  (load once, outside the timed parts)
    return r


@pytest.fixture(scope="module")
def clips(recordings):
    return [audio.load(p) for p in recordings]


@pytest.fixture(scope="module")
def encoded(recognizer, clips):
    """The ten clips' encoder states, computed once: the decoders below all start from them
    (the encoder is most of a short clip's time)."""
    return recognizer.encode([c.samples for c in clips])


@pytest.fixture(scope="module")
def refs(recordings):
    from conftest import PSPHINX

    table = {}
    for f in PSPHINX_REFS:
        table |= references.read(PSPHINX / f)
    return [table[p.stem].replace("<s>", "").replace("</s>", "").strip() for p in recordings]


def test_with_no_lm_the_decoder_picks_what_ctranslate2_picks(recognizer, clips, encoded):
    """faster-whisper's own decoder (CTranslate2's beam search, beam 4, the same suppressed
    tokens) on the same log-mel features: every token sequence must be identical."""
    import ctranslate2
    from faster_whisper import WhisperModel

    w = recognizer.whisper
    enc, frames = encoded
    ours = recognizer.decode(enc, frames, DecodeConfig(beam_size=4))
    ct2 = WhisperModel(str(recognizer.bundle.offline_dir()), device="cpu", compute_type="float32", cpu_threads=2)
    feats = w.features([c.samples for c in clips], sampling_rate=16000, return_tensors="np").input_features
    theirs = ct2.model.generate(ctranslate2.StorageView.from_array(np.ascontiguousarray(feats)),
                                [w.special.prompt] * len(clips), beam_size=4, patience=1, length_penalty=1,
                                suppress_tokens=list(w.special.suppress), suppress_blank=True, max_length=448)
    assert [t for t, _ in ours] == [r.sequences_ids[0] for r in theirs]


def test_an_lm_trained_on_what_was_said_lowers_wer(recognizer, encoded, refs, lm_store):
    import os

    from recover_core.asr import lms

    os.environ["RECOVER_LMS"] = str(lm_store)
    try:
        lm, card = lms.load("reference"), lms.card("reference")
    finally:
        os.environ.pop("RECOVER_LMS")
    # The texts a WER needs (Recognizer.texts: no word timing pass), from one encoding.
    alone = recognizer.texts(*encoded, DecodeConfig())
    fused = recognizer.texts(*encoded, DecodeConfig(lm_weight=card.lm_weight, word_bonus=card.word_bonus), lm=lm)
    before = wer.score(refs, alone).wer
    after = wer.score(refs, fused).wer
    assert before > 3.0  # "for queen of clothes", "four of close": the recognizer alone errs here
    assert after < before / 2, (before, after)


def test_words_carry_ordered_times_inside_the_audio_and_a_confidence(recognizer, clips):
    (t,) = recognizer.transcribe(clips[:1])
    assert [w.word for w in t.words][:4] == ["And", "Mr.", "John", "Dashwood"]
    assert " ".join(w.word for w in t.words) == t.text
    starts = [w.start for w in t.words]
    assert starts == sorted(starts) and all(w.end >= w.start for w in t.words)
    assert t.words[-1].end <= clips[0].seconds + 0.1
    assert all(0.0 < w.probability <= 1.0 for w in t.words)
    # "Dashwood" is spoken between about 0.9 s and 1.7 s in this recording.
    dash = t.words[3]
    assert 0.7 < dash.start < 1.3 and 1.3 < dash.end < 2.0, dash


def test_long_audio_is_split_at_a_quiet_point_and_times_continue(recognizer, clips):
    from recover_core.asr.recognize import SAMPLE_RATE, split_long

    gap = np.zeros(SAMPLE_RATE // 2, dtype=np.float32)
    parts = [c.samples for c in clips[:5] + clips[:2]]  # about 38 s of speech with pauses: two windows
    long = audio.Audio(np.concatenate([x for p in parts for x in (p, gap)]), 16000, 1)
    spans = split_long(long.samples)
    assert len(spans) == 2 and all(e - s <= 30 * SAMPLE_RATE for s, e in spans)
    (t,) = recognizer.transcribe([long])
    assert t.words[-1].start > 30.0 and "Dashwood" in t.text
    assert [w.start for w in t.words] == sorted(w.start for w in t.words)


def test_wer_counts_errors_after_whisper_normalization():
    s = wer.score(["Ten of clubs, said Mr. Smith."], ["10 of clubs said mister Smyth"])
    assert (s.substitutions, s.deletions, s.insertions, s.ref_words) == (1, 0, 0, 6)
    assert s.wer == pytest.approx(100 / 6)
    assert ("substitute", "smith", "smyth") in s.alignment[0]
