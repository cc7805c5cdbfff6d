"""Tidy result tables in precomputed/ (the papers' and our own runs), and their charts.

Every CSV there has the columns of TIDY_COLUMNS; a file may add a ``source`` column.
The app's Results tab reads them once at start; nothing here trains or scores.
"""
from __future__ import annotations

import functools
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
    import pandas as pd

    base = Path(root) if root else precomputed_dir()
    frames = []
    SKIPPED.clear()
    for path in sorted(base.rglob("*.csv")):
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
            df["source"] = path.relative_to(base).as_posix()
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


def _chart_rows(df, metric: str, choice: str):
    names = {choice}
    for paper, ours in STAND_INS.items():
        if choice == pair_label(paper, ours):
            names = {paper, ours}
    rows = df[df["metric"].isin(METRICS[metric]) & df["dataset"].isin(names)]
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
    order = list(dict.fromkeys(rows["method"]))
    fig = px.bar(rows, x="method", y="value", color="masking", barmode="group", facet_col="origin",
                 category_orders={"method": order, "origin": ["paper", "ours"]},
                 hover_data=["dataset", "source", "scale", "runs"], labels={"value": metric, "method": ""},
                 title=f"{metric} on {dataset} (lower is better)")
    fig.update_yaxes(matches=None, showticklabels=True)  # the paper's scale is not ours
    fig.update_layout(legend_title_text="masking", margin=dict(t=60, b=10))
    fig.update_xaxes(tickangle=-35)
    return fig
