"""The Results tab's handlers: every number is read from precomputed/, once, at start."""
from __future__ import annotations

import gradio as gr

from recover_core.results import claims
from recover_core.results import tables as results
from ui.common import friendly

RESULTS = results.load()  # read once at start: precomputed/ does not change while the app runs
ALL = "(all)"


@friendly
def on_results_metric(metric, view=results.HEADLINE):
    """A new metric or view: its datasets, and the first one's chart (which a dataset left as it
    was would not redraw)."""
    choices = results.datasets(results.view(RESULTS, view), metric)
    first = choices[0] if choices else None
    return gr.Dropdown(choices=choices, value=first), on_results_chart(metric, first, view)


@friendly
def on_results_chart(metric, dataset, view=results.HEADLINE):
    return results.chart(results.view(RESULTS, view), metric, dataset)


@friendly
def on_results_claims(dataset, view=results.HEADLINE):
    # The headline grid is on news alone, so every claim is checked there (plain claims check
    # on news only WSJ's WER findings, as the paper draws its perplexity claims from Fisher/Reddit).
    return claims.claims_table(results.view(RESULTS, view), dataset, every=view == results.HEADLINE)


@friendly
def on_results_table(dataset, origin, metric):
    df = RESULTS
    for column, value in (("dataset", dataset), ("origin", origin), ("metric", metric)):
        if value and value != ALL:
            df = df[df[column] == value]
    return df.drop(columns=["origin"])
