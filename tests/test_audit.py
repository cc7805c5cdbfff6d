"""`audit`: the project attacks its own output. The inversion attack on the pseudonyms, and
the canary audit's two halves that run here (the job folder of text; its records as rows)."""
import csv
import json

from cli_run import run
from recover_core.audit import canaries as C


def test_audit_command_attacks_each_setting_and_merges_its_rows(tmp_path):
    """The attacker's dictionary run through the tool: under a published key two runs give the
    same substitutes, under the default secret key they do not (at 1,000 names the published
    key is re-identified at 6x chance and the secret one at chance: docs/privacy.md)."""
    out = tmp_path / "audit.csv"
    first = run("audit", "--size", "20", "--victims", "8", "--csv", out, "--quiet")
    assert "re-identified" in first.stdout and "rank, key published" in first.stdout
    run("audit", "--size", "20", "--victims", "8", "--csv", out, "--quiet")  # merged, not appended
    rows = list(csv.DictReader(out.open()))
    same = {r["method"]: float(r["value"]) for r in rows if r["metric"] == "same_across_runs"}
    assert same["prior, key published"] == 1.0 and same["default (prior, secret key)"] < 0.3
    assert len({(r["method"], r["metric"]) for r in rows}) == len(rows) >= 12
    assert all(r["command"].startswith("python -m recover_core audit") for r in rows)
    bad = run("audit", "--size", "5", check=False)
    assert bad.returncode != 0 and "--size must be at least 20" in bad.stderr


def test_the_canary_job_masks_every_code_and_its_records_become_rows(tmp_path):
    job_dir, out = tmp_path / "job", tmp_path / "audit.csv"
    run("audit", "--canaries-job", job_dir, "--limit", "24", "--quiet")
    job = json.loads((job_dir / C.JOB_FILE).read_text())
    cs = [C.Canary(**c) for c in job["canaries"]]
    assert len(cs) == C.PER_LEVEL * len(C.LEVELS) and len(job["conditions"]) == 2 + 2 * len(C.MASKINGS)
    inserted = [c for c in cs if c.insertions]
    oracle = (job_dir / "oracle.txt").read_text()
    assert all(c.code in oracle for c in inserted)  # the positive control holds every secret
    # Every masked corpus, Baseline1's and the engine's, line by line against the clean one: a
    # secret left in place fails; a drawn substitute that equals another canary's code does not.
    clean = oracle.splitlines()
    for cond in job["conditions"][2:]:
        lines = (job_dir / cond["corpus"]).read_text().splitlines()
        assert len(lines) == len(clean)
        assert not [c.code for a, b in zip(clean, lines) for c in inserted if c.code in a and c.code in b], cond["name"]
    tagged = (job_dir / "entityTagger-engine.txt").read_text()
    assert not [c.name for c in inserted if c.name in tagged]
    assert job["missed"]["entityTagger"] == {"canaries": len(inserted), "code_kept": 0, "name_word_kept": 0}

    # The GPU job's records (here written by hand: the exposures are what is imported).
    exposure = [float(i % 10) for i in range(len(cs))]
    records = {"seed": 0, "device": "cpu", "records": [
        {"condition": name, "exposure": exposure, "secret_extracted": [c.insertions == 16 for c in cs],
         "names_extracted": []} for name in ("pretrained", "entityTagger/engine")]}
    (tmp_path / "records.json").write_text(json.dumps(records))
    out.write_text("dataset,masking,method,metric,value,model,scale,seed,command,repetitions\n"
                   "census-lines,entityTagger,default,reidentified,0.01,pseudonyms,x,0,cmd,\n")
    for _ in range(2):  # a second import replaces its rows
        shown = run("audit", "--canaries-import", tmp_path / "records.json", "--job", job_dir, "--csv", out)
    assert "entityTagger" in shown.stdout and "exposure" in shown.stdout
    rows = list(csv.DictReader(out.open()))
    assert [r["dataset"] for r in rows].count("census-lines") == 1
    mean16 = [r for r in rows if r["method"] == "engine" and r["metric"] == "exposure" and r["repetitions"] == "16"]
    want = sum(exposure[i] for i, c in enumerate(cs) if c.insertions == 16) / C.PER_LEVEL
    assert len(mean16) == 1 and float(mean16[0]["value"]) == round(want, 3)
    assert {r["metric"] for r in rows if r["method"] == "masker"} == {"code_kept", "name_word_kept"}
    # A later job of other conditions (vocabThres's Baseline1) adds its rows and keeps the engine's.
    records["records"] = [dict(records["records"][1], condition="vocabThres/baseline1")]
    (tmp_path / "records.json").write_text(json.dumps(records))
    run("audit", "--canaries-import", tmp_path / "records.json", "--job", job_dir, "--csv", out)
    merged = {(r["masking"], r["method"]) for r in csv.DictReader(out.open()) if r["metric"] == "exposure"}
    assert merged == {("", "pretrained"), ("entityTagger", "engine"), ("vocabThres", "baseline1")}

    missing = run("audit", "--canaries-import", tmp_path / "none.json", "--job", job_dir, check=False)
    assert missing.returncode != 0 and "does not exist" in missing.stderr
    nojob = run("audit", "--canaries-import", tmp_path / "records.json", check=False)
    assert nojob.returncode != 0 and "needs --job" in nojob.stderr
