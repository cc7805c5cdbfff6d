"""The downstream LM: the shared tokenizer, training lowers perplexity, Baseline1 ignores [MASK]."""
import math

import pytest
import torch

from recover_core.lm import tokenizer as T
from recover_core.lm.model import PRESETS, LMConfig, TransformerLM
from recover_core.lm.train import TrainConfig, collate, loss_weights, new_model, perplexity, train

TINY = LMConfig(block_size=64, n_layer=1, n_head=2, n_embd=32, dropout=0.0)


@pytest.fixture(scope="module")
def tok():
    return T.load()


def test_tokenizer_is_whispers_gpt2_bpe_with_one_mask_token(tok):
    ids = tok.encode("Anna moved to [MASK], near [MASK].")
    assert ids[0] == ids[-1] == tok.eos_id == 50256  # GPT-2's <|endoftext|>
    assert ids.count(tok.mask_id) == 2 and tok.mask_id == tok.vocab_size - 1
    assert tok.decode(tok.encode("the cat sat")[1:-1]) == "the cat sat"


def test_presets_have_the_papers_shape():
    assert (PRESETS["paper"].n_layer, PRESETS["paper"].n_head, PRESETS["paper"].n_embd) == (6, 12, 768)


def test_training_lowers_perplexity(tok, news_sentences):
    torch.manual_seed(0)
    model = new_model(TINY, tok)
    sents = news_sentences[:200]
    before = perplexity(model, tok, sents)["ppl_word"]
    stats = train(model, tok, sents, TrainConfig(epochs=3, batch_size=16, lr=3e-3, warmup_steps=5), progress=False)
    after = perplexity(model, tok, sents)["ppl_word"]
    assert stats["steps"] == 3 * math.ceil(200 / 16) and stats["tokens_per_s"] > 0
    assert after < before / 5, (before, after)


def test_baseline1_gives_mask_targets_no_loss_by_construction(tok):
    torch.manual_seed(0)
    model = TransformerLM(LMConfig(vocab_size=tok.vocab_size, **{k: getattr(TINY, k) for k in
                                                                ("block_size", "n_layer", "n_head", "n_embd", "dropout")}))
    inputs, targets, pad = collate([tok.encode("Anna met [MASK] in [MASK] today."), tok.encode("[MASK] left.")])
    w = loss_weights(targets, tok.mask_id, ignore_mask=True)
    logits, loss = model(inputs, targets, w, pad)
    logits.retain_grad()
    # The loss is the mean over the other targets exactly...
    keep = (targets != -100) & (targets != tok.mask_id)
    manual = torch.nn.functional.cross_entropy(logits[keep].float(), targets[keep])
    assert torch.allclose(loss, manual, atol=1e-6)
    # ...and no gradient reaches the predictions whose target is [MASK].
    loss.backward()
    at_mask = targets == tok.mask_id
    assert at_mask.sum() == 3 and logits.grad[at_mask].abs().max() == 0
    assert logits.grad[keep].abs().max() > 0
    # Baseline0 does learn to predict [MASK].
    _, loss0 = model(inputs, targets, loss_weights(targets, tok.mask_id, ignore_mask=False), pad)
    assert not torch.allclose(loss0, loss)


def test_padding_does_not_change_a_sentences_score(tok):
    torch.manual_seed(0)
    model = new_model(TINY, tok).eval()
    short, long_ = "The cat sat.", "The dog slept on the warm rug by the door."
    alone = perplexity(model, tok, [short])["nll"]
    batched = perplexity(model, tok, [short, long_])["nll"] - perplexity(model, tok, [long_])["nll"]
    assert abs(alone - batched) < 1e-3


def test_bf16_only_where_the_cpu_has_it(monkeypatch, capsys):
    """bfloat16 autocast without native support is emulated, ~40x slower than float32: it is
    used only where the CPU has AVX512-BF16 or AMX, and a run that asked for it is told."""
    import torch

    from recover_core.runtime import env

    monkeypatch.setattr(env, "_BF16_WARNED", False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert env.bf16_autocast(False) is False and capsys.readouterr().err == ""
    assert env.bf16_autocast(True) is False and "float32" in capsys.readouterr().err
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    assert env.bf16_autocast(True) is True
