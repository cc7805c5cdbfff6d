"""Audio and transcripts as users hand them over: WSJ's SPHERE and .dot files (written here),
other rates and channel counts, and every kind of bad input, each with a clear message."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from recover_core.asr import audio, references, wer
from recover_core.errors import RecoverError


@pytest.fixture(scope="module")
def speech(recordings) -> np.ndarray:
    return audio.load(recordings[0]).samples  # 16 kHz mono, real speech


def test_sphere_written_by_soundfile_reads_back(tmp_path, speech):
    path = tmp_path / "4k0c0301.wv1"
    sf.write(path, speech, 16000, format="NIST", subtype="PCM_16")
    assert path.read_bytes()[:7] == b"NIST_1A"
    got = audio.load(path)
    assert got.source_rate == 16000 and abs(len(got.samples) - len(speech)) == 0
    assert np.abs(got.samples - speech).max() < 1e-3


def _sphere_header(coding: str, n: int) -> bytes:
    fields = (f"NIST_1A\n   1024\nsample_count -i {n}\nsample_rate -i 16000\nchannel_count -i 1\n"
              f"sample_n_bytes -i 2\nsample_byte_format -s2 01\nsample_coding -s{len(coding)} {coding}\nend_head\n")
    return fields.encode().ljust(1024, b" ")


@pytest.mark.parametrize("coding", ["pcm,embedded-shorten-v1.1", "pcm,embedded-shorten-v1.09"])
def test_wsj_shorten_tokens_reach_the_decoder_and_a_bad_stream_gets_a_message(tmp_path, coding):
    """WSJ's v1.x tokens are accepted; the stream's own version byte decides (here a stream of
    the wrong version): a clear message, not libsndfile's."""
    path = tmp_path / "4k0c0302.wv1"
    path.write_bytes(_sphere_header(coding, 16000) + b"ajkg\x01" + bytes(64))
    with pytest.raises(RecoverError, match="SPHERE audio could not be decoded.*shorten version 1"):
        audio.load(path)


def test_an_unknown_sphere_coding_is_named(tmp_path):
    path = tmp_path / "x.sph"
    path.write_bytes(_sphere_header("pcm,wavpack", 16000) + bytes(100))
    with pytest.raises(RecoverError, match="coding 'pcm,wavpack' is not supported"):
        audio.load(path)


@pytest.mark.parametrize("rate", [8000, 44100, 48000])
def test_other_rates_and_stereo_become_16k_mono(tmp_path, speech, rate):
    import torch
    import torchaudio.functional as AF

    x = AF.resample(torch.from_numpy(speech), 16000, rate).numpy()
    path = tmp_path / f"s{rate}.flac"
    sf.write(path, np.stack([x, 0.5 * x], axis=1), rate)
    got = audio.load(path)
    assert (got.source_rate, got.source_channels) == (rate, 2)
    assert abs(len(got.samples) - len(speech)) <= 16000 * 0.01


def test_ogg_and_mp3_read(tmp_path, speech):
    for fmt, sub in (("OGG", "VORBIS"), ("MP3", "MPEG_LAYER_III")):
        path = tmp_path / f"a.{fmt.lower()}"
        sf.write(path, speech, 16000, format=fmt, subtype=sub)
        assert abs(audio.load(path).seconds - len(speech) / 16000) < 0.2


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(b""), "empty"),
    (lambda p: sf.write(p, np.zeros((0,), np.float32), 16000), "no audio samples"),
    (lambda p: sf.write(p, np.zeros(16000, np.float32), 16000), "silent"),
    (lambda p: sf.write(p, np.full(16000, np.nan, np.float32), 16000, subtype="FLOAT"), "not numbers"),
    (lambda p: sf.write(p, np.r_[np.full(8000, 0.1), [np.inf]].astype(np.float32), 16000, subtype="FLOAT"),
     "not numbers"),
    (lambda p: p.write_text("This is not audio, it is a note.\n"), "looks like a text file"),
    (lambda p: p.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(200)), "video file"),
    (lambda p: p.write_bytes(b"RIFF\x24\x08\x00\x00WAVEfmt " + bytes(10)), "could not read this as audio"),
])
def test_bad_audio_gets_a_clear_message(tmp_path, make, message):
    path = tmp_path / "upload.wav"
    make(path)
    with pytest.raises(RecoverError, match=message):
        audio.load(path)


def test_truncated_wav_is_refused_or_read_short(tmp_path, speech):
    """A WAV cut mid-file: libsndfile reads what is there; nothing crashes."""
    path = tmp_path / "cut.wav"
    sf.write(path, speech, 16000)
    path.write_bytes(path.read_bytes()[:2000])
    got = audio.load(path)
    assert got.seconds < 0.1


def test_over_the_length_limit_says_what_to_do(tmp_path, speech):
    path = tmp_path / "long.flac"
    sf.write(path, np.tile(speech, 6), 16000)
    with pytest.raises(RecoverError, match="longer than the 30 s limit.*transcribe"):
        audio.load(path, max_seconds=30)


def test_no_file():
    with pytest.raises(RecoverError, match="no such audio file"):
        audio.load("/nonexistent/utt.wav")


def test_dot_file_with_wsj_conventions(tmp_path):
    dot = tmp_path / "4k0c03.dot"
    dot.write_text("THE COMPANY ,COMMA [loud_breath] SAID \\\"DOUBLE-QUOTE IT <THE> WILL *EXPAND* .PERIOD (4k0c0301)\n"
                   "PROFITS ROSE [door_slam] TEN PERCENT (4k0c0302)\n")
    refs = references.read(dot)
    assert refs == {"4k0c0301": "THE COMPANY comma SAID double quote IT WILL EXPAND period",
                    "4k0c0302": "PROFITS ROSE TEN PERCENT"}
    assert references.for_audio(dot, "/data/wsj/4K0C0302.WV1") == "PROFITS ROSE TEN PERCENT"
    with pytest.raises(RecoverError, match="no utterance '4k0c0399'"):
        references.for_audio(dot, "4k0c0399.wv1")


@pytest.mark.parametrize("text, message", [("", "empty"), ("   ", "empty"), ("Привет, как дела?", "Latin script"),
                                           ("... !!", "no words left"), ("uh, um", "no words left")])
def test_bad_references(text, message):
    with pytest.raises(RecoverError, match=message):
        wer.check_reference(text)
