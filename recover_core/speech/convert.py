"""A stock voice's insert moved toward the speaker's voice with the WORLD vocoder (pyworld).

WORLD splits speech into F0, a spectral envelope and aperiodicity, and puts them back
together. Between analysis and synthesis:

- F0: the insert's log-F0 is moved from the stock voice's mean and spread to the speaker's
  (measured on the recording with the private words cut out). With ``contour``, the
  original name's own pitch movement, stretched over the insert, takes the place of the
  stock voice's (its prosody, preiss2023's "retaining prosodic information").
- Envelope: the vocal tract's size shows as a stretch of the formants along the frequency
  axis; the warp factor that best lays the stock voice's average envelope on the speaker's
  is applied (``WARP_RANGE``), and what differs after that (tilt, a microphone's colour) is
  applied as a smooth static filter, clipped to ``MAX_FILTER_DB``.
- ``knn``: then each voiced frame is pulled halfway to the mean of the speaker's frames
  nearest it (kNN-VC's matching on WORLD envelopes). ``knn-cmn`` matches with each voice's
  mean cepstrum taken out, so by sound more than by timbre, and takes F0 by harvest; the frames
  within 80 ms of a voicing edge, where a name's consonants are, are left unpulled.

The stock voice's own profile is measured once per process on a fixed phrase, so a short
insert's few frames never set it. Level is matched afterwards by ``splice.scaled``, as for
a stock insert.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

FRAME_MS = 5.0
F0_FLOOR, F0_CEIL = 60.0, 400.0
WARP_RANGE = np.linspace(0.80, 1.25, 46)  # formant stretch factors tried
BAND = (100.0, 5000.0)  # where envelopes are compared: the formants
MAX_FILTER_DB = 12.0
SMOOTH_HZ = 300.0  # the static filter follows the envelope difference at this resolution
SPREAD_LIMITS = (0.5, 2.0)  # how far the pitch spread may be scaled
GRID = np.linspace(0.0, 8000.0, 257)  # Hz: where profiles keep their average envelope (16 kHz recordings)


@dataclass(frozen=True, eq=False)
class Profile:
    """A voice's average: log-F0 mean and spread over voiced frames, and its mean log
    envelope on ``GRID`` (level removed: the shape only); and its voiced frames' own
    envelopes and normalised cepstra, for ``knn`` and ``knn-cmn``."""

    lf0_mean: float
    lf0_std: float
    envelope: np.ndarray  # natural-log power on GRID, mean over BAND subtracted
    frames: np.ndarray | None = None  # [frames, GRID] the same, per loud voiced frame
    cmn: np.ndarray | None = None  # [frames, N_CEPS] those frames' ``_cmn_ceps``, for ``knn-cmn``


def _analyse(x: np.ndarray, rate: int, harvest: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import pyworld as pw

    x = np.ascontiguousarray(x, dtype=np.float64)
    if harvest:  # slower, fewer voicing errors: the speaker's own speech resynthesized scores 0.02 nearer itself
        f0, t = pw.harvest(x, rate, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_MS)
    else:  # dio + stonemask: an order of magnitude faster than harvest, good enough on clean speech
        f0, t = pw.dio(x, rate, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_MS)
        f0 = pw.stonemask(x, f0, t, rate)
    sp = pw.cheaptrick(x, f0, t, rate)
    ap = pw.d4c(x, f0, t, rate)
    return f0, sp, ap


def _freqs(sp: np.ndarray, rate: int) -> np.ndarray:
    return np.linspace(0.0, rate / 2, sp.shape[1])


def profile(x: np.ndarray, rate: int, harvest: bool = False) -> Profile | None:
    """The voice's profile from its speech; None with fewer than 20 voiced frames (0.1 s).
    ``harvest``: F0 by harvest (``conversion="knn-cmn"``), else dio."""
    f0, sp, _ = _analyse(x, rate, harvest)
    voiced = f0 > 0
    if voiced.sum() < 20:
        return None
    lf0 = np.log(f0[voiced])
    # loud voiced frames only: a breath or a fade's envelope is not the voice's
    energy = np.log(sp[voiced].mean(axis=1) + 1e-20)
    loud = energy > energy.max() - np.log(10 ** 3)  # within 30 dB
    logs = np.log(sp[voiced][loud] + 1e-20)
    freqs = _freqs(sp, rate)
    frames = np.stack([np.interp(GRID, freqs, f) for f in logs])
    band = (GRID >= BAND[0]) & (GRID <= BAND[1])
    frames = frames - frames[:, band].mean(axis=1, keepdims=True)
    env = frames.mean(axis=0)
    cmn = _cmn_ceps(_on_grid(sp, freqs))[voiced][loud]  # the mean over every frame, pauses too, as the insert's
    return Profile(float(lf0.mean()), float(max(lf0.std(), 1e-3)), env - env[band].mean(), frames.astype(np.float32),
                   cmn.astype(np.float32))


@functools.lru_cache(maxsize=None)
def voice_profile(voice: str) -> Profile | None:
    """A stock voice's profile, on the phrase its pitch is measured by (voices.PITCH_PHRASE)."""
    from recover_core.asr.audio import resample
    from recover_core.speech import voices

    audio, rate = voices.synthesize(voices.PITCH_PHRASE, voice)
    return profile(resample(audio, rate, 16000), 16000)


