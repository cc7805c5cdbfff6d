"""Tidy result tables in precomputed/ (the papers' and our own runs), and their charts.

Every CSV there has the columns of TIDY_COLUMNS; a file may add a ``source`` column.
The app's Results tab reads them once at start; nothing here trains or scores.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

TIDY_COLUMNS = ["dataset", "masking", "method", "metric", "value", "model", "scale", "seed", "command"]
# Metrics the charts offer, by the name a user picks.
METRICS = {"Perplexity": ("perplexity",), "WER": ("wer", "wer_percent")}
ANY_MASKING = "(any)"  # Oracle and other rows that do not depend on the masking
# Our open stand-ins for the papers' licensed corpora (corpora.py): a chart of the paper's
# dataset shows ours beside it.
STAND_INS = {"Fisher": "fortunes", "Reddit": "scripture", "WSJ": "news"}
SKIPPED: list[str] = []  # CSVs that could not be read, with why (the Results tab says so)


def precomputed_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "precomputed"


@functools.lru_cache(maxsize=1)
def load(root: str | None = None):
    """Every tidy CSV under precomputed/, with ``origin`` = paper or ours."""
    base = Path(root) if root else precomputed_dir()
    return read_tidy(sorted(base.rglob("*.csv")), base)


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


def pair_label(paper: str, ours: str) -> str:
    return f"{paper} (paper) / {ours} (ours)"


def datasets(df, metric: str) -> list[str]:
    """Chart choices: a paper's dataset paired with our stand-in, then any other dataset."""
    present = set(df[df["metric"].isin(METRICS[metric])]["dataset"].dropna())
    out, used = [], set()
    for paper, ours in STAND_INS.items():
        if paper in present or ours in present:
            out.append(pair_label(paper, ours))
            used |= {paper, ours}
    return out + sorted(present - used)


def pair_datasets(choice: str) -> list[str]:
    """The datasets behind a chart choice: a paper's and our stand-in for it, or just one."""
    for paper, ours in STAND_INS.items():
        if choice == pair_label(paper, ours):
            return [paper, ours]
    return [choice]


def _chart_rows(df, metric: str, choice: str):
    names = pair_datasets(choice)
    rows = df[df["metric"].isin(METRICS[metric]) & df["dataset"].isin(names)].copy()
    rows["method"] = rows["method"].map(display_method)
    # Several runs of one cell (seeds, files) are one bar: their mean.
    keys = ["origin", "dataset", "method", "masking"]
    return rows.groupby(keys, sort=False, as_index=False).agg(
        value=("value", "mean"), runs=("value", "size"), source=("source", "first"), scale=("scale", "first"))


def chart(df, metric: str, dataset: str):
    """Grouped bars: method on x, one bar per masking technique; the paper's panel beside ours."""
    import plotly.express as px

    rows = _chart_rows(df, metric, dataset)
    if rows.empty:
        return px.bar(title=f"No {metric} results for {dataset}")
    # No shared method order: each panel (its own x axis, below) keeps its table's order.
    fig = px.bar(rows, x="method", y="value", color="masking", barmode="group", facet_col="origin",
                 category_orders={"origin": ["paper", "ours"]},
                 hover_data=["dataset", "source", "scale", "runs"], labels={"value": metric, "method": ""},
                 title=f"{metric} on {dataset} (lower is better)")
    fig.update_yaxes(matches=None, showticklabels=True)  # the paper's scale is not ours
    fig.update_layout(legend_title_text="masking", margin=dict(t=60, b=10))
    fig.update_xaxes(tickangle=-35, matches=None)  # each panel lists only its own methods
    return fig


# --- vats2024 §4.3, claim by claim --------------------------------------------------------

_PAPER_METHOD = re.compile(r"^(?P<model>.+) \((?P<how>Top-1|Top-K)(?P<ft>, FT)?\)$")
CLOSE_TO_ORACLE = 0.05  # "very close to Oracle" (§4.3), read as within 5%: the paper's own cases are 1-4%


