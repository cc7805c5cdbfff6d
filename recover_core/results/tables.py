"""Tidy result tables in precomputed/ (the papers' and our own runs), and their charts.

Every CSV there has the columns of TIDY_COLUMNS; a file may add a ``source`` column.
The app's Results tab reads them once at start; nothing here trains or scores.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from recover_core.runtime import atomic
from recover_core.errors import RecoverError

if TYPE_CHECKING:
    import pandas as pd

TIDY_COLUMNS = ["dataset", "masking", "method", "metric", "value", "model", "scale", "seed", "command"]
# Metrics the charts offer, by the name a user picks.
METRICS = {"Perplexity": ("perplexity",), "WER": ("wer", "wer_percent")}
ANY_MASKING = "(any)"  # Oracle and other rows that do not depend on the masking
# Our open stand-ins for the papers' licensed corpora (data/corpora.py): a chart of the paper's
# dataset shows ours beside it.
STAND_INS = {"Fisher": "fortunes", "Reddit": "scripture", "WSJ": "news"}
SKIPPED: list[str] = []  # CSVs that could not be read, with why (the Results tab says so)
# Which of our runs a chart shows (the paper's rows always show). The headline is vats2024's
# grid with a real pretrained LM (SmolLM2-135M + LoRA rank 8, the recipe of the adapters that
# ship); the 16M TransformerLM grid (3 seeds, every dataset) is the second view.
HEADLINE = "SmolLM2-135M + LoRA grid (news)"
VIEWS: dict[str, tuple[str, ...] | None] = {
    HEADLINE: ("ours/smollm2_lm_news_r8.csv", "ours/asr_news_smollm2_r8.csv"),
    "16M LM grid (3 seeds)": ("ours/cpu_grid.csv",),
    "every run": None,
}


ROW_IDENTITY = ("dataset", "masking", "method", "metric", "seed")  # one row per cell, seed and metric


def read_rows(csv: Path) -> pd.DataFrame:
    """A tidy CSV as written, every field a string (so a merge rewrites no other row's bytes);
    empty, with the tidy columns, when the file does not exist yet."""
    import pandas as pd

    if not csv.is_file() or csv.stat().st_size == 0:
        return pd.DataFrame(columns=[*TIDY_COLUMNS, "note"], dtype=str)
    try:
        df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as e:
        raise RecoverError(f"{csv} is not a results CSV ({e}): give another file.") from e
    if missing := [c for c in TIDY_COLUMNS if c not in df.columns]:
        raise RecoverError(f"{csv} is not a results CSV (no {', '.join(missing)} column): give another file.")
    return df


def other_scales(csv: Path, *scales: str, held: pd.DataFrame | None = None) -> str:
    """Why ``csv`` cannot take rows of these scales (it holds rows of another), or "".
    ``held``: its rows, when the caller has read them already."""
    theirs = set((read_rows(csv) if held is None else held).scale) - set(scales)
    return (f"{csv} holds rows of another run's scale ({'; '.join(sorted(theirs))[:300]}): give another file "
            f"with -o, or move that one away." if theirs else "")


def merge_rows(csv: Path, rows: list[dict], *, one_scale: bool = False) -> None:
    """Merge tidy rows into ``csv``: each replaces an earlier row of the same cell, seed and
    metric; every other row stays as it was (a CSV holds a whole grid, built over many
    commands and machines). ``one_scale``: the rows are one run's, compared with each other
    (asr-eval's paired WERs), so a file that holds rows of another scale is refused rather
    than mixed."""
    import pandas as pd

    new = pd.DataFrame(rows, columns=[*TIDY_COLUMNS, "note"]).astype(object).fillna("").astype(str)
    old = read_rows(csv)
    if one_scale and (clash := other_scales(csv, *set(new.scale), held=old)):
        raise RecoverError(clash)
    ours = set(new[list(ROW_IDENTITY)].itertuples(index=False, name=None))
    kept = old[[r not in ours for r in old[list(ROW_IDENTITY)].itertuples(index=False, name=None)]]
    with atomic.replacing(csv) as tmp:
        pd.concat([kept, new], ignore_index=True).to_csv(tmp, index=False)


# Fillers known to have seen a grid split's sentences (tests/test_filler_fingerprint.py finds
# them): their rows are marked in the CSVs (``note``), kept out of the claims, and the grid
# refuses to fill with them (experiment/runner.py) until they are retrained on unseen text.
TAINTED_FILLERS = {
    "smollm2-fill": "trained with the news train split's original sentences as its answers "
                    "(assets/smollm2-fill/model_card.md: data news, wiki, fortunes, scripture)",
}


# The filler that takes a tainted one's place in the grid: the same recipe (finetune-llm) on
# text no grid split holds (tests/test_filler_fingerprint.py checks it as it checks the others).
RETRAINED = {"smollm2-fill": "smollm2-fill-wiki"}


def tainted(method: str) -> str | None:
    """Why a grid method's filler is tainted (TAINTED_FILLERS), or None."""
    p = method_parts(method) if isinstance(method, str) else None
    return TAINTED_FILLERS.get(Path(p.model).name) if p is not None else None


def precomputed_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "precomputed"


@functools.lru_cache(maxsize=1)
def load(root: str | None = None):
    """Every tidy CSV under precomputed/, with ``origin`` = paper or ours. precomputed/bench/
    holds the benchmarks' own tables (lines/s), which are not results to plot."""
    base = Path(root) if root else precomputed_dir()
    return read_tidy(sorted(p for p in base.rglob("*.csv") if "bench" not in p.relative_to(base).parts[:1]), base)


def provenance(root: str | None = None):
    """Which commit produced each table under precomputed/, and whether the engine did
    (precomputed/provenance.json): the Results tab shows it beside the tables."""
    import json

    import pandas as pd

    base = Path(root) if root else precomputed_dir()
    path = base / "provenance.json"
    columns = ["table", "commit", "obfuscated by", "rows the engine would change"]
    if not path.is_file():
        return pd.DataFrame(columns=columns)
    rec = json.loads(path.read_text(encoding="utf-8"))
    by = {True: "the engine", False: f"code before the engine ({rec.get('engine_since', '')})", None: "the paper"}
    return pd.DataFrame([(table, t["commit"], by[t.get("engine")], t.get("changed_rows", ""))
                         for table, t in sorted(rec.get("tables", {}).items())], columns=columns)


def read_tidy(paths, base: Path | None = None):
    """Tidy CSVs as one frame; a file that is not one is skipped and said in SKIPPED."""
    import pandas as pd

    frames = []
    SKIPPED.clear()
    for path in map(Path, paths):
        try:  # one bad file must not keep the app from starting
            df = pd.read_csv(path, dtype={"seed": "string", "masking": "string", "method": "string"})
        except Exception as e:  # noqa: BLE001
            SKIPPED.append(f"{path.name}: unreadable ({type(e).__name__})")
            continue
        missing = [c for c in TIDY_COLUMNS if c not in df.columns]
        if missing:
            SKIPPED.append(f"{path.name}: not a tidy result table (missing {', '.join(missing)})")
            continue
        if "source" not in df.columns:
            df["source"] = path.relative_to(base).as_posix() if base else path.name
        df["origin"] = ["paper" if m == "paper" else "ours" for m in df["model"]]
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=TIDY_COLUMNS + ["source", "origin"])
    out = pd.concat(frames, ignore_index=True)
    out["masking"] = out["masking"].fillna(ANY_MASKING)
    out["method"] = out["method"].fillna("")
    return out


def view(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """The paper's rows and those of our runs that the view ``name`` (a key of VIEWS) shows."""
    if name not in VIEWS:
        raise RecoverError(f"Unknown view {name!r}. Known: {', '.join(VIEWS)}.")
    sources = VIEWS[name]
    return df if sources is None else df[(df["origin"] == "paper") | df["source"].isin(sources)]


def pair_label(paper: str, ours: str) -> str:
    return f"{paper} (paper) / {ours} (ours)"


def datasets(df, metric: str) -> list[str]:
    """Chart choices: a paper's dataset paired with our stand-in (those with our rows first),
    then any other dataset."""
    present = set(df[df["metric"].isin(METRICS[metric])]["dataset"].dropna())
    out, used = [], set()
    for paper, ours in STAND_INS.items():
        if paper in present or ours in present:
            out.append(pair_label(paper, ours))
            used |= {paper, ours}
    out.sort(key=lambda label: pair_datasets(label)[1] not in present)  # stable: the paper's order otherwise
    return out + sorted(present - used)


def pair_datasets(choice: str) -> list[str]:
    """The datasets behind a chart choice: a paper's and our stand-in for it, or just one."""
    for paper, ours in STAND_INS.items():
        if choice == pair_label(paper, ours):
            return [paper, ours]
    return [choice]


def _chart_rows(df, metric: str, choice: str):
    import pandas as pd

    names = pair_datasets(choice)
    rows = df[df["metric"].isin(METRICS[metric]) & df["dataset"].isin(names)].copy()
    bad = [tainted(m) is not None for m in rows["method"]]  # a filler that saw the split: its bars say so
    rows["method"] = rows["method"].map(display_method)
    # An LM of another family judges differently: its rows are bars of their own, never
    # pooled with our TransformerLM's as if they were seeds of one cell.
    rescored = rows["model"].fillna("").str.contains("smollm2")
    # The grid's LMs rescoring an n-best list (cpu_grid.csv, smollm2_grid.csv) are another setup
    # than the same family's LMs fused or rescored by asr-eval, on the same utterances: bars of
    # their own too.
    grid = rows["scale"].fillna("").str.contains("n-best list rescored")
    # Nor are runs on fewer utterances (a subset of the set: the reduced WER grid's 100) pooled
    # with runs on the whole set: they are bars of their own too.
    counted = rows["scale"].fillna("").str.extract(r"(\d+) (?:spoken \w+ )?test utterances")[0]
    utts = pd.to_numeric(counted, errors="coerce")
    subset = utts < utts.max()  # NaN (no count in the scale) compares False
    count = utts[subset].astype(int).astype(str) + " utterances"
    # LoRA of another rank is another recipe (the shipped adapters, assets/lms: rank 8).
    rank = rows["model"].fillna("").str.extract(r"lora-r(\d+)")[0]
    other_rank = rank.notna() & (rank != "16")
    rows.loc[other_rank, "method"] += " (SmolLM2, LoRA r" + rank[other_rank] + ")"
    rescored &= ~other_rank
    rows.loc[rescored & ~subset & ~grid, "method"] += " (SmolLM2)"
    rows.loc[rescored & subset, "method"] += " (SmolLM2, " + count + ")"
    rows.loc[~rescored & subset, "method"] += " (" + count + ")"
    rows.loc[rescored & grid, "method"] += " (SmolLM2 grid)"
    rows.loc[~rescored & grid, "method"] += " (8-best list)"
    # Several runs of one cell (seeds, files) are one bar: their mean, with the min-max range
    # over the runs as its error bar (none for a single run: its noise is unknown).
    rows.loc[bad, "method"] += " [filler saw the split]"
    keys = ["origin", "dataset", "method", "masking"]
    out = rows.groupby(keys, sort=False, as_index=False, dropna=False).agg(
        value=("value", "mean"), lo=("value", "min"), hi=("value", "max"), runs=("value", "size"),
        source=("source", "first"), scale=("scale", "first"))
    several = out["runs"] > 1
    out["above"] = (out["hi"] - out["value"]).where(several)
    out["below"] = (out["value"] - out["lo"]).where(several)
    out["range"] = [f"{lo:.4g}–{hi:.4g}" if n > 1 else "one run" for lo, hi, n in zip(out.lo, out.hi, out.runs)]
    # Each bar of ours says its n: "n=1" has no error bar because its noise is unknown, not nil.
    out["n"] = [f"n={n}" if o == "ours" else "" for o, n in zip(out.origin, out.runs)]
    return out


def chart(df, metric: str, dataset: str):
    """Grouped bars: method on x, one bar per masking technique; the paper's panel beside ours.
    A bar of several runs (our seeds) is their mean, its error bar the min-max range."""
    import plotly.express as px

    rows = _chart_rows(df, metric, dataset)
    if rows.empty:
        return px.bar(title=f"No {metric} results for {dataset}")
    # No shared method order: each panel (its own x axis, below) keeps its table's order.
    fig = px.bar(rows, x="method", y="value", color="masking", barmode="group", facet_col="origin",
                 category_orders={"origin": ["paper", "ours"]}, error_y="above", error_y_minus="below", text="n",
                 hover_data=["dataset", "source", "scale", "runs", "range"], labels={"value": metric, "method": ""},
                 title=f"{metric} on {dataset} (lower is better; ours: mean over seeds, error bars min–max; "
                       f"n=1: one seed, noise unknown, no bar)")
    fig.update_traces(textposition="inside", insidetextanchor="start", textfont_size=9)
    fig.update_yaxes(matches=None, showticklabels=True)  # the paper's scale is not ours
    fig.update_layout(legend_title_text="masking", margin=dict(t=60, b=10))
    fig.update_xaxes(tickangle=-35, matches=None)  # each panel lists only its own methods
    return fig


MASKING_ORDER = ("allowList", "vocabThres", "entityTagger")


def aggregate(rows: pd.DataFrame, keys: tuple[str, ...] = ("method", "masking")) -> pd.DataFrame:
    """One row per ``keys``: mean, min (lo), max (hi), std and number (n) of values, i.e. of
    seeds in our grid (each cell once per seed) and 1 for the paper's rows."""
    return rows.groupby(list(keys), sort=False, as_index=False, dropna=False).agg(
        mean=("value", "mean"), lo=("value", "min"), hi=("value", "max"), std=("value", "std"),
        n=("value", "size"))


# --- method names ---------------------------------------------------------------------------

_PAPER_METHOD = re.compile(r"^(?P<model>.+) \((?P<how>Top-1|Top-K)(?P<ft>, FT)?\)$")
TYPED = "typed"  # our suffix (``mlm:m:topk+typed``): the filler is told each mask's entity type


class Method(NamedTuple):
    """A filling method, parsed from the paper's name or from our grid's."""
    model: str
    how: str  # "top1" | "topk"
    ft: bool
    typed: bool = False  # ours, not the paper's: the filler saw each mask's entity type
    kind: str = "paper"  # our filler kind ("mlm", "infill", "instruct"); "paper" for the paper's rows


def method_parts(method: str) -> Method | None:
    """Parse a filling method named as in the paper ("BERT (Top-K, FT)") or as in our grid
    ("mlm-ft:minilm-wiki:topk", "mlm:minilm-wiki:topk+typed"); None for Oracle, the
    baselines and anything else (the WER tables' ASR-without-LM, Pre-Trained-LM)."""
    m = _PAPER_METHOD.match(method)
    if m:
        return Method(m["model"], "top1" if m["how"] == "Top-1" else "topk", bool(m["ft"]))
    kind, _, rest = method.partition(":")
    model, _, last = rest.rpartition(":")  # a model may be a path, colons and all
    how, plus, suffix = last.partition("+")
    if not kind or not model or how not in ("top1", "topk") or (plus and suffix != TYPED):
        return None
    return Method(model, how, kind.endswith("-ft"), bool(plus), kind.removesuffix("-ft"))


def display_method(method: str) -> str:
    """Our grid's method names written as the paper writes its own, so bars line up:
    ``mlm-ft:minilm-wiki:topk`` -> ``minilm-wiki (Top-K, FT)``, ``baseline0`` -> ``Baseline0``.
    Our typed variant says it is ours: ``minilm-wiki (Top-K, typed; ours)``."""
    parts = method_parts(method)
    if parts and parts.kind != "paper":
        how = "Top-1" if parts.how == "top1" else "Top-K"
        return f"{Path(parts.model).name} ({how}{', FT' if parts.ft else ''}{', typed; ours' if parts.typed else ''})"
    return method.capitalize() if method in ("oracle", "baseline0", "baseline1") else method


def is_typed(method: str) -> bool:
    """Our improvement (the filler is told the entity types), never the paper's method."""
    parts = method_parts(method)
    return bool(parts and parts.typed)


SPEECH_COLUMNS = {  # metric -> column title; preiss2023 Table 2's three, then ours
    "avg_asr": "ASR word accuracy (first pass)",
    "ne_exact_match": "NE exact match",
    "avg_confidence": "2nd-pass WER vs intended (preiss2023's confidence)",
    "name_recall": "names found (recall)",
    "leak_rate": "original still heard",
    "substitute_heard_rate": "substitute heard (after retries)",
    "substitute_heard_first_try_rate": "substitute heard at the first try",
    "needs_review_share": "flagged for review",
}


def speech_table(df: pd.DataFrame) -> pd.DataFrame:
    """preiss2023 Table 2 (LibriSpeech, 20 sentences) beside our speech-obfuscation runs.

    preiss2023 reports WER/CER of the second pass as its "confidence" (lower is better), so
    our column shows our second pass's WER, not our 1 - WER."""
    import pandas as pd

    rows = []
    paper = df[(df["origin"] == "paper") & df["metric"].isin(["avg_asr", "ne_exact_match_correct"])]
    ours = df[(df["origin"] == "ours") & (df["dataset"] == "names-speech")]
    for origin, part in (("paper", df[(df["origin"] == "paper") & df["dataset"].isin(paper["dataset"])]),
                         ("ours", ours)):
        for (dataset, method), g in part.groupby(["dataset", "method"], sort=False):
            v = dict(zip(g["metric"], g["value"]))
            if "ne_exact_match_total" not in v:
                continue
            row = {"origin": origin, "dataset": dataset, "system": method}
            for metric, title in SPEECH_COLUMNS.items():
                if metric == "ne_exact_match":
                    row[title] = f"{v['ne_exact_match_correct']:.0f}/{v['ne_exact_match_total']:.0f}"
                elif metric == "avg_confidence" and origin == "ours":
                    row[title] = v.get("avg_second_pass_wer")
                else:
                    row[title] = v.get(metric)
            rows.append(row)
    out = pd.DataFrame(rows, columns=["origin", "dataset", "system", *SPEECH_COLUMNS.values()])
    return out.round(3)


def grid_markdown(df: pd.DataFrame, dataset: str) -> str:
    """One dataset's perplexity (mean over seeds, min-max range) and leak rate per method and
    masking, as the README shows it: our analogue of vats2024 Tables 3-5."""
    rows = df[(df["dataset"] == dataset) & (df["metric"] == "perplexity")]
    if rows.empty:
        return ""
    ppl = aggregate(rows)
    leak = aggregate(df[(df["dataset"] == dataset) & (df["metric"] == "leak_rate_percent")])
    maskings = [m for m in MASKING_ORDER if m in set(rows["masking"])]
    methods = list(dict.fromkeys(rows["method"]))
    seeds = int(ppl["n"].max())
    out = [f"| **{dataset}**: perplexity" + (f", mean of {seeds} seeds (min-max)" if seeds > 1 else "")
           + " (leak rate) | " + " | ".join(maskings) + " |", "|---" * (len(maskings) + 1) + "|"]
    for meth in methods:
        cells = []
        for m in maskings:
            hit = ppl[(ppl["method"] == meth) & ((ppl["masking"] == m) | (ppl["masking"] == ANY_MASKING))]
            if hit.empty:
                cells.append("–")
                continue
            r = hit.iloc[0]
            text = f"{r['mean']:,.0f}" + (f" ({r['lo']:,.0f}-{r['hi']:,.0f})" if r["n"] > 1 else "")
            lk = leak[(leak["method"] == meth) & (leak["masking"] == m)]
            cells.append(text + (f" [{lk.iloc[0]['mean']:.2f}%]" if not lk.empty else ""))
        out.append(f"| {display_method(meth)} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


# --- the privacy audit (recover_core/audit; `python -m recover_core audit`) ----------------

AUDIT_METRICS = ("reidentified", "reidentified_chance", "same_across_runs", "exposure", "extracted", "names_extracted",
                 "code_kept", "name_word_kept", "replay", "membership", "name_exposure")
# dataset -> the attack's name in the table (issue 75: replay, membership, name_exposure)
AUDIT_ATTACKS = {"census-lines": "inversion", "news+canaries": "canaries", "news-heldout-names": "",
                 "news+name-canaries": "name_exposure"}


def audit_chart(df: pd.DataFrame):
    """Mean canary exposure (bits) against how many times the canary was inserted: the clean
    corpus (Oracle) beside each masking's obfuscated corpora, the never-inserted control at 0."""
    import plotly.express as px

    if "repetitions" not in df:
        df = df[:0]
    codes = (df["metric"] == "exposure") & (df["dataset"] == "news+canaries")
    names = (df["metric"] == "name_exposure") & ~df["method"].astype(str).str.endswith(" sd")
    rows = df[codes | names].copy()
    if rows.empty:
        return px.line(title="No canary audit yet (python -m recover_core audit --canaries-job DIR, then its GPU job)")
    rows["LM adapted on"] = [("names: " if metric == "name_exposure" else "") +
                             (f"{m} {meth}".strip() if m and m != ANY_MASKING else meth)
                             for m, meth, metric in zip(rows["masking"], rows["method"], rows["metric"])]
    rows["insertions"] = rows["repetitions"].astype(float).astype(int).astype(str)
    fig = px.line(rows.sort_values("repetitions"), x="insertions", y="value", color="LM adapted on", markers=True,
                  labels={"value": "mean exposure (bits)"},
                  title="Canary exposure of SmolLM2 + LoRA adapted on each corpus (0 insertions: the control)")
    return fig


def audit_table(df: pd.DataFrame) -> pd.DataFrame:
    """The audit's figures: inversion (share of name words re-identified, per setting, against
    chance), per canary LM the secrets extracted and exposure at 16 insertions, and issue 75's
    attacks: replay (secret key, leaked key, chance), membership (precision against the base
    rate) and name_exposure (bits at every level, 0 the never-inserted control)."""
    import pandas as pd

    rows = df[df["metric"].isin(AUDIT_METRICS) & df["dataset"].isin(list(AUDIT_ATTACKS))]
    if rows.empty:
        return pd.DataFrame(columns=["attack", "corpus", "setting", "metric", "insertions", "value"])
    out = pd.DataFrame({"attack": [AUDIT_ATTACKS[d] or m for d, m in zip(rows["dataset"], rows["metric"])],
                        "corpus": rows["masking"].replace(ANY_MASKING, ""), "setting": rows["method"],
                        "metric": rows["metric"], "insertions": rows.get("repetitions"), "value": rows["value"]})
    keep = out["attack"].isin(["inversion", "replay", "membership", "name_exposure"]) | out["insertions"].isna() | \
        out["insertions"].astype(str).isin(["16", "16.0", "0", "0.0"]) | \
        out["metric"].isin(["code_kept", "name_word_kept", "names_extracted"])
    return out[keep].reset_index(drop=True)
