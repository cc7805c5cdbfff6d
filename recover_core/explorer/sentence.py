"""The live explorer's logic, free of any UI: mask one sentence, the engine's own answer
(``obfuscated``: what ``Obfuscator.obfuscate`` gives under a protection profile), fill it in
the papers' six ways, and the Text tab's outputs as plain data, in the order they are ready
(``fill_steps``).

app.py only hands these to Gradio.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from recover_core.kinds.registry import PROFILES, REGISTRY
from recover_core.masking.truecase import is_caseless
from recover_core.models import bundles
from recover_core.text import validation
from recover_core.errors import RecoverError
from recover_core.filling import DEFAULT_MODEL, KINDS, memo
from recover_core.masking.mask import Masked
from recover_core.obfuscator import Obfuscator, Result
from recover_core.pseudonyms.key import new_key
from recover_core.text.spans import IDENTIFIER_LABELS

CANDIDATE_COLUMNS = ["mask", "label", "candidate", "score", "chosen"]
TECHNIQUES = ["entityTagger", "vocabThres", "allowList", "allowList+entityTagger", "vocabThres+entityTagger"]


@dataclass(frozen=True)
class Column:
    """One side-by-side column: a filler kind, a method and a model."""

    kind: str  # "mlm" | "infill" | "instruct"
    method: str  # "top1" | "topk"

    @property
    def title(self) -> str:
        return f"{FILLER_TITLES[self.kind]} · {'Top-1' if self.method == 'top1' else 'Top-K'}"


FILLER_TITLES = {"mlm": "MLM", "infill": "Causal infill", "instruct": "LoRA-tuned LLM"}
# Fastest first, so the first column appears at once; Top-1 of all three, then Top-K.
COLUMNS = [Column(kind, method) for method in ("top1", "topk") for kind in ("mlm", "infill", "instruct")]
# The order the app fills them in: the fast MLM columns first (they show within a second
# while the causal ones run), then each causal filler's Top-1 and Top-K together (Top-K
# draws from the candidates Top-1 computed, so it follows at once), infill before the
# instruction-tuned filler, whose fallback is that very infill work (filling.memo reuses it).
_SPEED = {"mlm": 0, "infill": 1, "instruct": 2}
FILL_ORDER = sorted(range(len(COLUMNS)), key=lambda i: (_SPEED[COLUMNS[i].kind], COLUMNS[i].method))
# The page's defaults where they differ from the fillers' own: the LoRA-tuned LLM column shows
# smollm2-fill-wiki, tuned on Wikipedia only (smollm2-fill saw the news train split).
APP_DEFAULT_MODEL = {"instruct": "smollm2-fill-wiki"}
# The engine's answer fills with the MLM trained here wherever the page runs: offline it is the
# engine's default already, and in a Space (whose research columns default to the paper's BERT) the
# answer is then the one `recover obfuscate` gives and the product's figures were measured with.
ANSWER_MODEL = "minilm-mlm"
PROTECT = {"direct": "direct: names and identifiers (cards, e-mails, phones, IDs, addresses)",
           "quasi": "quasi: also dates of events, ages, case numbers, sums and nationalities"}
assert set(PROTECT) == set(PROFILES)


def model_choices(kind: str) -> list[str]:
    """Models for a filler kind: the default first, then the usable ones (offline or hub)."""
    model_kind = KINDS[kind]
    usable = bundles.names(model_kind, available_only=True)
    ordered = usable + [n for n in bundles.names(model_kind) if n not in usable]
    first = default_model(kind)
    return [first] + [n for n in ordered if n != first]


def default_model(kind: str) -> str:
    """The filler's preferred model when it can be loaded here, else the first that can."""
    usable = bundles.names(KINDS[kind], available_only=True)
    preferred = APP_DEFAULT_MODEL.get(kind, DEFAULT_MODEL[kind])
    if preferred in usable:
        return preferred
    return usable[0] if usable else preferred