def method_parts(method: str) -> tuple[str, str, bool] | None:
    """(model, top1|topk, fine-tuned) of a filling method named as in the paper ("BERT (Top-K,
    FT)") or as in our grid ("mlm-ft:minilm-wiki:topk"); None for Oracle and the baselines."""
    m = _PAPER_METHOD.match(method)
    if m:
        return m["model"], "top1" if m["how"] == "Top-1" else "topk", bool(m["ft"])
    parts = method.split(":")
    if len(parts) == 3 and parts[2] in ("top1", "topk"):
        return parts[1], parts[2], parts[0].endswith("-ft")
    return None


def display_method(method: str) -> str:
    """Our grid's method names written as the paper writes its own, so bars line up:
    ``mlm-ft:minilm-wiki:topk`` -> ``minilm-wiki (Top-K, FT)``, ``baseline0`` -> ``Baseline0``."""
    parts = method_parts(method)
    if parts and not _PAPER_METHOD.match(method):
        model, how, ft = parts
        return f"{Path(model).name} ({'Top-1' if how == 'top1' else 'Top-K'}{', FT' if ft else ''})"
    return method.capitalize() if method in ("oracle", "baseline0", "baseline1") else method


def _verdict(passed: list[str], failed: list[str]) -> tuple[str, str]:
    if not passed and not failed:
        return "n/a", "nothing to compare"
    holds = "yes" if not failed else "no" if not passed else "partly"
    return holds, f"{len(passed)} of {len(passed) + len(failed)}" + (f"; fails: {', '.join(failed)}" if failed else "")


def claims(df, dataset: str) -> list[dict]:
    """Check each qualitative perplexity claim of vats2024 §4.3 on one dataset's rows.

    Returns rows of claim, dataset, holds (yes / partly / no / n/a) and the evidence: how
    many comparisons agree, and which do not. Works on the paper's tables and on ours."""
    rows = df[(df["metric"] == "perplexity") & (df["dataset"] == dataset)]
    cell = rows.groupby(["method", "masking"])["value"].mean().to_dict()  # (method, masking) -> ppl
    oracle = [v for (meth, _), v in cell.items() if meth.lower() == "oracle"]
    maskings = sorted({mk for (meth, mk) in cell if meth.lower() != "oracle"})
    parts = {meth: method_parts(meth) for meth, _ in cell}  # None for Oracle and the baselines
    fillers = sorted(meth for meth, part in parts.items() if part)
    base = {b: meth for meth in {m for m, _ in cell} for b in ("baseline0", "baseline1") if meth.lower() == b}
    out = []

    def add(claim: str, passed: list[str], failed: list[str], note: str = "") -> None:
        holds, evidence = _verdict(passed, failed)
        out.append({"claim": claim, "dataset": dataset, "holds": holds, "evidence": evidence + note})

    ok, bad = [], []
    for mk in maskings:
        bases = [cell[(b, mk)] for b in base.values() if (b, mk) in cell]
        for f in fillers:
            if (f, mk) in cell and bases:
                (ok if cell[(f, mk)] < min(bases) else bad).append(f"{display_method(f)}/{mk}")
    add("Every filling method beats both baselines", ok, bad)

    ok, bad = [], []
    for mk in maskings:
        b0, b1 = (cell.get((base.get(b, ""), mk)) for b in ("baseline0", "baseline1"))
        if b0 is not None and b1 is not None:
            (ok if b1 <= b0 else bad).append(mk)
    add("Baseline1 (masks ignored) beats Baseline0 (masks as a token)", ok, bad)

    def paired(a: tuple, b: tuple) -> tuple[list[str], list[str]]:
        """Fillers that differ only in one part: does the `b` variant beat the `a` one?"""
        ok, bad = [], []
        for f in fillers:
            if parts[f][1:] != a:
                continue
            twin = next((g for g in fillers if parts[g][0] == parts[f][0] and parts[g][1:] == b), None)
            for mk in maskings:
                if twin and (f, mk) in cell and (twin, mk) in cell:
                    (ok if cell[(twin, mk)] < cell[(f, mk)] else bad).append(f"{display_method(twin)}/{mk}")
        return ok, bad

    add("Top-K beats Top-1", *[a + b for a, b in zip(paired(("top1", False), ("topk", False)),
                                                     paired(("top1", True), ("topk", True)))])
    add("A fine-tuned MLM (FT) beats the same MLM without fine-tuning", *paired(("topk", False), ("topk", True)))

    ok, bad = [], []
    if oracle and "allowList" in maskings:
        for meth in sorted({m for m, _ in cell if m.lower() != "oracle"}):
            gaps = {mk: cell[(meth, mk)] - oracle[0] for mk in maskings if (meth, mk) in cell}
            others = [g for mk, g in gaps.items() if mk != "allowList"]
            if "allowList" in gaps and others:
                (ok if gaps["allowList"] > max(others) else bad).append(display_method(meth))
    add("allowList (most words masked) leaves the largest gap to Oracle", ok, bad)

    ok, bad, best = [], [], []
    for mk in [m for m in maskings if m in ("vocabThres", "entityTagger")]:
        scored = [(cell[(f, mk)], f) for f in fillers if (f, mk) in cell]
        if oracle and scored:
            v, f = min(scored)
            gap = v / oracle[0] - 1
            best.append(f"{mk}: {display_method(f)} {100 * gap:+.1f}%")
            (ok if gap <= CLOSE_TO_ORACLE else bad).append(mk)
    add(f"The best filling method is close to Oracle (within {100 * CLOSE_TO_ORACLE:.0f}%) for vocabThres and "
        "entityTagger", ok, bad, f" ({'; '.join(best)})" if best else "")

    llm = [f for f in fillers if parts[f][0].lower().startswith(("llama", "smollm"))]
    ft_mlm = [f for f in fillers if parts[f][2] and f not in llm]
    ok, bad = [], []
    for mk in maskings:
        for f in llm:
            rivals = [cell[(g, mk)] for g in ft_mlm if (g, mk) in cell]
            if (f, mk) in cell and rivals:
                (ok if cell[(f, mk)] > min(rivals) else bad).append(f"{display_method(f)}/{mk}")
    add("The tuned causal LLM is not as good as the best fine-tuned MLM", ok, bad)
    return out


