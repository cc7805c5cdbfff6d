"""Real voices (issue 85): recordings of real speakers with their person names marked.

The installed set is Debian's pocketsphinx-testdata (`make data`); corpora a user holds
come in through a JSON-lines manifest. docs/real_voices.md says what was searched."""
import json
import wave

import pytest

from recover_core.data import real_voices as rv
from recover_core.errors import RecoverError

needs_librivox = pytest.mark.skipif(
    not (rv.PSPHINX_LIBRIVOX / "transcription").is_file(),
    reason=f"pocketsphinx-testdata is not installed ({rv.LIBRIVOX_INSTALL}, part of `make data`)")


def _wav(path, seconds=0.2, rate=16000):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\0\0" * int(seconds * rate))
    return path


@needs_librivox
def test_installed_librivox_sentences_have_their_name_marked():
    utts = rv.load(manifests=[])
    assert len(utts) == 5 and all(u.path.is_file() for u in utts)
    assert {u.speaker for u in utts} == {rv.LIBRIVOX_SPEAKER}
    names = [n for u in utts for n in u.name_texts]
    assert names == ["john dashwood"]
    first = next(u for u in utts if u.names)
    assert first.transcript.startswith("and mister john dashwood had then leisure")
    assert first.licence.startswith("LibriVox recording, public domain")


@needs_librivox
@pytest.mark.xfail(strict=True, reason=(
    "issue 85 asks for >= 5 real speakers and >= 40 spoken names; no PyPI, Debian or npm "
    "package found here carries them (docs/real_voices.md): the installed set is 1 speaker, "
    "1 name. Passes, and so fails this strict xfail, once a source that does is added"))
def test_installed_real_voices_meet_issue_85_goal():
    utts = rv.load(manifests=[])
    s = rv.summary(utts)
    assert s["speakers"] >= rv.GOAL_SPEAKERS and s["names"] >= rv.GOAL_NAMES, s


def test_manifest_adds_a_held_corpus(tmp_path):
    _wav(tmp_path / "a0001.wav")
    _wav(tmp_path / "a0002.wav")
    rows = [
        {"path": "a0001.wav", "speaker": "bdl", "transcript": "Author of the danger trail, Philip Steels, etc.",
         "names": ["Philip Steels"], "licence": "CMU ARCTIC", "source": "cmu_arctic"},
        {"path": str(tmp_path / "a0002.wav"), "speaker": "slt",
         "transcript": "Not at this particular case, Tom, apologized Whittemore.", "names": [[29, 32], [45, 55]]},
    ]
    manifest = tmp_path / "held.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    utts = rv.load([manifest], librivox_root=tmp_path / "absent")
    assert [u.name_texts for u in utts] == [("Philip Steels",), ("Tom", "Whittemore")]
    assert utts[0].path == tmp_path / "a0001.wav" and utts[0].source == "cmu_arctic"
    assert utts[1].licence == "unknown" and utts[1].source == "held"
    assert rv.summary(utts) == {"utterances": 2, "speakers": 2, "names": 3,
                                "utterances_with_names": 2, "sources": ["cmu_arctic", "held"]}
    assert not rv.meets_goal(utts)


def test_manifest_from_the_environment(tmp_path, monkeypatch):
    _wav(tmp_path / "x.wav")
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"path": "x.wav", "speaker": "s1", "transcript": "ask Maria",
                                    "names": ["maria"]}) + "\n", encoding="utf-8")
    monkeypatch.setenv(rv.ENV, str(manifest))
    (u,) = rv.load(librivox_root=tmp_path / "absent")
    assert u.name_texts == ("Maria",) and u.marked_by == "manifest"


@pytest.mark.parametrize("row, message", [
    ({"path": "x.wav", "speaker": "s", "transcript": "hello there", "names": ["Maria"]}, "is not in the transcript"),
    ({"path": "x.wav", "speaker": "s", "transcript": "hello", "names": [[2, 40]]}, "does not lie in the transcript"),
    ({"path": "gone.wav", "speaker": "s", "transcript": "hello", "names": []}, "does not exist"),
    ({"path": "x.wav", "transcript": "hello", "names": []}, "needs path, speaker"),
])
def test_bad_manifest_rows_say_what_is_wrong(tmp_path, row, message):
    _wav(tmp_path / "x.wav")
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(RecoverError, match=message):
        rv.read_manifest(manifest)


def test_nothing_installed_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.delenv(rv.ENV, raising=False)
    with pytest.raises(rv.RealVoicesMissing, match="apt-get install pocketsphinx-testdata"):
        rv.load(librivox_root=tmp_path / "absent")
    assert rv.load(librivox_root=tmp_path / "absent", require=False) == []
