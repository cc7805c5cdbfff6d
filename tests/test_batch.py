"""Whole-corpus runs (issue 11): resume after kill -9, bracketed tags, workers, bad input.

Every test runs the command line on real files, as a user would (cli_run: in this process,
or as a process of its own where it is killed or starts workers).
"""
from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_run import ROOT, run, summary
from recover_core.pseudonyms import write_key_file


def popen(*args, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "recover_core", *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def lines_done(out: Path) -> int:
    rec = out.parent / f".{out.name}.progress.json"
    try:
        return json.loads(rec.read_text())["lines_done"]
    except (OSError, ValueError, KeyError):
        return 0


def kill_after(args, out: Path, at_least: int, *, timeout: float = 180) -> None:
    """Start the command and kill -9 it once ``at_least`` lines are committed (plus a
    random few milliseconds, so the kill lands anywhere in a chunk's work or commit)."""
    proc = popen(*args)
    deadline = time.time() + timeout
    try:
        while lines_done(out) < at_least:
            assert proc.poll() is None, f"finished before the kill: {proc.stderr.read()[-500:]}"
            assert time.time() < deadline
            time.sleep(0.005)
        time.sleep(random.random() * 0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close(), proc.stderr.close()


@pytest.fixture(scope="module")
def key_file(tmp_path_factory) -> Path:
    """One kept key: runs compared byte for byte must draw their substitutes under the same
    secret (each run draws under a fresh one otherwise)."""
    path = tmp_path_factory.mktemp("key") / "run.key"
    run("key", path)
    return path


@pytest.fixture(scope="module")
def big_file(tmp_path_factory, news_sentences) -> Path:
    path = tmp_path_factory.mktemp("big") / "news.txt"
    path.write_text("\n".join(news_sentences * 6) + "\n")  # ~16,000 lines: over 150 chunks to be killed in
    return path


def test_kill_9_at_random_points_then_resume_gives_identical_output(tmp_path, big_file):
    args = ["mask", big_file, "--technique", "allowList", "--keep-originals", "--batch-size", "100", "--quiet"]
    want = tmp_path / "want.jsonl"
    run(*args, "-o", want)
    out = tmp_path / "got.jsonl"
    total = sum(1 for _ in big_file.open("rb"))
    rng = random.Random(11)
    kills = 0
    for frac in sorted(rng.uniform(0.1, 0.8) for _ in range(3)):
        kill_after([*args, "-o", out, "--resume"], out, int(frac * total))
        kills += 1
        part = out.parent / f".{out.name}.part"
        assert part.exists() and oct(part.stat().st_mode & 0o777) == "0o600"
        assert not out.exists()
    assert kills == 3
    # what a kill while the record was being replaced leaves (its temporary can hold the key)
    (tmp_path / ".got.jsonl.progress.json.k1ll3d_0.tmp").write_text('{"key": "00"}')
    p = run(*args, "-o", out, "--resume")
    assert out.read_bytes() == want.read_bytes()
    assert summary(p.stderr)["lines"] == total and summary(p.stderr)["masked_words"] > 0
    assert not list(tmp_path.glob(".got.jsonl*"))  # nothing is left behind once done


def test_fill_resumed_after_kill_9_gives_the_same_substitutes(tmp_path, news_sentences, tiny_bert):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(news_sentences[:1500]) + "\n")
    args = ["obfuscate", src, "--technique", "vocabThres", "--filler", "mlm", "--model", tiny_bert,
            "--method", "topk", "--seed", "3", "--batch-size", "50", "--quiet"]
    out = tmp_path / "got.txt"
    kill_after([*args, "-o", out], out, 400)
    # The interrupted run drew under a fresh key, which its progress record keeps (mode 600) for
    # --resume: the run that never stopped, under that key, is what the resumed one must write.
    record = tmp_path / ".got.txt.progress.json"
    assert oct(record.stat().st_mode & 0o777) == "0o600"
    key = tmp_path / "first.key"
    write_key_file(key, bytes.fromhex(json.loads(record.read_text())["key"]))
    want = tmp_path / "want.txt"
    whole = run(*args, "-o", want, "--key-file", key)
    p = run(*args, "-o", out, "--resume")
    assert out.read_bytes() == want.read_bytes()
    assert not record.exists()
    assert summary(p.stderr)["fills"] == summary(whole.stderr)["fills"]  # the summary counts the whole run


def test_two_workers_write_what_one_writes(tmp_path, news_sentences, tiny_bert, key_file):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(news_sentences[:300]) + "\n")
    args = ["obfuscate", src, "--technique", "vocabThres", "--filler", "mlm", "--model", tiny_bert,
            "--method", "topk", "--batch-size", "16", "--quiet", "--key-file", key_file]
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    run(*args, "-o", one)
    p = run(*args, "-o", two, "--workers", "2")
    assert one.read_bytes() == two.read_bytes()
    assert summary(p.stderr)["lines"] == 300


