"""The grid's runner: each cell masked, filled, adapted and scored, every piece cached and
checked against the settings key, so a killed run picks up at its first unfinished cell."""
from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from pathlib import Path

from recover_core.data import corpora
from recover_core.errors import RecoverError
from recover_core.masking import mask_rate
from recover_core.runtime import atomic
from recover_core.runtime import env
from recover_core.experiment.config import (FT_KIND, MASK_FREE, ExperimentConfig, MethodSpec, cells, dataset_split,
                                            fusion_weights, is_public, read_json, settings_key, sha, texts_digest,
                                            usable, versions)
from recover_core.obfuscator import Obfuscator
from recover_core.pseudonyms import names, places
from recover_core.pseudonyms.key import fingerprint, new_key, read_key_file

PARTIAL_EVERY = 60.0  # seconds between saves of a fill in progress
# The grid's built-in corpora are public text and its rows must be reproducible, so their engine
# rows draw under one public key. Public on purpose: a published key undoes the protection, and
# that is fine only where the originals are public anyway. A corpus read from a user's files
# (fisher:PATH, reddit:PATH: licensed, private) draws under a secret key (Runner.draw_key), as
# the product's runs do.
GRID_KEY = hashlib.sha256(b"recover-grid:public-corpora").digest()


def engine_tables() -> str:
    """A digest of the committed tables that only the engine's rules read (which names and
    places the masking NER reads as such: the prior draws from those alone). They key the
    engine's (+typed) corpora and cells, not the settings key: the paper's procedure never
    reads them, and a rebuilt table must not refill every cached corpus (hours of causal fills)."""
    paths = [env.assets_dir() / f for f in (names.READ_FILE, places.READ_FILE)]
    return sha(json.dumps([(p.name, sha(p.read_bytes()) if p.is_file() else "") for p in paths]))


def by_engine(method: str) -> bool:
    """Is this grid method the engine with our rules (``+typed``), not the paper's procedure?"""
    spec = MethodSpec.parse(method)
    return spec is not None and spec.typed


