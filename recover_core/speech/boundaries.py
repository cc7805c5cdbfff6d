"""Word boundaries precise enough to cut at.

Whisper's cross-attention times are coarse (about ±0.1 s), and a cut 0.1 s early clips the
word before. So each private span is re-aligned by forced alignment: pocketsphinx (CMU
Sphinx's English acoustic model and CMUdict, from PyPI, offline) aligns the transcript (or,
where some word is not in CMUdict, a window of the span and its neighbours), and the span's
edges are where its first word starts and its last word ends. Where alignment cannot run (a word not in the
dictionary, or no path through the audio), each edge moves instead to the quietest 10 ms
within ``SEARCH_S`` of Whisper's time. ``bench/speech_obfuscation.py`` measures both against
known boundaries.

Either way, each edge is then snapped outward to the quietest 10 ms nearby (up to
``OUTWARD_S`` outside the word, ``INWARD_S`` inside): a seam in a quiet place crossfades
quiet into quiet, and a privacy tool had rather take a sliver of the neighbour's silence
than leave a sliver of the name audible.

A number Whisper writes in figures ("72", "300,000", "14 March 1960.") is one word with one
time, and no CMUdict word: it is aligned as the words said ("seventy two", "three hundred
thousand", "fourteenth march nineteen sixty", ``said_as``), so its edges are where the first
spoken word starts and the last ends. Where alignment still fails, a span holding figures
searches wider for its quiet edges (``NUMBER_SEARCH_S``): Whisper's time for such a token is
often off by more than a word ("seventy" said before "72"'s start), and a leftover "two" of
"seventy two" is heard in the output.
"""
from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from recover_core.asr import audio

if TYPE_CHECKING:
    from recover_core.asr.alignment import Word

SEARCH_S = 0.12
NUMBER_SEARCH_S = 0.3
OUTWARD_S, INWARD_S = 0.06, 0.02
WINDOW_PAD_S = 0.3
_WORD = re.compile(r"[^a-z0-9']+")
_MONTHS = frozenset("january february march april may june july august september october november december".split())
_DATING = frozenset({"in", "since", "until", "till", "by", "from", "during", "before", "after", "born", "of"})
_DIGITS = "zero one two three four five six seven eight nine".split()
_NUMBER_WORDS = frozenset(_DIGITS[1:] + ("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen "
                                          "nineteen twenty thirty forty fifty sixty seventy eighty ninety").split())
_ORDINAL = re.compile(r"(\d{1,2})(?:st|nd|rd|th)")


@dataclass(frozen=True)
class Edges:
    start: float  # seconds
    end: float
    method: str  # "aligned" or "energy"


@functools.lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    from pocketsphinx import get_model_path

    words = set()
    with open(f"{get_model_path()}/en-us/cmudict-en-us.dict", encoding="utf-8") as f:
        for line in f:
            words.add(line.split(" ", 1)[0].split("(", 1)[0])
    return frozenset(words)


def spoken(word: str) -> str:
    """A recognizer word as CMUdict spells it: lower case, no punctuation."""
    return _WORD.sub("", word.lower().replace("’", "'")).strip("'")


def _say_token(token: str, before: str, after: str) -> str:
    """A token holding figures as it is said, by its neighbours: a day beside a month as an
    ordinal ("14" of "14 March"), a four-digit number beside a month or after a word that
    dates as a year ("nineteen sixty"), a sum with its currency ("three hundred thousand
    pounds"), any other as a cardinal."""
    from recover_core.text import spoken as said

    core = token.strip(".,;:!?\"'()")
    month = before in _MONTHS or after in _MONTHS
    if m := _ORDINAL.fullmatch(core.lower()):
        return said.say(int(m[1]), "ordinal")
    if core.isdigit() and month and 1 <= int(core) <= 31:
        return said.say(int(core), "ordinal")
    if core.isdigit() and len(core) == 4 and 1100 <= int(core) <= 2099 and (month or before in _DATING):
        return said.say(int(core), "year")
    if re.fullmatch(r"'?0\d", core) and (month or before in _DATING):
        return said.say(int(core[-1]), "oh")  # "since 06": a year in two digits, "oh six"
    if re.fullmatch(r"0\d+|\d{5,}|\d+(?:[-/ ]\d+)+", core):
        # an identifier (a phone, card or case number) is said digit by digit
        return " ".join(_DIGITS[int(c)] for c in core if c.isdigit())
    return said.say_figures(core, "AMOUNT")


def said_as(words: list[str]) -> list[list[str]]:
    """Each recognizer word as the CMUdict words a speaker said for it: a word in figures
    as its number in words (``_say_token``), a hyphenated one as its parts ("forty-seven"),
    any other as ``spoken`` spells it."""
    low = [spoken(w) for w in words]
    out = []
    for i, w in enumerate(words):
        if any(c.isdigit() for c in w):
            before, after = (low[i - 1] if i else ""), (low[i + 1] if i + 1 < len(words) else "")
            w = _say_token(w, before, after)
        parts = [spoken(p) for p in re.split(r"[\s\-–]+", w)]
        out.append([p for p in parts if p] or [spoken(w)])
    return out