@functools.lru_cache(maxsize=32)
def engine(technique: str, n: int, markers: str = "mask", ner_model: str = "spacy-md", kind: str = "mlm",
           model: str | None = None, method: str = "top1", k: int = 10, seed: int = 0,
           protect: str = "direct") -> Obfuscator:
    """The engine for one setting of the page, built once: its masker and keep-list are reused
    by every request with that setting (the models themselves are shared by all engines)."""
    validation.check_choice("masking technique", technique, TECHNIQUES)
    validation.check_choice("protection profile", protect, list(PROTECT))
    return Obfuscator(technique=technique, n=int(n), markers="class" if markers == "class" else "mask",
                      ner_model=ner_model, filler=kind, model=model, method=method, k=k, seed=int(seed),
                      protect=protect)


def mask(text: str, technique: str, n: int, markers: str, ner_model: str = "spacy-md",
         protect: str = "direct") -> Masked:
    return engine(technique, int(n), markers, ner_model, protect=protect).mask(text)


def obfuscated(text: str, technique: str, n: int, markers: str, protect: str = "direct") -> Result:
    """The product's answer: ``Obfuscator.obfuscate`` with the engine's own filler and rules
    (pseudonym rules, identifiers in their shape) under ``protect``, drawn under a fresh key
    of this request's (an engine per request; its masker and models are the shared ones)."""
    settings = engine(technique, int(n), markers, model=ANSWER_MODEL, protect=protect).settings
    return Obfuscator(settings, key=new_key()).obfuscate(text)


def kind_of(label: str) -> str:
    """What the engine did to a span: an identifier or a quasi-identifier redrawn in its shape,
    or a name, place or organisation given a pseudonym by the rules."""
    if label in REGISTRY.quasi_labels():
        return "quasi-identifier"
    return "identifier" if label in IDENTIFIER_LABELS else "pseudonym"


def engine_view(result: Result, protect: str) -> tuple[dict, str]:
    """The engine's answer for the page: the text with each substitute marked by its label and
    kind ("PERSON · pseudonym", "CREDIT_CARD · identifier"), and a one-line summary."""
    reps = result.replacements
    text = {"text": result.text, "entities": [
        {"entity": f"{r.label} · {kind_of(r.label)}", "start": r.start, "end": r.end} for r in reps]}
    counts = pd.Series([kind_of(r.label) for r in reps], dtype=object).value_counts()
    said = ", ".join(f"{n} {k}{'s' if n > 1 else ''}" for k, n in counts.items()) or "nothing to replace"
    return text, f"**Obfuscated** (the engine, protect={protect}) · {said}"


def ner_path(text: str, technique: str) -> str:
    """For the status line: which entityTagger path the text took, or "" without entityTagger."""
    if "entityTagger" not in technique:
        return ""

    if is_caseless(text):
        return (" entityTagger: caseless path (the text has no capital letters, so names, places and "
                "the pronoun I were capitalised from word lists and context before NER).")
    return " entityTagger: cased path."


def check_fillable(masked: Masked) -> None:
    """Too many masks for one request get one clear message, before any filler runs."""
    validation.check_mask_count(len(masked.markers), what="masked sentence")


def fill(masked: Masked, column: Column, model: str, k: int, seed: int, technique: str, n: int,
         markers: str = "mask", ner_model: str = "spacy-md", key: bytes | None = None,
         protect: str = "direct") -> Result:
    """One column: the engine's substitutes for a sentence masked by ``mask`` with the same settings.
    The originals are in memory for this request only: one substitute per original, never
    shared, names keep their gender, places their kind. The substitutes are drawn under
    ``key``, the request's own secret (a fresh one by default): the engines outlive requests,
    and a key shared by every visitor would let one visitor learn another's mapping."""
    k = validation.check_k(k)
    check_fillable(masked)
    ob = engine(technique, int(n), markers, ner_model, column.kind, model, column.method, k, int(seed), protect)
    return ob.fill([masked], key=key or new_key())[0]


def fallback_note(result: Result) -> str:
    """For a column's header: where the LLM's output was not used, and the infill filler's was."""
    if result.filled_by:
        return " · invalid output, filled by causal infill"
    n = sum(r.source == "infill" for r in result.replacements)
    return f" · {n} of {len(result.replacements)} masks filled by causal infill (no valid word from the LLM)" if n else ""


# --- the Text tab's columns, as plain data (app.py hands them to Gradio) -------------------

def highlighted(text: str, spans) -> dict:
    return {"text": text, "entities": [{"entity": s.label, "start": s.start, "end": s.end} for s in spans]}


