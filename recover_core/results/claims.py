"""vats2024 §4.3's claims, checked on any tidy results (the paper's tables and our grid).

A cell is one (method, masking) over its seeds; a claim compares cells under the noise rule
(``compare``) and says whether it holds, with its evidence. The Results tab, the ``claims``
command and the README's claim tables all come from here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal, NamedTuple

from recover_core.results.tables import (ANY_MASKING, MASKING_ORDER, METRICS, STAND_INS, TAINTED_FILLERS, Method, aggregate,
                                  display_method, method_parts, pair_datasets, tainted)

if TYPE_CHECKING:
    import pandas as pd

# --- cells: one (method, masking) over seeds --------------------------------------------------

class Cell(NamedTuple):
    """A (method, masking) result over its runs (seeds): mean, min, max and how many.
    ``seeded``: our run with a seed (a LoRA or LM trained from it), whose one run says nothing
    of its noise; the paper's printed numbers (and an LM as it ships) are not."""
    mean: float
    lo: float
    hi: float
    n: int
    seeded: bool = False

    @property
    def spread(self) -> float | None:
        """max - min over seeds; None for a single run (its noise is unknown, not zero)."""
        return self.hi - self.lo if self.n > 1 else None

    @property
    def one_seed(self) -> bool:
        return self.seeded and self.n == 1

    def scaled(self, k: float) -> Cell:
        return Cell(self.mean * k, self.lo * k, self.hi * k, self.n, self.seeded)


Outcome = Literal["pass", "fail", "noise", "one seed"]


def compare(better: Cell, worse: Cell) -> Outcome:
    """Does ``better`` (claimed lower: perplexity, WER) beat ``worse``?

    The noise rule: a cell of ours with one seed on either side leaves the comparison
    undecided ("one seed": noise unknown, never a pass or a fail). Where either side has several
    seeds, it is decided only if |mean_better - mean_worse| > max(range_better, range_worse),
    range = max - min over seeds; otherwise it is "noise" (within noise). The paper's single
    runs (no seed) are compared as printed, and a tie is a fail: equal is not better."""
    if better.one_seed or worse.one_seed:
        return "one seed"
    diff = worse.mean - better.mean
    spreads = [s for s in (better.spread, worse.spread) if s is not None]
    if spreads and abs(diff) <= max(spreads):
        return "noise"
    return "pass" if diff > 0 else "fail"


EXCLUDED = ("Left out of every claim: rows made by a filler that saw the split it fills ("
            + "; ".join(f"{k}: {v}" for k, v in TAINTED_FILLERS.items()) + ").")
NOISE_RULE = ("Rule: a comparison of our cells passes or fails only where the difference of the means exceeds the "
              "larger min-max range over seeds of the two cells, is \"within noise\" where it does not, and is \"one "
              "seed, noise unknown\" (never a pass) where either cell has one seed; the paper's printed runs compare "
              "as printed (a tie is not a win), and one failed comparison makes a claim \"no\".")

PRETRAINED = ("pre-trained-lm", "pretrained-lm", "pretrained")  # the LM without adaptation (Table 6)


