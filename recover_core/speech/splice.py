"""Putting new audio where a private word was: loudness, crossfades, bleeps, and a click check.

pyloudnorm's LUFS needs blocks of at least 400 ms, longer than one word, so loudness is
matched by RMS over the loud frames of the neighbouring words (a second either side), not
the whole file (preiss2023's pydub gain match is whole-file). Every seam is a raised-cosine
crossfade of ``FADE_S``: a cut at a zero crossing still clicks, a crossfade does not.
Where a seam of a recording still measures as a click, the recording is spliced again with
the longer crossfades of ``FADES`` (``replace_click_free``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recover_core.asr.audio import frame_rms

FADE_S = 0.005
FADES = (FADE_S, 0.010, 0.020)  # tried in turn until every seam of a recording is click-free
FRAME_S = 0.010
CONTEXT_S = 1.0
BLEEP_HZ = 1000.0
STRETCH_LIMITS = (0.8, 1.25)  # how far a substitute's duration is pulled toward the original's
CLICK_RATIO = 2.0  # a seam's click_ratio above this is a click


def frames_rms(x: np.ndarray, rate: int, frame_s: float = FRAME_S) -> np.ndarray:
    return frame_rms(x, max(1, int(rate * frame_s)))


def active_rms(x: np.ndarray, rate: int, floor_db: float = 30.0) -> float:
    """RMS over the frames within ``floor_db`` of the loudest: speech, not the pauses."""
    r = frames_rms(x, rate)
    if len(r) == 0 or r.max() <= 0:
        return 0.0
    loud = r[r >= r.max() * 10 ** (-floor_db / 20)]
    return float(np.sqrt(np.mean(loud ** 2)))


def context_rms(x: np.ndarray, rate: int, start: int, end: int) -> float:
    """Loudness of the neighbouring words: a second before ``start`` and after ``end``; the
    span itself when it has no neighbours."""
    c = int(CONTEXT_S * rate)
    around = np.concatenate([x[max(0, start - c):start], x[end:end + c]])
    level = active_rms(around, rate)
    return level if level > 0 else active_rms(x[start:end], rate)


def trim(x: np.ndarray, rate: int, floor_db: float = 40.0, pad_s: float = 0.01) -> np.ndarray:
    """Leading and trailing silence cut off (TTS pads its output), keeping ``pad_s``."""
    r = frames_rms(x, rate)
    if len(r) == 0 or r.max() <= 0:
        return x
    loud = np.nonzero(r >= r.max() * 10 ** (-floor_db / 20))[0]
    n, pad = max(1, int(rate * FRAME_S)), int(rate * pad_s)
    return x[max(0, loud[0] * n - pad):min(len(x), (loud[-1] + 1) * n + pad)]


def scaled(x: np.ndarray, rate: int, level: float) -> np.ndarray:
    """``x`` at the given active RMS, without clipping."""
    own = active_rms(x, rate)
    if own <= 0 or level <= 0:
        return x
    y = x * (level / own)
    peak = float(np.abs(y).max())
    return y / peak * 0.99 if peak > 0.99 else y


def bleep(n: int, rate: int, level: float) -> np.ndarray:
    """A 1 kHz tone of ``n`` samples at RMS ``level`` (a sine's RMS is its amplitude / √2)."""
    t = np.arange(n) / rate
    return (np.sin(2 * np.pi * BLEEP_HZ * t) * level * np.sqrt(2)).astype(np.float32)


def _ramp(n: int) -> np.ndarray:
    return (0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)).astype(np.float32)  # raised cosine, 0 -> 1


@dataclass(frozen=True)
class Cut:
    start: int  # samples of the input
    end: int
    insert: np.ndarray  # what replaces [start, end), at the input's rate


