"""The instruction-tuned causal LM filler (vats2024 §3.2, §4.2.4: the "LLaMA2" method).

The model was LoRA-tuned (training/llm.py) on prompts that hold an instruction, a
sentence with a few words masked, and the original sentence as the response. At fill
time it generates the whole completed sentence. That is only trusted when it equals
the input outside the masked spans (``validate``). A mask for which no valid beam offers
an acceptable word (a place's mask filled with "new") gets its words from the infill
filler, and its Fill says so (``source``); a sentence with no such word at all goes to the
infill filler whole. Both are counted in ``stats``.

Candidates come from beam search: each valid beam proposes one word per mask, and a
word's score is the summed probability of the beams that propose it.
"""
from __future__ import annotations

import functools
import math
import re
import threading
from collections import Counter
from typing import Callable, Container, Sequence

import torch

from recover_core.models import bundles
from recover_core.data import lexicons
from recover_core.filling import candidates as cand_rules, kernels, memo, scheduler
from recover_core.filling.base import (
    DEFAULT_K, DEFAULT_SAMPLING, MARKER_RE, Candidate, Filled, Filler, MaskInput, Method, Sampling, TopOnePath,
    choose, item_ids, merge_consecutive, rng_for,
)
from recover_core.filling.infill import InfillFiller, Prefixes, shared as shared_infill
from recover_core.text.spans import GENERIC_LABELS

INSTRUCTION = "Predict the [MASK] tokens in the given sentence."
ENTITY_EXTRA_WORDS = 2  # a name or place may take more words than its markers: 'New York City'


def prompt(masked: str) -> str:
    """The Alpaca-style prompt vats2024 describes (instruction, input, output); the same
    text at training and at fill time, and it needs no chat template (LLaMA base has none)."""
    return f"### Instruction:\n{INSTRUCTION}\n\n### Input:\n{masked}\n\n### Response:\n"


def validate(item: MaskInput, output: str) -> list[str] | None:
    """The substitutes, one per marker of ``item``, if ``output`` equals ``item.text``
    outside the markers (runs of whitespace compare equal); otherwise None.

    A substitute is non-empty, holds no marker, and has at most as many words as its
    span has markers ('[PERSON] [PERSON]' may become 'Maria Lopez', '[MASK]' one word),
    plus ENTITY_EXTRA_WORDS for an entity marker ('[GPE]' may become 'New York'): an
    output that rewrites the sentence around a mask must not "match" by swallowing the
    rewrite into a substitute.

    An alignment, not a regular expression: lazy groups between repeated literals
    backtrack exponentially (16 masks took minutes). Dynamic programming over (marker,
    position) instead, and without recursion, so hundreds of markers cannot exhaust the
    stack: a forward pass finds the positions where each literal can start, a backward
    pass keeps those that lead to a full match, and the substitutes are read off with
    the shortest first, as a depth-first search trying shorter substitutes first would.
    Each substitute is bounded by its word limit, so the work stays linear-ish."""
    if "\n" in output.strip():
        return None
    out = _ws(output).strip()
    lits, limits = _template(item)
    n = len(limits)

    # Forward: starts[i] = positions where literal i may start; ends[i][p] = the ends of the
    # substitutes for marker i after literal i matched at p, shortest first.
    starts: list[set[int]] = [{0}]
    ends: list[dict[int, list[int]]] = []
    for i in range(n):
        ends.append({})
        nxt: set[int] = set()
        for p in starts[i]:
            if out.startswith(lits[i], p):
                ends[i][p] = _substitute_ends(out, p + len(lits[i]), limits[i])
                nxt.update(ends[i][p])
        if not nxt:
            return None
        starts.append(nxt)
    # Backward: good[i] = the starts of literal i from which the rest of ``out`` matches.
    last = len(out) - len(lits[n])
    good: list[set[int]] = [set() for _ in range(n + 1)]
    good[n] = {last} if last in starts[n] and out.startswith(lits[n], last) else set()
    for i in range(n - 1, -1, -1):
        good[i] = {p for p, es in ends[i].items() if any(e in good[i + 1] for e in es)}
    if 0 not in good[0]:
        return None
    subs, p = [], 0
    for i in range(n):
        q = p + len(lits[i])
        e = next(e for e in ends[i][p] if e in good[i + 1])
        subs.append(out[q:e])
        p = e
    return subs


