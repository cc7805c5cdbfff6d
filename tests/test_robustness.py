"""Findings of a robustness review, each checked as a user would meet it: many masks in
one line (11), stray carriage returns and SIGTERM in the command line, and summaries
kept as running counts (15). Finding 12 (infill memory) is in test_fill_infill.py."""
import functools
import json
import os
import random
import signal
import subprocess
import sys
import time

from recover_core import Obfuscator
from recover_core.runtime.env import MAX_MASKS
from recover_core.filling import MaskInput
from recover_core.filling.base import MARKER_RE, merge_consecutive
from recover_core.filling.instruct import ENTITY_EXTRA_WORDS, _ws, validate, viable
from recover_core.masking import build, mask_many, mask_rate, mask_text
from recover_core.text.spans import GENERIC_LABELS, Span

from cli_run import ROOT, run, summary


def item_of(text: str) -> MaskInput:
    """MaskInput without MaskInput.parse, which refuses more than MAX_MASKS markers."""
    return MaskInput(text, [Span(m.start(), m.end(), m.group(), m.group(1)) for m in MARKER_RE.finditer(text)])


# --- 11: many masks -----------------------------------------------------------------------------

def test_validator_takes_hundreds_of_markers_without_recursion():
    n = 500  # the recursive validator went one Python frame deeper per marker: RecursionError
    item = item_of(", ".join(["[MASK]"] * n) + " end.")
    assert sys.getrecursionlimit() < 2 * n + 100
    assert validate(item, ", ".join(["a"] * n) + " end.") == ["a"] * n
    assert validate(item, ", ".join(["a"] * n) + " end!") is None
    assert validate(item, ", ".join(["a"] * (n - 1)) + ", a b end.") is None  # two words for one marker


def _validate_recursive(item: MaskInput, output: str):
    """The validator before it was made iterative (memoised depth-first search): the
    iterative one must give the same answer on every input."""
    if "\n" in output.strip():
        return None
    out = _ws(output).strip()
    lits, limits, pos = [], [], 0
    for m in item.markers:
        lits.append(_ws(item.text[pos : m.start]))
        extra = 0 if m.label in GENERIC_LABELS or m.label == "NUMBER" else ENTITY_EXTRA_WORDS
        limits.append(max(1, len(MARKER_RE.findall(m.text))) + extra)
        pos = m.end
    lits.append(_ws(item.text[pos:]))
    lits[0], lits[-1] = lits[0].lstrip(), lits[-1].rstrip()

    @functools.lru_cache(maxsize=None)
    def solve(i, p):
        if not out.startswith(lits[i], p):
            return None
        q = p + len(lits[i])
        if i == len(limits):
            return () if q == len(out) else None
        for e in range(q + 1, len(out) + 1):
            sub = out[q:e]
            if len(sub.split()) > limits[i] or "[" in sub or "]" in sub:
                break
            if sub.strip() != sub:
                continue
            rest = solve(i + 1, e)
            if rest is not None:
                return (sub,) + rest
        return None

    found = solve(0, 0)
    return list(found) if found is not None else None


