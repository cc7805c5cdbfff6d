"""Which sentences a fine-tuning run trains on.

vats2024 fine-tunes the filler on the corpus being obfuscated: either on its sentences
that have no mask (``clean``), or on the whole corpus after its masks were filled by
the model itself (``filled``), round after round. This module reads the sentences (the
registered corpora's training split, or a file), keeps held-out sentences out of
training, masks unmasked text once for filled mode, and fills masked sentences with the
previous round's model. Masked and filled text is cached in OUT, atomically, so that a
resumed run trains on exactly the same text.
"""
from __future__ import annotations

from recover_core.runtime import atomic
from recover_core.text import validation
from recover_core.errors import RecoverError
from recover_core.training.evaluate import heldout_for


def training_sentences(cfg) -> tuple[list[str], list[str]]:
    """(mask-free sentences, masked sentences with markers), held-out sentences removed.

    ``cfg``: a FinetuneConfig or LLMConfig; ``cfg.corpora_used`` is set for the model card."""
    from recover_core.data import corpora as C
    from recover_core.filling.base import MARKER_RE

    held = set(heldout_for(cfg)) if cfg.exclude_heldout else set()
    if cfg.train_file is not None:
        lines = [ln for ln in validation.read_lines(cfg.train_file, "Training file") if ln not in held]
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


def _mask_corpus(cfg, sents: list[str]) -> tuple[list[str], list[str]]:
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
        atomic.write_text(cache, "\n".join(lines) + "\n")
    from recover_core.filling.base import MARKER_RE

    return [ln for ln in lines if not MARKER_RE.search(ln)], [ln for ln in lines if MARKER_RE.search(ln)]


def filled_texts(cfg, masked: list[str], filler_model: str, round_: int) -> list[str]:
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
    atomic.write_text(cache, "\n".join(out) + "\n")
    return out
