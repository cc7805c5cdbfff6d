"""vats2024 §4.3's claims, checked by claims.claims on the paper's own tables and on ours."""
import re

import pandas as pd
import pytest

from recover_core.results import claims as C
from recover_core.results import tables as R

CLOSE = "Fine-tuned RoBERTa (ours: mlm-ft Top-K) is close to Oracle (within 5%) for vocabThres and entityTagger"
BEST = "RoBERTa (ours: the MLM filler) is best across all maskings"
FT = "A fine-tuned MLM (FT) beats the same MLM without fine-tuning"
BASE = "Every filling method beats both baselines"
TYPED = "Ours, not a vats2024 claim: the typed filler (+typed) beats the same filler untyped"


def by_claim(dataset, df=None):
    return {r["claim"]: r for r in C.claims(R.load() if df is None else df, dataset)}


def tidy(rows, dataset="d", metric="perplexity"):
    """(method, masking, value[, seed]) -> a tidy frame as read_tidy gives it."""
    return pd.DataFrame([{"dataset": dataset, "masking": r[1], "method": r[0], "metric": metric, "value": r[2],
                          "seed": r[3] if len(r) > 3 else None, "scale": "s"} for r in rows])


def grid(cells, seeds=(0,), jitter=0.0):
    """Our naming: {masking: {method: ppl}} plus Oracle 100; seed s adds (s - 1) * jitter."""
    rows = [("oracle", R.ANY_MASKING, 100 + (0 if s is None else s - 1) * jitter, s) for s in seeds]
    rows += [(m, mk, v + (0 if s is None else s - 1) * jitter, s) for mk, methods in cells.items()
             for m, v in methods.items()
             for s in seeds]
    return tidy(rows)


def paper(dataset, metric="perplexity"):
    df = R.load()
    return df[(df["dataset"] == dataset) & (df["metric"] == metric) & (df["origin"] == "paper")]


def test_the_paper_supports_its_claims_on_fisher():
    rows = by_claim("Fisher")
    assert (rows[BASE]["holds"], rows[BASE]["passed"], rows[BASE]["failed"]) == ("yes", 21, 0)  # 7 x 3
    assert rows["Top-K beats Top-1"]["holds"] == "yes"
    assert rows["allowList (most words masked) leaves the largest gap to Oracle"]["holds"] == "yes"
    # RoBERTa (Top-K, FT) ties RoBERTa (Top-K) at 38.9 on vocabThres: a tie is not "better".
    assert rows[FT]["holds"].startswith("no (1 of ") and "RoBERTa (Top-K, FT)/vocabThres (tie)" in rows[FT]["evidence"]
    assert rows[CLOSE]["holds"] == "yes" and "+4.3%" in rows[CLOSE]["evidence"]  # 38.9 / 37.3


def test_the_papers_own_tables_contradict_some_claims():
    topk = by_claim("Reddit")["Top-K beats Top-1"]  # allowList: RoBERTa Top-K 123.4 > Top-1 117.3
    assert (topk["holds"], topk["passed"], topk["failed"]) == ("no (1 of 6 fail)", 5, 1)  # universal: one is enough
    assert topk["evidence"] == "fails: RoBERTa (Top-K)/allowList"
    close = by_claim("Reddit")[CLOSE]  # vocabThres 82.1 against Oracle 76.0: +8.0%
    assert close["holds"].startswith("no (1 of ") and "RoBERTa (Top-K, FT)/vocabThres" in close["evidence"]