def claims_table(df, dataset_choice: str):
    """Claims for a chart choice: the paper's dataset and our stand-in, one row block each."""
    import pandas as pd

    rows = [r for d in pair_datasets(dataset_choice) for r in claims(df, d)]
    return pd.DataFrame(rows, columns=["claim", "dataset", "holds", "evidence"])


def cmd_claims(args) -> None:
    from recover_core.errors import RecoverError

    if args.csv:
        missing = [p for p in args.csv if not Path(p).is_file()]
        if missing:
            raise RecoverError(f"No such file: {', '.join(map(str, missing))}.")
        df = read_tidy(args.csv)
        if SKIPPED:
            raise RecoverError("; ".join(SKIPPED) + ".")
    else:
        df = load()
    present = sorted(set(df[df["metric"] == "perplexity"]["dataset"].dropna()))
    names = args.dataset or present
    unknown = [d for d in names if d not in present]
    if unknown:
        raise RecoverError(f"No perplexity results for {', '.join(unknown)}. Present: {', '.join(present) or 'none'}.")
    print("| claim (vats2024 §4.3) | dataset | holds | evidence |\n|---|---|---|---|")
    for d in names:
        for r in claims(df, d):
            print(f"| {r['claim']} | {r['dataset']} | {r['holds']} | {r['evidence']} |")


def add_parser(sub) -> None:
    p = sub.add_parser("claims", help="check vats2024 §4.3's claims on perplexity results (a markdown table)")
    p.set_defaults(fn=cmd_claims)
    p.add_argument("--csv", type=Path, nargs="+", help="tidy CSVs (default: everything in precomputed/)")
    p.add_argument("--dataset", nargs="+", help="datasets to check (default: all with perplexity results)")
