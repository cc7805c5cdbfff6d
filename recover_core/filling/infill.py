"""Infill with a causal LM (offline: SmolLM2): a stand-in for an MLM from a decoder-only model.

A causal LM only sees the left context, so candidates come in two passes:
1. propose: the most likely word-initial tokens after the left context, each
   extended greedily into a whole word (names are often several tokens:
   'St' + 'ephen'), then filtered by the same rules as every filler;
2. re-rank: each surviving word is scored by the likelihood of the sentence
   with it in place, so the right context counts ('... in Paris, France').
The left context is encoded once and its key/value cache shared by every candidate.
Along a sentence, each mask's left context is the previous mask's scoring row of the word
that won (the Top-1 path), so that row's cache and next-token scores stand in for the
left-context pass (``Prefixes``).
"""
from __future__ import annotations

import copy
import functools
import threading
from typing import Container, Sequence

import torch
from transformers import DynamicCache

from recover_core.models import bundles
from recover_core.filling import candidates as cand_rules, kernels, memo, scheduler
from recover_core.filling.base import (
    DEFAULT_K, DEFAULT_SAMPLING, Candidate, Filled, Filler, MaskInput, Method, Sampling, TopOnePath, choose,
    item_ids, merge_consecutive, rng_for,
)
from recover_core.text.spans import GENERIC_LABELS


