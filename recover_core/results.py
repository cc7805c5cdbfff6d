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


def precomputed_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "precomputed"


@functools.lru_cache(maxsize=1)
def load(root: str | None = None):
    """Every tidy CSV under precomputed/, with ``origin`` = paper or ours."""
    import pandas as pd

    base = Path(root) if root else precomputed_dir()
    frames = []
    for path in sorted(base.rglob("*.csv")):
        df = pd.read_csv(path, dtype={"seed": "string", "masking": "string", "method": "string"})
        missing = [c for c in TIDY_COLUMNS if c not in df.columns]
        if missing:
            raise ValueError(f"{path}: not a tidy result table (missing {', '.join(missing)})")
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


def datasets(df, metric: str) -> list[str]:
    return sorted(df[df["metric"].isin(METRICS[metric])]["dataset"].dropna().unique().tolist())


def chart(df, metric: str, dataset: str):
    """Grouped bars: method on x, one bar per masking technique; the paper's panel beside ours."""
    import plotly.express as px

    rows = df[df["metric"].isin(METRICS[metric]) & (df["dataset"] == dataset)]
    if rows.empty:
        fig = px.bar(title=f"No {metric} results for {dataset}")
        return fig
    order = list(dict.fromkeys(rows["method"]))
    fig = px.bar(rows, x="method", y="value", color="masking", barmode="group", facet_col="origin",
                 category_orders={"method": order, "origin": ["paper", "ours"]},
                 hover_data=["source", "model", "scale"], labels={"value": metric, "method": ""},
                 title=f"{metric} on {dataset} (lower is better)")
    fig.update_layout(legend_title_text="masking", margin=dict(t=60, b=10))
    fig.update_xaxes(tickangle=-35)
    return fig
