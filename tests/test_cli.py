"""The command line, run as a user runs it, on real files."""
import json
import os
import subprocess
import sys

import pytest

from cli_run import ROOT, run, summary


@pytest.fixture
def news_file(tmp_path, news_sentences):
    path = tmp_path / "news.txt"
    lines = news_sentences[:30]
    lines.insert(5, "")  # a blank line stays a blank line
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mask_writes_one_line_per_input_line_without_originals(news_file, tmp_path):
    out = tmp_path / "masked.jsonl"
    p = run("mask", news_file, "-o", out, "--technique", "entityTagger", "--markers", "class")
    lines = out.read_text().splitlines()
    assert len(lines) == 31
    recs = [json.loads(x) for x in lines]
    assert recs[5] == {"masked": "", "masks": []}
    assert all("original" not in r for r in recs)
    assert "[PERSON]" in out.read_text() or "[GPE]" in out.read_text()
    s = summary(p.stderr)
    assert s["lines"] == 31 and s["blank"] == 1 and 0 < s["mask_rate"] < 0.5 and "seconds" in s
    assert "mask" in p.stderr and "line/s" in p.stderr  # the tqdm bar


def test_mask_then_fill_with_an_mlm_folder_counts_leaks(news_file, tmp_path, tiny_bert):
    masked = tmp_path / "m.jsonl"
    run("mask", news_file, "-o", masked, "--technique", "vocabThres", "--keep-originals")
    out = tmp_path / "filled.txt"
    p = run("fill", masked, "-o", out, "--filler", "mlm", "--model", tiny_bert, "--method", "topk",
            "--keep-list", "vocabThres", "--seed", "7", "--batch-size", "8")
    lines = out.read_text().splitlines()
    assert len(lines) == 31 and lines[5] == ""
    assert "[MASK]" not in out.read_text()
    s = summary(p.stderr)
    assert s["fills"] > 20 and s["leak_rate"] is not None and s["seconds"] >= 0


def test_sampling_uniform_and_weighted_are_both_offered_and_said(news_file, tmp_path, tiny_bert):
    masked = tmp_path / "m.jsonl"
    run("mask", news_file, "-o", masked, "--technique", "vocabThres")
    outs = {}
    for sampling in ("uniform", "weighted"):
        out = tmp_path / f"{sampling}.txt"
        p = run("fill", masked, "-o", out, "--model", tiny_bert, "--method", "topk", "--k", "10",
                "--sampling", sampling, "--seed", "3")
        assert summary(p.stderr)["sampling"] == sampling
        outs[sampling] = out.read_text()
    assert outs["uniform"] != outs["weighted"]  # the tiny model's scores are far from uniform


def test_obfuscate_with_smollm2_on_real_text(tmp_path):
    src = tmp_path / "talk.txt"
    src.write_text("I spoke to Maria yesterday.\nThe bus was late again.\nKevin moved to Denver.\n")
    out = tmp_path / "obf.jsonl"
    p = run("obfuscate", src, "-o", out, "--technique", "entityTagger", "--candidates", "--filler", "infill")
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 3 and recs[1] == {"text": "The bus was late again.", "fills": []}
    assert "Maria" not in recs[0]["text"] or recs[0]["fills"][0]["word"] == "Maria"
    assert recs[2]["fills"] and recs[2]["fills"][0]["candidates"]
    s = summary(p.stderr)
    assert s["fills"] == 3 and s["leak_rate"] is not None and s["no_mask"] == 1


def test_bad_line_stops_with_line_number_and_writes_nothing(tmp_path):
    src = tmp_path / "bad.txt"
    src.write_text("Tom lives here.\nМосква is big.\n")
    out = tmp_path / "out.txt"
    p = run("mask", src, "-o", out, check=False)
    assert p.returncode == 2 and "line 2" in p.stderr and "Latin script" in p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists() and not list(tmp_path.glob(".out.txt*"))
    p = run("mask", src, "-o", out, "--skip-bad")
    assert out.read_text().splitlines() == ["[MASK] lives here.", ""]
    assert summary(p.stderr)["bad"] == 1


@pytest.mark.parametrize("args,msg", [
    (["mask", "{src}", "-o", "{out}", "--technique", "regexList"], "Unknown masking technique"),
    (["fill", "{src}", "-o", "{out}", "--model", "gpt-99"], "Unknown model"),
    (["fill", "{src}", "-o", "{out}", "--k", "0", "--method", "topk"], "K must be from 1 to 50"),
    (["fill", "{src}", "-o", "{out}", "--filler", "mlm", "--model", "bert-base-uncased"], "cannot reach"),
    (["mask", "{missing}", "-o", "{out}"], "does not exist"),
    (["fill", "{src}", "-o", "{out}", "--method", "topk", "--sampling", "softmax"], "Unknown Top-K sampling"),
    (["fill", "{src}", "-o", "{out}", "--filler", "infill", "--one-pass"], "one_pass is for the MLM filler"),
    (["asr-eval", "--lms", ",", "-o", "{out}"], "--lms names no LM"),
])
def test_bad_arguments_get_clear_messages(tmp_path, args, msg):
    src = tmp_path / "in.txt"
    src.write_text("[MASK] lives here.\n")
    paths = {"src": src, "out": tmp_path / "o.txt", "missing": tmp_path / "nope.txt"}
    p = run(*[a.format(**paths) for a in args], check=False)
    assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "o.txt").exists()


def test_masking_by_word_lists_starts_without_torch(tmp_path):
    """`mask` with a word-list technique needs no model: it runs where torch cannot be
    imported, so it starts in about a second, not the 4-5 s of importing torch."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n")
    src, out = tmp_path / "in.txt", tmp_path / "o.txt"
    src.write_text("Maria met Tom in Paris.\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    p = subprocess.run([sys.executable, "-m", "recover_core", "mask", str(src), "-o", str(out), "--technique",
                        "allowList", "--quiet"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Maria" not in out.read_text() and "[MASK]" in out.read_text()


def test_mask_rates_table():
    p = run("mask-rates", "--corpus", "news", "--techniques", "allowList,vocabThres", "--quiet")
    assert "allowList" in p.stdout and "mask_rate_%" in p.stdout


def test_mask_rates_say_which_lines_took_the_caseless_path(tmp_path):
    src = tmp_path / "fisher.txt"
    src.write_text("yeah i talked to margaret yesterday she moved to denver\n"
                   "um my name is oluwaseun\nAnna moved to Denver.\n")
    p = run("mask-rates", str(src), "--techniques", "entityTagger,allowList", "--quiet")
    rows = {ln.split()[0]: ln.split() for ln in p.stdout.splitlines()[1:]}
    assert rows["entityTagger"][-1] == "66.7" and rows["allowList"][-1] == "-"