def test_close_to_oracle_is_judged_on_fine_tuned_roberta_not_the_best_filler():
    wsj = paper("WSJ")
    value = wsj.set_index(["method", "masking"])["value"]
    oracle = wsj[wsj["method"] == "Oracle"]["value"].item()
    gaps = [100 * (value[("RoBERTa (Top-K, FT)", mk)] / oracle - 1) for mk in ("vocabThres", "entityTagger")]
    assert [round(g, 1) for g in gaps] == [27.6, 82.4]  # Table 5, as the review reads it
    t = C.close_to_oracle(C.Grid.of(wsj))
    assert t.holds == "no (2 of 2 fail)" and len(t.failed) == 2
    assert t.notes == ["vocabThres: RoBERTa (Top-K, FT) +27.6%", "entityTagger: RoBERTa (Top-K, FT) +82.4%"]
    # Our naming: Top-K is within 5% of Oracle but FT, the named method, is not.
    ours = by_claim("d", grid({"vocabThres": {"mlm:m:topk": 102, "mlm-ft:m:topk": 110},
                               "entityTagger": {"mlm:m:topk": 101, "mlm-ft:m:topk": 104}},
                              seeds=(0, 1, 2), jitter=0.1))[CLOSE]
    assert (ours["holds"], ours["passed"], ours["failed"], ours["seeds (n)"]) == ("no (1 of 2 fail)", 1, 1, "3")
    assert "m (Top-K, FT)/vocabThres" in ours["evidence"] and "m (Top-K)" not in ours["evidence"]


def test_roberta_best_across_maskings_is_checked():
    for dataset in ("Fisher", "Reddit"):
        assert (by_claim(dataset)[BEST]["holds"], by_claim(dataset)[BEST]["passed"]) == ("yes", 3)
    # Where BERT (Top-K, FT) beats every RoBERTa row on Fisher allowList, the claim fails there.
    df = paper("Fisher").copy()
    df.loc[(df["method"] == "BERT (Top-K, FT)") & (df["masking"] == "allowList"), "value"] = 60.0
    best = by_claim("Fisher", df)[BEST]
    assert (best["holds"], best["failed"]) == ("no (1 of 3 fail)", 1)
    assert "allowList: RoBERTa (Top-K, FT) vs BERT (Top-K, FT)" in best["evidence"]
    # Ours: our MLM filler against the baselines and any other filler (here a tuned causal LLM).
    ours = by_claim("d", grid({"allowList": {"baseline0": 300, "baseline1": 250, "mlm:m:topk": 200,
                                             "instruct:llm:top1": 190}}, seeds=(0, 1, 2), jitter=1.0))[BEST]
    assert ours["holds"] == "no (1 of 1 fail)" and "m (Top-K) vs llm (Top-1)" in ours["evidence"]


def test_no_baseline1_claim_and_ties_are_not_wins():
    assert not any("Baseline1" in c.text for c in C.CLAIMS)
    rows = by_claim("d", grid({"vocabThres": {"baseline0": 120, "baseline1": 110, "mlm:m:top1": 110,
                                              "mlm:m:topk": 110}}, seeds=(None,)))  # printed runs, as the paper's
    assert (rows[BASE]["passed"], rows[BASE]["failed"]) == (0, 2)  # equal to Baseline1 is not lower
    assert rows["Top-K beats Top-1"]["evidence"] == "fails: m (Top-K)/vocabThres (tie)"


def test_wsj_findings_are_about_wer_not_perplexity():
    wsj = by_claim("WSJ")
    assert wsj and all(c.startswith("WER: ") for c in wsj)  # Table 5 (perplexity) backs no claim
    assert [r["holds"] for r in wsj.values()] == ["yes", "yes", "yes", "yes"]
    assert "vocabThres: LLaMA2 (Top-1, FT) +0.9%" in wsj[next(c for c in wsj if "close to Oracle" in c)]["evidence"]
    # Without Table 6 the WER claims are n/a; WSJ perplexity does not stand in for them.
    df = R.load()
    no_wer = by_claim("WSJ", df[~df["metric"].isin(R.METRICS["WER"])])
    assert {r["holds"] for r in no_wer.values()} == {"n/a"} and "no WER rows" in next(iter(no_wer.values()))["evidence"]
    # news (our WSJ stand-in): of the paper's claims only WER ones, never the Fisher findings;
    # from its perplexity rows alone, every one is n/a. Our own claim (typed fillers, labelled
    # as ours) is judged on the perplexity of the grid's typed methods.
    ours = "Ours, not a vats2024 claim"
    news = {c: r for c, r in by_claim("news").items() if not c.startswith(ours)}
    assert news and all(c.startswith("WER: ") for c in news)
    ppl_only = by_claim("news", df[~df["metric"].isin(R.METRICS["WER"])])
    assert {r["holds"] for c, r in ppl_only.items() if not c.startswith(ours)} == {"n/a"}
    assert BASE in by_claim("fortunes") and BASE not in news