class InfillFiller(Filler):
    name = "infill"

    def __init__(self, model: str = "smollm2-135m", n_first: int = 32, n_score: int = 16, max_pieces: int = 4):
        self.model_name = model
        self.model, self.tok = bundles.load_causal(model)
        self.forward_path = kernels.pack_linears(self.model)  # same outputs, faster on most CPUs
        scheduler.share(self.model)  # concurrent requests' rows share passes: same words
        self.n_first, self.n_score, self.max_pieces = n_first, n_score, max_pieces
        toks = self.tok.convert_ids_to_tokens(list(range(len(self.tok))))
        special = set(self.tok.all_special_ids)
        self._spaced = torch.tensor([t is not None and t.startswith("Ġ") and i not in special for i, t in enumerate(toks)])
        bare = [(t or "").lstrip("Ġ") for t in toks]
        self._alpha = torch.tensor([b.isalpha() for b in bare])
        self._digit = torch.tensor([b.isdigit() for b in bare])
        self._upper = torch.tensor([b[:1].isupper() for b in bare])
        # Plain text starts after an end-of-document token, not the chat template's <|im_start|>.
        doc = self.tok.convert_tokens_to_ids("<|endoftext|>")
        self._doc = doc if isinstance(doc, int) and doc != self.tok.unk_token_id else self.tok.eos_token_id

    @functools.lru_cache(maxsize=32)
    def _first_allowed(self, label: str, spaced: bool) -> torch.Tensor:
        kind = self._digit if label == "NUMBER" else self._alpha
        ok = kind & (self._spaced if spaced else ~self._spaced)
        if label not in GENERIC_LABELS and label != "NUMBER":
            ok = ok & self._upper  # names, places, organisations are capitalised
        return ok

    def _continues(self, label: str) -> torch.Tensor:
        return (self._digit if label == "NUMBER" else self._alpha) & ~self._spaced

    @torch.inference_mode()
    def fill(self, items: Sequence[MaskInput], *, method: Method = "top1", k: int = DEFAULT_K,
             seed: int = 0, keep: Container[str] | None = None, first_id: int | Sequence[int] = 0,
             type_check: cand_rules.TypeCheck | None = None, sampling: Sampling = DEFAULT_SAMPLING) -> list[Filled]:
        return [self._fill_one(merge_consecutive(it), method, k, seed, keep, n, type_check, sampling)
                for n, it in zip(item_ids(first_id, len(items)), items)]

    def _fill_one(self, item: MaskInput, method, k, seed, keep, item_id, type_check,
                  sampling: Sampling = DEFAULT_SAMPLING) -> Filled:
        sentence = TopOnePath(item)  # candidates come from the Top-1 path, for either method
        prefixes = Prefixes()  # this sentence's passes only: they hold its text
        for t, m in enumerate(item.markers):
            left, right, context, initial = sentence.gap(t)
            cands = self.candidates(left, right, m.label, k, context, prefixes)
            if type_check and cands and m.label not in GENERIC_LABELS and m.label != "NUMBER":
                cands = cand_rules.same_type(cands, left, right, m.label, initial, type_check)
            rng = rng_for(seed, item_id, t)
            fallback = False
            if not cands:
                cands, fallback = [Candidate(cand_rules.fallback_word(m.label, rng), 1.0)], True
            pick, fb = choose(cands, method, k, rng, keep, sampling)
            sentence.place(t, cands, pick, fallback or fb)
        return sentence.filled()

    @torch.inference_mode()
    def candidates(self, left: str, right: str, label: str, k: int, context: str | None = None,
                   prefixes: Prefixes | None = None) -> list[Candidate]:
        """Whole-word candidates for the gap between ``left`` and ``right``, best first.

        ``context`` is the whole sentence with the gap as ``___``, for the prompt proposals.
        ``prefixes``, the sentence's earlier scoring passes, only saves work: the
        candidates are the same without it."""
        return memo.reuse(("infill", self.model_name, left, right, label, k, context),
                          lambda: self._candidates(left, right, label, k, context, prefixes))

    def _candidates(self, left: str, right: str, label: str, k: int, context: str | None,
                    prefixes: Prefixes | None = None) -> list[Candidate]:
        # Digits are single tokens here and the space before a number is a token of
        # its own, so a number starts after that space; a word starts with it.
        number = label == "NUMBER"
        spaced = not number and (left.endswith(" ") or not left)
        sep = " " if spaced else ""
        prefix = [self._doc] + self.tok(left if number else left.rstrip(" "), add_special_tokens=False)["input_ids"]
        known = prefixes.get(prefix) if prefixes is not None else None
        if known is None:
            out = self.model(input_ids=torch.tensor([prefix]), use_cache=True, logits_to_keep=1)
            known = out.past_key_values, out.logits[0, -1].float().log_softmax(-1)
        past, logp0 = known  # the left context's cache; log p(next token): [V]

        allowed = self._first_allowed(label, spaced)
        firsts = logp0.masked_fill(~allowed, float("-inf")).topk(self.n_first).indices.tolist()
        if context is not None:
            firsts += self._prompt_firsts(context, label, sep, allowed, prefixes)
        firsts = [i for i in dict.fromkeys(firsts) if allowed[i] and logp0[i] > float("-inf")]
        if not firsts:
            return []
        words = self._extend(firsts, past, label)
        chosen = [w for w in dict.fromkeys(words) if cand_rules.acceptable(w, label)][: max(self.n_score, k)]
        if not chosen:
            return []
        score = self._sentence_scores(chosen, sep, right, prefix, past, logp0, prefixes)
        probs = score.softmax(0)
        return [Candidate(chosen[j], float(probs[j])) for j in probs.argsort(descending=True).tolist()]

    def _prompt_firsts(self, context: str, label: str, sep: str, allowed: torch.Tensor,
                       prefixes: Prefixes | None = None) -> list[int]:
        """First tokens of the instruction model's answer to 'fill in the blank': unlike the
        left context, the prompt shows the whole sentence ('The ___ was too hot to drink').

        The pass runs only on what follows the cached part: the instruction (once per
        label), or the previous mask's prompt up to where the two part (its sentence up to
        that mask, when the label is the same)."""
        ids = self._prompt_ids(label, context)
        head, past = self._prompt_head(label)
        start, cache = 0, None
        if ids[: len(head)] == list(head) and len(ids) > len(head):  # the instruction's cache, then the sentence
            start, cache = len(head), copy.deepcopy(past)
        if prefixes is not None and prefixes.prompt is not None:
            before, its_cache = prefixes.prompt
            n = _shared(ids, before)
            if start < n < len(ids):
                start, cache = n, _cut(its_cache, 0, n)
        out = self.model(input_ids=torch.tensor([ids[start:]]), past_key_values=cache, use_cache=True,
                         logits_to_keep=1)
        if prefixes is not None:
            prefixes.prompt = ids, out.past_key_values
        logits = out.logits[0, -1]
        out = []
        for i in logits.topk(self.n_first).indices.tolist():
            answer = self.tok.decode([i]).strip()
            if not answer.isalnum():
                continue
            forms = {answer, answer.lower()} if label in GENERIC_LABELS else {answer}
            for form in forms:  # the same word as it would start inside the sentence
                out.append(self.tok(sep + form, add_special_tokens=False)["input_ids"][0])
        return out

    def _prompt_ids(self, label: str, context: str) -> list[int]:
        msg = (f"Fill in the blank with {HINTS.get(label, 'one word')}. Reply with that word only.\n"
               f"Sentence: {context}")
        return self.tok.apply_chat_template([{"role": "user", "content": msg}], add_generation_prompt=True,
                                            tokenize=True, return_dict=True)["input_ids"]

    @functools.lru_cache(maxsize=16)
    def _prompt_head(self, label: str) -> tuple[tuple[int, ...], object]:
        """The prompt's tokens before the sentence (system text and instruction: about 40 of
        a prompt's 90), and their key/value cache, computed once per label: every mask's
        prompt pass then runs on the sentence only. The head is where the token ids of two
        different sentences part, so it never splits a token."""
        a, b = self._prompt_ids(label, "A"), self._prompt_ids(label, "Z")
        n = _shared(a, b)
        head = tuple(a[:n])
        with torch.inference_mode():
            return head, self.model(input_ids=torch.tensor([head]), use_cache=True, logits_to_keep=1).past_key_values

    def _extend(self, firsts: list[int], past, label: str) -> list[str]:
        """Grow each first token into a word, greedily, while the model continues the word.

        Only the words still growing run again: most first tokens are whole words
        ('ĠChicago'), so after one step the batch (and its cache) shrinks to the few that
        continue; each row's greedy path is its own, whoever else is in the batch. A word
        that no name, place or nationality list could accept ('Kow' for a person) stops
        growing: it will be refused whatever it grows into, so the candidates are the same."""
        pieces = [[i] for i in firsts]
        cont = self._continues(label)
        growing = [b for b, p in enumerate(pieces) if cand_rules.could_become(self.tok.decode(p).strip(), label)]
        if not growing:
            return [self.tok.decode(p).strip() for p in pieces]
        cache = _repeat(past, len(growing))
        last = torch.tensor([[firsts[b]] for b in growing])  # [m, 1]
        for _ in range(self.max_pieces - 1):
            step = self.model(input_ids=last, past_key_values=cache, use_cache=True)
            nxt = step.logits[:, -1].argmax(-1)  # [m]
            keep = []
            for b, tok_id in enumerate(nxt.tolist()):
                if cont[tok_id]:
                    pieces[growing[b]].append(tok_id)
                    if cand_rules.could_become(self.tok.decode(pieces[growing[b]]).strip(), label):
                        keep.append(b)
            if not keep:
                break
            cache = step.past_key_values
            if len(keep) < len(growing):
                cache.batch_select_indices(torch.tensor(keep))
            growing, last = [growing[b] for b in keep], nxt[keep][:, None]
        return [self.tok.decode(p).strip() for p in pieces]

    def _sentence_scores(self, words: list[str], sep: str, right: str, prefix: list[int], past,
                         logp0: torch.Tensor, prefixes: Prefixes | None = None) -> torch.Tensor:
        """log p(word + right | left) for each word: [n]. Shares the left context's cache.

        The model runs on a few candidates at a time (``_score_chunk``), and only the
        log-probabilities of the tokens that are there are kept: the full [n, S, V] logits
        and their log-softmax would take gigabytes at K = 50 with a long right context.
        Each row is kept in ``prefixes``: the next mask's left context is one of them."""
        if prefixes is not None:
            prefixes.clear()
        suffixes = [self.tok(sep + w + right, add_special_tokens=False)["input_ids"] for w in words]
        S = max(len(x) for x in suffixes)
        ids = torch.full((len(words), S), self._doc, dtype=torch.long)  # [n, S], right-padded
        real = torch.zeros((len(words), S), dtype=torch.bool)
        for j, x in enumerate(suffixes):
            ids[j, : len(x)] = torch.tensor(x)
            real[j, : len(x)] = True
        step = _score_chunk(S, len(self.tok))
        tok_lp = torch.cat([self._token_logps(ids[a : a + step], real[a : a + step], prefix, past, prefixes)
                            for a in range(0, len(words), step)])  # [n, S-1]: log p(token j+1)
        return logp0[ids[:, 0]] + (tok_lp * real[:, 1:]).sum(1)

    def _token_logps(self, ids: torch.Tensor, real: torch.Tensor, prefix: list[int], past,
                     prefixes: Prefixes | None = None) -> torch.Tensor:
        """log p(ids[:, j+1] | left, ids[:, :j+1]) for one chunk of candidates: [c, S-1]."""
        attn = torch.cat([torch.ones(len(ids), len(prefix), dtype=torch.long), real.long()], 1)
        out = self.model(input_ids=ids, past_key_values=_repeat(past, len(ids)), attention_mask=attn, use_cache=True)
        logp = out.logits.float().log_softmax(-1)  # [c, S, V]: at most SCORE_BUDGET elements
        if prefixes is not None:
            prefixes.add_rows(prefix, ids, real, out.past_key_values, logp)
        return logp[:, :-1].gather(-1, ids[:, 1:, None])[..., 0]