@dataclass
class Grid:
    """One dataset's cells for one metric: (method, masking) -> Cell."""
    cells: dict[tuple[str, str], Cell]

    @classmethod
    def of(cls, rows: pd.DataFrame) -> Grid:
        agg = aggregate(rows)
        seeded = set()
        if "seed" in rows:
            has = rows.assign(_s=rows["seed"].astype("string").fillna("").str.strip() != "")
            # An LM as it ships and the recognizer alone train nothing from a seed: printed runs.
            seeded = {(m, mk) for (m, mk), v in has.groupby(["method", "masking"], dropna=False)["_s"].any().items()
                      if v and str(m).lower() not in PRETRAINED + NO_LM}
        return cls({(r.method, r.masking): Cell(r.mean, r.lo, r.hi, int(r.n), (r.method, r.masking) in seeded)
                    for r in agg.itertuples()})

    @property
    def methods(self) -> list[str]:
        return sorted({m for m, _ in self.cells})

    @property
    def maskings(self) -> list[str]:
        found = {mk for (m, mk) in self.cells if mk != ANY_MASKING and m.lower() != "oracle"}
        return [mk for mk in MASKING_ORDER if mk in found] + sorted(found - set(MASKING_ORDER))

    def get(self, method: str, masking: str) -> Cell | None:
        """The cell; a mask-free row (Oracle, Pre-Trained-LM) stands for every masking."""
        return self.cells.get((method, masking)) or self.cells.get((method, ANY_MASKING))

    def named(self, *names: str) -> str | None:
        return next((m for m in self.methods if m.lower() in names), None)

    @property
    def baselines(self) -> list[str]:
        return [m for m in self.methods if m.lower() in ("baseline0", "baseline1")]

    def fillers(self, keep=lambda p: True, typed: bool = False) -> list[str]:
        """Filling methods (untyped unless ``typed``) whose parsed name satisfies ``keep``."""
        return [m for m in self.methods if (p := method_parts(m)) and p.typed == typed and keep(p)]

    def best(self, methods: list[str], masking: str) -> tuple[str, Cell] | None:
        """The method with the lowest mean on this masking."""
        found = [(c.mean, m, c) for m in methods if (c := self.get(m, masking))]
        return (min(found)[1], min(found)[2]) if found else None


@dataclass
class Tally:
    """The comparisons of one claim on one dataset, and the claim's verdict."""
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    one_seed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)  # n of every cell compared (our seeds; 1 for the paper's)
    behind: int = 0  # one-seed comparisons whose means go against the claim (said, never decided)

    def add(self, label: str, better: Cell, worse: Cell) -> Outcome:
        outcome = compare(better, worse)
        delta = 100 * (worse.mean - better.mean) / better.mean
        self.runs += [better.n, worse.n]
        if outcome == "pass":
            self.passed.append(label)
        elif outcome == "fail":
            self.failed.append(label + (" (tie)" if delta == 0 else ""))
        elif outcome == "one seed":
            self.one_seed.append(f"{label} (Δ {delta:+.2f}%)")
            self.behind += delta <= 0
        else:
            spread = 100 * max(s for s in (better.spread, worse.spread) if s is not None) / better.mean
            self.noise.append(f"{label} (Δ {delta:+.2f}%, spread {spread:.2f}%)")
        return outcome

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed) + len(self.noise) + len(self.one_seed)

    @property
    def holds(self) -> str:
        """yes: every comparison passed; no: one failed at least (how many of how many); else
        undecided: "one seed, noise unknown" or "within noise"; n/a: nothing to compare."""
        if self.failed:
            return f"no ({len(self.failed)} of {self.total} fail)"
        if self.one_seed:
            return f"one seed, noise unknown ({self.behind} of {len(self.one_seed)} against on the means)"
        if self.noise:
            return "within noise"
        return "yes" if self.passed else "n/a"

    @property
    def seeds(self) -> str:
        """n over the cells compared: "1", "3" or "1-3"."""
        if not self.runs:
            return ""
        lo, hi = min(self.runs), max(self.runs)
        return str(lo) if lo == hi else f"{lo}-{hi}"

    def evidence(self, none: str) -> str:
        """The failing, within-noise and one-seed comparisons, then the notes; ``none`` says why n/a."""
        if self.holds == "n/a":
            return none
        parts = [f"fails: {', '.join(self.failed)}"] if self.failed else []
        parts += [f"within noise: {', '.join(self.noise)}"] if self.noise else []
        parts += [f"one seed, noise unknown: {', '.join(self.one_seed)}"] if self.one_seed else []
        return "; ".join(parts + self.notes) or "all pass"


# --- vats2024 §4.3, claim by claim ----------------------------------------------------------
# Each claim is checked on the paper's rows with the paper's named methods, and on our rows
# with their analogues: our MLM filler (mlm, mlm-ft) for BERT/RoBERTa, `mlm-ft:<model>:topk`
# for the fine-tuned RoBERTa, our tuned causal LLM (`instruct:`) for LLaMA2 (Top-1, FT).
# `+typed` rows (ours) take part in none of them: only in the last, ours, clearly marked.