def test_wer_rows_of_ours_are_checked_when_present():
    rows = [("oracle", R.ANY_MASKING, 10.0), ("pretrained-lm", R.ANY_MASKING, 12.0), ("mlm:m:topk", "vocabThres", 10.2),
            ("mlm:m:topk", "entityTagger", 11.0), ("ASR-without-LM", R.ANY_MASKING, 11.5)]
    wer = by_claim("news", tidy(rows, "news", "wer_percent"))
    # the pre-trained LM is worse than none; 16.7% gain; +2% and +10% to Oracle; fillers beat it
    assert [r["holds"] for r in wer.values()] == ["no (1 of 1 fail)", "yes", "no (1 of 2 fail)", "yes"]


@pytest.mark.parametrize("better,worse,outcome", [
    (C.Cell(100, 99, 101, 3), C.Cell(101, 100, 102, 3), "noise"),  # 1 apart, ranges 2
    (C.Cell(100, 99, 101, 3), C.Cell(103, 102, 104, 3), "pass"),
    (C.Cell(103, 102, 104, 3), C.Cell(100, 99, 101, 3), "fail"),
    (C.Cell(100, 100, 100, 1), C.Cell(101, 101, 101, 1), "pass"),  # single runs: as printed
    (C.Cell(100, 100, 100, 1), C.Cell(100, 100, 100, 1), "fail"),  # a tie is not a win
    (C.Cell(100, 100, 100, 1, True), C.Cell(150, 150, 150, 1, True), "one seed"),  # ours, one seed: never a pass
    (C.Cell(150, 150, 150, 1, True), C.Cell(100, 100, 100, 1, True), "one seed"),  # nor a fail
    (C.Cell(100, 99, 101, 3, True), C.Cell(150, 150, 150, 1, True), "one seed"),  # one side is enough
    (C.Cell(100, 99, 101, 3, True), C.Cell(150, 150, 150, 1), "pass"),  # against a printed run: the range decides
])
def test_noise_rule(better, worse, outcome):
    assert C.compare(better, worse) == outcome


def test_multi_seed_differences_inside_the_spread_are_within_noise():
    cells = {"vocabThres": {"baseline0": 150, "baseline1": 140, "mlm:m:top1": 120, "mlm:m:topk": 119,
                            "mlm-ft:m:topk": 118.5}}
    one, three = by_claim("d", grid(cells)), by_claim("d", grid(cells, seeds=(0, 1, 2), jitter=1.0))
    assert one["Top-K beats Top-1"]["holds"] == "one seed, noise unknown (0 of 1 against on the means)"
    assert (one["Top-K beats Top-1"]["passed"], one["Top-K beats Top-1"]["one seed"]) == (0, 1)
    topk = three["Top-K beats Top-1"]  # 1 apart, each cell's seeds span 2
    assert (topk["holds"], topk["passed"], topk["failed"], topk["within noise"]) == ("within noise", 0, 0, 1)
    assert "m (Top-K)/vocabThres (Δ +0.84%, spread 1.68%)" in topk["evidence"]
    assert (three[FT]["within noise"], three[BASE]["passed"]) == (1, 3)  # 20+ apart: outside the noise