def _template(item: MaskInput) -> tuple[list[str], list[int]]:
    """The text between the markers (one more than the markers, whitespace collapsed) and
    the most words each marker's substitute may have."""
    lits, limits, pos = [], [], 0
    for m in item.markers:
        lits.append(_ws(item.text[pos : m.start]))
        extra = 0 if m.label in GENERIC_LABELS or m.label == "NUMBER" else ENTITY_EXTRA_WORDS
        limits.append(max(1, len(MARKER_RE.findall(m.text))) + extra)
        pos = m.end
    lits.append(_ws(item.text[pos:]))
    lits[0], lits[-1] = lits[0].lstrip(), lits[-1].rstrip()
    return lits, limits


def viable(item: MaskInput, partial: str) -> bool:
    """Whether some continuation of ``partial`` (an output being generated) could pass
    ``validate``: False once it has left the input outside the markers for good.

    The forward pass of ``validate`` on a prefix, which may end inside a literal or inside
    a substitute still within its word limit. Where this says False, no continuation
    validates; where it says True, one may."""
    return _viable(_template(item), partial)


def _viable(template: tuple[list[str], list[int]], partial: str) -> bool:
    """``viable`` on a template already built: the search asks at every step."""
    out = _ws(partial).lstrip().rstrip("\ufffd")  # a character the last token cut in two: not yet known
    lits, limits = template
    n, starts = len(limits), {0}
    for i in range(n + 1):
        nxt: set[int] = set()
        for p in starts:
            rest = out[p:]
            if i == n or len(rest) <= len(lits[i]):  # the output ends inside literal i
                if lits[i].startswith(rest.rstrip() if i == n else rest):
                    return True
                continue
            if not rest.startswith(lits[i]):
                continue
            q = p + len(lits[i])
            sub = out[q:]
            if "[" not in sub and "]" not in sub and len(sub.split()) <= limits[i]:
                return True  # it ends inside substitute i
            nxt.update(e for e in _substitute_ends(out, q, limits[i]) if e < len(out))
        if not nxt:
            return False
        starts = nxt
    return False


def _substitute_ends(out: str, q: int, limit: int) -> list[int]:
    """Every e for which out[q:e] may stand for one marker: non-empty, no marker bracket,
    no outer whitespace, at most ``limit`` words. Shortest first. One pass: a beam's
    prefix is checked at every step of the search (``viable``)."""
    found: list[int] = []
    if q >= len(out) or out[q].isspace():
        return found
    words, gap = 0, True
    for e in range(q + 1, len(out) + 1):
        ch = out[e - 1]
        if ch in "[]":
            break
        space = ch.isspace()
        words += gap and not space
        if words > limit:
            break  # longer substitutes only get worse
        gap = space
        if not space:
            found.append(e)
    return found


def _ws(text: str) -> str:
    return re.sub(r"\s+", " ", text)