def _smooth(y: np.ndarray, hz: float) -> np.ndarray:
    step = GRID[1] - GRID[0]
    n = max(1, int(round(hz / step)))
    kernel = np.hanning(2 * n + 1)
    kernel /= kernel.sum()
    return np.convolve(np.pad(y, n, mode="edge"), kernel, mode="valid")


def warp_factor(source: Profile, target: Profile) -> float:
    """The formant stretch that lays the source's average envelope closest to the target's
    (least squares over BAND): > 1 moves formants up (a shorter vocal tract)."""
    band = (GRID >= BAND[0]) & (GRID <= BAND[1])
    best, alpha = np.inf, 1.0
    for a in WARP_RANGE:
        warped = np.interp(GRID / a, GRID, source.envelope)
        warped = warped - warped[band].mean()
        err = float(np.mean((warped[band] - target.envelope[band]) ** 2))
        if err < best:
            best, alpha = err, float(a)
    return alpha


def mapping(source: Profile, target: Profile) -> tuple[float, np.ndarray]:
    """(warp factor, static filter in natural-log power on GRID) from source toward target."""
    alpha = warp_factor(source, target)
    warped = np.interp(GRID / alpha, GRID, source.envelope)
    band = (GRID >= BAND[0]) & (GRID <= BAND[1])
    diff = _smooth(target.envelope - (warped - warped[band].mean()), SMOOTH_HZ)
    limit = MAX_FILTER_DB / 10 * np.log(10)  # dB of power -> natural log
    return alpha, np.clip(diff, -limit, limit)


def _contour_f0(f0: np.ndarray, contour: np.ndarray) -> np.ndarray:
    """The insert's voiced frames given the original's pitch movement, stretched over the
    insert: the original's voiced frames, interpolated across its unvoiced gaps, read at the
    same relative time."""
    have = np.nonzero(contour > 0)[0]
    filled = np.interp(np.arange(len(contour)), have, np.log(contour[have]))
    at = np.linspace(0, len(contour) - 1, len(f0))
    out = np.exp(np.interp(at, np.arange(len(contour)), filled))
    return np.where(f0 > 0, out, 0.0)


