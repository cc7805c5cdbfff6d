"""`transcribe` and `wer` run as a user runs them, on real recordings."""
from __future__ import annotations

import json

from cli_run import run


def test_transcribe_a_folder_and_a_file_then_score_them(recordings, tmp_path):
    from conftest import PSPHINX

    out = tmp_path / "hyp.jsonl"
    p = run("transcribe", PSPHINX / "librivox", recordings[5], "-o", out)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["path"].split("/")[-1] for r in rows][:2] == ["sense_and_sensibility_01_austen_64kb-0870.wav",
                                                           "sense_and_sensibility_01_austen_64kb-0880.wav"]
    assert len(rows) == 6 and rows[-1]["path"].endswith("cards/001.wav")
    assert rows[0]["text"].startswith("And Mr. John Dashwood")
    w = rows[0]["words"][3]
    assert set(w) == {"word", "start", "end", "probability"} and w["word"] == "Dashwood"
    assert "6 of 6 files transcribed" in p.stderr and "window" in p.stderr  # tqdm progress
    only_libri = tmp_path / "libri.jsonl"
    only_libri.write_text("\n".join(json.dumps(r) for r in rows[:5]) + "\n")
    p = run("wer", "--ref", PSPHINX / "librivox/transcription", "--hyp", only_libri)
    score = json.loads(p.stdout)
    assert score["utterances"] == 5 and score["wer_percent"] < 10 and score["ref_words"] > 50


def test_a_list_file_and_a_bad_file(recordings, tmp_path):
    bad = tmp_path / "notes.wav"
    bad.write_text("not audio")
    lst = tmp_path / "list.txt"
    lst.write_text(f"{recordings[5]}\nnotes.wav\n")
    out = tmp_path / "o.jsonl"
    p = run("transcribe", lst, "-o", out, check=False)
    assert p.returncode == 2 and "notes.wav: could not read this as audio" in p.stderr and not out.exists()
    run("transcribe", lst, "-o", out, "--skip-bad", "--quiet")
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert "text" in rows[0] and "could not read" in rows[1]["error"]
    p = run("transcribe", recordings[5], "-o", out, "--lm", "nope", check=False)
    assert p.returncode == 2 and "LM 'nope' is not available" in p.stderr


def test_wer_by_line_order_for_plain_text(tmp_path):
    ref, hyp = tmp_path / "ref.txt", tmp_path / "hyp.txt"
    ref.write_text("Ten of clubs.\nSeven of hearts.\n")
    hyp.write_text("10 of clubs\nseven hearts\n")
    score = json.loads(run("wer", "--ref", ref, "--hyp", hyp).stdout)
    assert (score["deletions"], score["substitutions"], score["ref_words"]) == (1, 0, 6)
    hyp.write_text("10 of clubs\n")
    p = run("wer", "--ref", ref, "--hyp", hyp, check=False)
    assert p.returncode == 2 and "2 references but 1 hypotheses" in p.stderr


def test_the_papers_recognizer_says_why_it_is_not_here(recordings, tmp_path):
    out = tmp_path / "o.jsonl"
    p = run("transcribe", recordings[5], "-o", out, "--engine", "emformer-rnnt", check=False)
    assert p.returncode == 2 and "download.pytorch.org" in p.stderr and "Space" in p.stderr and not out.exists()
