"""Top-1 / Top-K filling with any masked LM (vats2024 §3.2), batched across sentences.

Left to right, one mask at a time: step t fills the t-th mask of every sentence
in the batch, so a batch of B sentences with at most T masks costs T forward
passes instead of B*T. The MLM head (hidden -> 30k-50k logits) is the single
largest matrix in a small encoder, so it runs only at the mask being filled.
Filled words are written back as token ids, never re-tokenized: candidates are
whole-word vocabulary entries, so the id is the word.

The forward pass is ``fastpath``'s where the model has the BERT layout (the faster
of oneDNN's and PyTorch's products on this CPU, products on real tokens only, never on
padding, last layer at the masks only; 2.3x the model's own on MiniLM before padding was
left out, 2 cores of an AVX-512 EPYC), else the model's own. The candidate
rules are one [V] table per mask kind, applied to all rows of a step at once.
bench/fill_throughput.py measures all of this.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Container, Sequence

import torch

from recover_core.models import bundles
from recover_core.filling import candidates as cand_rules
from recover_core.filling import fastpath
from recover_core.filling.base import (
    DEFAULT_K, DEFAULT_SAMPLING, Candidate, Fill, Filled, Filler, MaskInput, Method, at_sentence_start, choose,
    Sampling, item_ids, merge_consecutive, rng_for, surface,
)
from recover_core.text.spans import GENERIC_LABELS, apply, shift


@dataclass
class _Vocab:
    """Per-id word forms and which ids are whole words (tokenizer family aware)."""

    words: list[str]
    word_start: torch.Tensor  # [V] bool: begins a word after a space
    text_start: torch.Tensor  # [V] bool: may begin the text (BPE drops the space marker there)

    @classmethod
    def build(cls, tok) -> "_Vocab":
        toks = tok.convert_ids_to_tokens(list(range(len(tok))))
        special = set(tok.all_special_ids)
        bpe = sum(t.startswith("Ġ") for t in toks[:3000] if t) > 100
        sp = not bpe and sum(t.startswith("▁") for t in toks[:3000] if t) > 100
        words, start, first = [], [], []
        for i, t in enumerate(toks):
            t = t or ""
            if bpe or sp:
                marker = "Ġ" if bpe else "▁"
                spaced = t.startswith(marker)
                w = t[1:] if spaced else t
                start.append(spaced and i not in special)
                first.append(i not in special)  # at text start a word has no space marker
            else:  # WordPiece: continuation pieces carry '##'
                w = t
                ok = not t.startswith("##") and i not in special
                start.append(ok)
                first.append(ok)
            words.append(w)
        return cls(words, torch.tensor(start), torch.tensor(first))


def split_head(model) -> tuple[Callable, Callable]:
    """(encoder, head) so that the head can run on a few positions only."""
    if hasattr(model, "cls"):  # BERT family
        return model.base_model, model.cls
    if hasattr(model, "lm_head"):  # RoBERTa family
        return model.base_model, model.lm_head
    if hasattr(model, "vocab_projector"):  # DistilBERT
        m = model
        return m.base_model, lambda h: m.vocab_projector(m.vocab_layer_norm(m.activation(m.vocab_transform(h))))
    raise TypeError(f"{type(model).__name__}: no separable MLM head")


class MLMFiller(Filler):
    name = "mlm"

    def __init__(self, model: str, batch_size: int = 64):
        self.model_name = model
        self.model, self.tok = bundles.load_mlm(model)
        self.encoder, self.head = split_head(self.model)
        self._fast = fastpath.logits_at(self.model)
        self.vocab = _Vocab.build(self.tok)
        self.batch_size = batch_size

    @functools.lru_cache(maxsize=32)
    def _allowed(self, label: str, text_start: bool) -> torch.Tensor:
        """[V] bool: ids that may fill a mask with this label at this position."""
        base = self.vocab.text_start if text_start else self.vocab.word_start
        ok = torch.tensor([cand_rules.acceptable(w, label) for w in self.vocab.words])
        return base & ok

    def _encode(self, item: MaskInput) -> list[int]:
        text = apply(item.text, item.markers, [self.tok.mask_token] * len(item.markers))
        return self.tok(text, truncation=True, max_length=512)["input_ids"]

    @torch.inference_mode()
    def fill(self, items: Sequence[MaskInput], *, method: Method = "top1", k: int = DEFAULT_K,
             seed: int = 0, keep: Container[str] | None = None, first_id: int | Sequence[int] = 0,
             type_check: cand_rules.TypeCheck | None = None, sampling: Sampling = DEFAULT_SAMPLING,
             one_pass: bool = False) -> list[Filled]:
        """``one_pass``: every mask of a sentence from one forward pass, not left to right
        (vats2024's order): faster by about the number of masks, but a mask no longer sees
        the substitutes chosen before it."""
        items = [merge_consecutive(it) for it in items]
        item_id = item_ids(first_id, len(items))
        ids, batches = self.plan(items)
        chosen: list[list[tuple[int, list[Candidate], bool]]] = [[] for _ in items]
        for rows in batches:
            self._fill_batch(rows, items, ids, chosen, method, k, seed, keep, item_id, type_check, sampling,
                             one_pass)
        return [self._decode(it, ch) for it, ch in zip(items, chosen)]

    @property
    def forward_path(self) -> str:
        """Which forward pass runs, for benchmarks and bug reports."""
        return self._fast.description if self._fast is not None else "the model's own"

    def logits_at(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """[b, L] ids and mask, [b] positions -> [b, V] logits at those positions."""
        if self._fast is not None:
            return self._fast(input_ids, attention_mask, pos)
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
        return self.head(hidden[torch.arange(len(pos)), pos])

    def hidden_at(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, rows: torch.Tensor,
                  pos: torch.Tensor) -> torch.Tensor:
        """[b, L] ids and mask, [n] rows and positions -> [n, H] hidden states (for ``head_of``)."""
        if self._fast is not None:
            return self._fast.hidden(input_ids, attention_mask, rows, pos)
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask)[0][rows, pos]

    def head_of(self, hidden: torch.Tensor) -> torch.Tensor:
        return self._fast.head(hidden) if self._fast is not None else self.head(hidden)

    def plan(self, items: Sequence[MaskInput]) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids per (merged) item, and the batches as lists of item indices."""
        ids = [self._encode(it) for it in items]
        # Sorting by length keeps padding small; by mask count, it keeps late steps full.
        order = sorted(range(len(items)), key=lambda i: (len(ids[i]), len(items[i].markers)))
        return ids, [order[b : b + self.batch_size] for b in range(0, len(order), self.batch_size)]

    def _fill_batch(self, rows, items, ids, chosen, method, k, seed, keep, item_id, type_check=None,
                    sampling: Sampling = DEFAULT_SAMPLING, one_pass: bool = False) -> None:
        mask_id = self.tok.mask_token_id
        lens = torch.tensor([len(ids[i]) for i in rows])
        input_ids = torch.full((len(rows), int(lens.max())), self.tok.pad_token_id, dtype=torch.long)  # [B, L]
        for r, i in enumerate(rows):
            input_ids[r, : len(ids[i])] = torch.tensor(ids[i])
        attn = (torch.arange(input_ids.shape[1])[None, :] < lens[:, None]).long()
        # Mask positions per row, in text order; truncation may have cut some off.
        positions = [(input_ids[r] == mask_id).nonzero().flatten().tolist() for r in range(len(rows))]
        # One [V] row of allowed ids per kind of mask (label, text start), picked per row and step.
        kinds: dict[tuple[str, bool], int] = {}
        kind = [[kinds.setdefault((m.label, m.start == 0), len(kinds)) for m in items[i].markers[: len(p)]]
                for i, p in zip(rows, positions)]
        table = torch.stack([self._allowed(*key) for key in kinds]) if kinds else None  # [n_kinds, V]
        n_steps = [len(p) for p in positions]
        at: dict[tuple[int, int], int] = {}
        if one_pass:  # one encoder pass for every mask; the head runs per step, on that step's masks
            at = {(r, t): j for j, (r, t) in enumerate((r, t) for r in range(len(rows)) for t in range(n_steps[r]))}
            if at:
                hidden = self.hidden_at(input_ids, attn, torch.tensor([r for r, _ in at]),
                                        torch.tensor([positions[r][t] for r, t in at]))  # [n_masks, H]
        for t in range(max(n_steps)):
            active = [r for r in range(len(rows)) if n_steps[r] > t]
            idx = torch.tensor(active)
            sub_len = int(lens[idx].max())
            pos = torch.tensor([positions[r][t] for r in active])
            if one_pass:
                logits = self.head_of(hidden[torch.tensor([at[r, t] for r in active])])
            else:
                logits = self.logits_at(input_ids[idx, :sub_len], attn[idx, :sub_len], pos)
            probs = logits.float().softmax(-1)  # [b, V]
            allowed = table[torch.tensor([kind[r][t] for r in active])]  # [b, V]
            top = probs.masked_fill(~allowed, -1.0).topk(max(k, 1))
            values, indices = top.values.tolist(), top.indices.tolist()
            cands_of = [[Candidate(self.vocab.words[v], s) for v, s in zip(indices[j], values[j]) if s >= 0]
                        for j in range(len(active))]
            if type_check is not None:  # every row's entity mask of this step in one tagger call
                asks = [(j, self._type_ask(items[rows[r]], t, chosen[rows[r]], cands_of[j]))
                        for j, r in enumerate(active) if cands_of[j]]
                asks = [(j, a) for j, a in asks if a is not None]
                for (j, _), kept in zip(asks, cand_rules.same_type_many([a for _, a in asks], type_check)):
                    cands_of[j] = kept
            picked = []
            for j, r in enumerate(active):
                i, cands = rows[r], cands_of[j]
                if not cands:  # nothing acceptable at all: fall back to any whole word
                    v = int(probs[j].masked_fill(~self.vocab.word_start, -1.0).argmax())
                    cands, pick, fb = [Candidate(self.vocab.words[v], float(probs[j, v]))], 0, True
                    vid = v
                    label = items[i].markers[t].label
                    if label in cand_rules.DRAWN_WHEN_NONE:  # a drawn organisation or facility;
                        # the later masks still see the model's own word (one id for a phrase)
                        cands = [Candidate(cand_rules.fallback_word(label, rng_for(seed, item_id[i], t)), 1.0)]
                else:
                    word_id: dict[str, int] = {}
                    for v in indices[j]:  # BPE may spell one word twice: keep the better-ranked id
                        word_id.setdefault(self.vocab.words[v], v)
                    pick, fb = choose(cands, method, k, rng_for(seed, item_id[i], t), keep, sampling)
                    vid = word_id[cands[pick].word]
                picked.append(vid)
                chosen[i].append((pick, cands, fb))
            input_ids[idx, pos] = torch.tensor(picked)

    def _type_ask(self, item: MaskInput, t: int, done, cands: list[Candidate]):
        """What the type check needs for mask ``t`` (candidates, text left and right of it as
        filled so far, label, sentence start), or None where there is no type to check."""
        m = item.markers[t]
        if m.label in GENERIC_LABELS or m.label == "NUMBER":
            return None
        words = [surface(c[p].word, mk.label, at_sentence_start(item.text, mk.start))
                 for mk, (p, c, _) in zip(item.markers[:t], done)]
        left = apply(item.text[: m.start], item.markers[:t], words)
        nxt = item.markers[t + 1].start if t + 1 < len(item.markers) else len(item.text)
        return cands, left, item.text[m.end : nxt], m.label, at_sentence_start(item.text, m.start)

    def _decode(self, item: MaskInput, choices) -> Filled:
        markers = item.markers[: len(choices)]  # masks beyond truncation stay as they are
        words = [surface(c[p].word, m.label, at_sentence_start(item.text, m.start))
                 for m, (p, c, _) in zip(markers, choices)]
        text = apply(item.text, markers, words)
        spans = shift(markers, item.text, words)
        fills = [Fill(s.start, s.end, m.label, s.text, c, fb)
                 for s, m, (_, c, fb) in zip(spans, markers, choices)]
        return Filled(text, fills)