CLOSE_TO_ORACLE = 0.05  # "very close to Oracle" (§4.3), read as within 5%: Fisher's FT RoBERTa is +3-4%
WER_ADAPTATION = 0.15  # "more than 15% WER improvement" of the Oracle LM over the pre-trained LM


def _is_llm(p: Method) -> bool:
    return p.kind == "instruct" or (p.kind == "paper" and p.model.lower().startswith("llama"))


def _is_mlm(p: Method) -> bool:
    return p.kind == "mlm" or (p.kind == "paper" and not _is_llm(p))


def _is_best_mlm(p: Method) -> bool:
    """The paper's best MLM (RoBERTa, any variant); ours: our MLM filler."""
    return p.kind == "mlm" or (p.kind == "paper" and p.model == "RoBERTa")


def _is_named_ft(p: Method) -> bool:
    """The method §4.3 names as close to Oracle: fine-tuned RoBERTa, Top-K; ours: mlm-ft:<model>:topk."""
    return _is_best_mlm(p) and p.ft and p.how == "topk"


def _twins(g: Grid, a: dict, b: dict, keep=lambda p: True) -> list[tuple[str, str]]:
    """(a-variant, b-variant) pairs of fillers that differ only in the fields given by a and b."""
    out = []
    for f in g.fillers(lambda p: keep(p) and all(getattr(p, k) == v for k, v in a.items())):
        want = method_parts(f)._replace(**b)
        out += [(f, t) for t in g.fillers(lambda p: p == want)]
    return out


def beats_baselines(g: Grid, typed: bool = False) -> Tally:
    """§4.3: "All proposed methods give lower perplexity results than the two baseline methods"
    (each filler against the better baseline of its masking; ``typed``: our typed fillers)."""
    t = Tally()
    for mk in g.maskings:
        base = g.best(g.baselines, mk)
        for f in g.fillers(typed=typed) if base else []:
            if c := g.get(f, mk):
                t.add(f"{display_method(f)}/{mk}", c, base[1])
    return t


def _paired(g: Grid, pairs: list[tuple[str, str]]) -> Tally:
    """Does the second of each pair beat the first, masking by masking?"""
    t = Tally()
    for a, b in pairs:
        for mk in g.maskings:
            if (ca := g.get(a, mk)) and (cb := g.get(b, mk)):
                t.add(f"{display_method(b)}/{mk}", cb, ca)
    return t


def topk_beats_top1(g: Grid) -> Tally:
    """§4.3: "In all scenarios, Top-K outperforms Top-1 based methods"."""
    return _paired(g, _twins(g, {"how": "top1"}, {"how": "topk"}))


def ft_beats_no_ft(g: Grid) -> Tally:
    """§4.3: "fine-tuned BERT and RoBERTa obtain better results than the ones without fine-tuning"."""
    return _paired(g, _twins(g, {"ft": False}, {"ft": True}, keep=_is_mlm))


def allowlist_gap(g: Grid) -> Tally:
    """§4.3: with allowList "the gap between Oracle and any other method is much larger than that of
    vocabThres or entityTagger". Oracle is one number per dataset, so each method's allowList
    cell is compared with its worst other masking ("much" is not checked)."""
    t = Tally()
    if "allowList" not in g.maskings:
        return t
    for m in g.baselines + g.fillers():
        allow = g.get(m, "allowList")
        worst = max((c for mk in g.maskings if mk != "allowList" and (c := g.cells.get((m, mk)))),
                    key=lambda c: c.mean, default=None)
        if allow and worst:
            t.add(display_method(m), worst, allow)
    return t


def roberta_best(g: Grid) -> Tally:
    """§4.3: "RoBERTa yields the best perplexity performance across all the masking techniques"
    (Reddit: "RoBERTa (Top-K, FT) again achieves the best"). Per masking, the best RoBERTa row
    against the best of every other method (baselines, BERT, LLaMA2); ours: our MLM filler's best
    row against the best of the baselines and any other filler."""
    t = Tally()
    family = g.fillers(_is_best_mlm)
    rivals = g.baselines + g.fillers(lambda p: not _is_best_mlm(p))
    for mk in g.maskings:
        ours, theirs = g.best(family, mk), g.best(rivals, mk)
        if ours and theirs:
            t.add(f"{mk}: {display_method(ours[0])} vs {display_method(theirs[0])}", ours[1], theirs[1])
    if t.passed + t.failed + t.noise and rivals == g.baselines:  # our grid: nothing else to beat
        t.notes.append("rivals: the baselines only (no other filler in these rows)")
    return t


