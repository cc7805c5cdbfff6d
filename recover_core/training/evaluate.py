"""How a fine-tuned model is measured: on held-out sentences it never trained on.

The held-out set is the hash split of the registered corpora (corpora.heldout_mix),
equal numbers from news, wiki, fortunes and scripture. A masked LM is scored by masked-
word accuracy (top-1 and top-10, overall and on content words), before, during and after
finetune-mlm and by ``evaluate-mlm``; an instruction-tuned causal LM by its response
loss (``heldout_loss``). evaluate-fillers (training/evaluate_fillers.py) uses the same sentences.
"""
from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from recover_core.text import validation
from recover_core.errors import RecoverError
from recover_core.training.config import EVAL_CORPORA


@dataclass(frozen=True)
class _Item:
    ids: list[int]
    pos: int  # the masked token
    gold: int
    content: bool


def heldout_for(cfg) -> list[str]:
    """A run's held-out sentences: ``cfg.heldout_file`` where given (a machine without the
    corpora's packages), else the corpora's held-out mix."""
    path = getattr(cfg, "heldout_file", None)
    if path is None:
        return heldout_sentences()
    return validation.read_lines(path, "Held-out file")


def heldout_sentences(corpora: Sequence[str] = EVAL_CORPORA) -> list[str]:
    """The default held-out set: equal numbers of held-out sentences from each corpus."""
    from recover_core.data import corpora as C

    for c in corpora:
        if c not in C.CORPORA:
            raise RecoverError(f"Unknown corpus {c!r}. Known: {', '.join(C.CORPORA)}.")
    return C.heldout_mix(tuple(corpora))


def _items(sentences: Sequence[str], tok, n_items: int, seed: int, max_length: int = 128) -> list[_Item]:
    """One masked word per sentence, for up to n_items sentences chosen by a seeded hash.

    Only words that are one vocabulary entry (and have a letter or digit) are eligible:
    then the gold answer is one id and top-k over the vocabulary is well defined."""
    from recover_core.data.lexicons import FUNCTION_WORDS

    order = sorted(set(sentences), key=lambda s: hashlib.sha1(f"{seed}:{s}".encode()).hexdigest())
    out: list[_Item] = []
    for s in order:
        if len(out) >= n_items:
            break
        enc = tok(s, truncation=True, max_length=max_length)
        ids, words = enc["input_ids"], enc.word_ids()
        pieces: dict[int, list[int]] = {}
        for p, w in enumerate(words):
            if w is not None:
                pieces.setdefault(w, []).append(p)
        eligible = [ps[0] for ps in pieces.values()
                    if len(ps) == 1 and any(ch.isalnum() for ch in tok.decode([ids[ps[0]]]))]
        if not eligible:
            continue
        pos = random.Random(f"{seed}:{s}").choice(eligible)
        word = tok.decode([ids[pos]]).strip()  # without BPE's space marker
        masked = list(ids)
        masked[pos] = tok.mask_token_id
        out.append(_Item(masked, pos, ids[pos], word.isalpha() and word.lower() not in FUNCTION_WORDS))
    return out


