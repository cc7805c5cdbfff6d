"""Files an attacker on the same machine could plant or read (issue 75, findings 2, 11, 12, 13).

Each test plants what an attacker would (a link or a loose file at a name the code used to
predict, a folder at the app's old temp name) or reads what they would (a progress record,
the arguments Ray ships), and checks that nothing secret reaches them. No model is loaded.
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from recover_core.runtime import atomic
from recover_core.batch.checkpoint import Checkpoint, mapping_path, part_path, record_path
from recover_core.batch.job import Job, KeyArg
from recover_core.errors import RecoverError
from recover_core.pseudonyms import Pseudonyms, save_mapping
from recover_core.pseudonyms.key import write_key_file


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def old_temp(path: Path) -> Path:
    """The hidden sibling every atomic write used to go through, whatever the run."""
    return path.with_name(f"{path.name if path.name.startswith('.') else '.' + path.name}.tmp")


@pytest.fixture
def loose_umask():
    """umask 0: a file created without an explicit mode would be 0666 (as the issue's key file was)."""
    old = os.umask(0)
    yield
    os.umask(old)


def plant(folder: Path, target: Path) -> tuple[Path, Path]:
    """A link at the target's old temporary name into a file the attacker reads, and a victim file."""
    stolen = folder / "attacker-reads-this"
    stolen.write_bytes(b"")
    os.symlink(stolen, old_temp(target))
    return stolen, old_temp(target)


# --- finding 2: key, mapping and progress files --------------------------------------------

def test_a_link_at_the_old_temp_name_receives_no_key(tmp_path, loose_umask):
    key_file = tmp_path / "run.key"
    stolen, link = plant(tmp_path, key_file)
    key = write_key_file(key_file)
    assert stolen.read_bytes() == b"" and link.is_symlink()  # the link was neither written through nor used
    assert key_file.read_text().strip() == key.hex() and not key_file.is_symlink()
    assert mode(key_file) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".run.key.tmp", "attacker-reads-this", "run.key"])


def test_a_loose_file_at_the_old_temp_name_lends_the_mapping_no_mode(tmp_path, loose_umask):
    path = tmp_path / "names.json"
    planted = old_temp(path)
    planted.write_bytes(b"")
    planted.chmod(0o644)
    p = Pseudonyms(0, {"Darnell Whitcombe": "Phoenix Colleen"})
    save_mapping(path, p)
    assert mode(path) == 0o600 and json.loads(path.read_text())["mapping"] == {"Darnell Whitcombe": "Phoenix Colleen"}
    assert planted.read_bytes() == b"" and mode(planted) == 0o644  # untouched, and not the mapping


def test_every_atomic_write_takes_a_fresh_unpredictable_name(tmp_path, loose_umask):
    seen = set()
    target = tmp_path / "out.txt"
    for _ in range(3):
        with atomic.replacing(target, mode=atomic.PRIVATE) as tmp:
            assert tmp.parent == tmp_path and tmp.name != old_temp(target).name
            assert mode(tmp) == 0o600  # no one else can read it while it is written
            tmp.write_text("x")
            seen.add(tmp.name)
    assert len(seen) == 3 and mode(target) == 0o600
    atomic.write_text(target, "public")  # no mode asked: as open() makes it, under the umask
    assert mode(target) == 0o666 & ~atomic.umask()


LINE = b"Darnell Whitcombe called me yesterday.\n"


def _job(tmp_path: Path, **kw) -> Job:
    src = tmp_path / "in.txt"
    src.write_bytes(LINE)
    return Job(command="obfuscate", input=src, output=tmp_path / "out.txt", in_jsonl=False, out_jsonl=False, **kw)


def test_the_progress_record_and_part_file_go_around_planted_links(tmp_path, loose_umask):
    job = _job(tmp_path)
    record, part = record_path(job.output), part_path(job.output)
    stolen, _ = plant(tmp_path, record)
    elsewhere = tmp_path / "part-goes-here"
    elsewhere.write_bytes(b"")
    os.symlink(elsewhere, part)  # a link at the part file's own name is replaced, not written through
    ckpt = Checkpoint(job, resume=False, restart=True)
    ckpt.commit("Phoenix Colleen called me yesterday.\n", [LINE], {}, 0.1)
    assert stolen.read_bytes() == b"" and elsewhere.read_bytes() == b""
    assert not part.is_symlink() and mode(part) == 0o600 and mode(record) == 0o600
    assert json.loads(record.read_text())["lines_done"] == 1


