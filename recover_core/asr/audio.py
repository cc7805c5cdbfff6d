"""Audio in: any file a user or a corpus hands us, as 16 kHz mono float32.

WAV, FLAC, OGG and MP3 go through soundfile (libsndfile). NIST SPHERE (WSJ's format) goes
through soundfile when uncompressed, and through `desphere` when Shorten-compressed
(``.wv1``/``.wv2``), which libsndfile cannot read. Every other rate or channel count is
mixed down and resampled with torchaudio.

On WSJ's coding tokens: desphere registers only ``embedded-shorten-v2.00``, but WSJ headers
name the shorten *program* that wrote them (``embedded-shorten-v1.1``, ``-v1.09``). The
program version says nothing about the bitstream, whose own version byte follows the
``ajkg`` magic; desphere validates that byte and decodes version 2 streams only. So a
v1.x token is read as the generic shorten coding and the stream's own version decides:
a version 2 stream decodes; any other gets a clear message instead of a wrong waveform.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recover_core.runtime import atomic
from recover_core.errors import RecoverError

SAMPLE_RATE = 16_000
FORMATS = "WAV, FLAC, OGG, MP3 or NIST SPHERE (.sph, .wv1, .wv2; Shorten-compressed included)"
SILENCE_RMS = 1e-4  # about -80 dBFS: below this nothing can be recognized
_SHORTEN = re.compile(r"^embedded-shorten-v[0-9.]+$")


@dataclass(frozen=True)
class Audio:
    samples: np.ndarray  # [n] float32 in [-1, 1], 16 kHz mono
    source_rate: int
    source_channels: int
    # The mono mix at the file's own rate, when asked for (speech obfuscation writes its
    # output at the recording's rate, so telephone audio stays 8 kHz).
    native: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def seconds(self) -> float:
        return len(self.samples) / SAMPLE_RATE


def frame_rms(x: np.ndarray, n: int) -> np.ndarray:
    """RMS of each whole frame of ``n`` samples; audio shorter than a frame is one frame."""
    usable = len(x) // n * n
    if usable == 0:
        return np.array([np.sqrt(np.mean(x.astype(np.float64) ** 2))]) if len(x) else np.zeros(0)
    return np.sqrt((x[:usable].astype(np.float64).reshape(-1, n) ** 2).mean(axis=1))


def quietest(x: np.ndarray, lo: int, hi: int, n: int) -> int | None:
    """The sample at the middle of the quietest whole ``n``-sample frame of x[lo:hi], or
    None when that range holds no whole frame. Long audio is split there, and speech
    obfuscation cuts there."""
    lo, hi = max(0, lo), min(len(x), hi)
    if hi - lo < n:
        return None
    return lo + int(np.argmin(frame_rms(x[lo:hi], n))) * n + n // 2


def _sphere(blob: bytes, name: str) -> tuple[np.ndarray, int]:
    import desphere

    try:
        header = desphere.SphereHeader.parse(blob)
    except desphere.DesphereError as e:
        raise RecoverError(f"{name}: not a readable NIST SPHERE header ({e}).") from None
    coding = [t.strip().lower() for t in header.sample_coding.split(",")]
    if len(coding) > 1 and coding[1] and _SHORTEN.match(coding[1]):
        header.fields["sample_coding"] = ",".join([coding[0], "embedded-shorten-v2.00"])
    elif len(coding) > 1 and coding[1]:
        raise RecoverError(f"{name}: SPHERE coding {header.sample_coding!r} is not supported; supported: pcm, "
                           "ulaw, alaw, and Shorten compression (embedded-shorten-*).")
    out = io.BytesIO()
    try:
        desphere.transcode(header, blob[header.header_size:], out)
    except desphere.DesphereError as e:
        raise RecoverError(f"{name}: the SPHERE audio could not be decoded ({e}).") from None
    import soundfile as sf

    data, rate = sf.read(io.BytesIO(out.getvalue()), dtype="float32", always_2d=True)
    return data, rate


def _decode(blob: bytes, name: str) -> tuple[np.ndarray, int]:
    """[n, channels] float32 and the file's own sample rate."""
    if blob[:7] == b"NIST_1A":
        return _sphere(blob, name)
    import soundfile as sf

    try:
        data, rate = sf.read(io.BytesIO(blob), dtype="float32", always_2d=True)
    except Exception as e:  # libsndfile names no type per failure: every one is "can't read this"
        kind = _sniff(blob)
        hint = f" It looks like {kind}." if kind else ""
        why = re.sub(r"^Error opening <[^>]*>: ", "", str(e).strip()) or type(e).__name__
        raise RecoverError(f"{name}: could not read this as audio ({why}){hint} Use {FORMATS}.") from None
    return data, rate