def test_seeds_are_aggregated_for_the_table_and_the_chart():
    g = C.Grid.of(grid({"allowList": {"mlm:m:topk": 200}}, seeds=(0, 1, 2), jitter=3.0))
    assert g.cells[("mlm:m:topk", "allowList")] == C.Cell(200.0, 197.0, 203.0, 3, True)
    df = pd.concat([paper("Fisher").assign(origin="paper", source="p"),
                    grid({"allowList": {"mlm:m:topk": 200}}, seeds=(0, 1, 2), jitter=3.0).assign(
                        dataset="fortunes", origin="ours", source="o")])
    fig = R.chart(df, "Perplexity", R.pair_label("Fisher", "fortunes"))
    ours = [t for t in fig.data if t.name == "allowList" and "m (Top-K)" in list(t.x)][0]
    assert list(ours.y) == [200.0] and list(ours.error_y.array) == [3.0]
    theirs = [t for t in fig.data if t.name == "allowList" and "BERT (Top-1)" in list(t.x)][0]
    assert all(pd.isna(e) for e in theirs.error_y.array)  # one run: no error bar


@pytest.mark.parametrize("method,parts", [
    ("BERT (Top-1)", ("BERT", "top1", False, False, "paper")),
    ("RoBERTa (Top-K, FT)", ("RoBERTa", "topk", True, False, "paper")),
    ("mlm:minilm-wiki:topk", ("minilm-wiki", "topk", False, False, "mlm")),
    ("mlm-ft:minilm-wiki:topk", ("minilm-wiki", "topk", True, False, "mlm")),
    ("mlm:minilm-wiki:topk+typed", ("minilm-wiki", "topk", False, True, "mlm")),
    ("mlm-ft:/tmp/a:b/m:topk+typed", ("/tmp/a:b/m", "topk", True, True, "mlm")),
    ("instruct:smollm2-fill:top1", ("smollm2-fill", "top1", False, False, "instruct")),
    ("mlm:m:topk+other", None), ("Oracle", None), ("baseline1", None), ("Pre-Trained-LM", None),
])
def test_method_names_of_both_origins_parse(method, parts):
    assert R.method_parts(method) == parts


@pytest.mark.parametrize("method,label", [
    ("mlm-ft:minilm-wiki:topk", "minilm-wiki (Top-K, FT)"), ("mlm:/tmp/x/model:top1", "model (Top-1)"),
    ("mlm:minilm-wiki:topk+typed", "minilm-wiki (Top-K, typed; ours)"),
    ("mlm-ft:minilm-wiki:topk+typed", "minilm-wiki (Top-K, FT, typed; ours)"),
    ("baseline0", "Baseline0"), ("oracle", "Oracle"), ("BERT (Top-K, FT)", "BERT (Top-K, FT)"),
])
def test_our_methods_are_labelled_as_the_paper_labels_its_own(method, label):
    assert R.display_method(method) == label


def test_typed_methods_are_ours_and_not_the_papers():
    cells = {mk: {"baseline0": 300, "baseline1": 250, "mlm:m:topk": 200, "mlm-ft:m:topk+typed": 101,
                  "mlm:m:topk+typed": 260} for mk in ("vocabThres", "entityTagger")}
    rows = by_claim("d", grid(cells, seeds=(0, 1, 2), jitter=1.0))
    assert rows[BASE]["passed"] == 2  # the typed rows (one above Baseline1) are left out
    assert rows[CLOSE]["holds"] == "n/a"  # the only FT row is typed: not the paper's method
    assert (rows[TYPED]["passed"], rows[TYPED]["failed"]) == (0, 2)
    assert "m (Top-K, typed; ours)/vocabThres" in rows[TYPED]["evidence"]
    assert TYPED not in by_claim("Fisher")  # shown only where typed rows exist