def test_the_chunk_size_does_not_change_the_output(tmp_path, news_sentences, tiny_bert, key_file):
    """Fills are seeded by the masked line itself: a line's draw does not depend on how many lines
    before it in its chunk had nothing to fill (a blank line, a line of everyday words). Both runs
    share a key: without one each run draws under a fresh secret, and a drawn place ("Dora
    village", a town no gazetteer knows) differs between runs by design."""
    src = tmp_path / "in.txt"
    lines = [x for s in news_sentences[:60] for x in (s, "", "It is what it is.")[: 1 + len(s) % 3]]
    src.write_text("\n".join(lines) + "\n")
    args = ["obfuscate", src, "--technique", "vocabThres", "--filler", "mlm", "--model", tiny_bert,
            "--method", "topk", "--seed", "5", "--quiet", "--key-file", key_file]
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    run(*args, "-o", small, "--batch-size", "5")
    p = run(*args, "-o", large, "--batch-size", "32")
    assert summary(p.stderr)["no_mask"] > 10
    assert small.read_bytes() == large.read_bytes()


def test_bracketed_tags_pass_through_verbatim_and_are_never_masked(tmp_path, tiny_bert):
    src = tmp_path / "in.txt"
    src.write_text("yeah [laughter] i talked to Margaret [noise] yesterday\n"
                   "The shop opens at 9am [AEDT] in Zorblaxville.\n")
    masked = tmp_path / "m.jsonl"
    run("mask", src, "-o", masked, "--technique", "vocabThres")
    recs = [json.loads(x) for x in masked.read_text().splitlines()]
    assert "[laughter]" in recs[0]["masked"] and "[noise]" in recs[0]["masked"]
    assert "[AEDT]" in recs[1]["masked"] and "[MASK]" in recs[1]["masked"]  # Zorblaxville
    text = recs[1]["masked"]
    assert all(not (m["start"] < text.index("]") + 1 and text.index("[AEDT]") < m["end"]) for m in recs[1]["masks"])
    out = tmp_path / "filled.txt"
    run("fill", masked, "-o", out, "--model", tiny_bert, "--method", "topk")
    got = out.read_text().splitlines()
    assert "[laughter]" in got[0] and "[noise]" in got[0] and "[AEDT]" in got[1] and "[MASK]" not in got[1]
    by_hand = tmp_path / "hand.txt"  # text a user masked by hand, with a tag of the corpus's own
    by_hand.write_text("[MASK] said hello [laughter] to [PERSON].\n")
    run("fill", by_hand, "-o", out, "--model", tiny_bert)
    filled = out.read_text()
    assert "[laughter]" in filled and "[MASK]" not in filled and "[PERSON]" not in filled