def _on_grid(sp: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """Natural-log envelopes read at GRID's frequencies: [frames, GRID]."""
    return np.stack([np.interp(GRID, freqs, f) for f in np.log(sp + 1e-20)])


def _put(sp: np.ndarray, freqs: np.ndarray, rows: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``sp`` with its ``rows`` (a mask of frames) set under GRID's top to ``new`` (log, on
    GRID); above it each frame keeps its own shape, joined at the edge."""
    logs = np.log(sp[rows] + 1e-20)
    low = freqs <= GRID[-1]
    out = logs.copy()
    out[:, low] = np.stack([np.interp(freqs[low], GRID, f) for f in new])
    if (~low).any():
        edge = np.searchsorted(freqs, GRID[-1])
        out[:, ~low] += (out[:, edge - 1] - logs[:, edge - 1])[:, None]
    sp = sp.copy()
    sp[rows] = np.exp(out)
    return sp


def _level(on_grid: np.ndarray) -> np.ndarray:
    band = (GRID >= BAND[0]) & (GRID <= BAND[1])
    return on_grid[:, band].mean(axis=1, keepdims=True)


def _knn_replace(sp: np.ndarray, freqs: np.ndarray, voiced: np.ndarray, target: Profile) -> np.ndarray:
    """Voiced frames' envelopes under GRID's top taken from the speaker (``knn_envelopes``),
    at each frame's own level; smoothed over 3 frames so that the choice does not flutter."""
    on_grid = _on_grid(sp[voiced], freqs)
    level = _level(on_grid)
    chosen = knn_envelopes(on_grid - level, target)
    if len(chosen) >= 3:
        chosen = np.concatenate([chosen[:1], (chosen[:-2] + chosen[1:-1] + chosen[2:]) / 3, chosen[-1:]])
    return _put(sp, freqs, voiced, KNN_WEIGHT * chosen + (1 - KNN_WEIGHT) * (on_grid - level) + level)


def _cmn_replace(sp: np.ndarray, freqs: np.ndarray, voiced: np.ndarray, target: Profile) -> np.ndarray:
    """``knn-cmn``: each voiced frame's envelope pulled ``KNN_WEIGHT`` of the way to the mean
    of the ``KNN`` speaker frames whose cepstra, each voice's mean taken out (``_cmn_ceps``),
    point the same way; the chosen envelopes averaged over ``CMN_SMOOTH`` frames. Frames near a
    voicing onset or offset are pulled less (``_away_from_edges``)."""
    on_grid = _on_grid(sp, freqs)
    level = _level(on_grid)
    chosen = cmn_envelopes(on_grid, target)
    if len(chosen) >= CMN_SMOOTH:
        half = CMN_SMOOTH // 2
        padded = np.pad(chosen, ((half, half), (0, 0)), mode="edge")
        chosen = np.mean([padded[i:i + len(chosen)] for i in range(CMN_SMOOTH)], axis=0)
    w = KNN_WEIGHT * _away_from_edges(voiced)[:, None]
    new = w * chosen + (1 - w) * (on_grid - level) + level
    return _put(sp, freqs, voiced, new[voiced])


# knn-cmn leaves the frames near a voicing onset or offset unpulled: the recognizer misheard
# names by their first sound ("Mary" as "Harry", "Grace" as "race", "Wendy" as "Monday"), where
# a consonant's frames had been pulled toward the speaker's vowels. Kept out 80 ms, then ramped
# in over 20 ms: heard at the first try 50% -> 68%, similarity 0.562 -> 0.557 (32 utterances,
# 50 names; 40 ms 62%, 120 ms 68% at 0.551, 200 ms 72% at 0.542: docs/speech_obfuscation.md).
EDGE_KEEP_MS = 80.0
EDGE_RAMP_MS = 20.0


def _away_from_edges(voiced: np.ndarray) -> np.ndarray:
    """Per frame: 0 within ``EDGE_KEEP_MS`` of a voicing onset or offset, rising to 1 over
    ``EDGE_RAMP_MS`` beyond it."""
    edges = np.nonzero(np.diff(np.concatenate([[False], voiced, [False]]).astype(np.int8)))[0]
    if not len(edges):
        return np.ones(len(voiced))
    dist = np.abs(np.arange(len(voiced))[:, None] - edges[None, :]).min(axis=1) * FRAME_MS  # [frames] ms
    return np.clip((dist - EDGE_KEEP_MS) / EDGE_RAMP_MS, 0.0, 1.0)


def original_contour(x: np.ndarray, rate: int) -> np.ndarray | None:
    """F0 per 5 ms frame of the original words (0 where unvoiced); None with under 10 voiced frames."""
    import pyworld as pw

    if len(x) < rate // 20:
        return None
    x = np.ascontiguousarray(x, dtype=np.float64)
    f0, t = pw.dio(x, rate, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_MS)
    f0 = pw.stonemask(x, f0, t, rate)
    return f0 if (f0 > 0).sum() >= 10 else None


KNN = 4  # speaker frames averaged per insert frame (kNN-VC's k)
# How far (log domain) each frame moves from the warped, filtered envelope to the speaker's
# matched frames: all the way, a name on the LibriVox recording was no longer heard (the few
# seconds of a speaker's other speech lack some of the name's sounds); halfway it was.
KNN_WEIGHT = 0.5
N_CEPS = 20
_MEL = 2595.0 * np.log10(1.0 + GRID / 700.0)
_MEL_GRID = np.interp(np.linspace(_MEL[1], _MEL[-1], 40), _MEL, GRID)  # 40 mel-spaced frequencies


def _ceps(log_env: np.ndarray) -> np.ndarray:
    """Mel cepstrum (1..N_CEPS, level left out) of log envelopes on GRID: [frames, N_CEPS]."""
    mel = np.stack([np.interp(_MEL_GRID, GRID, f) for f in log_env])
    n = mel.shape[1]
    basis = np.cos(np.pi / n * (np.arange(n)[None, :] + 0.5) * np.arange(1, N_CEPS + 1)[:, None])
    return mel @ basis.T


# knn-cmn: the chosen envelopes averaged over 25 ms (over 5 or 45 ms the similarity was lower:
# 0.548 and 0.545 against 0.552, 12 names, a prototype pulling all the way)
CMN_SMOOTH = 5


def _cmn_ceps(on_grid: np.ndarray) -> np.ndarray:
    """Mel cepstra of log envelopes on GRID, less their mean over all the frames given, unit
    length. The mean is mostly the voice's (and the channel's) average shape, so what is left
    is more what changes from sound to sound: a vowel of the insert is matched to the same
    vowel of the speaker's even where the two voices' tilts differ."""
    c = _ceps(on_grid)
    c = c - c.mean(axis=0)
    return c / (np.linalg.norm(c, axis=1, keepdims=True) + 1e-9)


def cmn_envelopes(on_grid: np.ndarray, target: Profile, k: int = KNN) -> np.ndarray:
    """Each frame's envelope (log, on GRID, the insert's frames in order: their mean is taken
    out) as the mean of the ``k`` speaker frames nearest by cosine of ``_cmn_ceps``. Level
    removed on the way out."""
    assert target.cmn is not None and target.frames is not None
    near = np.argsort(-(_cmn_ceps(on_grid) @ target.cmn.T), axis=1)[:, :k]
    return target.frames[near].mean(axis=1)


def knn_envelopes(log_env: np.ndarray, target: Profile, k: int = KNN) -> np.ndarray:
    """Each frame's envelope replaced by the mean of the ``k`` speaker frames nearest to it
    in mel cepstrum (kNN-VC's matching, on WORLD envelopes): the speaker's own spectra, in the
    insert's order. Log envelopes on GRID, level removed, in and out."""
    own = _ceps(target.frames)
    q = _ceps(log_env)
    d = ((q[:, None, :] - own[None, :, :]) ** 2).sum(-1)  # [insert frames, speaker frames]
    near = np.argsort(d, axis=1)[:, :k]
    return target.frames[near].mean(axis=1)


def convert(x: np.ndarray, rate: int, source: Profile, target: Profile, contour: np.ndarray | None = None,
            envelope: bool = True, knn: bool | str = False) -> np.ndarray:
    """``x`` (a stock voice's speech, profile ``source``) with the pitch and the timbre of
    ``target``; with ``contour`` (``original_contour``), the original words' pitch movement.
    ``knn``: True pulls each voiced frame toward the speaker's nearest frames in cepstrum;
    "cmn" toward those nearest once each voice's mean is out (``_cmn_replace``; the insert's
    F0 by harvest, and ``target`` should be ``profile(..., harvest=True)``)."""
    import pyworld as pw

    if len(x) < int(0.05 * rate):
        return x
    f0, sp, ap = _analyse(x, rate, harvest=knn == "cmn")
    voiced = f0 > 0
    if contour is not None:
        f0 = _contour_f0(f0, contour)  # already the speaker's own pitch
    else:
        spread = float(np.clip(target.lf0_std / source.lf0_std, *SPREAD_LIMITS))
        f0 = np.where(voiced, np.exp(target.lf0_mean + (np.log(np.maximum(f0, 1.0)) - source.lf0_mean) * spread),
                      0.0)
    if envelope:
        alpha, filt = mapping(source, target)
        freqs = _freqs(sp, rate)
        # sp'(f) = sp(f / alpha) * filter(f), per frame; above GRID's top the filter holds its last value
        idx = np.clip(freqs / alpha, 0, freqs[-1])
        sp = np.stack([np.interp(idx, freqs, frame) for frame in sp])
        sp = sp * np.exp(np.interp(freqs, GRID, filt))[None, :]
        if knn and target.frames is not None and len(target.frames) >= 4 * KNN and voiced.any():
            if knn == "cmn" and target.cmn is not None:
                sp = _cmn_replace(sp, freqs, voiced, target)
            elif knn is True:
                sp = _knn_replace(sp, freqs, voiced, target)
    y = pw.synthesize(np.ascontiguousarray(f0), np.ascontiguousarray(sp), np.ascontiguousarray(ap), rate,
                      frame_period=FRAME_MS)
    return y[: len(x)].astype(np.float32)