_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _decoder():
    # Loading the acoustic model takes about 0.3 s: once per process, reused under a lock.
    from pocketsphinx import Decoder

    return Decoder(samprate=16000, bestpath=False, loglevel="FATAL")


def _forced(samples: np.ndarray, tokens: list[str]) -> tuple[list, float | None]:
    """``tokens`` forced onto 16 kHz ``samples`` by pocketsphinx: its segments (words and
    silences, in 10 ms frames) and its path score; ([], None) where there is no path."""
    pcm = (np.clip(samples, -1, 1) * 32767).astype(np.int16).tobytes()
    with _LOCK:
        d = _decoder()
        d.set_align_text(" ".join(tokens))
        d.start_utt()
        d.process_raw(pcm, full_utt=True)
        d.end_utt()
        seg, hyp = d.seg(), d.hyp()
        return ([] if seg is None else list(seg)), (None if hyp is None else hyp.score)


Said = dict[tuple[int, int], list[str]]  # (first, last) word range -> the words the speaker said for it


def align(samples: np.ndarray, words: list[str], offset: float,
          said: Said | None = None) -> list[tuple[float, float]] | None:
    """(start, end) of each word in 16 kHz ``samples`` (times shifted by ``offset``), or None
    when a word is not in the dictionary or alignment finds no path. ``said``: word ranges
    whose spoken words are known (``said_in``), aligned as said; the range's first word then
    holds them all and its other words end where it does."""
    groups = said_as(words)
    for (first, last), tokens in (said or {}).items():
        groups[first:last] = [list(tokens)] + [[] for _ in range(first + 1, last)]
    tokens = [t for g in groups for t in g]
    if not tokens or any(t not in _dictionary() for t in tokens):
        return None
    seg, _ = _forced(samples, tokens)
    found = [(s.start_frame / 100 + offset, (s.end_frame + 1) / 100 + offset) for s in seg
             if not s.word.startswith("<") and not s.word.startswith("[")]
    if len(found) != len(tokens):
        return None
    out: list[tuple[float, float]] = []
    at = 0
    for g in groups:  # a word said as several spans from its first's start to its last's end
        out.append((found[at][0], found[at + len(g) - 1][1]) if g else (out[-1][1], out[-1][1]))
        at += len(g)
    return out