def close_to_oracle(g: Grid, who=_is_named_ft, limit: float = CLOSE_TO_ORACLE) -> Tally:
    """§4.3: "for vocabThres and entityTagger, perplexity results from fine-tuned RoBERTa are very
    close to those of Oracle": the named method (not the best of any filler) within ``limit``."""
    t = Tally()
    for mk in [mk for mk in ("vocabThres", "entityTagger") if mk in g.maskings]:
        oracle = g.get(g.named("oracle") or "", mk)
        for f in g.fillers(who) if oracle else []:
            if c := g.get(f, mk):
                t.add(f"{display_method(f)}/{mk} vs Oracle +{100 * limit:.0f}%", c, oracle.scaled(1 + limit))
                t.notes.append(f"{mk}: {display_method(f)} {100 * (c.mean / oracle.mean - 1):+.1f}%")
    return t


def llm_not_as_good(g: Grid) -> Tally:
    """§4.3: "LLaMA2 (Top-1, FT) is a competitive method but is not as good as fine-tuned BERT or
    RoBERTa": the tuned causal LLM against each fine-tuned MLM."""
    t = Tally()
    for f in g.fillers(_is_llm):
        for r in g.fillers(lambda p: _is_mlm(p) and p.ft):
            for mk in g.maskings:
                if (cf := g.get(f, mk)) and (cr := g.get(r, mk)):
                    t.add(f"{display_method(f)} vs {display_method(r)}/{mk}", cr, cf)
    return t


NO_LM = ("asr-without-lm", "no-lm", "none")  # the recognizer alone (Table 6's first row)


def wer_pretrained_helps(g: Grid) -> Tally:
    """Table 6 (WSJ): fusing the pre-trained LM lowers WER (14.4 -> 12.6 in the paper); the
    issue's first WER claim, which §4.3's text takes for granted."""
    t = Tally()
    alone, pre = g.named(*NO_LM), g.named(*PRETRAINED)
    if alone and pre and (a := g.get(alone, ANY_MASKING)) and (p := g.get(pre, ANY_MASKING)):
        t.add(f"{display_method(pre)} vs {display_method(alone)}", p, a)
        t.notes.append(f"{display_method(pre)} {100 * (p.mean / a.mean - 1):+.1f}%")
    return t


def wer_adaptation(g: Grid) -> Tally:
    """§4.3 (WSJ, Table 6): "comparing the WERs between ASR models with the pre-trained LM and the
    Oracle LM, there is a more than 15% WER improvement achieved by the latter"."""
    t = Tally()
    oracle, pre = g.named("oracle"), g.named(*PRETRAINED)
    if oracle and pre:
        o, p = g.get(oracle, ANY_MASKING), g.get(pre, ANY_MASKING)
        if o and p:
            t.add(f"Oracle vs {display_method(pre)} -{100 * WER_ADAPTATION:.0f}%", o, p.scaled(1 - WER_ADAPTATION))
            t.notes.append(f"Oracle {100 * (1 - o.mean / p.mean):.1f}% lower")
    return t


def wer_close_to_oracle(g: Grid) -> Tally:
    """§4.3 (WSJ): "The best WERs obtained by proposed methods have relatively small gaps compared
    with those of the Oracle LM ... only 1% (10.7 versus 10.6) and 5% (11.1 versus 10.6)" for
    vocabThres and entityTagger: here the best filler of each masking, within 5%."""
    t = Tally()
    oracle = g.named("oracle")
    for mk in [mk for mk in ("vocabThres", "entityTagger") if mk in g.maskings]:
        best, o = g.best(g.fillers(), mk), g.get(oracle or "", mk)
        if best and o:
            t.add(f"{display_method(best[0])}/{mk} vs Oracle +{100 * CLOSE_TO_ORACLE:.0f}%", best[1],
                  o.scaled(1 + CLOSE_TO_ORACLE))
            t.notes.append(f"{mk}: {display_method(best[0])} {100 * (best[1].mean / o.mean - 1):+.1f}%")
    return t