def unwrap(model):
    """The transformers model under a peft wrapper (LoRA layers stay active in it)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _load_any(model_or_folder, tokenizer=None):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    if isinstance(model_or_folder, (str, Path)):
        folder = Path(model_or_folder)
        if (folder / "adapter_config.json").exists():
            from recover_core.models.adapters import load_mlm_adapter

            return load_mlm_adapter(folder)
        from recover_core.models import bundles

        b = bundles.get(str(model_or_folder))
        if b.kind != "mlm":
            raise RecoverError(f"{model_or_folder!s} is a {b.kind} model; this evaluates masked LMs.")
        src = b.source()
        return AutoModelForMaskedLM.from_pretrained(src).eval(), AutoTokenizer.from_pretrained(src)
    if tokenizer is None:
        raise RecoverError("evaluate_mlm: pass the tokenizer with a model object.")
    return model_or_folder, tokenizer


def evaluate_mlm(model_or_folder: Any, sentences: Sequence[str] | None = None, n_items: int = 1000,
                 seed: int = 0, *, tokenizer=None, batch_size: int = 64) -> dict:
    """Held-out masked-word accuracy: top-1 and top-10, overall and on content words.

    ``model_or_folder``: a model folder, a registered name, an adapter folder, or a model
    object (then give ``tokenizer``). ``sentences`` default to heldout_sentences().
    A content word is alphabetic and not in lexicons.FUNCTION_WORDS."""
    import torch

    from recover_core.filling.mlm import split_head

    model, tok = _load_any(model_or_folder, tokenizer)
    items = _items(heldout_sentences() if sentences is None else sentences, tok, n_items, seed)
    if not items:
        raise RecoverError("No held-out sentence has a single-piece word to mask.")
    encoder, head = split_head(unwrap(model))
    dev = next(model.parameters()).device  # a model training on a GPU is evaluated there
    special = torch.tensor(sorted(set(tok.all_special_ids)), device=dev)
    was_training = model.training
    model.eval()
    hits1, hits10 = [], []
    with torch.inference_mode():
        for b in range(0, len(items), batch_size):
            batch = items[b : b + batch_size]
            ids, attn = (t.to(dev) for t in pad([it.ids for it in batch], tok.pad_token_id))
            hidden = encoder(input_ids=ids, attention_mask=attn)[0]
            logits = head(hidden[torch.arange(len(batch)), torch.tensor([it.pos for it in batch])]).float()
            logits[:, special] = -math.inf  # [CLS], [MASK], ... are never the answer
            top = logits.topk(10).indices.cpu()
            gold = torch.tensor([it.gold for it in batch])[:, None]
            hits1 += (top[:, :1] == gold).any(1).tolist()
            hits10 += (top == gold).any(1).tolist()
    model.train(was_training)
    content = [it.content for it in items]

    def share(hits, keep) -> float:
        sel = [h for h, k in zip(hits, keep) if k]
        return sum(sel) / len(sel) if sel else float("nan")

    everything = [True] * len(items)
    return {"items": len(items), "top1": share(hits1, everything), "top10": share(hits10, everything),
            "content_items": sum(content), "content_top1": share(hits1, content),
            "content_top10": share(hits10, content)}


def pad(seqs: Sequence[Sequence[int]], pad_id: int):
    """(ids, attention mask), right-padded to the longest sequence."""
    import torch

    n = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), n), pad_id, dtype=torch.long)
    attn = torch.zeros((len(seqs), n), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        attn[i, : len(s)] = 1
    return ids, attn


def format_eval(r: dict) -> str:
    return (f"{'':10s}{'items':>7s}{'top-1':>8s}{'top-10':>8s}\n"
            f"{'overall':10s}{r['items']:7d}{100 * r['top1']:7.1f}%{100 * r['top10']:7.1f}%\n"
            f"{'content':10s}{r['content_items']:7d}{100 * r['content_top1']:7.1f}%{100 * r['content_top10']:7.1f}%")


def heldout_loss(model, tok, sentences: Sequence[str], cfg) -> float:
    """Mean response cross-entropy of an instruction-tuned causal LM over held-out prompts
    (masks drawn with a fixed seed); ``cfg``: an LLMConfig."""
    import torch

    from recover_core.training.examples import InstructExamples

    ex = InstructExamples(list(sentences), tok, cfg)
    total, n = 0.0, 0
    model.eval()
    with torch.inference_mode():
        for b in range(0, len(sentences), cfg.batch_size):
            ids, attn, labels = ex.collate([ex.example(r, -1) for r in range(b, min(b + cfg.batch_size, len(sentences)))])
            logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()  # [B, T-1, V]
            tgt = labels[:, 1:]
            loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tgt, ignore_index=-100, reduction="sum")
            total, n = total + loss.item(), n + int((tgt != -100).sum())
    model.train()
    return total / max(n, 1)