class InstructFiller(Filler):
    name = "instruct"

    def __init__(self, model: str = "smollm2-fill", beams: int = 8, fallback_model: str = "smollm2-135m",
                 infill: Callable[[str], InfillFiller] | None = None):
        self.model_name = model
        self.model, self.tok = _load(model)
        self.forward_path = kernels.pack_linears(self.model)  # same outputs, faster on most CPUs
        scheduler.share(self.model)  # concurrent requests' rows share passes: same words
        self.beams = beams
        self.fallback_model = fallback_model
        # The causal filler it falls back on, from the registry that built this one (filling's
        # get_filler, which shares one per model): passed in, so this file imports no registry.
        self._infill_of = infill or shared_infill
        self.stats: Counter = Counter()  # sentences generated / validated / sent to the infill filler
        self._stats_lock = threading.Lock()  # the app's concurrent requests share this filler

    def _count(self, what: str, n: int = 1) -> None:
        with self._stats_lock:
            self.stats[what] += n

    @torch.inference_mode()
    def generate(self, text: str, n: int | None = None, item: MaskInput | None = None) -> list[tuple[str, float]]:
        """Up to ``n`` completed sentences for masked ``text`` by beam search, with their
        log-probabilities, best first. ``item``: ``text`` with its markers merged (read
        from ``text`` when not given), for stopping a search that can no longer succeed."""
        n = n or self.beams
        return memo.reuse(("instruct", self.model_name, text, n), lambda: self._generate(text, n, item))

    def _generate(self, text: str, n: int, item: MaskInput | None = None) -> list[tuple[str, float]]:
        from transformers import StoppingCriteriaList

        ids = self.tok(prompt(text), return_tensors="pt", add_special_tokens=False)  # as training.examples.encode
        n_in = ids["input_ids"].shape[1]
        budget = len(self.tok(text, add_special_tokens=False)["input_ids"]) + 8 * text.count("[") + 8
        item = item or merge_consecutive(MaskInput.parse(text))
        hopeless = _Hopeless(item, self.tok, n_in, self._stop_ids())
        out = self.model.generate(
            **ids, past_key_values=self._prompt_cache(ids["input_ids"], n), max_new_tokens=budget, num_beams=n,
            num_return_sequences=n, do_sample=False, early_stopping=True, output_scores=True,
            return_dict_in_generate=True, eos_token_id=self._stop_ids(),
            stopping_criteria=StoppingCriteriaList([hopeless]),
            pad_token_id=self.tok.pad_token_id or self.tok.eos_token_id,
            length_penalty=0.0)  # sum of log-probs: beams of different length compare fairly
        self._count("stopped_hopeless", hopeless.fired)
        texts = self.tok.batch_decode(out.sequences[:, n_in:], skip_special_tokens=True)
        scores = out.sequences_scores.tolist() if out.sequences_scores is not None else [0.0] * len(texts)
        return [(t.split("\n")[0].strip(), s) for t, s in zip(texts, scores)]

    def _prompt_cache(self, input_ids: torch.Tensor, n: int):
        """The prompt's key/value cache, one copy per beam. The prompt is the same for every
        beam, and generate repeats it n times before its first pass: encoding it once and
        copying the cache does the same for 1/n of the work (0.77x the time of the whole
        generation at 8 beams). generate then runs the last prompt token and goes on."""
        if input_ids.shape[1] < 2:
            return None
        cache = self.model(input_ids=input_ids[:, :-1], use_cache=True, logits_to_keep=1).past_key_values
        cache.batch_repeat_interleave(n)
        return cache

    def _stop_ids(self) -> list[int]:
        # The response is one line: a newline ends it as surely as end-of-text does.
        ids = {self.tok.eos_token_id}
        for t in ("\n", "Ċ"):
            i = self.tok.convert_tokens_to_ids(t)
            if isinstance(i, int) and i != self.tok.unk_token_id:
                ids.add(i)
        return sorted(i for i in ids if i is not None)

    def fill(self, items: Sequence[MaskInput], *, method: Method = "top1", k: int = DEFAULT_K,
             seed: int = 0, keep: Container[str] | None = None, first_id: int | Sequence[int] = 0,
             type_check: cand_rules.TypeCheck | None = None, sampling: Sampling = DEFAULT_SAMPLING) -> list[Filled]:
        return [self._fill_one(it, method, k, seed, keep, n, type_check, sampling)
                for n, it in zip(item_ids(first_id, len(items)), items)]

    def _fill_one(self, item: MaskInput, method, k, seed, keep, item_id, type_check,
                  sampling: Sampling = DEFAULT_SAMPLING) -> Filled:
        merged = merge_consecutive(item)
        self._count("sentences")
        per_mask: list[Counter] = [Counter() for _ in merged.markers]
        beams = self.generate(item.text, max(self.beams, 1), merged)
        top = max((lp for _, lp in beams), default=0.0)  # exp(logp - top): no underflow to 0
        for out, logp in beams:
            subs = validate(merged, out)
            if subs is None:
                continue
            for t, (s, m) in enumerate(zip(subs, merged.markers)):
                if _acceptable(s, m.label):
                    per_mask[t][s] += math.exp(logp - top)
        if merged.markers and not any(per_mask):
            # No valid beam offered an acceptable word for any mask: the whole sentence goes
            # to the infill filler.
            self._count("fallback_infill")
            filled = self._infill().fill(
                [item], method=method, k=k, seed=seed, keep=keep, first_id=item_id, type_check=type_check,
                sampling=sampling)[0]
            filled.fallback = "infill"
            return filled
        self._count("generated")
        sentence = TopOnePath(merged)  # a mask infill fills is asked on the Top-1 path, as in infill
        prefixes = Prefixes()  # infill's scoring rows, for the next mask infill fills
        for t, m in enumerate(merged.markers):
            left, right, context, initial = sentence.gap(t)
            source = None
            if per_mask[t]:
                total = sum(per_mask[t].values())
                cands = [Candidate(w, p / total) for w, p in per_mask[t].most_common()]
            else:
                # The valid beams offered no acceptable word here (an entity mask where the
                # model wrote "the new clinic"): the infill filler proposes this mask's words,
                # seeing the LLM's words before it, and the fill says so. The LLM's words for
                # the other masks stay: before, the whole sentence went to infill, and on
                # every example sentence of the app the LLM's column showed infill's work.
                self._count("infill_masks")
                source = "infill"
                cands = self._infill().candidates(left, right, m.label, k, context, prefixes)
            if type_check and m.label not in GENERIC_LABELS and m.label != "NUMBER":
                cands = cand_rules.same_type(cands, left, right, m.label, initial, type_check)
            fallback = not cands
            if fallback:  # the tagger took none of them for an organisation: one is drawn
                cands = [Candidate(cand_rules.fallback_word(m.label, rng_for(seed, item_id, t)), 1.0)]
            pick, fb = choose(cands, method, k, rng_for(seed, item_id, t), keep, sampling)
            sentence.place(t, cands, pick, fallback or fb, source)
        return sentence.filled()

    def _infill(self):
        return self._infill_of(self.fallback_model)