def test_claims_table_and_markdown():
    table = C.claims_table(R.load(), R.pair_label("WSJ", "news"))
    # news has rows from several setups (the grid, asr-eval, the reduced WER grid): each is
    # checked apart and named by its scale
    assert list(table.columns) == C.CLAIM_COLUMNS and {d.split(" [")[0] for d in table["dataset"]} == {"WSJ", "news"}
    md = C.claims_markdown(R.load(), ["Fisher"])
    assert "| Top-K beats Top-1 | Fisher | yes | 6 | 0 | 0 | 0 | 1 | all pass |" in md
    assert md.index(C.NOISE_RULE) < md.index("| claim")  # the rule, in one sentence, above the table
    # the Results tab's headline view holds none of our rows for Fisher: every claim, none with evidence
    # (it raised KeyError('metric'): a boolean list on no rows was read as a list of columns)
    headline = C.claims_table(R.view(R.load(), R.HEADLINE), "Fisher", every=True)
    assert len(headline) and list(headline.columns) == C.CLAIM_COLUMNS


def test_claims_command(capsys):
    from recover_core.cli import main

    assert main(["claims", "--dataset", "Fisher"]) in (0, None)
    out = capsys.readouterr().out
    assert out.startswith(C.NOISE_RULE) and "| Top-K beats Top-1 | Fisher | yes | 6 | 0 | 0 | 0 | 1 |" in out


def test_grid_table_shows_the_mean_and_range_over_seeds():
    import pandas as pd

    from recover_core.results.tables import grid_markdown

    rows = [dict(dataset="fortunes", masking=m, method=meth, metric="perplexity", value=v, model="lm-cpu",
                 scale="s", seed=str(seed), command="c")
            for seed, bump in enumerate((0, 10, 20))
            for m, meth, v in (("(any)", "oracle", 1000), ("vocabThres", "mlm:minilm-wiki:topk+typed", 1100))
            for v in [v + bump]]
    table = grid_markdown(pd.DataFrame(rows), "fortunes")
    assert "mean of 3 seeds" in table
    assert "| Oracle | 1,010 (1,000-1,020) |" in table
    assert "typed; ours" in table and "1,110 (1,100-1,120)" in table


def test_speech_table_puts_our_bench_beside_preiss2023_table2():
    """The Results tab's speech table, from the shipped CSVs: the paper's three MLMs (13/20
    names exactly matched) and our bench's rows, with our second-pass WER in the paper's
    "confidence" column (lower is better in both)."""
    t = R.speech_table(R.load())
    paper, ours = t[t["origin"] == "paper"], t[t["origin"] == "ours"]
    assert set(paper["system"]) == {"ALBERT", "BERT", "RoBERTa"} and set(paper["NE exact match"]) == {"13/20"}
    assert {"substitute", "bleep"} <= set(ours["system"]) and (ours["dataset"] == "names-speech").all()
    conf = [c for c in t.columns if "preiss2023's confidence" in c][0]
    assert ours[conf].between(0, 1).all() and ours["names found (recall)"].between(0.5, 1).all()


def test_every_result_table_says_which_code_produced_it():
    """The Results tab names each table's commit and whether the one engine filled its corpora
    (issue 44): a new or regenerated table must be entered in precomputed/provenance.json."""
    import subprocess

    root = R.precomputed_dir()
    tables = {p.relative_to(root).as_posix() for p in root.rglob("*.csv") if p.relative_to(root).parts[0] != "bench"}
    prov = R.provenance()
    assert set(prov["table"]) == tables
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=root.parent, capture_output=True,
                             text=True).stdout.strip() != "false"
    for commit in set() if shallow else set(prov["commit"]):  # a shallow clone lacks the history to look in
        assert subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=root.parent).returncode == 0, commit
    assert set(prov["obfuscated by"]) <= {"the paper", "the engine"} | {
        x for x in prov["obfuscated by"] if x.startswith("code before the engine")}


