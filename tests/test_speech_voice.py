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
    plan = stock.find(clip)
    return stock.render(clip, copy.deepcopy(plan)), clone.render(clip, plan)  # render fills the plan's entities


def test_the_converted_insert_is_nearer_the_speaker_and_still_heard(results):
    stock, clone = results
    assert clone.entities and len(clone.entities) == len(stock.entities)
    for s, c in zip(stock.entities, clone.entities):
        assert s.similarity is not None and c.similarity is not None
        assert c.similarity > s.similarity + 0.03
    assert all(e.substitute_heard for e in clone.entities)
    assert not any(e.original_heard for e in clone.entities)
    assert clone.conversion == "world" and stock.conversion is None
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
