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


# --- issue 75: the attacks a real attacker makes (replay, membership, name_exposure) ---------

def test_the_replay_attacker_rebuilds_the_masked_line_from_the_public_output():
    from recover_core.audit import replay as R

    public = {"text": "Steinlager won, Valda Ruiz said; write to ab.cd@example.org.",
              "fills": [{"start": 16, "end": 26, "label": "PERSON", "word": "Valda Ruiz"},
                        {"start": 42, "end": 59, "label": "EMAIL", "word": "ab.cd@example.org"}]}
    item = R.rebuild(public)
    # a two-word name was two markers (the masker marks word by word); an identifier was one
    assert item.text == "Steinlager won, [MASK] [MASK] said; write to [MASK]."
    assert [(m.start, m.end, m.label) for m in item.markers] == [(16, 22, "PERSON"), (23, 29, "PERSON"),
                                                                 (45, 51, "EMAIL")]
    assert not R._visible("Kubilay Kofanova", public) and R._visible("Ruiz Smith", {**public, "fills": []})
    line = "Yes, Kubilay Kofanova said."
    spans = [R.Span(5, 12, "Kubilay", "PERSON"), R.Span(13, 21, "Kofanova", "PERSON")]
    cand = "Jo Nong"
    moved = R._moved(spans, 5, "Kubilay Kofanova", cand, "Yes, Jo Nong said.")
    assert [s.text for s in moved] == ["Jo", "Nong"]


def test_replay_and_membership_run_through_the_engine_and_merge_their_rows(tmp_path):
    """A tiny run: the rows carry the metric names the issue asks for, secret and leaked key
    side by side, with chance; membership's precision beside its base rate."""
    out = tmp_path / "audit.csv"
    out.write_text("dataset,masking,method,metric,value,model,scale,seed,command,repetitions\n"
                   "census-lines,entityTagger,default,reidentified,0.01,pseudonyms,x,0,cmd,\n")
    shown = run("audit", "--replay", "--victims", "2", "--candidates", "20", "--membership", "--members", "6",
                "--csv", out, "--quiet")
    assert "secret key" in shown.stdout and "leaked key" in shown.stdout and "base rate" in shown.stdout
    rows = list(csv.DictReader(out.open()))
    got = {(r["metric"], r["method"]): float(r["value"]) for r in rows}
    assert got[("replay", "chance")] == 0.5
    assert got[("replay", "secret key")] <= got[("replay", "leaked key")] <= 1
    # both victims are attacked or counted as missed; with the key, the replay finds each
    assert got[("replay", "leaked key")] == 1.0
    assert 0 <= got[("membership", "consistent mapping: precision")] <= 1
    assert [r["metric"] for r in rows].count("reidentified") == 1  # other rows stay
    bad = run("audit", "--replay", "--candidates", "5", check=False)
    assert bad.returncode != 0 and "--candidates" in bad.stderr


def test_name_canaries_are_hard_for_a_masker_and_their_records_become_rows(tmp_path):
    from recover_core.audit import exposure as E

    cs = E.canaries(1)
    assert {c.kind for c in cs} == set(E.KINDS) and len(cs) == len(E.KINDS) * len(E.LEVELS)
    assert len({c.name for c in cs}) == len(cs)
    lower = next(c for c in cs if c.kind == "lower")
    assert lower.name == lower.name.lower() and "@" in next(c for c in cs if c.kind == "email").name
    alts = E.alternatives(cs[0])
    assert alts[0] == cs[0].name and len(set(alts)) == E.ALTERNATIVES + 1 == 1000
    job = {"seed": 0, "rank": 8, "epochs": 3.0, "limit": 16, "per_level": 1, "canaries": [vars(c) for c in cs],
           "name_word_kept": {k: 0 for k in E.KINDS}, "canaries_per_kind": len(E.LEVELS),
           "corpora": {"oracle": "oracle.txt", "entityTagger/engine": "engine.txt"}}
    (tmp_path / E.JOB_FILE).write_text(json.dumps(job))
    exp = {str(i): (9.0 if c.insertions == 16 else 1.0) for i, c in enumerate(cs)}
    E.records_file(tmp_path, "oracle").write_text(json.dumps({"exposure": exp}))
    out = tmp_path / "audit.csv"
    shown = run("audit", "--name-exposure", tmp_path, "--no-train", "--csv", out)
    assert "oracle" in shown.stdout
    rows = [r for r in csv.DictReader(out.open()) if r["metric"] == "name_exposure"]
    mean = {(r["method"], r["repetitions"]): float(r["value"]) for r in rows}
    assert mean[("oracle", "16")] == 9.0 and mean[("oracle", "0")] == 1.0 and mean[("oracle sd", "0")] == 0.0


class _BigramLM:
    """A stand-in for PretrainedLM: characters as tokens, a random bigram table as the model."""

    def __init__(self, seed: int = 0):
        import torch

        g = torch.Generator().manual_seed(seed)
        self.table = torch.randn(128, 128, generator=g) * 3  # logits of the next char given this one
        self.end = 0
        lm = self

        class Model(torch.nn.Module):
            def forward(self, input_ids):
                return type("Out", (), {"logits": lm.table[input_ids]})()

        self.model = Model()
        self.model.register_parameter("p", torch.nn.Parameter(torch.zeros(1)))

    def encode(self, text):
        ids = [self.end] + [ord(c) % 127 + 1 for c in text] + [self.end]
        return ids, list(ids)

    def logprob_shared(self, texts):
        import torch

        lp = torch.log_softmax(self.table, -1)
        return [sum(lp[a, b].item() for a, b in zip(ids, ids[1:])) for ids, _ in map(self.encode, texts)]


def test_name_exposure_leaves_out_only_alternatives_that_cannot_tie_the_true_name():
    """The first token's log-probability bounds a text's: the ranks are those of scoring all."""
    from recover_core.audit import exposure as E

    lm = _BigramLM()
    for true in ("Gloria", "Zq", "Ann"):
        texts = [f"The spare key is with {n}." for n in [true, "Anna", "Bob", "Zoe", "Quentin", "Ann", "Xu", "Gloria"]]
        full = lm.logprob_shared(texts)
        want = sorted(s - full[0] for s in full[1:] if s >= full[0])
        got = E._rivals(lm, texts)
        assert sorted(v for v in got if v >= 0) == want


def test_the_results_tab_shows_replay_membership_and_name_exposure():
    import pandas as pd

    from recover_core.results import tables as results

    rows = [("news-heldout-names", "entityTagger", "secret key", "replay", 0.0, None),
            ("news-heldout-names", "entityTagger", "chance", "replay", 0.01, None),
            ("news-heldout-names", "entityTagger", "consistent mapping: precision", "membership", 0.52, None),
            ("news+name-canaries", "(any)", "oracle", "name_exposure", 9.97, 16),
            ("news+name-canaries", "entityTagger", "engine", "name_exposure", 1.1, 16),
            ("news+name-canaries", "entityTagger", "engine sd", "name_exposure", 0.6, 16),
            ("news+name-canaries", "entityTagger", "engine", "name_exposure", 1.4, 0)]
    df = pd.DataFrame(rows, columns=["dataset", "masking", "method", "metric", "value", "repetitions"])
    table = results.audit_table(df)
    assert set(table["attack"]) == {"replay", "membership", "name_exposure"} and len(table) == len(rows)
    lines = {d.name for d in results.audit_chart(df).data}
    assert lines == {"names: oracle", "names: entityTagger engine"}
