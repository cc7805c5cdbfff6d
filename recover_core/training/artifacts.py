"""What a finished run leaves in OUT: the merged model and the adapter, with their cards.

OUT/model is a plain transformers folder (AutoModelForMaskedLM.from_pretrained works on
it); OUT/adapter is the LoRA adapter, a few MB, plus for a masked LM the trained head.
Their format is read by recover_core/models/adapters.py, which the shipped adapters in assets/
go through too. Every folder is swapped in whole (atomic.directory): a killed run never
leaves a half-written model.
"""
from __future__ import annotations

import json
from pathlib import Path

from recover_core.runtime import atomic
from recover_core.training.lora import head_names


def save_model(model, tok, folder: Path, card: str | None = None) -> None:
    """A plain model folder: weights, tokenizer and (if given) model_card.md."""
    with atomic.directory(folder) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        if card:
            (tmp / "model_card.md").write_text(card, encoding="utf-8")


def save_mlm_adapter(model, folder: Path, base: str, cfg, card: str) -> None:
    """finetune-mlm's OUT/adapter: peft's adapter, head.safetensors and artifact.json."""
    from safetensors.torch import save_file

    inner = model.get_base_model()
    head = head_names(inner)
    params = dict(inner.named_parameters())
    with atomic.directory(folder) as tmp:
        model.save_pretrained(tmp)  # adapter_config.json + adapter_model.safetensors
        (tmp / "README.md").unlink(missing_ok=True)  # peft's empty template; model_card.md is the card
        save_file({n: params[n].detach().contiguous() for n in head}, str(tmp / "head.safetensors"))
        (tmp / "artifact.json").write_text(json.dumps({
            "base": base, "lora_r": cfg.lora_r, "lora_targets": list(cfg.lora_targets), "head": head}, indent=2))
        (tmp / "model_card.md").write_text(card, encoding="utf-8")


def save_causal_adapter(model, folder: Path, cfg, card: str) -> None:
    """finetune-llm's OUT/adapter: peft's adapter and artifact.json (kind "instruct")."""
    with atomic.directory(folder) as tmp:
        model.save_pretrained(tmp)  # adapter_config.json + adapter_model.safetensors
        (tmp / "README.md").unlink(missing_ok=True)  # peft's empty template; model_card.md is the card
        (tmp / "artifact.json").write_text(json.dumps({"base": cfg.model, "kind": "instruct",
                                                       "lora_r": cfg.lora_r, "lora_targets": list(cfg.lora_targets)},
                                                      indent=2))
        (tmp / "model_card.md").write_text(card, encoding="utf-8")


def build_minilm_mlm(out: Path) -> Path:
    """Save minilm.minilm_mlm() as a plain BertForMaskedLM folder (with its tokenizer) at ``out``."""
    from recover_core.models.minilm import minilm_mlm

    model, tok = minilm_mlm()
    save_model(model, tok, Path(out))
    return Path(out)
