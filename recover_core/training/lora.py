"""Which weights a fine-tuning run trains: the base model, LoRA, and the MLM head.

finetune-mlm puts LoRA on the encoder's linear layers and trains the MLM head whole
(MiniLM's head is new, so it must learn everything; its decoder stays tied to the
frozen word embeddings), or trains every weight (``--lora-r 0``). finetune-llm puts
LoRA on the attention projections of a causal LM. Only the trainable weights go into a
checkpoint (checkpoints.py), and ``merged`` makes the plain model that OUT/model holds.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Sequence

from recover_core.errors import RecoverError

if TYPE_CHECKING:
    import torch


def mlm_base(cfg):
    """(model, tokenizer, base name for artifacts) for a FinetuneConfig."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from recover_core.models.minilm import MINILM_BASE, minilm_mlm

    if cfg.from_minilm:  # a continued run's head (bias included) comes from --init-adapter
        model, tok = minilm_mlm(freq_bias=cfg.init_adapter is None)
        return model, tok, MINILM_BASE
    if not cfg.model:
        raise RecoverError("Give --model (a masked LM name or folder) or --from-minilm.")
    from recover_core.models import bundles

    b = bundles.get(cfg.model)
    if b.kind != "mlm":
        raise RecoverError(f"{cfg.model!r} is a {b.kind} model; fine-tuning needs a masked LM.")
    src = b.source()
    return AutoModelForMaskedLM.from_pretrained(src), AutoTokenizer.from_pretrained(src), src


def causal_base(cfg):
    """(model, tokenizer) for an LLMConfig."""
    from recover_core.models.bundles import causal_lm

    return causal_lm(cfg.model, "finetune-llm needs a causal LM")


def head_names(model) -> list[str]:
    """Parameters of the MLM head that are not tied to the input embeddings."""
    base_ids = {id(p) for p in model.base_model.parameters()}
    return [n for n, p in model.named_parameters() if id(p) not in base_ids]


def lora_modules(model, targets: Sequence[str]) -> list[str]:
    """Full names of the encoder's linear layers whose last name part is a target; the
    head's own 'dense' is trained whole, not through LoRA."""
    import torch

    prefix = model.base_model_prefix
    names = [n for n, m in model.named_modules()
             if isinstance(m, torch.nn.Linear) and n.split(".")[0] == prefix and n.split(".")[-1] in targets]
    if not names:
        raise RecoverError(f"No linear layer named {', '.join(targets)} in the encoder; "
                           "set --lora-targets (e.g. q_lin,v_lin for DistilBERT).")
    return names


def prepare_mlm(model, cfg):
    """LoRA on the encoder plus a fully trained head, or everything trainable (r = 0)."""
    if cfg.lora_r == 0:
        model.requires_grad_(True)
        return model
    from peft import LoraConfig, get_peft_model

    head = head_names(model)
    lcfg = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha or 2 * cfg.lora_r, lora_dropout=cfg.lora_dropout,
                      target_modules=lora_modules(model, cfg.lora_targets), bias="none")
    peft_model = get_peft_model(model, lcfg)
    inner = peft_model.get_base_model()
    for n, p in inner.named_parameters():
        if n in head:
            p.requires_grad_(True)
    return peft_model


def load_init_adapter(model, cfg, base_name: str) -> None:
    """Put a finetune-mlm adapter's LoRA and head weights into ``model`` (prepare_mlm's
    result) as the start of a continued run. The folder must have been trained on this
    base with this rank, alpha and targets: anything else would be a different model."""
    import json
    from pathlib import Path

    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    from recover_core.models.adapters import load_mlm_head

    folder = Path(cfg.init_adapter)
    try:
        meta = json.loads((folder / "artifact.json").read_text())
        alpha = json.loads((folder / "adapter_config.json").read_text()).get("lora_alpha")
    except (OSError, ValueError):
        raise RecoverError(f"--init-adapter {folder}: not a finetune-mlm adapter folder "
                           "(artifact.json and adapter_config.json are missing or unreadable).") from None
    want = {"base": base_name, "lora_r": cfg.lora_r, "lora_targets": list(cfg.lora_targets),
            "lora_alpha": cfg.lora_alpha or 2 * cfg.lora_r}
    have = {**{k: meta.get(k) for k in ("base", "lora_r", "lora_targets")}, "lora_alpha": alpha}
    differ = [f"{k} {have[k]!r} (this run: {want[k]!r})" for k in want if have[k] != want[k]]
    if differ:
        raise RecoverError(f"--init-adapter {folder} was trained with other settings: {'; '.join(differ)}.")
    result = set_peft_model_state_dict(model, load_file(str(folder / "adapter_model.safetensors")))
    missing = [k for k in result.missing_keys if "lora_" in k]
    if missing:
        raise RecoverError(f"--init-adapter {folder}: no weights for {len(missing)} LoRA matrices ({missing[0]}).")
    load_mlm_head(model, folder)


def prepare_causal(model, cfg):
    """LoRA on the causal LM's target projections (finetune-llm trains adapters only)."""
    from peft import LoraConfig, get_peft_model

    targets = lora_modules(model, cfg.lora_targets)
    lcfg = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha or 2 * cfg.lora_r, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, lcfg)


def trainable(model) -> dict[str, "torch.nn.Parameter"]:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def merged(model):
    """A plain transformers model with LoRA merged in (the training model is left as it is)."""
    from peft import PeftModel

    return copy.deepcopy(model).merge_and_unload() if isinstance(model, PeftModel) else model
