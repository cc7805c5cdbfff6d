"""The Text tab's handlers: mask one sentence, the engine's answer, the papers' six columns."""
from __future__ import annotations

import gradio as gr

from recover_core.explorer import sentence as explore
from recover_core.explorer import warm
from recover_core.masking.vocab_thres import DEFAULT_N
from recover_core.runtime import threads
from ui.common import CAUSAL_REQUESTS, friendly

# What a privacy reviewer types first: a card number, an e-mail, a phone, a date of an event,
# an age, a sum, the same name twice; each with the protection profile it shows best.
EXAMPLES = [
    ["Call Tom Baker at 206-555-0147 or tom.baker@example.com; card 4111 1111 1111 1111.", "direct"],
    ["On 14 March 2021 Mrs Grace Okafor, aged 47, flew to Lagos, where Grace paid EUR 5,000 for the ticket.",
     "quasi"],
    ["Tom Baker, a 52-year-old teacher from Leeds, wrote to Anna on 3 May 2019; Tom signed as Dr. Baker.", "quasi"],
    ["Tom lives in Chicago and works for Microsoft with Maria Gonzalez since 1999.", "direct"],
]


@friendly
@threads.on_models_thread
def on_mask(text, technique, n, markers, protect="direct"):
    m = explore.mask(text, technique, n, markers, protect=protect)
    note = (f"Masked {len(m.spans)} of {m.n_words} words." if m.spans
            else "Nothing to mask: every word is kept by this technique. Try another technique.")
    note += explore.ner_path(text, technique)
    return explore.highlighted(m.masked, m.markers), note


def models_of(mlm_model: str, causal_model: str, instruct_model: str) -> dict:
    """The three model dropdowns, by the filler kind each serves."""
    return {"mlm": mlm_model, "infill": causal_model, "instruct": instruct_model}


def flat(columns: dict, which: list[int]) -> list:
    return [x for i in which for x in columns[i]]


def head_of(masked, answer, status) -> list:
    """The outputs above the columns: the engine's answer (its text, its note), the masked sentence, the status."""
    return [*answer, masked, status]


# The Resample button's elem_id: a fill that button fired draws with the next seed.
RESAMPLE = "resample"


def seed_for(seed, evt: gr.EventData | None = None) -> int:
    """The seed a fill draws with: the one set, or the next one when Resample fired the event
    (an API call has no target: it sends the seed it wants). A cleared seed counts as 0."""
    seed = explore.seed_of(seed)
    return seed + 1 if getattr(getattr(evt, "target", None), "elem_id", None) == RESAMPLE else seed


# The button fills the fast MLM columns in one event and the causal ones in the next, each
# in its own concurrency group: a user's MLM columns never wait behind others' causal work.
MLM_COLUMNS = [i for i in explore.FILL_ORDER if explore.COLUMNS[i].kind == "mlm"]
CAUSAL_COLUMNS = [i for i in explore.FILL_ORDER if explore.COLUMNS[i].kind != "mlm"]
ALL_COLUMNS = list(range(len(explore.COLUMNS)))


@friendly
def on_fill(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect="direct"):
    """All six columns in one call (the API's /fill), streamed: the masked sentence at once,
    the engine's answer, then each column as it is filled, the MLM ones first. As the causal
    step: a column runs on the models thread while its request is alone, else only its passes."""
    models = models_of(mlm_model, causal_model, instruct_model)
    with CAUSAL_REQUESTS:
        for head, answer, status, columns in explore.fill_steps(text, technique, n, markers, k, seed, models,
                                                                explore.FILL_ORDER, protect, answer=True,
                                                                through=CAUSAL_REQUESTS.run):
            yield head_of(head, answer, status) + flat(columns, ALL_COLUMNS)


@friendly
def on_fill_mlm(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect="direct",
                evt: gr.EventData = None):
    """The page's first step: the masked sentence, the engine's answer, the MLM columns, and last
    the seed drawn with (the causal step, which follows, reads it back; it marks its own columns
    as waiting when it starts: fewer outputs here)."""
    models, seed = models_of(mlm_model, causal_model, instruct_model), seed_for(seed, evt)
    for head, answer, status, columns in explore.fill_steps(text, technique, n, markers, k, seed, models,
                                                            MLM_COLUMNS, protect, answer=True):
        yield head_of(head, answer, status) + flat(columns, MLM_COLUMNS) + [seed]


@friendly
def on_fill_causal(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect="direct"):
    """The button's second step: the causal columns (here, on a worker of its own; each forward
    pass on the models thread, shared with the other users' pending rows)."""
    models = models_of(mlm_model, causal_model, instruct_model)
    with CAUSAL_REQUESTS:  # alone, a column runs whole on the models thread; else its passes go there
        for _, _, status, columns in explore.fill_steps(text, technique, n, markers, k, seed, models, CAUSAL_COLUMNS,
                                                        protect, through=CAUSAL_REQUESTS.run):
            yield [status] + flat(columns, CAUSAL_COLUMNS)


@friendly
def on_example(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect="direct"):
    """An example clicked: with the page's default settings, its outputs from the start's warm-up
    at once (warm.example); else (other settings, or no warm-up ran) filled as /fill fills them."""
    hit = warm.example(text, technique, n, markers, k, seed, models_of(mlm_model, causal_model, instruct_model),
                       protect)
    if hit is not None:
        yield head_of(hit[0], hit[1], hit[2]) + flat(hit[3], ALL_COLUMNS)
        return
    yield from on_fill(text, technique, n, markers, k, seed, mlm_model, causal_model, instruct_model, protect)


def on_load():
    """The page opened: the first example, filled, when the warm-up has it (in a Space); else nothing."""
    text, protect = EXAMPLES[0]
    models = {kind: explore.default_model(kind) for kind in explore.FILLER_TITLES}
    hit = warm.example(text, "entityTagger", DEFAULT_N, "mask", 10, 0, models, protect)
    if hit is None:
        return [gr.update()] * (2 + 4 + 3 * len(ALL_COLUMNS))
    return [text, protect] + head_of(hit[0], hit[1], hit[2]) + flat(hit[3], ALL_COLUMNS)