def _sniff(blob: bytes) -> str | None:
    head = blob[:64]
    if head[4:8] == b"ftyp" or head[:4] == b"\x1aE\xdf\xa3" or head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "a video file: extract its audio track first (for example `ffmpeg -i in.mp4 -vn out.wav`)"
    try:
        head.decode("utf-8")
        return "a text file"
    except UnicodeDecodeError:
        return None


def resample(x: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """``x`` (mono float) at ``rate_out``, by torchaudio's windowed-sinc resampler."""
    if rate_in == rate_out:
        return np.ascontiguousarray(x, dtype=np.float32)
    import torch
    import torchaudio.functional as AF

    return AF.resample(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)), rate_in, rate_out).numpy()


def write(path: Path, samples: np.ndarray, rate: int, *, mode: int | None = None, subtype: str | None = "PCM_16") -> None:
    """Write audio atomically (a killed write leaves nothing), in the format the suffix names
    (.wav as 16-bit PCM unless ``subtype`` says otherwise, .flac, ...), clipped to [-1, 1]."""
    import soundfile as sf

    path = Path(path)
    with atomic.replacing(path, suffix=".tmp" + path.suffix, mode=mode) as tmp:  # soundfile reads the suffix
        sf.write(tmp, np.clip(samples, -1, 1), rate, subtype=subtype if path.suffix == ".wav" else None)


def load(source: str | Path | bytes, max_seconds: float | None = None, name: str | None = None,
         keep_native: bool = False) -> Audio:
    """Read, mix down to mono and resample to 16 kHz; reject what cannot be recognized.
    ``keep_native`` also keeps the mono mix at the file's own rate."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        name = name or path.name
        if not path.is_file():
            raise RecoverError(f"{name}: no such audio file.")
        blob = path.read_bytes()
    else:
        blob, name = source, name or "audio"
    if not blob:
        raise RecoverError(f"{name}: the file is empty (0 bytes).")
    data, rate = _decode(blob, name)
    channels = data.shape[1]
    if data.shape[0] == 0:
        raise RecoverError(f"{name}: the file holds no audio samples (zero length).")
    if not np.isfinite(data).all():
        raise RecoverError(f"{name}: the file holds samples that are not numbers (NaN or infinite); "
                           "it is damaged or was written wrongly, and cannot be recognized.")
    mono = data.mean(axis=1) if channels > 1 else data[:, 0]
    native = np.ascontiguousarray(mono, dtype=np.float32) if keep_native else None
    seconds = len(mono) / rate
    if max_seconds is not None and seconds > max_seconds:
        raise RecoverError(f"{name}: {seconds:.1f} s is longer than the {max_seconds:.0f} s limit here; "
                           "trim it, or use the `transcribe` command, which splits long audio.")
    mono = resample(mono, rate, SAMPLE_RATE)
    if float(np.sqrt(np.mean(mono.astype(np.float64) ** 2))) < SILENCE_RMS:
        raise RecoverError(f"{name}: the audio is silent: there is nothing to recognize.")
    return Audio(mono, rate, channels, native)
