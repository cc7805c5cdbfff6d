"""finetune-llm's training examples: a sentence, masked as the techniques would mask it,
in the prompt the instruct filler uses, with the original sentence as the response.

The instruct filler (filling/instruct.py) asks the model to "Predict the [MASK] tokens"
of a masked sentence and trusts the answer only when it copies the sentence outside the
masks; so the model is trained on exactly that prompt (``instruct.prompt``), with the
loss on the response only. Batch i, masks included, depends only on (seed, epoch, i):
a resumed run sees the same batches without a saved generator.
"""
from __future__ import annotations

import random
from typing import Sequence

from recover_core.errors import RecoverError


def word_core(word: str) -> tuple[int, int]:
    """[start, end) of a whitespace token without its surrounding punctuation."""
    s, e = 0, len(word)
    while s < e and not word[s].isalnum():
        s += 1
    while e > s and not word[e - 1].isalnum():
        e -= 1
    return s, e


def mask_example(sentence: str, rng: random.Random, mask_prob: float = 0.15, max_masks: int = 4) -> str:
    """The sentence with a few words masked, as the masking techniques would mark them.

    Capitalised words inside the sentence and content words are chosen more often than
    function words, since those are what the techniques mask. Half of the sentences use
    class markers ([PERSON], [GPE], [NUMBER]) where a name list or digits say so."""
    from recover_core.data import lexicons

    tokens = sentence.split(" ")
    spans = [(i, *word_core(t)) for i, t in enumerate(tokens)]
    spans = [(i, s, e) for i, s, e in spans if e > s and tokens[i][s:e].replace("'", "").isalnum()]
    if not spans:
        return sentence
    weights = []
    for i, s, e in spans:
        w = tokens[i][s:e]
        weights.append(6.0 if i > 0 and w[:1].isupper() else 1.0 if w.lower() in lexicons.FUNCTION_WORDS else 3.0)
    n = min(max_masks, len(spans), max(1, round(mask_prob * len(tokens))))
    chosen: set[int] = set()
    while len(chosen) < n:
        chosen.add(rng.choices(range(len(spans)), weights=weights)[0])
    classes = rng.random() < 0.5
    for j in chosen:
        i, s, e = spans[j]
        w = tokens[i][s:e]
        marker = "[MASK]"
        if classes:
            if w.isdigit():
                marker = "[NUMBER]"
            elif w[:1].isupper() and w.lower() in lexicons.first_names():
                marker = "[PERSON]"
            elif w[:1].isupper() and w.lower() in lexicons.place_names():
                marker = "[GPE]"
        tokens[i] = tokens[i][:s] + marker + tokens[i][e:]
    return " ".join(tokens)


def encode(tok, masked: str, original: str, max_length: int) -> tuple[list[int], list[int]]:
    """(input ids, labels): the prompt's labels are -100, the response's are its ids + EOS."""
    from recover_core.filling.instruct import prompt

    p = tok(prompt(masked), add_special_tokens=False)["input_ids"]
    r = tok(original, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    ids = (p + r)[:max_length]
    labels = ([-100] * len(p) + r)[:max_length]
    return ids, labels


class InstructExamples:
    """Batch i of an epoch, masks included, depends only on (seed, epoch, i): a resumed run
    sees the same batches without saving a generator."""

    def __init__(self, sentences: list[str], tok, cfg):
        if not sentences:
            raise RecoverError("No training sentences.")
        self.sents, self.tok, self.cfg = sentences, tok, cfg
        self.batches_per_epoch = -(-len(sentences) // cfg.batch_size)

    def batch(self, step: int):
        epoch, j = divmod(step, self.batches_per_epoch)
        order = list(range(len(self.sents)))
        random.Random(f"{self.cfg.seed}:{epoch}").shuffle(order)
        rows = order[j * self.cfg.batch_size : (j + 1) * self.cfg.batch_size]
        return self.collate([self.example(r, epoch) for r in rows])

    def example(self, row: int, epoch: int) -> tuple[list[int], list[int]]:
        s = self.sents[row]
        masked = mask_example(s, random.Random(f"{self.cfg.seed}:{epoch}:{row}"), self.cfg.mask_prob,
                              self.cfg.max_masks)
        return encode(self.tok, masked, s, self.cfg.max_length)

    def collate(self, examples: Sequence[tuple[list[int], list[int]]]):
        import torch

        n = max(len(ids) for ids, _ in examples)
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
        ids = torch.full((len(examples), n), pad)  # [B, T], right-padded
        labels = torch.full((len(examples), n), -100)
        attn = torch.zeros((len(examples), n), dtype=torch.long)
        for b, (x, y) in enumerate(examples):
            ids[b, : len(x)], labels[b, : len(y)], attn[b, : len(x)] = torch.tensor(x), torch.tensor(y), 1
        return ids, attn, labels