def test_iterative_validator_answers_as_the_recursive_one():
    rng = random.Random(0)
    words = ["and", "the", "a", "Tom", "New", "York", "went", "home", ",", ".", "of", "1998", "[x]", "  "]
    markers = ["[MASK]", "[PERSON]", "[GPE]", "[NUMBER]", "[PERSON] [PERSON]", "[MASK] [MASK]"]
    matched = rejected = 0
    for _ in range(3000):
        parts = []
        for _ in range(rng.randint(1, 6)):
            parts.append(" ".join(rng.choices(words[:-2], k=rng.randint(0, 3))))
            parts.append(rng.choice(markers))
        parts.append(" ".join(rng.choices(words[:-2], k=rng.randint(0, 3))))
        text = " ".join(p for p in parts if p)
        item = item_of(text)
        if rng.random() < 0.5:
            item = merge_consecutive(item)
        # An output: the text with each marker run replaced by 1-4 random words, sometimes disturbed.
        out = MARKER_RE.sub(lambda m: " ".join(rng.choices(words, k=rng.randint(1, 2))), text)
        out = " ".join(out.split()) if rng.random() < 0.7 else out
        if rng.random() < 0.2:
            i = rng.randrange(len(out) + 1)
            out = out[:i] + rng.choice(words) + out[i:]
        want = _validate_recursive(item, out)
        assert validate(item, out) == want, (text, out)
        matched += want is not None
        rejected += want is None
        # The beam search's stop (instruct._Hopeless) trusts ``viable``: a prefix it calls
        # hopeless must have no continuation that validates, this output included.
        if want is not None:
            assert all(viable(item, out[:j]) for j in range(len(out) + 1)), (text, out)
        else:
            dead_at = next((j for j in range(len(out) + 1) if not viable(item, out[:j])), None)
            assert dead_at is None or all(viable(item, out[:j]) is False for j in range(dead_at, len(out) + 1))
    assert matched > 300 and rejected > 300  # both answers were exercised


