"""How much a stretch of audio sounds like a speaker: GE2E speaker embeddings (Wan et al. 2018).

The weights are resemblyzer's ``pretrained.pt`` (Apache-2.0, trained on LibriSpeech,
VoxCeleb 1 and 2), which the PyPI wheel ``resemblyzer`` carries inside itself
(requirements-offline.txt installs it with --no-deps). In a Space, which cannot install it, the
same file comes from resemblyzer's repository at a pinned commit, checked by the wheel's sha256
(models/sources.py: ``GE2E_URL``). Its own module is not imported:
its audio front end imports webrtcvad, whose import needs ``pkg_resources`` (gone from
setuptools >= 81) and which builds from source, and librosa. The network is small (three
LSTM layers of 256 over 40 mel bands, a linear layer, ReLU) and rebuilt here in torch, with
the same mel front end through torchaudio (slaney mel scale and norm, as librosa's default).

``embed`` follows resemblyzer's ``embed_utterance``: 1.6 s windows every ~0.77 s, each
embedded and L2-normalised, averaged and normalised again. ``similarity`` is the cosine of
two embeddings: 1 is the same voice; different speakers of one sex score ~0.6-0.75 here.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path

import numpy as np

from recover_core.errors import RecoverError
from recover_core.models import sources
from recover_core.runtime import env

log = logging.getLogger(__name__)

RATE = 16000
N_MELS = 40
WINDOW = 400  # 25 ms at 16 kHz
HOP = 160  # 10 ms
PARTIAL_FRAMES = 160  # 1.6 s per window
PARTIAL_STEP = 77  # resemblyzer's rate 1.3 windows a second: round(16000 / 1.3 / 160)
MIN_COVERAGE = 0.75  # a last window less covered than this by audio is dropped (when there are others)
TARGET_DBFS = -30.0  # resemblyzer raises quieter audio to this level (never lowers it)


def weights_path() -> Path | None:
    """resemblyzer's ``pretrained.pt``: where the wheel put it, else its pinned download (fetched
    on first need where the network is reachable); None where neither can be had."""
    package = sources.package_dir("resemblyzer")
    if package is not None and (package / "pretrained.pt").exists():
        return package / "pretrained.pt"
    return _downloaded()


@functools.lru_cache(maxsize=1)
def _downloaded() -> Path | None:
    """Tried once per process: a Space whose download failed says "not installed" from then on,
    rather than fetching 17 MB again on every request."""
    try:
        return sources.url_file(sources.GE2E_URL, sources.GE2E_SHA256, "pretrained.pt")
    except RecoverError as e:
        if not env.offline():
            log.warning("speaker encoder unavailable: %s", e)
        return None


def available() -> bool:
    return weights_path() is not None


@functools.lru_cache(maxsize=1)
def _encoder():
    import torch
    import torchaudio

    path = weights_path()
    if path is None:
        raise RecoverError("The speaker encoder's weights come from the pip package resemblyzer "
                           "(requirements-offline.txt: pip install --no-deps resemblyzer==0.1.4), which is not installed, "
                           "or where the network is reachable from resemblyzer's repository (models/sources.py: GE2E_URL).")

    class GE2E(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(N_MELS, 256, 3, batch_first=True)
            self.linear = torch.nn.Linear(256, 256)
            self.relu = torch.nn.ReLU()

        def forward(self, mels: torch.Tensor) -> torch.Tensor:  # [batch, frames, 40] -> [batch, 256]
            _, (hidden, _) = self.lstm(mels)
            raw = self.relu(self.linear(hidden[-1]))
            return raw / torch.norm(raw, dim=1, keepdim=True).clamp_min(1e-9)

    model = GE2E()
    state = torch.load(path, map_location="cpu", weights_only=True)["model_state"]
    # the checkpoint also holds GE2E's training-only similarity scale and bias
    model.load_state_dict({k: v for k, v in state.items() if not k.startswith("similarity_")})
    model.eval()
    mel = torchaudio.transforms.MelSpectrogram(sample_rate=RATE, n_fft=WINDOW, hop_length=HOP, n_mels=N_MELS,
                                               power=2.0, norm="slaney", mel_scale="slaney", pad_mode="constant")
    return model, mel


def _prepared(samples: np.ndarray, rate: int) -> np.ndarray:
    """16 kHz, pauses left out, raised to resemblyzer's level. resemblyzer drops pauses with
    a VAD; here 10 ms frames 40 dB under the loudest are dropped, which keeps what is said."""
    from recover_core.asr.audio import frame_rms, resample

    x = resample(np.asarray(samples, np.float32), rate, RATE) if rate != RATE else np.asarray(samples, np.float32)
    r = frame_rms(x, HOP)
    if len(r) and r.max() > 0:
        keep = np.repeat(r >= r.max() * 10 ** (-40 / 20), HOP)[: len(x)]
        x = x[: len(keep)][keep]
    level = 10 * np.log10(np.mean(x.astype(np.float64) ** 2) + 1e-20)
    if level < TARGET_DBFS:
        x = x * 10 ** ((TARGET_DBFS - level) / 20)
    return x.astype(np.float32)


def embed(samples: np.ndarray, rate: int) -> np.ndarray | None:
    """The speaker embedding (256, unit norm) of mono audio; None for less than 0.1 s of sound."""
    import torch

    x = _prepared(samples, rate)
    if len(x) < RATE // 10:
        return None
    model, mel = _encoder()
    n_frames = int(np.ceil((len(x) + 1) / HOP))
    starts = list(range(0, max(1, n_frames - PARTIAL_FRAMES + PARTIAL_STEP + 1), PARTIAL_STEP))
    last = starts[-1] * HOP
    if len(starts) > 1 and (len(x) - last) / (PARTIAL_FRAMES * HOP) < MIN_COVERAGE:
        starts.pop()
    need = (starts[-1] + PARTIAL_FRAMES) * HOP
    x = np.pad(x, (0, max(0, need - len(x))))
    with torch.inference_mode():
        frames = mel(torch.from_numpy(x)).T  # [frames, 40]
        mels = torch.stack([frames[s:s + PARTIAL_FRAMES] for s in starts])
        partial = model(mels).mean(0)
    e = partial.numpy()
    return e / max(float(np.linalg.norm(e)), 1e-9)


def similarity(a: np.ndarray | None, b: np.ndarray | None) -> float | None:
    """Cosine similarity of two embeddings (both unit norm); None when either is missing."""
    if a is None or b is None:
        return None
    return float(np.dot(a, b))


@functools.lru_cache(maxsize=None)
def voice_embedding(voice: str) -> np.ndarray | None:
    """A stock voice's embedding, on the phrase its pitch is measured by; once per process."""
    from recover_core.speech import voices

    return embed(*voices.synthesize(voices.PITCH_PHRASE, voice))


def ranked(reference: np.ndarray, candidates: list[str]) -> list[str]:
    """The stock voices, those whose own speech is most like ``reference`` (an embedding) first."""
    scored = [(similarity(voice_embedding(v), reference), v) for v in candidates]
    return [v for _, v in sorted(((s, v) for s, v in scored if s is not None), reverse=True)]


def nearest(reference: np.ndarray, candidates: list[str]) -> str | None:
    """The stock voice whose own speech is most like ``reference`` (an embedding)."""
    return next(iter(ranked(reference, candidates)), None)


def without(samples: np.ndarray, rate: int, spans: list[tuple[float, float]]) -> np.ndarray:
    """The recording with the given (start, end) seconds cut out: the speaker's other speech."""
    keep = np.ones(len(samples), bool)
    for a, b in spans:
        keep[max(0, int(a * rate)):max(0, int(b * rate))] = False
    return samples[keep]
