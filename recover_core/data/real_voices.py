"""Recordings of real speakers (not TTS) that say person names, with the names marked.

Each utterance gives its audio file, its speaker, its transcript and the character spans
of the person names in that transcript: the ground truth that the speech bench scores
"name found", "original heard" and speaker similarity against (issue 85, "Real voices").

Where the recordings come from (docs/real_voices.md lists everything that was searched):

- ``librivox``: Debian's ``pocketsphinx-testdata``, five sentences of LibriVox's *Sense
  and Sensibility*, chapter 1, read by one volunteer (LibriVox recordings are in the
  public domain; the package is BSD-2). One name: "john dashwood", marked by hand.
- ``manifest``: corpora a user holds (LibriSpeech, CMU ARCTIC, VCTK, their own
  recordings), listed in JSON-lines manifests named by ``RECOVER_REAL_VOICES`` (paths
  joined with ``os.pathsep``) or passed to :func:`load`. One object a line::

      {"path": "wav/a0001.wav", "speaker": "bdl", "transcript": "Author of the danger
       trail, Philip Steels, etc.", "names": ["Philip Steels"], "licence": "CMU ARCTIC
       (BSD-style)", "source": "cmu_arctic"}

  ``names`` holds either the name strings (each found left to right in the transcript)
  or ``[start, end]`` character spans; relative paths are read from the manifest's folder.

No package on PyPI, Debian or npm that installs here carries the issue's goal of at
least 5 real speakers and 40 spoken names (checked 2026-12-03); :func:`meets_goal`
says whether what is installed does. Nothing here touches the network.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from recover_core.errors import RecoverError

ENV = "RECOVER_REAL_VOICES"
GOAL_SPEAKERS = 5
GOAL_NAMES = 40

PSPHINX_LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
LIBRIVOX_INSTALL = "apt-get install pocketsphinx-testdata"
LIBRIVOX_LICENCE = ("LibriVox recording, public domain; shipped in Debian's "
                    "pocketsphinx-testdata (BSD-2, Carnegie Mellon University)")
LIBRIVOX_SPEAKER = "librivox-sense-and-sensibility-ch01"

# Person names in the LibriVox sentences, marked by hand from the transcripts (each string
# is found left to right in its utterance; a title such as "mister" stays outside the span).
LIBRIVOX_NAMES: dict[str, tuple[str, ...]] = {
    "sense_and_sensibility_01_austen_64kb-0870": ("john dashwood",),
    "sense_and_sensibility_01_austen_64kb-0880": (),
    "sense_and_sensibility_01_austen_64kb-0890": (),
    "sense_and_sensibility_01_austen_64kb-0920": (),
    "sense_and_sensibility_01_austen_64kb-0930": (),
}


class RealVoicesMissing(RecoverError):
    """No real recordings are installed or listed."""


@dataclass(frozen=True)
class RealUtterance:
    path: Path
    speaker: str
    transcript: str
    names: tuple[tuple[int, int], ...]  # character spans of person names in transcript
    source: str
    licence: str
    marked_by: str  # "hand" (this module's tables) or the manifest's own marking

    @property
    def name_texts(self) -> tuple[str, ...]:
        return tuple(self.transcript[a:b] for a, b in self.names)


def spans_of(transcript: str, names: Iterable[str]) -> tuple[tuple[int, int], ...]:
    """Character spans of ``names`` in ``transcript``, each found after the previous one,
    on word boundaries, case-insensitively."""
    out, at = [], 0
    for name in names:
        m = re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)", re.IGNORECASE).search(transcript, at)
        if m is None:
            raise RecoverError(f"name {name!r} is not in the transcript {transcript!r}")
        out.append((m.start(), m.end()))
        at = m.end()
    return tuple(out)


def _read_sphinx_transcription(path: Path) -> dict[str, str]:
    """``<s> words </s> (uttid)`` lines, as CMU Sphinx writes them."""
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*(.*?)\s*\(([^()]+)\)\s*$", line)
        if m:
            words = m.group(1).replace("<s>", " ").replace("</s>", " ")
            table[m.group(2)] = " ".join(words.split())
    return table


def librivox(root: Path = PSPHINX_LIBRIVOX) -> list[RealUtterance]:
    """The LibriVox sentences of pocketsphinx-testdata; [] when the package is absent."""
    listing = root / "transcription"
    if not listing.is_file():
        return []
    table = _read_sphinx_transcription(listing)
    out = []
    for utt, names in LIBRIVOX_NAMES.items():
        wav = root / f"{utt}.wav"
        if utt not in table or not wav.is_file():
            raise RecoverError(f"{root} lacks {utt}: reinstall it ({LIBRIVOX_INSTALL})")
        text = table[utt]
        out.append(RealUtterance(wav, LIBRIVOX_SPEAKER, text, spans_of(text, names),
                                 "librivox", LIBRIVOX_LICENCE, "hand"))
    return out


def _manifest_names(raw, transcript: str, where: str) -> tuple[tuple[int, int], ...]:
    if not isinstance(raw, list):
        raise RecoverError(f"{where}: 'names' must be a list of strings or [start, end] pairs")
    if all(isinstance(n, str) for n in raw):
        try:
            return spans_of(transcript, raw)
        except RecoverError as e:
            raise RecoverError(f"{where}: {e}") from None
    spans = []
    for n in raw:
        ok = (isinstance(n, list) and len(n) == 2 and all(isinstance(i, int) for i in n)
              and 0 <= n[0] < n[1] <= len(transcript))
        if not ok:
            raise RecoverError(f"{where}: name span {n!r} does not lie in the transcript "
                               f"({len(transcript)} characters)")
        spans.append((n[0], n[1]))
    return tuple(sorted(spans))


def read_manifest(path: str | Path) -> list[RealUtterance]:
    """Utterances listed in one JSON-lines manifest (see the module's docstring)."""
    path = Path(path)
    if not path.is_file():
        raise RecoverError(f"real-voices manifest {path} does not exist")
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{i}"
        try:
            row = json.loads(line)
        except ValueError as e:
            raise RecoverError(f"{where}: not JSON ({e})") from None
        missing = [k for k in ("path", "speaker", "transcript", "names") if k not in row]
        if not isinstance(row, dict) or missing:
            raise RecoverError(f"{where}: needs path, speaker, transcript and names (missing {missing})")
        audio = Path(row["path"])
        audio = audio if audio.is_absolute() else path.parent / audio
        if not audio.is_file():
            raise RecoverError(f"{where}: audio file {audio} does not exist")
        text = str(row["transcript"])
        out.append(RealUtterance(audio, str(row["speaker"]), text,
                                 _manifest_names(row["names"], text, where),
                                 str(row.get("source", path.stem)),
                                 str(row.get("licence", "unknown")),
                                 str(row.get("marked_by", "manifest"))))
    return out


def manifests_from_env() -> list[Path]:
    value = os.environ.get(ENV, "")
    return [Path(p) for p in value.split(os.pathsep) if p.strip()]


def load(manifests: Iterable[str | Path] | None = None, *, require: bool = True,
         librivox_root: Path = PSPHINX_LIBRIVOX) -> list[RealUtterance]:
    """Every real utterance installed here, then those of the manifests (by default the
    ones ``RECOVER_REAL_VOICES`` names). Raises :class:`RealVoicesMissing` when there is
    none and ``require`` is set."""
    out = librivox(librivox_root)
    for m in (manifests_from_env() if manifests is None else manifests):
        out += read_manifest(m)
    if not out and require:
        raise RealVoicesMissing(
            f"no recordings of real speakers are installed: run `{LIBRIVOX_INSTALL}` "
            f"(part of `make data`), or list a corpus you hold in a manifest named by {ENV}")
    return out


def summary(utterances: Iterable[RealUtterance]) -> dict:
    utts = list(utterances)
    return {"utterances": len(utts),
            "speakers": len({u.speaker for u in utts}),
            "names": sum(len(u.names) for u in utts),
            "utterances_with_names": sum(1 for u in utts if u.names),
            "sources": sorted({u.source for u in utts})}


def meets_goal(utterances: Iterable[RealUtterance]) -> bool:
    """Issue 85's bar for judging speech figures on real voices: 5 speakers, 40 names."""
    s = summary(utterances)
    return s["speakers"] >= GOAL_SPEAKERS and s["names"] >= GOAL_NAMES