def candidates_table(result) -> pd.DataFrame:
    """The filler's candidates per mask; ✓ marks the substitute. Where the pseudonym rules
    chose a word the filler did not offer (a name of the original's gender, a free one), it
    gets a row of its own, marked "✓ list" (an identifier's, generated in its format: "✓ format").
    A mask whose candidates another filler proposed says which in its label ("GPE · infill")."""
    rows = []
    for i, r in enumerate(result.replacements):
        chosen = r.substitute.lower().removesuffix("'s").split()
        marks = ["✓" if c.word.lower() in chosen[:1] else "" for c in r.candidates]
        label = f"{r.label} · {r.source}" if r.source else r.label
        rows += [(i + 1, label, c.word, round(c.score, 4), m) for c, m in zip(r.candidates, marks)]
        if "✓" not in marks:  # an identifier's substitute is generated in its format, never a filler's word
            rows.append((i + 1, label, r.substitute, None, "✓ format" if r.label in IDENTIFIER_LABELS else "✓ list"))
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)


def no_column(message: str) -> list:
    return [highlighted("", []), message, pd.DataFrame(columns=CANDIDATE_COLUMNS)]


def seed_of(seed) -> int:
    """The Seed box, which a user may clear (None): empty means 0."""
    return 0 if seed is None else int(seed)


def no_answer(message: str) -> list:
    return [highlighted("", []), message]


def answer_of(text, technique, n, markers, protect) -> list:
    """The engine's answer as the page's two outputs; a RecoverError (a model that cannot be
    loaded here) becomes its message, and the research columns still fill."""
    try:
        return list(engine_view(obfuscated(text, technique, n, markers, protect), protect))
    except RecoverError as e:
        return no_answer(f"**Obfuscated** · {e}")


def fill_steps(text, technique, n, markers, k, seed, models: dict, which: list[int], protect: str = "direct",
               answer: bool = False, through: Callable | None = None):
    """Mask, then (``answer``) the engine's own answer, then fill the columns ``which`` in that
    order. Yields (masked, answer, status, columns) as soon as the masking is done, after the
    engine's answer, before each column and once at the end: ``answer`` is its two outputs (or
    None when not asked for), ``columns`` maps a column's index to its three outputs.
    ``through(fn, *args)`` runs each column's fill (the app: on which thread)."""
    seed = seed_of(seed)
    m = mask(text, technique, n, markers, protect=protect)
    head = highlighted(m.masked, m.markers)
    if not m.spans:
        done = answer_of(text, technique, n, markers, protect) if answer else None
        yield head, done, "Nothing to mask: every word is kept by this technique.", {
            i: no_column("Nothing to fill.") for i in which}
        return
    check_fillable(m)
    key = new_key()  # one secret for this request's columns, forgotten with it
    columns = {i: no_column(f"**{COLUMNS[i].title}** · waiting…") for i in which}
    said = f"Masked {len(m.spans)} of {m.n_words} words."
    got = None
    if answer:
        yield head, no_answer("**Obfuscated** · the engine is choosing substitutes…"), f"{said} Obfuscating…", columns
        got = answer_of(text, technique, n, markers, protect)
    # Top-1 and Top-K share the causal fillers' work, for this request only: its own memo,
    # current only while a column fills (each step of this generator may run on another
    # thread, and other requests' columns fill at the same time). The MLM columns have
    # nothing to share.
    book = memo.book() if any(COLUMNS[i].kind != "mlm" for i in which) else None
    try:
        for i in which:
            col = COLUMNS[i]
            yield head, got, f"{said} Filling: {col.title}…", columns
            model = models[col.kind]
            try:
                with memo.using(book):
                    r = (through or _call)(fill, m, col, model, k, seed, technique, n, markers, key=key,
                                           protect=protect)
                note = fallback_note(r)
                columns[i] = [highlighted(r.text, r.replacements), f"**{col.title}** · {model}{note}",
                              candidates_table(r)]
            except RecoverError as e:  # one unavailable model must not blank the other columns
                columns[i] = no_column(f"**{col.title}** · {model}: {e}")
    finally:
        if book is not None:
            book.clear()  # the request's text goes with it, even when the client went away
    yield head, got, said, columns


def _call(fn: Callable, *args, **kwargs):
    return fn(*args, **kwargs)