def test_a_progress_record_others_could_have_written_is_not_trusted(tmp_path):
    job = _job(tmp_path)
    Checkpoint(job, resume=False, restart=False).commit("x\n", [LINE], {}, 0.1)
    record = record_path(job.output)
    record.chmod(0o644)  # or planted by another user: it could name a key its writer knows
    with pytest.raises(RecoverError, match="not trusted"):
        Checkpoint(job, resume=True, restart=False)
    Checkpoint(job, resume=False, restart=True)  # --restart trusts nothing left and starts over
    assert mode(record) == 0o600


def test_the_runs_mapping_beside_the_output_goes_around_a_planted_link(tmp_path, loose_umask):
    job = _job(tmp_path, consistent=True)
    stolen, _ = plant(tmp_path, mapping_path(job.output))
    save_mapping(mapping_path(job.output), Pseudonyms(0))
    assert stolen.read_bytes() == b"" and mode(mapping_path(job.output)) == 0o600


# --- finding 11: the key is not copied where it need not be -------------------------------

def test_the_progress_record_names_the_key_file_instead_of_copying_the_key(tmp_path):
    key_file = tmp_path / "run.key"
    key = write_key_file(key_file)
    job = _job(tmp_path, key=key.hex(), key_file=str(key_file))
    Checkpoint(job, resume=False, restart=False).commit("x\n", [LINE], {}, 0.1)
    text = record_path(job.output).read_text()
    assert key.hex() not in text and json.loads(text)["key_file"] == str(key_file)
    # --resume without --key-file finds the key where the record says
    assert Checkpoint(replace(job, key=None, key_file=None), resume=True, restart=False).key == key.hex()
    assert key.hex() not in record_path(job.output).read_text()
    key_file.unlink()
    write_key_file(key_file)  # another key at that name since
    with pytest.raises(RecoverError, match="no longer holds it"):
        Checkpoint(replace(job, key=None, key_file=None), resume=True, restart=False)


def test_the_progress_record_copies_no_key_a_mapping_file_keeps(tmp_path):
    mapping = tmp_path / "names.json"
    p = Pseudonyms(0, {"Darnell Whitcombe": "Phoenix Colleen"})
    save_mapping(mapping, p)
    job = _job(tmp_path, consistent=True, mapping=str(mapping))
    ckpt = Checkpoint(job, resume=False, restart=False)
    assert ckpt.key == p.key.hex() and p.key.hex() not in record_path(job.output).read_text()
    assert Checkpoint(job, resume=True, restart=False).key == p.key.hex()


def test_a_fresh_key_is_kept_by_the_record_alone(tmp_path):
    ckpt = Checkpoint(_job(tmp_path), resume=False, restart=False)
    assert json.loads(record_path(ckpt.job.output).read_text())["key"] == ckpt.key  # nothing else keeps it


def test_ray_workers_get_the_key_apart_from_the_jobs_dict(tmp_path, monkeypatch):
    from recover_core.batch import pipeline
    from recover_core.batch.ray_engine import ChunkActor

    key = "ab" * 32
    job = _job(tmp_path, key=key)
    shipped = job.to_dict()
    assert key not in json.dumps(shipped) and key not in repr(job) and key not in repr(KeyArg(key))
    assert Job.from_dict(shipped, KeyArg(key)) == job and Job.from_dict(shipped).key is None
    built = []
    monkeypatch.setattr(pipeline, "Pipeline", built.append)  # no model: only what the actor was given
    ChunkActor(shipped, 1, key=KeyArg(key))
    assert built[0].key == key


# --- finding 12: speech's manifest and output names ------------------------------------