def replace(x: np.ndarray, rate: int, cuts: list[Cut],
            fade_s: float = FADE_S) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The audio with every cut replaced, and where each insert lies in the output.

    At each seam the outgoing side fades out while the incoming fades in, over ``fade_s``
    (overlap-add), so no sample jumps. Two cuts back to back ("Danny Eliot", the names'
    spans touching) are crossfaded insert to insert: a bridge of the original between them
    would be a few milliseconds of the second name, and a burst between two quiet edges.
    There the two inserts share their seam, and each one's place ends or starts at its middle."""
    f = max(1, int(fade_s * rate))
    up, down = _ramp(f), _ramp(f)[::-1]
    out: list[np.ndarray] = []
    placed: list[list[int]] = []
    at = length = 0  # next input sample not yet copied; output samples so far
    tail, prev_end = None, 0  # the last insert's final f samples, not yet written, and where its cut ended

    def close(pending: np.ndarray, end: int) -> None:  # the seam from an insert back into the original
        nonlocal at, length
        back = x[end:end + f].astype(np.float32)
        out.append(pending * down + np.pad(back, (0, f - len(back))) * up)
        length += f
        placed[-1][1] = length
        at = min(end + f, len(x))

    for cut in sorted(cuts, key=lambda c: c.start):
        ins = np.asarray(cut.insert, dtype=np.float32)
        if len(ins) < 2 * f:
            ins = np.pad(ins, (0, 2 * f - len(ins)))
        end = min(max(cut.end, cut.start + 1), len(x))
        if tail is not None and cut.start < prev_end + 2 * f:  # back to back: insert into insert
            out.append(tail * down + ins[:f] * up)
            placed[-1][1] = length + f // 2
            placed.append([length + f // 2, 0])
            length += f
        else:
            if tail is not None:
                close(tail, prev_end)
            start = max(cut.start, at + f)
            head = x[at:start].astype(np.float32).copy()
            if len(head) >= f:
                head[-f:] = head[-f:] * down + ins[:f] * up
            out.append(head)
            placed.append([length + len(head) - f, 0])
            length += len(head)
        body = ins[f:len(ins) - f]
        out.append(body)
        length += len(body)
        tail, prev_end = ins[len(ins) - f:], end
    if tail is not None:
        close(tail, prev_end)
    out.append(x[at:].astype(np.float32))
    return np.concatenate(out), [(a, b) for a, b in placed]


def replace_click_free(x: np.ndarray, rate: int, cuts: list[Cut],
                       fades: tuple[float, ...] | None = None
                       ) -> tuple[np.ndarray, list[tuple[int, int]], list[tuple[float, float]]]:
    """``replace`` with the shortest crossfade of ``fades`` (default ``FADES``) at which every
    seam is click-free, else the one whose worst seam is mildest; with each insert's
    (entry, exit) click ratio. A seam next to a sharp onset of speech can measure as a
    click at 5 ms and not at 10 or 20 (4 of 392 seams of the speech bench)."""
    best = None
    for fade_s in fades or FADES:
        out, placed = replace(x, rate, cuts, fade_s)
        clicks = seam_clicks(out, rate, placed, fade_s)
        worst = max((max(c) for c in clicks), default=0.0)
        if best is None or worst < best[0]:
            best = (worst, out, placed, clicks)
        if worst <= CLICK_RATIO:
            break
    return best[1], best[2], best[3]


def seam_clicks(out: np.ndarray, rate: int, placed: list[tuple[int, int]],
                fade_s: float = FADE_S) -> list[tuple[float, float]]:
    """``click_ratio`` at each insert's entry and exit seam. A replacement that starts the
    file (or ends it) has no seam there: 0."""
    fade, floor = int(fade_s * rate), audible_step(out)
    return [(click_ratio(out, rate, a + fade // 2, floor, fade_s) if a > fade else 0.0,
             click_ratio(out, rate, b - fade // 2, floor, fade_s) if b < len(out) - fade else 0.0)
            for a, b in placed]


def audible_step(x: np.ndarray) -> float:
    """A tenth of the recording's 99th-percentile sample step: a jump smaller than this,
    even where the audio around is near silence, is under the level of the speech itself."""
    d = np.abs(np.diff(x.astype(np.float64)))
    return 0.1 * float(np.percentile(d, 99)) if len(d) else 0.0


def click_ratio(x: np.ndarray, rate: int, at: int, floor: float = 0.0, fade_s: float = FADE_S) -> float:
    """How sharply the waveform jumps at a seam, against its own steepest steps nearby.

    A click is a discontinuity: broadband energy packed into a sample or two, which shows
    as a spike in the first difference (a high-pass filter). The ratio is the largest
    |x[i+1] - x[i]| within one crossfade (``fade_s``) of ``at``, over the 99th percentile of
    the same over the 20 ms either side (the seam left out), or over ``floor`` where that is larger
    (near silence, a ratio of two tiny steps says nothing: ``audible_step``). A hard cut
    through a voiced sound gives 10 or more; a crossfaded seam stays near 1. ``CLICK_RATIO``
    is the line."""
    f = max(1, int(fade_s * rate))
    w = int(0.02 * rate)
    lo, hi = max(0, at - f - w), min(len(x) - 1, at + f + w)
    d = np.abs(np.diff(x[lo:hi + 1].astype(np.float64)))
    seam = np.zeros(len(d), bool)
    seam[max(0, at - f - lo):max(0, at + f - lo)] = True
    if not seam.any() or seam.all():
        return 0.0
    around = np.percentile(d[~seam], 99)
    return float(d[seam].max() / max(around, floor, 1e-6))