def test_a_line_of_masks_stops_fill_with_a_clear_message(tmp_path):
    src = tmp_path / "masked.txt"
    many = ", ".join(["[MASK]"] * 250)  # 1,998 characters
    assert len(many) <= 2000
    src.write_text("The [MASK] was hot.\n" + many + "\n")
    out = tmp_path / "filled.txt"
    p = run("fill", src, "-o", out, check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"line 2: The line has 250 masks; the limit is {MAX_MASKS} per sentence" in p.stderr
    assert "--skip-bad" in p.stderr
    assert not out.exists() and not list(tmp_path.glob(".filled.txt*"))


def test_skip_bad_writes_an_empty_line_for_too_many_masks(tmp_path, tiny_bert):
    src = tmp_path / "masked.txt"
    src.write_text(", ".join(["[MASK]"] * (MAX_MASKS + 1)) + "\nThe [MASK] was hot.\n")
    out = tmp_path / "filled.txt"
    p = run("fill", src, "-o", out, "--model", tiny_bert, "--skip-bad", "--no-type-check")
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and lines[0] == "" and lines[1].startswith("The ") and "[MASK]" not in lines[1]
    assert summary(p.stderr)["bad"] == 1


def test_obfuscate_counts_the_masks_it_made(tmp_path, tiny_bert):
    line = ", ".join(["Zorbly"] * (MAX_MASKS + 6)) + "."
    assert len(mask_text(line, build("allowList")).spans) > MAX_MASKS
    src = tmp_path / "talk.txt"
    src.write_text("I like it here.\n" + line + "\n")
    out = tmp_path / "obf.txt"
    p = run("obfuscate", src, "-o", out, "--technique", "allowList", "--model", tiny_bert, "--no-type-check",
            check=False)
    assert p.returncode == 2 and "line 2:" in p.stderr and f"the limit is {MAX_MASKS}" in p.stderr
    assert "mask fewer words" in p.stderr and not out.exists()
    p = run("obfuscate", src, "-o", out, "--technique", "allowList", "--model", tiny_bert, "--no-type-check",
            "--skip-bad")
    assert out.read_text().splitlines()[1] == "" and summary(p.stderr)["bad"] == 1


# --- 15: the command line -------------------------------------------------------------------------

def test_a_stray_carriage_return_does_not_split_a_line(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"Tom lives\rin Zorbly town.\nThe bus was late.\r\n")  # a stray \r, then a CRLF line end
    out = tmp_path / "out.txt"
    p = run("mask", src, "-o", out, "--technique", "allowList")
    lines = out.read_bytes().decode().split("\n")
    assert len(lines) == 3 and lines[2] == "" and summary(p.stderr)["lines"] == 2
    assert " lives in " in lines[0] and "\r" not in lines[0]  # the \r is a space of its line
    assert lines[1] == "The bus was late."


def test_crlf_files_still_read_as_one_line_per_line(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"text": "The bus was late."}\r\n\r\n{"text": "Tom lives here."}\r\n')
    out = tmp_path / "out.jsonl"
    p = run("mask", src, "-o", out, "--technique", "allowList")
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 3 and recs[1] == {"masked": "", "masks": []} and recs[0]["masked"] == "The bus was late."
    assert summary(p.stderr)["blank"] == 1


def test_sigterm_keeps_finished_lines_private_and_resume_finishes(tmp_path, news_sentences):
    """A reboot sends SIGTERM: the finished lines stay for --resume (issue 11), in a file only
    the user can read (with --keep-originals it holds the private words), and the message
    says where it is and how to go on or delete it."""
    src = tmp_path / "big.txt"
    src.write_text("\n".join(news_sentences * 10) + "\n")
    out = tmp_path / "masked.jsonl"
    args = [sys.executable, "-m", "recover_core", "mask", str(src), "-o", str(out), "--technique", "allowList",
            "--keep-originals", "--batch-size", "10", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    part = tmp_path / ".masked.jsonl.part"
    record = tmp_path / ".masked.jsonl.progress.json"
    try:
        deadline = time.time() + 120
        # Wait for a committed chunk (the record, written after the lines): lines in the part
        # file without a record are not finished, and the run rightly says so.
        while not (record.exists() and json.loads(record.read_text() or "{}").get("lines_done")):
            assert proc.poll() is None, proc.stderr.read()
            assert time.time() < deadline, "no chunk was committed"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM and "terminated: " in err and "--resume" in err
    assert "holds the original private words" in err and "Traceback" not in err
    assert '"originals"' in part.read_text() and oct(part.stat().st_mode & 0o777) == "0o600"
    assert not out.exists()
    subprocess.run([*args, "--resume"], cwd=ROOT, env=env, check=True, capture_output=True)
    assert out.read_text().count("\n") == len(news_sentences) * 10 and not part.exists()


def test_mask_summary_from_running_counts_equals_mask_rate(tmp_path, news_sentences):
    lines = news_sentences[:60]
    src = tmp_path / "news.txt"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "m.txt"
    p = run("mask", src, "-o", out, "--technique", "entityTagger", "--batch-size", "7", "--quiet")
    # the command masks as the engine does under our rules (public bodies stay, names completed)
    want = mask_rate(Obfuscator(technique="entityTagger").mask_many(lines))
    s = summary(p.stderr)
    assert len(want["by_label"]) >= 2
    assert (s["words"], s["masked_words"], s["mask_rate"]) == (want["words"], want["masked_words"],
                                                                round(want["mask_rate"], 4))
    assert list(s["by_label"].items()) == list(want["by_label"].items())  # the same order too


def test_rate_counter_equals_mask_rate(news_sentences):
    from recover_core.batch.pipeline import RateCounter

    masked = mask_many(news_sentences[:200], build("allowList+entityTagger"))
    c = RateCounter()
    for m in masked:
        c.add(m)
    assert c.result() == mask_rate(masked)
    assert RateCounter().result() == mask_rate([])


def test_mask_rates_table_from_a_file_equals_mask_rate(tmp_path, news_sentences):
    lines = news_sentences[:80]
    src = tmp_path / "news.txt"
    src.write_text("\n".join(lines[:40] + [""] + lines[40:]) + "\n")
    p = run("mask-rates", src, "--techniques", "allowList,vocabThres", "--batch-size", "9", "--quiet")
    rows = [r.split() for r in p.stdout.strip().splitlines()]
    assert rows[0] == ["technique", "sentences", "words", "mask_rate_%", "sentences_with_mask_%"]
    for row in rows[1:]:
        r = mask_rate(mask_many(lines, build(row[0])))
        assert row[1:] == [str(r["sentences"]), str(r["words"]), str(round(100 * r["mask_rate"], 1)),
                           str(round(100 * r["sentences_with_mask"] / r["sentences"], 1))]