def quietest(samples: np.ndarray, at: float, rate: int = 16000, search: float = SEARCH_S,
             after: float | None = None) -> float:
    """The middle of the quietest 10 ms frame from ``search`` seconds before ``at`` to
    ``after`` seconds after it (``search`` again when not given); ``at`` where there is none."""
    after = search if after is None else after
    cut = audio.quietest(samples, int((at - search) * rate), int((at + after) * rate), rate // 100)
    return at if cut is None else cut / rate


def _aligned(samples: np.ndarray, words: list[Word], first: int, last: int, rate: int,
             whole: list[tuple[float, float]] | None) -> tuple[float, float] | None:
    """(start, end) of words[first:last] by forced alignment, or None.

    ``whole`` is the alignment of the whole transcript, made once for every span, when
    every word is in the dictionary: a window cut out of running speech holds parts of
    words its text does not name, which pull the aligner off. Otherwise a window with two
    neighbours each side, then one."""
    if whole is not None and whole[last - 1][1] > whole[first][0]:
        return whole[first][0], whole[last - 1][1]
    for k in (2, 1):
        lo, hi = max(0, first - k), min(len(words), last + k)
        t0 = max(0.0, words[lo].start - WINDOW_PAD_S)
        t1 = min(len(samples) / rate, words[hi - 1].end + WINDOW_PAD_S)
        got = align(samples[int(t0 * rate):int(t1 * rate)], [w.word for w in words[lo:hi]], t0)
        if got is not None and got[last - 1 - lo][1] > got[first - lo][0]:
            return got[first - lo][0], got[last - 1 - lo][1]
    return None


Alignment = list[tuple[float, float]] | None


def align_transcript(samples: np.ndarray, words: list[Word], said: Said | None = None) -> Alignment:
    """Every word's (start, end) by forced alignment of the whole transcript, or None;
    ``said`` as for ``align``."""
    return align(samples, [w.word for w in words], 0.0, said)


def refine_many(samples: np.ndarray, words: list[Word], spans: list[tuple[int, int]],
                rate: int = 16000, whole: Alignment | bool = True, outward: bool = True) -> list[Edges]:
    """Cut points for each (first, last) word range of 16 kHz ``samples``, in order. Edges of
    neighbouring spans that the outward snap made cross meet halfway.

    ``outward=False`` snaps each edge inward instead (up to ``OUTWARD_S`` inside the range,
    ``INWARD_S`` outside it): for a range whose edge word is said again anyway, where a
    sliver of it left behind is harmless and a sliver of the next word cut is not.

    ``whole``: the transcript's alignment when the caller has it (``align_transcript``; two
    lists of spans over one recording share it), True to align here."""
    if whole is True:
        whole = align_transcript(samples, words) if spans else None
    out = [_refine(samples, words, first, last, rate, whole, outward) for first, last in spans]
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        (a0, a1), (b0, b1) = meet_halfway((a.start, a.end), (b.start, b.end))
        out[i], out[i + 1] = Edges(a0, a1, a.method), Edges(b0, b1, b.method)
    return out


def meet_halfway(a: tuple[float, float], b: tuple[float, float]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Two cuts, ``a`` before ``b``: where they cross, they meet halfway; else as they are."""
    if b[0] >= a[1]:
        return a, b
    mid = (a[1] + b[0]) / 2
    return (a[0], mid), (mid, b[1])


def refine(samples: np.ndarray, words: list[Word], first: int, last: int, rate: int = 16000) -> Edges:
    """Cut points for words[first:last] (a private span) in 16 kHz ``samples``."""
    return refine_many(samples, words, [(first, last)], rate)[0]


def _refine(samples: np.ndarray, words: list[Word], first: int, last: int, rate: int,
            whole: list[tuple[float, float]] | None, outward: bool = True) -> Edges:
    got = _aligned(samples, words, first, last, rate, whole)
    if got is not None:
        (start, end), method = got, "aligned"
    else:
        # figures: Whisper's time for a spoken number is coarser than for a word (see above)
        search = NUMBER_SEARCH_S if any(c.isdigit() for w in words[first:last] for c in w.word) else SEARCH_S
        start = (quietest(samples, words[first].start, rate, search, SEARCH_S) if first > 0
                 else max(0.0, words[first].start - 0.05))
        end = (quietest(samples, words[last - 1].end, rate, SEARCH_S, search) if last < len(words)
               else min(len(samples) / rate, words[last - 1].end + 0.1))
        method = "energy"
    out, into = (OUTWARD_S, INWARD_S) if outward else (INWARD_S, OUTWARD_S)
    start = quietest(samples, start, rate, out, into)
    end = quietest(samples, end, rate, into, out)
    return Edges(start, max(end, start + 0.05), method)


# --- how a number in figures was said ------------------------------------------------------
# Whisper's figures lose how a number was said: "2010" may have been "two thousand and ten",
# "two thousand ten" or "twenty ten", and "March 21" may have been "march the twenty first"
# (it most often drops that "the"). The substitute should be said the speaker's way, so each
# reading is force-aligned over the span's audio and the one pocketsphinx scores best is kept.
MAX_READINGS = 16  # a date with a year and a day of both orders has 12; more is not a date


def _year_readings(value: int) -> list[list[str]]:
    """The ways a year from 2001 to 2099 is said: "two thousand and ten", "two thousand ten",
    "twenty ten" (for 2001-2009 "twenty oh five"). Before 2000 a year is said in two halves
    only ("nineteen eighty"), so there is nothing to choose."""
    from recover_core.text import spoken as said

    if not 2001 <= value <= 2099:
        return []
    rest = said.say(value - 2000, "cardinal").split()
    pair = ["twenty", "oh", *rest] if value < 2010 else ["twenty", *rest]
    return [["two", "thousand", "and", *rest], ["two", "thousand", *rest], pair]


_SCALE_WORDS = frozenset({"thousand", "million", "billion"})


def _cardinal_readings(group: list[str]) -> list[list[str]]:
    """The ways a number over a hundred is said besides ``group`` (its words without "and"):
    with "and" after each "hundred" that has tens or units after it ("two hundred and fifty
    thousand"), and "a hundred" for a leading "one hundred"; [] where there is nothing else."""
    out = [group]
    hundreds = [j for j, w in enumerate(group[:-1]) if w == "hundred" and group[j + 1] not in _SCALE_WORDS | {"and"}
                and group[j + 1] in _NUMBER_WORDS]
    if hundreds:
        with_and = [t for j, w in enumerate(group) for t in ([w, "and"] if j in hundreds else [w])]
        out.append(with_and)
    if group[:2] in (["one", "hundred"], ["one", "thousand"]):
        out += [["a", *g[1:]] for g in out]
    return out[1:]


def _is_day(token: str) -> bool:
    core = token.strip(".,;:!?\"'()").lower()
    m = _ORDINAL.fullmatch(core)
    day = int(m[1]) if m else int(core) if core.isdigit() and len(core) <= 2 else 0
    return 1 <= day <= 31


def readings(words: list[str], first: int, last: int, date: bool = False) -> list[list[str]]:
    """Each way a speaker may have said ``words[first:last]`` (a span holding figures; the
    rest of ``words`` is context) as CMUdict words, ``said_as``'s reading first. Where there
    is one reading only (no year after 2000, no day of a month), that one.

    The choices follow how English numbers are said, not any list of phrases: a year from
    2001 in a date (``date``: the span is a date) is said with "thousand" and "and", with
    "thousand" alone, or in two halves; a day after its month may have "the" before it
    ("march the twenty first"); a day before its month may have "the" before it and "of"
    after it ("the twenty first of march"), unless the transcript already has them."""
    from recover_core.text import spoken as said

    groups = said_as(words)
    low = [spoken(w) for w in words]
    options: list[list[list[str]]] = []
    for i in range(first, last):
        own = [groups[i]]
        core = words[i].strip(".,;:!?\"'()")
        if any(c.isdigit() for c in core):
            year = core.isdigit() and len(core) == 4 and 1100 <= int(core) <= 2099
            if year and date:  # in a date it is a year, whatever its neighbours
                own = _year_readings(int(core)) or [said.say(int(core), "year").split()]
            elif year and groups[i] != said_as([core])[0]:  # said_as took it for a year by its neighbours
                own += [r for r in _year_readings(int(core)) if r != groups[i]]
            elif not year and not _is_day(words[i]):  # "a hundred and fifty", "two hundred fifty thousand"
                own += _cardinal_readings(groups[i])
            if _is_day(words[i]):
                prev, nxt = (low[i - 1] if i else ""), (low[i + 1] if i + 1 < len(words) else "")
                if prev in _MONTHS:
                    own += [["the", *g] for g in own]
                elif nxt in _MONTHS:
                    if prev != "the":
                        own += [["the", *g] for g in own]
                    own += [[*g, "of"] for g in own]
        options.append(own)
    out: list[list[str]] = [[]]
    for own in options:
        out = [r + g for r in out for g in own]
        if len(out) > MAX_READINGS:
            return [[t for g in groups[first:last] for t in g]]  # not a number as people say one
    return out


def _score(samples: np.ndarray, tokens: list[str]) -> float | None:
    """pocketsphinx's path score for ``tokens`` forced onto 16 kHz ``samples`` (a probability
    scaled as its log domain gives it: higher is a better fit), or None where there is no path.
    Each reading is aligned over the same audio, so the scores compare; the aligner charges
    no penalty per word, so a reading with a word never said loses by the audio alone."""
    if not tokens or any(t not in _dictionary() for t in tokens):
        return None
    return _forced(samples, tokens)[1]


EDGE_PAD_S = 0.05  # around a window whose edges are aligned word boundaries


def said_in(samples: np.ndarray, words: list[Word], first: int, last: int, date: bool = False,
            whole: Alignment = None, rate: int = 16000) -> str | None:
    """The words a speaker said for ``words[first:last]`` (a span Whisper wrote in figures),
    chosen among ``readings`` by forced alignment over the span and two neighbours each side
    (then one, then none: CMUdict may lack a neighbour); None where there is one reading
    only or none aligns. The result holds the original's words: memory only.

    ``whole``, the transcript's alignment where there is one, puts the window's edges at its
    neighbours' word boundaries: a window cut at Whisper's times holds parts of words its
    text does not name, and measured worse (a "the" was found in "december twenty fourth")."""
    texts = [w.word for w in words]
    options = readings(texts, first, last, date)
    if len(options) < 2:
        return None
    groups = said_as(texts)
    # The whole recording first: a window's edges come from an alignment made with the
    # default reading, and where the speaker said more ("two thousand and ten" for "twenty
    # ten") they fall inside the number, which then fits the shorter reading best.
    for k in (len(words), 2, 1, 0):
        lo, hi = max(0, first - k), min(len(words), last + k)
        left = [t for g in groups[lo:first] for t in g]
        right = [t for g in groups[last:hi] for t in g]
        if whole is not None:
            # the recording's own ends where the window reaches them: the aligner takes silence
            t0 = whole[lo][0] - EDGE_PAD_S if lo else 0.0
            t1 = whole[hi - 1][1] + EDGE_PAD_S if hi < len(words) else len(samples) / rate
        else:
            t0, t1 = words[lo].start - WINDOW_PAD_S, words[hi - 1].end + WINDOW_PAD_S
        window = samples[int(max(0.0, t0) * rate):int(min(len(samples) / rate, t1) * rate)]
        scores = [_score(window, left + r + right) for r in options]
        if any(s is not None for s in scores):
            best = max(range(len(options)), key=lambda j: -1.0 if scores[j] is None else scores[j])
            return " ".join(options[best])
    return None