def wer_beats_pretrained(g: Grid) -> Tally:
    """§4.3 (WSJ): "the proposed methods are able to achieve significant improvements over the
    pre-trained LM (without adaptation)": the best filler of each masking against it."""
    t = Tally()
    pre = g.named(*PRETRAINED)
    for mk in g.maskings:
        best, p = g.best(g.fillers(), mk), g.get(pre or "", mk)
        if best and p:
            t.add(f"{display_method(best[0])}/{mk}", best[1], p)
    return t


def typed_beats_untyped(g: Grid) -> Tally:
    """Ours, not vats2024's: telling the filler each mask's entity type (``+typed``) against the
    same filler told nothing, masking by masking."""
    pairs = [(u, t) for t in g.fillers(typed=True)
             for u in g.fillers(lambda p, t=t: p == method_parts(t)._replace(typed=False))]
    return _paired(g, pairs)


@dataclass(frozen=True)
class Claim:
    text: str
    check: Callable[[Grid], Tally]
    metric: str  # a key of METRICS
    about: tuple[str, ...]  # the paper's datasets the claim is drawn from
    missing: str = "nothing to compare"  # why n/a, where the metric's rows exist
    ours: bool = False  # not a vats2024 claim; shown only where its rows exist


# Table 3's (Fisher) findings; Table 4 (Reddit): "The observations are similar". WSJ's
# findings are about WER (Table 6), so Table 5 (WSJ perplexity) backs no claim.
PPL_FROM, WER_FROM = ("Fisher", "Reddit"), ("WSJ",)
CLAIMS = (
    Claim("Every filling method beats both baselines", beats_baselines, "Perplexity", PPL_FROM),
    Claim("Top-K beats Top-1", topk_beats_top1, "Perplexity", PPL_FROM),
    Claim("A fine-tuned MLM (FT) beats the same MLM without fine-tuning", ft_beats_no_ft, "Perplexity", PPL_FROM),
    Claim("allowList (most words masked) leaves the largest gap to Oracle", allowlist_gap, "Perplexity", PPL_FROM),
    Claim("RoBERTa (ours: the MLM filler) is best across all maskings", roberta_best, "Perplexity", PPL_FROM),
    Claim(f"Fine-tuned RoBERTa (ours: mlm-ft Top-K) is close to Oracle (within {100 * CLOSE_TO_ORACLE:.0f}%) "
          "for vocabThres and entityTagger", close_to_oracle, "Perplexity", PPL_FROM),
    Claim("The tuned causal LLM is not as good as fine-tuned BERT or RoBERTa", llm_not_as_good, "Perplexity",
          PPL_FROM, "no tuned causal LLM (instruct:) or no fine-tuned MLM rows"),
    Claim("WER: fusing the pre-trained LM beats the recognizer alone", wer_pretrained_helps, "WER", WER_FROM),
    Claim(f"WER: the Oracle LM improves on the pre-trained LM by more than {100 * WER_ADAPTATION:.0f}%",
          wer_adaptation, "WER", WER_FROM),
    Claim(f"WER: the best filling method is close to Oracle (within {100 * CLOSE_TO_ORACLE:.0f}%) for vocabThres "
          "and entityTagger", wer_close_to_oracle, "WER", WER_FROM),
    Claim("WER: the best filling method improves on the pre-trained LM", wer_beats_pretrained, "WER", WER_FROM),
    Claim("Ours, not a vats2024 claim: the typed filler (+typed) beats the same filler untyped",
          typed_beats_untyped, "Perplexity", (*PPL_FROM, *WER_FROM), ours=True),
    Claim("Ours, not a vats2024 claim: the engine with our rules (+typed) beats both baselines",
          lambda g: beats_baselines(g, typed=True), "Perplexity", (*PPL_FROM, *WER_FROM), ours=True),
)
CLAIM_COLUMNS = ["claim", "dataset", "holds", "passed", "failed", "within noise", "one seed", "seeds (n)", "evidence"]


