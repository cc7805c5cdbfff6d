"""The full grid of vats2024 §4: dataset x masking x method -> obfuscated train set ->
adapted LM -> per-word perplexity on the clean test set, written as a tidy CSV.

    python -m recover_core experiment --config assets/experiments/cpu.toml

Every cell's result is saved (atomically) as soon as it is known, under the cache, so a
killed run picks up at the first unfinished cell; obfuscated corpora and the pretrained
LM are cached too. The CSV is rewritten from all finished cells at the end.

Methods: ``oracle``, ``baseline0``, ``baseline1`` (lm/train.py), and fillers written
``kind:model:top1|topk`` (``mlm:minilm-wiki:topk``, ``instruct:smollm2-fill:top1``, ...).
``mlm-ft:model:topk`` is vats2024's FT: the MLM is first fine-tuned on this cell's own
obfuscation corpus, its masks filled by the MLM itself, then it fills that corpus.
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

from recover_core.errors import RecoverError

BASELINES = ("oracle", "baseline0", "baseline1")
FT_KIND = "mlm-ft"  # vats2024 §3.2 "Fine-Tuning", per cell
MASK_FREE = "oracle"  # the one condition that does not depend on the masking


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
    seed: int = 0
    batch_size: int = 32
    lr: float = 1e-3
    adapt_lr: float = 3e-4
    bf16: bool = True
    type_check: bool = False  # the NER type check per candidate costs more than the fill itself
    ft_steps: int = 200  # mlm-ft: LoRA steps on the cell's filled obfuscation corpus
    ft_lora_r: int = 16
    output: str = "precomputed/ours/grid.csv"
    threads: int | None = None

    @property
    def scale(self) -> str:
        return (f"LM {self.preset}; pretrain {self.pretrain_corpus} {self.pretrain_epochs:g} ep; adapt "
                f"{self.adapt_epochs:g} ep on <= {self.max_train} train sentences; test <= {self.max_test}")


def settings_key(cfg: ExperimentConfig) -> str:
    """A hash of every setting that changes a result (not the output path or threads), and
    of the shipped filler adapters, so retraining one invalidates its cached fills."""
    from dataclasses import asdict

    from recover_core import env

    settings = {k: v for k, v in asdict(cfg).items() if k not in ("name", "output", "threads")}
    adapters = sorted((p.parent.name, hashlib.sha1(p.read_bytes()).hexdigest())
                      for p in env.assets_dir().glob("*/adapter_model.safetensors"))
    return hashlib.sha1(json.dumps([settings, adapters], sort_keys=True).encode()).hexdigest()[:10]


def load_config(path: Path) -> ExperimentConfig:
    if not path.is_file():
        raise RecoverError(f"Config {str(path)!r} does not exist.")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise RecoverError(f"{path} is not valid TOML: {e}") from None
    flat = {**raw.get("grid", {}), **raw.get("lm", {}), **raw.get("output", {})}
    flat.setdefault("name", path.stem)
    known = set(ExperimentConfig.__dataclass_fields__)
    unknown = sorted(set(flat) - known)
    if unknown:
        raise RecoverError(f"{path}: unknown setting(s) {', '.join(unknown)}. Known: {', '.join(sorted(known))}.")
    for key in ("datasets", "maskings", "methods"):
        if not flat.get(key):
            raise RecoverError(f"{path}: [grid] needs a non-empty list {key!r}.")
        flat[key] = tuple(flat[key])
    cfg = ExperimentConfig(**flat)
    _check(cfg)
    return cfg


def _check(cfg: ExperimentConfig) -> None:
    from recover_core import corpora
    from recover_core.filling import KINDS
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
    for m in cfg.methods:
        if m in BASELINES:
            continue
        kind, _, rest = m.partition(":")
        model, _, how = rest.rpartition(":")
        kinds = (*KINDS, FT_KIND)
        if kind not in kinds or not model or how not in ("top1", "topk"):
            raise RecoverError(f"Method {m!r} is not one of {', '.join(BASELINES)} or kind:model:top1|topk "
                               f"(kinds: {', '.join(kinds)}).")
    if cfg.preset not in PRESETS:
        raise RecoverError(f"Unknown LM preset {cfg.preset!r}. Known: {', '.join(PRESETS)}.")


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


def cells(cfg: ExperimentConfig) -> list[tuple[str, str, str]]:
    """(dataset, masking, method); Oracle once per dataset (masking '')."""
    out = []
    for d in cfg.datasets:
        if MASK_FREE in cfg.methods:
            out.append((d, "", MASK_FREE))
        out += [(d, m, meth) for m in cfg.maskings for meth in cfg.methods if meth != MASK_FREE]
    return out


class Runner:
    def __init__(self, cfg: ExperimentConfig, command: str = "", progress: bool = True, root: Path | None = None):
        from recover_core import env

        self.cfg, self.command, self.progress = cfg, command, progress
        # Cached cells and corpora are only valid for the settings that made them: the folder
        # is keyed by those settings, so a smoke run at another scale never leaks into this one.
        self.root = (root or env.cache_dir() / "experiments") / f"{cfg.name}-{settings_key(cfg)}"
        self.root.mkdir(parents=True, exist_ok=True)
        self._splits: dict[str, tuple[list[str], list[str]]] = {}
        self._masked: dict[tuple[str, str], list] = {}
        self._pretrained = None

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

    def train_text(self, dataset: str, masking: str, method: str) -> tuple[list[str], dict]:
        """The train sentences the LM adapts on for this cell, and facts about them."""
        if method == MASK_FREE:
            return self.split(dataset)[0], {}
        masked, keep = self.masked(dataset, masking)
        if method in ("baseline0", "baseline1"):
            return [m.masked for m in masked], {}
        path = self.cell_path(dataset, masking, method).parent.parent / "corpora" / \
            self.cell_path(dataset, masking, method).with_suffix(".txt").name
        facts_path = path.with_suffix(".json")
        if path.exists() and facts_path.exists():
            return path.read_text(encoding="utf-8").split("\n"), json.loads(facts_path.read_text())
        texts, facts = self._fill(dataset, masking, method)
        _atomic_write(path, "\n".join(texts))
        _atomic_write(facts_path, json.dumps(facts))
        return texts, facts

    def _fill(self, dataset: str, masking: str, method: str) -> tuple[list[str], dict]:
        from tqdm import tqdm

        from recover_core import bundles, quality
        from recover_core.filling import MaskInput, get_filler
        from recover_core.filling.candidates import ner_type_check

        masked, keep = self.masked(dataset, masking)
        desc = f"{dataset}/{masking}"
        kind, _, rest = method.partition(":")
        model, _, how = rest.rpartition(":")
        if kind == FT_KIND:
            kind, model = "mlm", self.finetuned(dataset, masking, model, how)
        filler = get_filler(kind, model)
        check = ner_type_check(bundles.load_ner("spacy-md")) if self.cfg.type_check else None
        todo = [i for i, m in enumerate(masked) if m.markers]
        texts = [m.masked for m in masked]
        leaks = fills = 0
        bs = 64 if kind == "mlm" else 8
        for b in tqdm(range(0, len(todo), bs), desc=f"fill {desc} {method}", leave=False, disable=not self.progress):
            idx = todo[b : b + bs]
            out = filler.fill([MaskInput(masked[i].masked, masked[i].markers) for i in idx], method=how,
                              k=self.cfg.k, seed=self.cfg.seed, keep=keep, first_id=b, type_check=check)
            for i, f in zip(idx, out):
                texts[i] = f.text
                fills += len(f.fills)
                leaks += quality.leaks(f, quality.originals_per_fill(masked[i].original, masked[i].spans, f))
        return texts, {"fills": fills, "leaks": leaks}

    def finetuned(self, dataset: str, masking: str, model: str, how: str) -> str:
        """vats2024's FT for one cell: ``model`` fine-tuned (LoRA) on the cell's obfuscation
        corpus after ``model`` filled its masks (Top-1 or Top-K, as the cell then fills).
        It never sees the originals. Returns the merged model's folder (cached)."""
        from recover_core.filling.finetune import FinetuneConfig, _checkpoint_dir, finetune_mlm

        name = re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{dataset}__{masking}__{Path(model).name}__{how}")
        out = self.root / "ft" / name
        if (out / "model" / "config.json").exists():
            return str(out / "model")
        train_file = out.parent / f"{name}.txt"
        _atomic_write(train_file, "\n".join(m.masked for m in self.masked(dataset, masking)[0]) + "\n")
        c = self.cfg
        finetune_mlm(FinetuneConfig(
            out=out, model=model, train_file=train_file, mode="filled", fill_method=how, k=c.k, lora_r=c.ft_lora_r,
            steps=c.ft_steps, bf16=c.bf16, seed=c.seed, eval_every=0, eval_items=200, save_every=max(c.ft_steps, 1),
            quiet=not self.progress, resume=_checkpoint_dir(out) is not None,  # a killed FT run goes on
            command=f"experiment {c.name}: FT for {dataset}/{masking}"))
        return str(out / "model")

    def pretrained(self):
        """The generic LM (vats2024: WikiText-103; here the corpus named in the config), cached."""
        import torch

        from recover_core.lm import tokenizer as T
        from recover_core.lm.model import PRESETS
        from recover_core.lm.train import TrainConfig, new_model, train

        if self._pretrained is not None:
            return self._pretrained
        tok = T.load()
        c = self.cfg
        key = hashlib.sha1(json.dumps([c.preset, c.pretrain_corpus, c.pretrain_epochs, c.seed, c.lr, c.batch_size,
                                       c.bf16]).encode()).hexdigest()[:12]
        path = self.root.parent / "pretrained" / f"{c.preset}-{c.pretrain_corpus}-{key}.pt"
        torch.manual_seed(c.seed)
        model = new_model(PRESETS[c.preset], tok)
        if path.exists() and path.with_suffix(".json").exists():  # the stats are written first
            model.load_state_dict(torch.load(path, weights_only=True))
            stats = json.loads(path.with_suffix(".json").read_text())
        else:
            from recover_core import corpora

            sents = _usable(corpora.split(c.pretrain_corpus)[0])
            stats = train(model, tok, sents, TrainConfig(epochs=c.pretrain_epochs, batch_size=c.batch_size, lr=c.lr,
                                                         seed=c.seed, bf16=c.bf16),
                          desc=f"pretrain {c.pretrain_corpus}", progress=self.progress)
            stats["sentences"] = len(sents)
            _atomic_write(path.with_suffix(".json"), json.dumps(stats))
            tmp = path.with_suffix(".tmp")
            torch.save(model.state_dict(), tmp)
            tmp.replace(path)
        model.eval()
        self._pretrained = (model, tok, stats)
        return self._pretrained

    # -- one cell --
    def cell_path(self, dataset: str, masking: str, method: str) -> Path:
        name = f"{dataset}__{masking or 'none'}__{method}"
        return self.root / "cells" / (re.sub(r"[^A-Za-z0-9_.+-]", "_", name) + ".json")

    def run_cell(self, dataset: str, masking: str, method: str) -> dict:
        import copy

        from recover_core.lm.train import TrainConfig, perplexity, train

        path = self.cell_path(dataset, masking, method)
        if path.exists():
            return json.loads(path.read_text())
        t0 = time.time()
        base, tok, _ = self.pretrained()
        texts, facts = self.train_text(dataset, masking, method)
        model = copy.deepcopy(base)
        c = self.cfg
        stats = train(model, tok, texts, TrainConfig(epochs=c.adapt_epochs, batch_size=c.batch_size, lr=c.adapt_lr,
                                                     seed=c.seed, bf16=c.bf16, ignore_mask=method == "baseline1"),
                      desc=f"adapt {dataset}/{masking or '-'}/{method}", progress=self.progress)
        ppl = perplexity(model, tok, self.split(dataset)[1])
        rec = {"dataset": dataset, "masking": masking, "method": method, "perplexity": ppl["ppl_word"],
               "perplexity_token": ppl["ppl_token"], "train_sentences": len(texts), "adapt": stats,
               "seconds": round(time.time() - t0, 1), **facts}
        _atomic_write(path, json.dumps(rec))
        return rec

    # -- the grid --
    def run(self) -> Path:
        from tqdm import tqdm

        if self.cfg.threads:
            import torch

            torch.set_num_threads(self.cfg.threads)
        todo = cells(self.cfg)
        done = sum(self.cell_path(*c).exists() for c in todo)
        if done:
            print(f"resuming: {done} of {len(todo)} cells already done", file=sys.stderr)
        t0 = time.time()
        for c in tqdm(todo, desc=f"experiment {self.cfg.name}", unit="cell", disable=not self.progress):
            self.run_cell(*c)
        out = self.write_csv()
        print(f"{len(todo)} cells, {time.time() - t0:.0f} s this run; results: {out}", file=sys.stderr)
        return out

    def rows(self) -> list[dict]:
        """Tidy rows of every finished cell, plus the corpus facts (Tables 1 and 2 analogues)."""
        from recover_core.masking import mask_rate

        c = self.cfg
        common = {"model": f"lm-{c.preset}", "scale": c.scale, "seed": c.seed, "command": self.command}
        out = []
        for d in c.datasets:
            train, test = self.split(d)
            out += [{"dataset": d, "masking": "", "method": "", "metric": "n_sentences_train", "value": len(train),
                     **common},
                    {"dataset": d, "masking": "", "method": "", "metric": "n_sentences_test", "value": len(test),
                     **common}]
            for m in c.maskings:
                if any(self.cell_path(d, m, meth).exists() for meth in c.methods):
                    rate = mask_rate(self.masked(d, m)[0])["mask_rate"]
                    out.append({"dataset": d, "masking": m, "method": "", "metric": "mask_rate_percent",
                                "value": round(100 * rate, 2), **common})
        for d, m, meth in cells(c):
            p = self.cell_path(d, m, meth)
            if not p.exists():
                continue
            rec = json.loads(p.read_text())
            out.append({"dataset": d, "masking": m, "method": meth, "metric": "perplexity",
                        "value": round(rec["perplexity"], 3), **common})
            if rec.get("fills"):
                out.append({"dataset": d, "masking": m, "method": meth, "metric": "leak_rate_percent",
                            "value": round(100 * rec["leaks"] / rec["fills"], 2), **common})
        return out

    def write_csv(self) -> Path:
        import pandas as pd

        from recover_core.results import TIDY_COLUMNS

        path = Path(self.cfg.output)
        df = pd.DataFrame(self.rows(), columns=TIDY_COLUMNS)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        df.to_csv(tmp, index=False)
        tmp.replace(path)
        return path


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def cmd_experiment(args) -> None:
    cfg = load_config(args.config)
    overrides = {k: v for k, v in (("max_train", args.max_train), ("max_test", args.max_test),
                                   ("threads", args.threads), ("output", args.output)) if v is not None}
    if overrides:
        cfg = replace(cfg, **overrides)
    command = shlex.join(["python", "-m", "recover_core", *sys.argv[1:]])
    Runner(cfg, command, progress=not args.quiet).run()


def add_parser(sub) -> None:
    from recover_core.filling.finetune import _positive

    p = sub.add_parser("experiment", help="run the grid: masking x method x dataset -> adapted LM -> perplexity",
                       description=__doc__)
    p.set_defaults(fn=cmd_experiment)
    p.add_argument("--config", type=Path, required=True, help="a TOML file (see assets/experiments/)")
    p.add_argument("--max-train", type=_positive, default=None, help="override the config")
    p.add_argument("--max-test", type=_positive, default=None, help="override the config")
    p.add_argument("--output", default=None, help="override the config's CSV path")
    p.add_argument("--threads", type=_positive, default=None)
    p.add_argument("--quiet", action="store_true")


