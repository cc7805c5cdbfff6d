"""Loading the LoRA adapters this project trains, onto their base model.

Adapters are read by several users: bundles.py (the shipped assets/minilm-mlm,
assets/minilm-wiki and assets/smollm2-fill), the instruct filler (a finetune-llm
OUT/adapter) and evaluate-mlm (a finetune-mlm OUT/adapter). Reading one needs only the
base model, peft and the folder, so it lives here, beside the models, and imports no
trainer and no filler: a model knows nothing of its users.

The folders are written by recover_core/training/artifacts.py:

- masked LM: peft's adapter_config.json and adapter_model.safetensors, head.safetensors
  (the MLM head, trained whole), and artifact.json {"base", "lora_r", "lora_targets", "head"};
  "base" is a model folder or hub id, or "minilm" (minilm.py).
- causal LM: peft's files and artifact.json {"base": a causal LM bundle name, "kind": "instruct", ...}.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from recover_core.errors import RecoverError


def load_mlm_adapter(folder: Path | str) -> tuple[Any, Any]:
    """(model, tokenizer) from a finetune-mlm OUT/adapter: the base model, the LoRA adapter
    (not merged) and the trained head, in eval mode."""
    from peft import PeftModel
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from recover_core.models.minilm import MINILM_BASE, minilm_mlm

    folder = Path(folder)
    meta = json.loads((folder / "artifact.json").read_text())
    if meta["base"] == MINILM_BASE:
        base, tok = minilm_mlm()
    else:
        base, tok = AutoModelForMaskedLM.from_pretrained(meta["base"]), AutoTokenizer.from_pretrained(meta["base"])
    model = PeftModel.from_pretrained(base, str(folder))
    load_mlm_head(model, folder)
    return model.eval(), tok


def load_mlm_head(model, folder: Path | str) -> None:
    """The trained MLM head of a finetune-mlm OUT/adapter (head.safetensors) into ``model``
    (a peft model on the adapter's base): reading an adapter, and continuing its training."""
    from safetensors.torch import load_file

    folder = Path(folder)
    _, unexpected = model.get_base_model().load_state_dict(load_file(str(folder / "head.safetensors")), strict=False)
    if unexpected:
        raise RecoverError(f"{folder}: head weights do not fit the base model ({', '.join(unexpected[:3])}).")


def load_causal_adapter(folder: Path | str, causal_lm: Callable[[str, str], tuple[Any, Any]]) -> tuple[Any, Any]:
    """(model, tokenizer) from a finetune-llm OUT/adapter: the base causal LM (by its bundle
    name, which ``causal_lm`` resolves: bundles.causal_lm) with the adapter merged in, in eval mode."""
    from peft import PeftModel

    folder = Path(folder)
    meta = json.loads((folder / "artifact.json").read_text())
    base, tok = causal_lm(meta["base"], "an instruct adapter needs a causal LM base")
    return PeftModel.from_pretrained(base, str(folder)).merge_and_unload().eval(), tok