def test_resume_refuses_other_settings_and_says_which(tmp_path, big_file):
    out = tmp_path / "o.txt"
    kill_after(["mask", big_file, "-o", out, "--technique", "allowList", "--quiet", "--batch-size", "50"], out, 200)
    p = run("mask", big_file, "-o", out, "--technique", "vocabThres", "--resume", "--quiet", "--batch-size", "50",
            check=False)
    assert p.returncode == 2 and "technique: first run 'allowList', now 'vocabThres'" in p.stderr
    p = run("mask", big_file, "-o", out, "--technique", "allowList", "--quiet", "--batch-size", "50", check=False)
    assert p.returncode == 2 and "--resume" in p.stderr and "--restart" in p.stderr  # finished work is not dropped
    run("mask", big_file, "-o", out, "--technique", "vocabThres", "--restart", "--quiet", "--batch-size", "50")
    assert out.exists() and not (tmp_path / ".o.txt.part").exists()


def test_bad_lines_in_the_middle_keep_finished_work(tmp_path, news_sentences):
    good = news_sentences[:300]
    lines = [s.encode() for s in good]
    lines[150] = b"caf\xe9 au lait with Tom"  # Latin-1, not UTF-8
    lines[220] = ("word " * 500).encode()  # 2,500 characters
    src = tmp_path / "in.txt"
    src.write_bytes(b"\n".join(lines) + b"\r\n")
    out = tmp_path / "o.txt"
    args = ["mask", src, "-o", out, "--technique", "allowList", "--batch-size", "50", "--quiet"]
    p = run(*args, check=False)
    assert p.returncode == 2 and "line 151: not UTF-8" in p.stderr and "150 finished lines are kept" in p.stderr
    assert "Traceback" not in p.stderr and not out.exists()
    p = run(*args, "--resume", "--skip-bad")  # --skip-bad may be added on resume: it changes no finished line
    got = out.read_text().split("\n")
    assert len(got) == 301 and got[150] == "" and got[220] == "" and summary(p.stderr)["bad"] == 2
    clean = tmp_path / "clean.txt"
    run("mask", src, "-o", clean, "--technique", "allowList", "--batch-size", "50", "--quiet", "--skip-bad")
    assert clean.read_bytes() == out.read_bytes()


def test_a_jsonl_line_that_is_not_an_object_is_a_bad_line(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "Tom lives here."}\n[1, 2]\n"just a string"\n{"text": "The bus was late."}\n')
    out = tmp_path / "o.jsonl"
    p = run("mask", src, "-o", out, "--technique", "allowList", check=False)
    assert p.returncode == 2 and "line 2: expected a JSON object" in p.stderr
    p = run("mask", src, "-o", out, "--technique", "allowList", "--skip-bad", "--restart")
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 4 and recs[1] == recs[2] == {"masked": "", "masks": []} and summary(p.stderr)["bad"] == 2