def paper_dataset(dataset: str) -> str | None:
    """The paper's dataset that ``dataset`` is (or stands in for); None for any other."""
    for paper, ours in STAND_INS.items():
        if dataset in (paper, ours):
            return paper
    return None


def applies(claim: Claim, dataset: str) -> bool:
    """A claim is checked on the datasets the paper draws it from and on their stand-ins; a
    dataset the paper has no table for gets every claim (each on its own metric)."""
    paper = paper_dataset(dataset)
    return paper is None or paper in claim.about


def _no_rows(claim: Claim) -> str:
    return f"no {claim.metric} rows (vats2024 makes this claim on {' and '.join(claim.about)} {claim.metric})"


def claims(df: pd.DataFrame, dataset: str, every: bool = False) -> list[dict]:
    """Check vats2024 §4.3's claims that the paper makes about ``dataset`` (or about the paper's
    dataset it stands in for), each on its own metric: Fisher's and Reddit's findings on
    perplexity, WSJ's on WER (n/a where there are no WER rows).

    Our rows are aggregated over seeds (mean, min-max range), and a comparison within the
    range is "within noise": see ``compare``. Returns rows of CLAIM_COLUMNS: holds (yes: some
    passed and none failed; partly; no: none passed; within noise: none decided; n/a: nothing to
    compare), the counts, and the evidence: the failing and the within-noise comparisons, and
    the figures a claim names (gaps to Oracle). A dataset whose rows come from several setups
    (``scale``) is checked once per setup. ``every``: every claim, whichever dataset the paper
    draws it from (news stands in for WSJ, whose perplexity backs no claim in the paper)."""
    rows = df[df["dataset"] == dataset]
    rows = rows.loc[[tainted(m) is None for m in rows["method"]]]  # a filler that saw the split: no evidence
    out = []
    for claim in (c for c in CLAIMS if every or applies(c, dataset)):
        part = rows[rows["metric"].isin(METRICS[claim.metric])]
        # Runs of different setups (scale) are not seeds of one cell: never pooled.
        setups = list(part.groupby("scale", sort=False, dropna=False)) \
            if "scale" in part and part["scale"].nunique(dropna=False) > 1 else [(None, part)]
        for scale, sub in setups:
            g = Grid.of(sub)
            if claim.ours and not g.fillers(typed=True):
                continue
            t = claim.check(g)
            out.append({"claim": claim.text, "dataset": dataset if scale is None else f"{dataset} [{scale}]",
                        "holds": t.holds, "passed": len(t.passed), "failed": len(t.failed),
                        "within noise": len(t.noise), "one seed": len(t.one_seed), "seeds (n)": t.seeds,
                        "evidence": t.evidence(_no_rows(claim) if sub.empty else claim.missing)})
    return out


def claims_table(df: pd.DataFrame, dataset_choice: str, every: bool = False) -> pd.DataFrame:
    """Claims for a chart choice: the paper's dataset and our stand-in, one row block each;
    ``every`` as in ``claims``."""
    import pandas as pd

    rows = [r for d in pair_datasets(dataset_choice) for r in claims(df, d, every)]
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def claim_datasets(df: pd.DataFrame) -> list[str]:
    """Datasets with rows of a metric some claim is about (perplexity or WER)."""
    metrics = {m for c in CLAIMS for m in METRICS[c.metric]}
    return sorted(set(df[df["metric"].isin(metrics)]["dataset"].dropna()))


def claims_markdown(df: pd.DataFrame, datasets: list[str] | None = None, every: bool = False) -> str:
    """The claims as a markdown table (the CLI's output and the README's claims section),
    the noise rule in one sentence above it; ``every`` as in ``claims``."""
    lines = [NOISE_RULE, "", EXCLUDED, "",
             "| claim (vats2024 §4.3) | dataset | holds | passed | failed | within noise | one seed | seeds (n) | "
             "evidence |", "|---|---|---|---|---|---|---|---|---|"]
    for d in datasets or claim_datasets(df):
        for r in claims(df, d, every):
            cells = [str(r[c]).replace("|", "\\|") for c in CLAIM_COLUMNS]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