def test_the_engines_fill_against_both_baselines_and_every_claim_on_news():
    """Ours: the engine (+typed) against the better baseline of each masking; and news, which
    stands in for WSJ (no perplexity claim in the paper), gets every claim on request."""
    cells = {"vocabThres": {"baseline0": 116.2, "baseline1": 91.3, "mlm:m:topk+typed": 103.8},
             "entityTagger": {"baseline0": 115.6, "baseline1": 101.5, "mlm:m:topk+typed": 96.5}}
    df = grid(cells, seeds=(0, 1, 2), jitter=0.5).assign(dataset="news")
    engine = "Ours, not a vats2024 claim: the engine with our rules (+typed) beats both baselines"
    row = {r["claim"]: r for r in C.claims(df, "news")}[engine]
    assert (row["holds"], row["passed"], row["failed"]) == ("no (1 of 2 fail)", 1, 1) and "vocabThres" in row["evidence"]
    assert BASE not in {r["claim"] for r in C.claims(df, "news")}
    assert BASE in {r["claim"] for r in C.claims(df, "news", every=True)}


R8 = R.precomputed_dir() / "ours" / "smollm2_lm_news_r8.csv"


def r8_rows():
    return R.read_tidy([R8], R.precomputed_dir())


def test_one_seed_of_the_smollm2_grid_never_passes_and_the_tainted_filler_is_left_out():
    """The shipped rank-8 grid (real rows): every cell with one seed can pass no comparison, and
    the rows whose filler saw the news train split are marked and judge nothing."""
    df = r8_rows()
    single = df.groupby(["method", "masking"])["value"].size()
    rows = C.claims(df, "news", every=True)
    if (single == 1).all():  # seed 0 only (until the GPU job's seeds are imported)
        assert sum(r["passed"] for r in rows) == 0 and sum(r["failed"] for r in rows) == 0
        base = next(r for r in rows if r["claim"] == BASE)
        assert base["holds"].startswith("one seed, noise unknown") and base["seeds (n)"] == "1"
    marked = df[df["note"].fillna("").str.startswith("tainted")]
    assert set(marked["method"]) == {"instruct:smollm2-fill:topk"} and len(marked) >= 3
    assert not [r for r in rows if re.search(r"smollm2-fill(?!-wiki)", r["evidence"])]  # its retrained heir may judge
    assert all(R.tainted(m) for m in marked["method"]) and not R.tainted("mlm:minilm-wiki:topk")


def test_seeds_on_real_rows_decide_a_universal_claim_by_the_rule():
    """The real seed-0 rows with two more seeds each, ±1.5% (the noise is then known): a filler
    10 points behind Baseline1 fails, and one failure makes "every filler beats both
    baselines" a no, with the count; the engine's entityTagger fill (96.5 against 101.5) is
    decided by the rule: a pass where the seeds' range is smaller than the gap, else noise."""
    df = r8_rows()
    df = df[(df["metric"] == "perplexity") & (df["seed"].astype(str) == "0")]  # the CSV's own seeds 1-2 aside

    def with_seeds(spread):
        return pd.concat([df] + [df.assign(value=df["value"] * (1 + k * spread), seed=str(s))
                                 for s, k in ((1, -1), (2, 1))], ignore_index=True)

    rows = {r["claim"]: r for r in C.claims(with_seeds(0.015), "news", every=True)}
    base = rows[BASE]
    assert base["holds"] == f"no ({base['failed']} of {base['passed'] + base['failed'] + base['within noise']} fail)"
    assert base["failed"] >= 10 and base["seeds (n)"] == "3" and base["one seed"] == 0
    assert "minilm-wiki (Top-K)/vocabThres" in base["evidence"]  # 101.5 against 91.3
    engine = rows["Ours, not a vats2024 claim: the engine with our rules (+typed) beats both baselines"]
    assert engine["passed"] == 1 and engine["holds"].startswith("no (")
    wide = {r["claim"]: r for r in C.claims(with_seeds(0.04), "news", every=True)}
    engine = wide["Ours, not a vats2024 claim: the engine with our rules (+typed) beats both baselines"]
    assert engine["passed"] == 0 and "minilm-wiki (Top-K, typed; ours)/entityTagger (Δ" in engine["evidence"]