def test_read_only_output_folder_gets_a_clear_message(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    src = tmp_path / "in.txt"
    src.write_text("Tom lives here.\n")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    p = run("mask", src, "-o", ro / "o.txt", check=False)
    assert p.returncode == 2 and "Permission denied" in p.stderr and "Traceback" not in p.stderr


def test_an_output_folder_that_is_a_file_gets_a_clear_message(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("Tom lives here.\n")
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    p = run("mask", src, "-o", blocker / "o.txt", check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "afile" in p.stderr


def test_a_full_disk_keeps_committed_chunks_and_resume_finishes(tmp_path, big_file):
    """The disk is simulated by a file-size cap (RLIMIT_FSIZE): writing past it fails with
    EFBIG (Python ignores SIGXFSZ), as a full disk fails with ENOSPC."""
    args = ["mask", big_file, "--technique", "allowList", "--batch-size", "200", "--quiet"]
    want = tmp_path / "want.txt"
    run(*args, "-o", want)
    out = tmp_path / "o.txt"
    cap = want.stat().st_size // 3

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "recover_core", *map(str, args), "-o", str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, preexec_fn=limit, timeout=600)
    assert p.returncode == 2 and "File too large" in p.stderr and "finished lines are kept" in p.stderr
    assert "Traceback" not in p.stderr
    run(*args, "-o", out, "--resume")
    assert out.read_bytes() == want.read_bytes()


def test_an_input_that_changes_while_read_is_refused(tmp_path, news_sentences):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(news_sentences * 8) + "\n")
    out = tmp_path / "o.txt"
    proc = popen("mask", src, "-o", out, "--technique", "allowList", "--batch-size", "20", "--quiet")
    deadline = time.time() + 120
    while lines_done(out) < 100:
        assert proc.poll() is None and time.time() < deadline
        time.sleep(0.01)
    with src.open("a") as f:
        f.write("One more line appended while the run reads.\n")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "changed while it was being read" in err and "Traceback" not in err
    # Appending left the lines already read as they were: --resume may go on, to the new end.
    run("mask", src, "-o", out, "--technique", "allowList", "--batch-size", "20", "--quiet", "--resume")
    assert out.read_text().count("\n") == len(news_sentences) * 8 + 1
    with src.open("r+") as f:  # an edit inside the part already done is caught on resume
        f.write("Changed")
    kill_after(["mask", src, "-o", out, "--technique", "allowList", "--batch-size", "20", "--quiet", "--restart"],
               out, 100)
    with src.open("r+") as f:
        f.write("Edited!")
    p = run("mask", src, "-o", out, "--technique", "allowList", "--batch-size", "20", "--quiet", "--resume",
            check=False)
    assert p.returncode == 2 and "the input changed since" in p.stderr and "Traceback" not in p.stderr


def test_the_ray_engine_writes_what_the_local_engine_writes(tmp_path, news_sentences, tiny_bert, key_file):
    """A local Ray (ray.init()) with 2 actors, on a small input, and a resume on it."""
    src = tmp_path / "in.txt"
    src.write_text("\n".join(news_sentences[:200]) + "\n[laughter] Kevin moved to Denver.\n")
    args = ["obfuscate", src, "--technique", "vocabThres", "--filler", "mlm", "--model", tiny_bert,
            "--method", "topk", "--batch-size", "16", "--seed", "5", "--quiet", "--key-file", key_file]
    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    run(*args, "-o", local)
    env_no_cluster = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    p = subprocess.run([sys.executable, "-m", "recover_core", *map(str, args), "-o", str(on_ray), "--engine", "ray",
                        "--workers", "2"], cwd=ROOT, env={**env_no_cluster, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert on_ray.read_bytes() == local.read_bytes()
    s = summary(p.stderr)
    assert s["engine"] == "ray" and s["ray_actors"] == 2 and s["lines"] == 201


# --- one mapping for a whole run (--consistent, --mapping FILE; issue 12) -------------------

NAMED = ["Maria Kowalski met Chidi in Lagos on Monday.", "The weather was fine.",
         "Later Maria called Chidi from Lagos.", "Chidi Okonkwo thanked Maria Kowalski."]


def _substitutes(out: Path) -> list[list[str]]:
    return [[f["word"] for f in json.loads(line)["fills"]] for line in out.read_text().splitlines()]


def test_consistent_gives_one_substitute_per_original_across_lines_and_workers(tmp_path, tiny_bert, key_file):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(NAMED * 20) + "\n")
    args = ["obfuscate", src, "--technique", "entityTagger", "--filler", "mlm", "--model", tiny_bert, "--method",
            "topk", "--batch-size", "8", "--quiet", "--consistent", "--key-file", key_file]
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    p = run(*args, "-o", one)
    run(*args, "-o", two, "--workers", "2")
    assert one.read_bytes() == two.read_bytes()  # the mapping is applied in input order, whoever filled
    counts = summary(p.stderr)["pseudonyms"]
    assert counts["scope"] == "run" and counts["originals"] == counts["distinct_substitutes"] >= 5
    subs = _substitutes(one)
    assert all(s == subs[i % 4] for i, s in enumerate(subs))  # every repeat of a line reads the same
    maria, chidi, lagos = subs[0][0].split()[0], subs[0][1], subs[0][2]
    assert subs[2][:3] == [maria, chidi, lagos]  # the same people and place on another line
    assert len({maria, chidi, lagos}) == 3
    text = one.read_text()
    assert not any(w in text for w in ("Maria", "Kowalski", "Chidi", "Okonkwo", "Lagos"))
    assert not list(tmp_path.glob(".one.jsonl*"))  # the run's private mapping is gone once it ends


def test_consistent_resumed_after_kill_9_gives_identical_output(tmp_path, tiny_bert, key_file):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(f"{n} {s}" for n in range(60) for s in NAMED) + "\n")
    args = ["obfuscate", src, "--technique", "entityTagger", "--filler", "mlm", "--model", tiny_bert,
            "--method", "topk", "--batch-size", "20", "--quiet", "--consistent", "--key-file", key_file]
    want = tmp_path / "want.txt"
    run(*args, "-o", want)
    out = tmp_path / "got.txt"
    kill_after([*args, "-o", out], out, 80)
    store = tmp_path / ".got.txt.mapping.json"
    assert store.exists() and oct(store.stat().st_mode & 0o777) == "0o600"
    run(*args, "-o", out, "--resume")
    assert out.read_bytes() == want.read_bytes()
    assert not store.exists()


def test_mapping_file_keeps_pseudonyms_across_runs_and_is_protected(tmp_path, tiny_bert):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(NAMED[0] + "\n")
    b.write_text("Yesterday Chidi wrote to Maria Kowalski about Lagos.\n")
    mapping = tmp_path / "private" / "names.json"
    common = ["--technique", "entityTagger", "--filler", "mlm", "--model", tiny_bert, "--quiet", "--mapping", mapping]
    run("obfuscate", a, "-o", tmp_path / "a.jsonl", *common)
    assert oct(mapping.stat().st_mode & 0o777) == "0o600"
    stored = json.loads(mapping.read_text())["mapping"]
    assert stored["maria"] and stored["chidi"] and stored["lagos"]
    run("obfuscate", b, "-o", tmp_path / "b.jsonl", *common, "--seed", "9")  # another run, another seed
    sa, sb = _substitutes(tmp_path / "a.jsonl")[0], _substitutes(tmp_path / "b.jsonl")[0]
    assert sb[0] == sa[1] and sb[2] == sa[2] and sb[1] == sa[0]  # Chidi, Maria Kowalski, Lagos: as before
    for out in ("a.jsonl", "b.jsonl"):
        assert "Kowalski" not in (tmp_path / out).read_text()  # the mapping never goes into the output
    mapping.chmod(0o644)
    p = run("obfuscate", b, "-o", tmp_path / "c.jsonl", *common, check=False)
    assert p.returncode == 2 and "chmod 600" in p.stderr and not (tmp_path / "c.jsonl").exists()
    p = run("obfuscate", b, "-o", tmp_path / "d.jsonl", *common[:-1], tmp_path / "d.jsonl", check=False)
    assert p.returncode == 2 and "apart from the input and the output" in p.stderr


def test_consistent_refuses_what_it_cannot_do_with_a_clear_message(tmp_path, tiny_bert):
    src = tmp_path / "in.txt"
    src.write_text("[MASK] met [MASK].\n")
    p = run("fill", src, "-o", tmp_path / "out.txt", "--model", tiny_bert, "--consistent", check=False)
    assert p.returncode == 2 and "mask --keep-originals" in p.stderr
    p = run("obfuscate", src, "-o", tmp_path / "out.txt", "--model", tiny_bert, "--consistent", "--engine", "ray",
            check=False)
    assert p.returncode == 2 and "--engine local" in p.stderr