class Runner:
    def __init__(self, cfg: ExperimentConfig, command: str = "", progress: bool = True, root: Path | None = None):
        self.cfg, self.command, self.progress = cfg, command, progress
        self._splits: dict[str, tuple[list[str], list[str]]] = {}
        self._masked: dict[tuple[str, str], list] = {}
        self._pretrained = None
        # Cached cells and corpora are only valid for what made them: the folder is keyed by
        # the settings, the shipped assets, the library versions and the corpora's content, so
        # a run at another scale, with a retrained adapter or a changed corpus never reuses them.
        digest = sha(json.dumps([texts_digest(self.split(d)[0] + self.split(d)[1]) for d in cfg.datasets]))
        self.key = settings_key(cfg, digest)
        self.root = (root or env.cache_dir() / "experiments") / f"{cfg.name}-{self.key}"
        self.root.mkdir(parents=True, exist_ok=True)
        # A user's corpus draws under the key file's key, read now so that a bad file is refused
        # before hours of work, or a fresh one made when first needed; never written anywhere.
        self._secret = read_key_file(cfg.key_file) if cfg.key_file else None
        self.wer = self.nbest = None  # WER by fusion (grid_wer.py) or by rescoring (grid_rescore.py)
        if cfg.wer_utterances and cfg.wer_mode == "rescore":
            from recover_core.experiment.grid_rescore import NBestSet

            self.nbest = NBestSet(cfg.wer_dataset, cfg.max_train, cfg.max_test, cfg.wer_utterances,
                                  cfg.wer_dev_utterances)
        elif cfg.wer_utterances:
            from recover_core.experiment.grid_wer import GridWER

            self.wer = GridWER(cfg.wer_dataset, cfg.max_train, cfg.max_test, cfg.wer_utterances)

    def needs_wer(self, dataset: str) -> bool:
        return self.wer is not None and dataset == self.wer.dataset

    def needs_scores(self, dataset: str) -> bool:
        """Does this dataset's cell keep its LM's scores of the n-best texts?"""
        return self.nbest is not None and dataset == self.nbest.dataset

    # -- cached pieces --
    def split(self, dataset: str):
        if dataset not in self._splits:
            self._splits[dataset] = dataset_split(dataset, self.cfg.max_train, self.cfg.max_test)
        return self._splits[dataset]

    def masked(self, dataset: str, masking: str):
        """The masked train set (in memory only: it holds the originals for leak counts)."""
        from tqdm import tqdm

        key = (dataset, masking)
        if key not in self._masked:
            engine = Obfuscator(technique=masking, identifiers=False)  # the grid masks vats2024's types
            train = self.split(dataset)[0]
            out = []
            for b in tqdm(range(0, len(train), 256), desc=f"mask {dataset}/{masking}", leave=False,
                          disable=not self.progress):
                out += engine.mask_many(train[b : b + 256])
            self._masked[key] = (out, engine.keep)
        return self._masked[key]

    def draw_key(self, dataset: str) -> bytes:
        """The key a cell of ``dataset`` draws under: the public GRID_KEY for a built-in public
        corpus, whose rows anyone may reproduce; for text read from a user's files, which may
        be licensed, a secret one: the config's key_file's, else a fresh one for this run."""
        if is_public(dataset):
            return GRID_KEY
        if self._secret is None:
            self._secret = new_key()
        return self._secret

    def engine(self, masking: str, spec: MethodSpec, seed: int, model: str | None = None,
               dataset: str = "") -> Obfuscator:
        """The product's engine for one cell: the paper's procedure (the filler sees [MASK] and
        its own choice stands), or with ``+typed`` our rules (entity types, pseudonym rules),
        drawing under ``draw_key(dataset)`` (a secret key where no dataset is named)."""
        c = self.cfg
        return Obfuscator(technique=masking, filler=spec.kind if spec.kind != FT_KIND else "mlm",
                          model=model or spec.model, method=spec.how, k=c.k, seed=seed, sampling=c.sampling,
                          type_check=c.type_check, rules="ours" if spec.typed else "paper",
                          key=self.draw_key(dataset), identifiers=False)  # vats2024's entity types only

    def train_text(self, dataset: str, masking: str, method: str, seed: int) -> tuple[list[str], dict]:
        """The train sentences the LM adapts on for this cell, and facts about them."""
        if method == MASK_FREE:
            return self.split(dataset)[0], {}
        from recover_core.results.tables import RETRAINED, method_parts, tainted

        if why := tainted(method):
            model = Path(method_parts(method).model).name
            instead = f" Use {method.replace(model, RETRAINED[model])}, its retrained filler." if model in RETRAINED else ""
            raise RecoverError(f"{method}: its filler was {why}. It saw the split the grid fills, so the grid "
                               f"refuses it until it is retrained on unseen text (results.TAINTED_FILLERS).{instead}")
        masked, keep = self.masked(dataset, masking)
        if method in ("baseline0", "baseline1"):
            return [m.masked for m in masked], {}
        path = self.root / "corpora" / self.cell_path(dataset, masking, method, seed).with_suffix(".txt").name
        facts_path = path.with_suffix(".json")
        key = sha(json.dumps([self.key, dataset, masking, method, seed, texts_digest(m.masked for m in masked)]
                             + ([engine_tables()] if by_engine(method) else [])
                             # a user's corpus drawn under a kept key is that key's: its public id
                             + ([fingerprint(self.draw_key(dataset))] if self.cfg.key_file and not is_public(dataset)
                                else [])))
        if path.exists() and facts_path.exists():
            texts, facts = path.read_text(encoding="utf-8").split("\n"), read_json(facts_path)
            # Checked, not trusted: a corpus written for other inputs, or cut short, is made again.
            if facts.get("key") == key and facts.get("text_sha") == texts_digest(texts) and len(texts) == len(masked):
                return texts, facts
        partial = path.with_suffix(".partial.json")
        texts, facts = self._fill(dataset, masking, method, seed, partial, key)
        facts |= {"key": key, "text_sha": texts_digest(texts)}
        atomic.write_text(path, "\n".join(texts))
        atomic.write_text(facts_path, json.dumps(facts))
        partial.unlink(missing_ok=True)
        return texts, facts

    def _fill(self, dataset: str, masking: str, method: str, seed: int, partial: Path,
              key: str) -> tuple[list[str], dict]:
        """Fill the cell's masked train set. A causal filler takes hours on 2 cores, so the lines
        filled so far are kept (``partial``, for this ``key`` only) every PARTIAL_EVERY seconds,
        and a killed fill goes on from there. Each line's fill is seeded by its own text
        (Obfuscator.propose), so a resumed fill equals an unbroken one."""
        from tqdm import tqdm

        masked, _ = self.masked(dataset, masking)
        spec = MethodSpec.parse(method)
        model = self.finetuned(dataset, masking, spec, seed) if spec.kind == FT_KIND else None
        engine = self.engine(masking, spec, seed, model, dataset=dataset)
        kept = read_json(partial) if partial.exists() else {}
        done = kept if kept.get("key") == key and len(kept.get("texts", ())) <= len(masked) else {}
        texts, leaks, fills = list(done.get("texts", [])), done.get("leaks", 0), done.get("fills", 0)
        bs = 64 if engine.settings.filler == "mlm" else 8
        saved = time.monotonic()
        for b in tqdm(range(len(texts), len(masked), bs), desc=f"fill {dataset}/{masking} {method} s{seed}",
                      leave=False, disable=not self.progress, initial=len(texts) // bs,
                      total=-(-len(masked) // bs)):
            for r in engine.fill(masked[b : b + bs]):
                texts.append(r.text)
                fills += len(r.replacements)
                leaks += r.leaks
            if time.monotonic() - saved > PARTIAL_EVERY:
                atomic.write_text(partial, json.dumps({"key": key, "texts": texts, "fills": fills, "leaks": leaks}))
                saved = time.monotonic()
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

        from recover_core.lm import tokenizer as T
        from recover_core.lm.model import PRESETS
        from recover_core.lm.train import TrainConfig, new_model, train

        if self._pretrained is not None:
            return self._pretrained
        tok = T.load()
        c = self.cfg
        seed = c.seeds[0]
        sents = usable(corpora.split(c.pretrain_corpus)[0])
        model = new_model(PRESETS[c.preset], tok)
        key = sha(json.dumps([asdict(model.config), c.pretrain_corpus, texts_digest(sents), c.pretrain_epochs, seed,
                               c.lr, c.batch_size, c.bf16, versions()], sort_keys=True))[:12]
        path = self.root.parent / "pretrained" / f"{c.preset}-{c.pretrain_corpus}-{key}.pt"
        stats = read_json(path.with_suffix(".json")) if path.with_suffix(".json").exists() else {}
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

    def pretrain_stats(self) -> dict:
        """What the pretrained LM saw. Cells imported from an LM job (``lm_job``) carry the
        job's; otherwise the cached LM's (no training here, once cells exist)."""
        job = self.root / "pretrained_job.json"
        if self._pretrained is None and job.exists():
            return read_json(job)
        return self.pretrained()[2]

    # -- one cell --
    def cell_path(self, dataset: str, masking: str, method: str, seed: int) -> Path:
        name = f"{dataset}__{masking or 'none'}__{method}__s{seed}"
        return self.root / "cells" / (re.sub(r"[^A-Za-z0-9_.+-]", "_", name) + ".json")

    def cell(self, dataset: str, masking: str, method: str, seed: int) -> dict | None:
        """A finished cell's record, if there is a complete one."""
        path = self.cell_path(dataset, masking, method, seed)
        rec = read_json(path) if path.exists() else {}
        ok = rec.get("key") == self.key and "perplexity" in rec and (
            not by_engine(method) or rec.get("engine_tables") == engine_tables()) and (
            not self.needs_wer(dataset) or rec.get("wer_utterances") == self.cfg.wer_utterances) and (
            not self.needs_scores(dataset) or rec.get("nbest_sha") == self.nbest.sha)
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
        if by_engine(method):
            rec["engine_tables"] = engine_tables()
        if self.needs_wer(dataset):  # now, while the adapted LM is in memory: it is not kept
            rec |= self.wer.score(model.eval(), *fusion_weights("adapted"))
            rec["seconds"] = round(time.time() - t0, 1)
        if self.needs_scores(dataset):  # the LM is not kept: its scores are, and WER follows from them
            from recover_core.experiment.grid_rescore import lm_scores

            rec |= {"nbest_sha": self.nbest.sha, "nbest_logprobs": lm_scores(model, tok, self.nbest.texts)}
            rec["seconds"] = round(time.time() - t0, 1)
        atomic.write_text(self.cell_path(dataset, masking, method, seed), json.dumps(rec))
        return rec

    # -- the grid --
    def corpora(self) -> int:
        """Every cell's obfuscated train set (masking, filling, FT), and no LM: the part of the
        grid that needs spaCy and the fillers. The LM part can then run elsewhere (``lm_job``)."""
        from tqdm import tqdm

        todo = [c for c in cells(self.cfg) if MethodSpec.parse(c[2]) is not None]
        for c in tqdm(todo, desc=f"corpora {self.cfg.name}", unit="corpus", disable=not self.progress):
            self.train_text(*c)
        return len(todo)

    def run(self) -> Path:
        from tqdm import tqdm

        if self.cfg.threads:
            import torch

            torch.set_num_threads(self.cfg.threads)
        todo = cells(self.cfg)
        if self.wer is not None:  # a missing speech set stops the run now, not after hours of cells
            from recover_core.experiment import speech_set

            from recover_core.experiment import grid_wer

            speech_set.load_manifest(speech_set.set_dir(self.wer.dataset, self.cfg.max_train, self.cfg.max_test))
            grid_wer.reference(self)
        if self.nbest is not None:
            from recover_core.experiment import grid_rescore

            self.nbest.build(self.progress)
            grid_rescore.reference(self)
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
        c = self.cfg
        done = {x: rec for x in cells(c) if (rec := self.cell(*x)) is not None}  # each record read once
        # Where the LMs trained (lm_job's cells say): the same settings give other numbers on a GPU.
        devices = sorted({rec["device"] for rec in done.values() if rec.get("device")})
        scale = c.scale + (f"; LMs trained on {', '.join(devices)}" if devices else "")
        common = {"model": f"lm-{c.preset}", "scale": scale, "command": self.command}
        pre = self.pretrain_stats() if done else {}
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
            from recover_core.experiment import grid_wer

            out += grid_wer.rows(self, done, common)
        if self.nbest is not None:
            from recover_core.experiment import grid_rescore

            out += grid_rescore.rows(self, done, common)
        return out

    def write_csv(self) -> Path:
        import pandas as pd

        from recover_core.results.tables import TIDY_COLUMNS

        path = Path(self.cfg.output)
        df = pd.DataFrame(self.rows(), columns=TIDY_COLUMNS)
        with atomic.replacing(path) as tmp:
            df.to_csv(tmp, index=False)
        return path