# The most logits (candidates x tokens x vocabulary) scored at once: 2**24 float32 values are
# 64 MB, and the log-softmax doubles that. SmolLM2's vocabulary is 49,152, so 16 candidates of
# 21 tokens go in one pass, and a 500-token right context one candidate at a time.
SCORE_BUDGET = 2**24


def _score_chunk(seq_len: int, vocab: int) -> int:
    """Candidates per scoring pass: as many as fit SCORE_BUDGET, at least one."""
    return max(1, SCORE_BUDGET // max(1, seq_len * vocab))


HINTS = {
    "PERSON": "a person's first name", "GPE": "the name of a city or country", "LOC": "the name of a place",
    "ORG": "the name of an organisation", "NORP": "a nationality", "FAC": "the name of a building",
    "NUMBER": "a number",
}


class Prefixes:
    """The last mask's scoring rows, each as a left context the next mask may read.

    Row j of a scoring pass is the left context, candidate j and the text up to the next
    mask ("... flew from" + " Chicago to" + " "). Once a candidate wins, the next mask's
    left context is that text, which the left-context pass would encode again: its token
    ids are the row's, without the last space token that comes before a word. The row's
    cache, cut there, and its next-token log-probabilities stand in for that pass. Looked
    up by token ids, so a left context that tokenizes otherwise (a capital at a sentence's
    start) is simply not found, and the pass runs. Only the last mask's rows are kept, and
    the last mask's fill-in-the-blank prompt, whose beginning the next one shares."""

    # Cached token rows kept at most (SmolLM2-135M: 46 kB each, so about 94 MB); a
    # sentence's 16 candidates with 20-40 tokens of context take a quarter of it.
    MAX_TOKENS = 2048

    def __init__(self):
        self._rows: dict[tuple[int, ...], tuple[object, int, int, torch.Tensor]] = {}
        self._tokens = 0
        self.prompt: tuple[list[int], object] | None = None  # the last fill-in-the-blank prompt and its cache

    def clear(self) -> None:
        self._rows.clear()
        self._tokens = 0

    def add_rows(self, prefix: list[int], ids: torch.Tensor, real: torch.Tensor, cache, logp: torch.Tensor) -> None:
        """Rows of one scoring pass: ``ids``/``real`` [c, S], ``logp`` [c, S, V]. A pass whose
        cache would take the kept rows past MAX_TOKENS (a long right context) is not kept."""
        rows = ids.shape[0] * (len(prefix) + ids.shape[1])
        if self._tokens + rows > self.MAX_TOKENS or not all(hasattr(x, "keys") for x in cache.layers):
            return
        self._tokens += rows
        for j, n in enumerate(real.sum(1).tolist()):
            row = prefix + ids[j, :n].tolist()
            for cut in (n, n - 1):  # the whole row, and the row before its last token
                if cut >= 1:  # a copy of one position's scores: a view would keep all of logp
                    self._rows[tuple(row[: len(prefix) + cut])] = (cache, j, len(prefix) + cut, logp[j, cut - 1].clone())

    def get(self, prefix: list[int]):
        """(the cache of one row cut to ``prefix``, log p(next token) [V]), or None."""
        found = self._rows.get(tuple(prefix))
        if found is None:
            return None
        cache, j, n, logp = found
        return _cut(cache, j, n), logp


def _cut(cache, j: int, n: int) -> DynamicCache:
    """Row ``j`` of a cache, its first ``n`` positions: a cache of its own, [1, heads, n, head_dim] per layer."""
    out = DynamicCache()
    for i, layer in enumerate(cache.layers):
        out.update(layer.keys[j : j + 1, :, :n].clone(), layer.values[j : j + 1, :, :n].clone(), i)
    return out


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading token ids ``a`` and ``b`` have in common."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _repeat(past, n: int):
    c = copy.deepcopy(past)
    c.batch_repeat_interleave(n)
    return c


_SHARED_LOCK = threading.Lock()


@functools.lru_cache(maxsize=8)
def _shared_fillers(model: str) -> InfillFiller:
    return InfillFiller(model)


def shared(model: str) -> InfillFiller:
    """One infill filler per model for all who ask: the registry (``get_filler``) and the
    instruct filler's fallback, so a model is loaded once, built once even when two requests
    ask at the same moment."""
    with _SHARED_LOCK:
        return _shared_fillers(model)