def test_the_speech_manifest_is_owner_only_and_never_a_link(tmp_path):
    from recover_core.cli.speech import _append, read_manifest

    old = os.umask(0o022)  # the usual umask, which gave a 0644 manifest
    try:
        manifest = tmp_path / "manifest.jsonl"
        _append(manifest, {"path": "calls/darnell_whitcombe.wav", "original": "Darnell Whitcombe"})
        assert mode(manifest) == 0o600
        earlier = tmp_path / "earlier.jsonl"  # written by a version before this rule
        earlier.write_text('{"path": "a.wav", "output": "00000.wav"}\n')
        earlier.chmod(0o644)
        assert read_manifest(earlier) == [{"path": "a.wav", "output": "00000.wav"}] and mode(earlier) == 0o600
        stolen = tmp_path / "attacker-reads-this"
        stolen.write_bytes(b"")
        os.symlink(stolen, tmp_path / "linked.jsonl")
        for call in (lambda: _append(tmp_path / "linked.jsonl", {"original": "Darnell Whitcombe"}),
                     lambda: read_manifest(tmp_path / "linked.jsonl")):
            with pytest.raises(RecoverError, match="not a link"):
                call()
        assert stolen.read_bytes() == b""
    finally:
        os.umask(old)


def test_speech_outputs_are_numbered_not_named_after_their_inputs(tmp_path):
    from recover_core.cli.speech import output_names

    inputs = [tmp_path / "darnell_whitcombe.wav", tmp_path / "calls" / "maria-gonzalez.flac", tmp_path / "b.wav"]
    names = output_names(inputs, [])
    assert list(names.values()) == ["00000.wav", "00001.wav", "00002.wav"]
    # a resumed run: the manifest's outputs stay taken, the rest get the lowest free numbers
    done = [{"path": str(inputs[0]), "output": "00000.wav"}, {"path": "x.wav", "error": "could not read"},
            {"path": "y.wav", "output": "00002.wav"}]
    assert output_names(inputs[1:], done) == {inputs[1]: "00001.wav", inputs[2]: "00003.wav"}


# --- finding 13: the app's temp folder ------------------------------------------------------

def test_the_apps_temp_folder_is_new_and_its_own_even_when_the_old_name_was_planted(tmp_path):
    from recover_core.runtime import env

    planted = tmp_path / f"{env.APP_TEMP_PREFIX}{os.getpid()}"  # the old predictable name, made first
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    (planted / "attacker-was-here").write_text("")
    mine = env.app_temp_dir(tmp_path)
    assert mine != planted and mine.parent == tmp_path and list(mine.iterdir()) == []
    assert mode(mine) == 0o700 and mine.stat().st_uid == os.getuid()
    assert env.app_temp_dir(tmp_path) != mine  # never a name reused
    os.symlink(tmp_path / "elsewhere", tmp_path / f"{env.APP_TEMP_PREFIX}999999999")
    assert env.app_temp_dir(tmp_path).is_dir()  # a link is neither followed nor removed by the sweep
    assert (tmp_path / f"{env.APP_TEMP_PREFIX}999999999").is_symlink()


def test_the_speech_commands_write_probe_goes_through_no_planted_link(tmp_path):
    """obfuscate-audio checks that it can write in its output folder before any model loads;
    a link planted at the probe's old fixed name (.write-test) is not written through."""
    import argparse

    from recover_core.cli import speech

    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file")
    os.symlink(victim, out / ".write-test")
    (out / "manifest.jsonl").write_text(json.dumps({"path": "x.wav", "settings": {"mode": "other"}}) + "\n")
    wav = tmp_path / "darnell_whitcombe.wav"
    wav.write_bytes(b"RIFF")
    parser = argparse.ArgumentParser()
    speech.add_parser(parser.add_subparsers())
    args = parser.parse_args(["obfuscate-audio", str(wav), "-o", str(out), "--quiet"])
    with pytest.raises(RecoverError, match="other settings"):  # stops before any model loads
        args.fn(args)
    assert victim.read_text() == "the user's own file" and mode(out / "manifest.jsonl") == 0o600


def test_the_command_lines_key_file_reaches_the_progress_record_instead_of_the_key(tmp_path):
    from recover_core.cli import parser
    from recover_core.cli.text import _job

    src, key_file = tmp_path / "in.txt", tmp_path / "run.key"
    src.write_text("Tom met Ann.\n", encoding="utf-8")
    key = write_key_file(key_file)
    args = parser().parse_args(["obfuscate", str(src), "-o", str(tmp_path / "out.txt"), "--key-file", str(key_file)])
    job = _job(args, "obfuscate")
    assert job.key_file == str(key_file.resolve())
    assert key.hex() not in json.dumps(job.to_dict())