class _Hopeless:
    """A stopping criterion for beam search: stop once every candidate beam has left the
    input for good (``viable`` is False, or it ended and fails ``validate``) and no beam
    has ended valid. Every later beam would descend from these, so the search could only
    end with no valid beam, and the sentence would go to the infill filler anyway: the
    result is the same, sooner. On the demo sentence ("Maria Kowalski flew from Chicago
    ...") every beam rewrites it ("He flew from New York to Los Angeles ... and live with"),
    and the generation takes 0.65-0.83x the time (bench/instruct_stop.py).

    Conservative by construction: it never stops a search in which a valid beam has ended
    (even one that beam search then drops), nor while any beam may still become valid."""

    def __init__(self, item: MaskInput, tok, n_prompt: int, stop_ids: Sequence[int]):
        self.item, self.tok, self.n_prompt, self.stop_ids = item, tok, n_prompt, set(stop_ids)
        self.template = _template(item)  # the same for every row at every step
        self.valid_ended = False
        self.fired = False

    def __call__(self, input_ids: torch.Tensor, scores=None, **kwargs) -> torch.Tensor:
        # [rows, n_prompt + generated]: this step's candidates. Every ended row is read: a
        # beam that ended valid must be seen, or the search could stop after it.
        running = []
        for row in input_ids[:, self.n_prompt :].tolist():
            end = next((j for j, t in enumerate(row) if t in self.stop_ids), None)
            text = self.tok.decode(row if end is None else row[:end], skip_special_tokens=True)
            if end is None and "\n" not in text:
                running.append(text)
            elif validate(self.item, text.split("\n")[0]) is not None:  # as _generate reads an ended beam
                self.valid_ended = True
        if not self.valid_ended and not any(_viable(self.template, text) for text in running):
            self.fired = True
        return torch.full((input_ids.shape[0],), self.fired, dtype=torch.bool, device=input_ids.device)


@functools.lru_cache(maxsize=2)
def _load(model: str):
    """A causal LM bundle or folder, or an adapter folder from finetune-llm (OUT/adapter)."""
    from pathlib import Path

    if (Path(model) / "adapter_config.json").exists():
        from recover_core.models.adapters import load_causal_adapter

        return load_causal_adapter(model, bundles.causal_lm)
    return bundles.load_causal(model)


def _acceptable(s: str, label: str) -> bool:
    """The shared rules for one word. Several words: a place must be a known place as a
    whole ('New York'), a person's first word a name ('Maria Lopez'); otherwise whole
    words of which the first passes the rules."""
    words = s.split()
    if len(words) == 1:
        return cand_rules.acceptable(s, label)
    if not all(cand_rules.ALPHA_RE.match(w) for w in words):
        return False
    if label in cand_rules.PLACE_LABELS:
        return s.lower() in lexicons.place_phrases()
    return cand_rules.acceptable(words[0], label)
