"""`obfuscate-audio` as a user runs it: a folder with a corrupt file, a run killed with
SIGKILL and resumed, settings that differ on resume, and originals only when asked."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from cli_run import ROOT, run

TEXTS = {
    "a_call": "Yesterday I called Margaret Thompson about the report.",
    "c_trip": "Robert Miller drove to the station with his sister.",
    "d_plain": "The weather was cold and the trains were late.",
    "e_letter": "The letter from Susan arrived this morning.",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    from recover_core.asr import audio
    from recover_core.speech import voices

    d = tmp_path_factory.mktemp("calls")
    for i, (name, text) in enumerate(TEXTS.items()):
        x, r = voices.synthesize(text, ("flite-slt", "flite-rms")[i % 2])  # deterministic voices
        sf.write(d / f"{name}.wav", audio.resample(x, r, 16000), 16000)
    (d / "b_broken.wav").write_bytes(b"RIFF\x00\x00not really a wave file")
    return d


def records(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]


def test_a_corrupt_file_stops_the_run_and_skip_bad_goes_on(folder, tmp_path):
    out = tmp_path / "out"
    p = run("obfuscate-audio", folder, "-o", out, "--quiet", check=False)
    assert p.returncode == 2 and "b_broken.wav" in p.stderr and "--skip-bad" in p.stderr
    assert [r["output"] for r in records(out)] == ["00000.wav"]  # finished work is kept, numbered
    assert oct((out / "manifest.jsonl").stat().st_mode & 0o777) == "0o600"  # it names the inputs
    p = run("obfuscate-audio", folder, "-o", out, "--skip-bad")
    assert "1 already done" in p.stderr and "1 unreadable" in p.stderr and "file" in p.stderr  # tqdm
    assert "rendered again where a substitute was not heard" in p.stderr
    rows = records(out)
    assert [Path(r["path"]).name for r in rows] == ["a_call.wav", "b_broken.wav", "c_trip.wav", "d_plain.wav",
                                                    "e_letter.wav"]
    assert "could not read" in rows[1]["error"]
    plain = next(r for r in rows if r["path"].endswith("d_plain.wav"))
    assert plain["entities"] == [] and not plain["needs_review"]
    x, _ = sf.read(folder / "d_plain.wav", dtype="int16")
    y, _ = sf.read(out / plain["output"], dtype="int16")
    assert sorted(p.name for p in out.glob("*.wav")) == ["00000.wav", "00002.wav", "00003.wav", "00004.wav"]  # 1: unreadable
    assert np.array_equal(x, y)  # no names: the output is the input
    text = (out / "manifest.jsonl").read_text()
    for word in ("Margaret", "Thompson", "Robert", "Miller", "Susan"):
        assert word not in text  # no original word without --keep-originals
    call = rows[0]
    assert call["entities"][0]["label"] == "PERSON" and call["entities"][0]["original_heard"] is False
    assert call["retries"] in (0, 1) and "substitute_heard_first_try" in call["entities"][0]
    p = run("obfuscate-audio", folder, "-o", out, "--skip-bad", "--retries", "0", check=False)
    assert p.returncode == 2 and "other settings (retries)" in p.stderr
    p = run("obfuscate-audio", folder, "-o", out, "--skip-bad", "--mode", "bleep", check=False)
    assert p.returncode == 2 and "other settings (mode)" in p.stderr


def test_killed_mid_run_then_resumed(folder, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "recover_core", "obfuscate-audio", str(folder), "-o", str(out), "--skip-bad",
           "--quiet", "--keep-originals"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    manifest = out / "manifest.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if manifest.exists() and manifest.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = len(records(out))
    assert 2 <= before < 5, "the kill came too late to test a resume"
    p = run("obfuscate-audio", folder, "-o", out, "--skip-bad", "--keep-originals")
    assert f"{before} already done" in p.stderr
    rows = records(out)
    assert sorted(Path(r["path"]).name for r in rows) == sorted(p.name for p in folder.iterdir())  # each once
    assert not list(out.glob(".*.tmp.wav"))  # nothing half-written left
    for r in rows:
        if "output" in r:
            assert sf.info(out / r["output"]).frames > 0
    call = next(r for r in rows if r["path"].endswith("a_call.wav"))
    assert call["entities"][0]["original"] == "Margaret Thompson" and "Margaret" in call["transcript"]


def test_a_manifest_cut_short_by_a_kill_is_repaired(tmp_path):
    from recover_core.cli.speech import read_manifest

    m = tmp_path / "manifest.jsonl"
    m.write_text('{"path": "a.wav", "output": "a.wav"}\n{"path": "b.wa')
    assert read_manifest(m) == [{"path": "a.wav", "output": "a.wav"}]
    assert m.read_text().endswith("}\n")


def test_bad_arguments_get_a_message(folder, tmp_path):
    p = run("obfuscate-audio", tmp_path / "nowhere", "-o", tmp_path / "o", check=False)
    assert p.returncode == 2 and "no such file or folder" in p.stderr
    taken = tmp_path / "a-file"
    taken.write_text("x")
    p = run("obfuscate-audio", folder / "a_call.wav", "-o", taken, check=False)
    assert p.returncode == 2 and "cannot write there" in p.stderr
    p = run("obfuscate-audio", folder / "a_call.wav", "-o", tmp_path / "c", "--conversion", "knn-cmn", check=False)
    assert p.returncode == 2 and "--voice clone" in p.stderr and not (tmp_path / "c").exists()


def test_top_k_with_obfuscates_sampling_flag(folder, tmp_path):
    """`--method topk --sampling uniform`, as for `obfuscate`: the names are still replaced,
    and the manifest records the draw it was made with."""
    out = tmp_path / "o"
    run("obfuscate-audio", folder / "a_call.wav", folder / "c_trip.wav", "-o", out, "--quiet",
        "--method", "topk", "--sampling", "uniform", "--no-second-pass")
    recs = records(out)
    assert [r["settings"]["sampling"] for r in recs] == ["uniform", "uniform"]
    assert all(r["entities"] and all(e["substitute"] not in TEXTS[Path(r["path"]).stem] for e in r["entities"])
               for r in recs)
    p = run("obfuscate-audio", folder / "a_call.wav", "-o", tmp_path / "o2", "--sampling", "greedy", check=False)
    assert p.returncode == 2 and "greedy" in p.stderr


def test_a_key_file_repeats_the_substitutes(folder, tmp_path):
    """`--key-file`: the engine draws speech's substitutes under the kept key, so two runs
    give the same names; the manifest holds no original."""
    key = tmp_path / "run.key"
    assert run("key", key).returncode == 0
    subs = []
    for name in ("a", "b"):
        run("obfuscate-audio", folder / "a_call.wav", folder / "e_letter.wav", "-o", tmp_path / name, "--quiet",
            "--no-second-pass", "--key-file", key)
        subs.append([[e["substitute"] for e in r["entities"]] for r in records(tmp_path / name)])
    assert subs[0] == subs[1] and all(subs[0]), subs
    text = (tmp_path / "a" / "manifest.jsonl").read_text()
    assert not any(w in text for w in ("Margaret", "Thompson", "Susan"))
