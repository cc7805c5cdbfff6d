"""The substitute in the speaker's own voice: on a real recording (LibriVox, a man reading
Sense and Sensibility), the insert converted toward the speaker (voice="clone") sounds more
like him than the stock voice's, by the speaker encoder, and is still heard. Real models
end to end: Whisper, the tagger, piper/flite, WORLD, GE2E."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from recover_core.asr import audio
from recover_core.errors import RecoverError
from recover_core.speech import convert, speaker, voices
from recover_core.speech.clone import CLONE_BASES, choice_halves
from recover_core.speech.obfuscate import SpeechObfuscator
from recover_core.speech.plan import SpeechSettings

REAL = Path("/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav")
KEY = bytes(range(32))

pytestmark = pytest.mark.skipif(not REAL.exists() or not speaker.available(),
                                reason="needs pocketsphinx-testdata and resemblyzer's weights")


@pytest.fixture(scope="module")
def results():
    clip = audio.load(REAL, keep_native=True)
    stock = SpeechObfuscator(SpeechSettings(voice="auto", retries=0), key=KEY)
    clone = SpeechObfuscator(SpeechSettings(voice="clone", retries=0), stock.recognizer, key=KEY)
    cmn = SpeechObfuscator(SpeechSettings(voice="clone", conversion="knn-cmn", retries=0), stock.recognizer, key=KEY)
    plan = stock.find(clip)
    # render fills the plan's entities
    return stock.render(clip, copy.deepcopy(plan)), clone.render(clip, copy.deepcopy(plan)), cmn.render(clip, plan)


def test_the_converted_insert_is_nearer_the_speaker_and_still_heard(results):
    stock, clone, cmn = results
    assert clone.entities and len(clone.entities) == len(stock.entities)
    for s, c, k in zip(stock.entities, clone.entities, cmn.entities):
        assert s.similarity is not None and c.similarity is not None and k.similarity is not None
        assert c.similarity > s.similarity + 0.03
        assert k.similarity > s.similarity + 0.05
    # knn-cmn's substitute is not asserted heard: on the bench it is heard less often than
    # world's (83% against 91% after a retry, docs/speech_obfuscation.md)
    assert all(e.substitute_heard for e in clone.entities)
    assert not any(e.original_heard for e in clone.entities + cmn.entities)
    assert clone.conversion == "world" and stock.conversion is None and cmn.conversion == "knn-cmn"
    assert clone.voice in CLONE_BASES and cmn.voice in CLONE_BASES
    assert all("speaker_similarity" in e for e in clone.public()["entities"])


def test_the_encoder_tells_one_speaker_from_another():
    x = audio.load(REAL).samples
    half = len(x) // 2
    same = speaker.similarity(speaker.embed(x[:half], 16000), speaker.embed(x[half:], 16000))
    other = speaker.similarity(speaker.embed(x, 16000), speaker.embed(*voices.synthesize(voices.PITCH_PHRASE, "piper-joe")))
    assert same > 0.8 and other < same - 0.1


def test_world_conversion_moves_the_pitch_to_the_speakers():
    rate = 16000
    t = np.arange(rate) / rate
    # a buzz at 110 Hz (harmonics: WORLD needs a voice) moved to a "speaker" at 220 Hz
    low = sum(np.sin(2 * np.pi * 110 * k * t) / k for k in range(1, 20)).astype(np.float32) * 0.1
    high = sum(np.sin(2 * np.pi * 220 * k * t) / k for k in range(1, 20)).astype(np.float32) * 0.1
    source, target = convert.profile(low, rate), convert.profile(high, rate)
    out = convert.convert(low, rate, source, target)
    assert len(out) == len(low)
    moved = convert.profile(out, rate)
    assert abs(np.exp(moved.lf0_mean) - 220) < 15


def test_clone_is_a_voice_choice_and_a_bad_conversion_is_refused():
    assert SpeechSettings(voice="clone").check().voice == "clone"
    with pytest.raises(RecoverError):
        SpeechSettings(voice="clone", conversion="yourtts").check()


def _vowel(formant: float, f0: float, tilt: float, rate: int = 16000, seconds: float = 0.5) -> np.ndarray:
    """A steady vowel: harmonics of f0 under one resonance at ``formant``, the spectrum tilted
    by (f / 1 kHz) ** tilt (a voice's or a microphone's colour)."""
    t = np.arange(int(rate * seconds)) / rate
    x = np.zeros_like(t)
    for k in range(1, int(rate / 2 / f0)):
        f = k * f0
        x += (1 / (1 + ((f - formant) / 150) ** 2) + 0.02) * (f / 1000) ** tilt * np.sin(2 * np.pi * f * t)
    return (0.1 * x / np.abs(x).max()).astype(np.float32)


def test_knn_cmn_matches_each_sound_to_the_same_sound_of_the_speaker():
    # the speaker says a vowel at 500 Hz then one at 2 kHz, darkly; the insert says them the
    # other way round, brightly and lower: each of its frames is matched to the same vowel
    rate = 16000
    target = convert.profile(np.concatenate([_vowel(500, 200, -1), _vowel(2000, 200, -1)]), rate, harvest=True)
    assert target is not None and target.cmn is not None and target.cmn.shape == (len(target.frames), convert.N_CEPS)
    assert np.allclose(np.linalg.norm(target.cmn, axis=1), 1, atol=1e-3)
    insert = np.concatenate([_vowel(2000, 120, 1), _vowel(500, 120, 1)])
    f0, sp, _ = convert._analyse(insert, rate, harvest=True)
    chosen = convert.cmn_envelopes(convert._on_grid(sp, convert._freqs(sp, rate)), target)
    peak = convert.GRID[np.argmax(chosen, axis=1)]
    half, voiced = len(f0) // 2, f0 > 0
    assert abs(np.median(peak[:half][voiced[:half]]) - 2000) < 200
    assert abs(np.median(peak[half:][voiced[half:]]) - 500) < 200


def test_knn_cmn_conversion_keeps_the_length_and_moves_the_pitch():
    rate = 16000
    speaker_ = np.concatenate([_vowel(500, 220, -1), _vowel(2000, 220, -1)])
    stock = np.concatenate([_vowel(800, 110, 0), _vowel(1500, 110, 0)])
    out = convert.convert(stock, rate, convert.profile(stock, rate), convert.profile(speaker_, rate, harvest=True),
                          knn="cmn")
    assert len(out) == len(stock) and np.isfinite(out).all()
    assert abs(np.exp(convert.profile(out, rate).lf0_mean) - 220) < 15
    assert SpeechSettings(voice="clone", conversion="knn-cmn").check().conversion == "knn-cmn"


def test_the_base_voice_is_chosen_on_one_half_and_the_other_is_left_for_measuring():
    rate = 100
    rest = np.arange(350, dtype=np.float32)  # 3.5 s: chunks of 1 s dealt in turn
    choose, held = choice_halves(rest, rate)
    assert choose.tolist() == list(range(0, 100)) + list(range(200, 300))
    assert held.tolist() == list(range(100, 200)) + list(range(300, 350))
    assert len(choice_halves(rest[:50], rate)[1]) == 0  # under one chunk: nothing held out


def test_in_a_space_the_encoder_comes_from_its_pinned_url_checked_by_the_wheels_hash(tmp_path, monkeypatch):
    """A Space cannot install resemblyzer (requirements.txt): it fetches the same file from a
    pinned URL. The pin is the wheel's own hash; other content is refused and nothing is left;
    offline with nothing cached, a message. The download is a file:// URL of the wheel's copy."""
    import hashlib

    from recover_core.models import sources

    wheel = sources.package_dir("resemblyzer") / "pretrained.pt"
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == sources.GE2E_SHA256
    monkeypatch.setenv("SPACE_ID", "someone/recover")
    monkeypatch.setenv("RECOVER_CACHE", str(tmp_path))
    got = sources.url_file(wheel.as_uri(), sources.GE2E_SHA256, "pretrained.pt")
    assert got == sources.downloaded_path(sources.GE2E_SHA256, "pretrained.pt") and got.read_bytes() == wheel.read_bytes()
    assert sources.url_file("file:///nowhere", sources.GE2E_SHA256, "pretrained.pt") == got  # cached: not fetched again

    other = tmp_path / "other.pt"
    other.write_bytes(b"not the weights")
    with pytest.raises(RecoverError, match="not the pinned one"):
        sources.url_file(other.as_uri(), "0" * 64, "x.pt")
    assert not list(sources.downloaded_path("0" * 64, "x.pt").parent.iterdir())

    monkeypatch.delenv("SPACE_ID")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RecoverError, match="reaches no network"):
        sources.url_file(wheel.as_uri(), "1" * 64, "y.pt")
