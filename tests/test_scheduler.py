"""Shared passes (issue 77): concurrent requests' causal rows in one forward pass, and each
request gets the words it gets alone. Mechanics on the tiny random LLaMA (tests/tiny.py); the
real SmolLM2 check is in docs/app.md (its command: bench/app_latency.py --shared)."""
import threading
import time

import pytest
import torch

from recover_core.runtime import threads
from recover_core.filling import get_filler, scheduler
from recover_core.filling.base import MaskInput


def _calls(model):
    """Three calls of three shapes, as the fillers make them: a left context with no cache
    (its last position's scores only), candidates right-padded on a cached context, and
    beams one token on a shorter cache."""
    from transformers import DynamicCache

    def cache(ids, rows):
        c = model(input_ids=torch.tensor([ids]), use_cache=True).past_key_values
        c.batch_repeat_interleave(rows)
        return c

    def fresh():
        ctx = cache(list(range(40, 47)), 3)
        return [
            dict(input_ids=torch.tensor([[5, 9, 13, 200, 31]]), use_cache=True, logits_to_keep=1),
            dict(input_ids=torch.tensor([[61, 62, 63, 64], [70, 71, 0, 0], [80, 0, 0, 0]]), past_key_values=ctx,
                 attention_mask=torch.cat([torch.ones(3, 7, dtype=torch.long),
                                           torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]])], 1),
                 use_cache=True),
            dict(input_ids=torch.tensor([[90], [91]]), past_key_values=cache([1, 2, 3], 2), use_cache=True),
        ]
    assert isinstance(fresh()[1]["past_key_values"], DynamicCache)
    return fresh


@torch.inference_mode()
def test_a_shared_pass_gives_each_call_its_own_scores_and_cache(tiny_llama):
    model = get_filler("infill", tiny_llama).model
    passes = scheduler.share(model)
    fresh = _calls(model)
    alone = [passes.forward(**kw) for kw in fresh()]
    calls = [scheduler._Call(kw) for kw in fresh()]
    for c in calls:
        c.rows = scheduler._rows(c.kwargs, model)
    shared = passes._shared(calls)
    for a, s, c in zip(alone, shared, calls):
        assert s.logits.shape == a.logits.shape
        assert torch.allclose(s.logits, a.logits, atol=1e-5)
        assert torch.equal(s.logits.argmax(-1), a.logits.argmax(-1))
        for la, ls in zip(a.past_key_values.layers, s.past_key_values.layers):
            assert ls.keys.shape == la.keys.shape and torch.allclose(ls.keys, la.keys, atol=1e-5)
            assert torch.allclose(ls.values, la.values, atol=1e-5)
    # The cache a call passed is the one it gets back, holding its own rows only.
    assert shared[1].past_key_values is calls[1].kwargs["past_key_values"]
    assert shared[2].past_key_values.layers[0].keys.shape[0] == 2


def test_a_call_alone_runs_as_the_model_runs_it(tiny_llama):
    model = get_filler("infill", tiny_llama).model
    passes = scheduler.share(model)
    assert scheduler.share(model) is passes  # once per model, whoever asks
    with torch.inference_mode():
        for kw_a, kw_b in zip(_calls(model)(), _calls(model)()):
            assert torch.equal(model(**kw_a).logits, passes.forward(**kw_b).logits)


SENTENCES = ["Yesterday [MASK] drove from [MASK] to the coast with [MASK].",
             "[PERSON] [PERSON] flew from [GPE] to meet [PERSON] at [ORG].",
             "My friend [PERSON] moved to [GPE] last year.",
             "The [MASK] was too hot to drink, so [PERSON] waited [NUMBER] minutes."]


def _words(filler, sentence: str, seed: int):
    f = filler.fill([MaskInput.parse(sentence)], method="topk", k=5, seed=seed)[0]
    return f.text, [[c.word for c in x.candidates] for x in f.fills]


@pytest.mark.parametrize("kind", ["infill", "instruct"])
def test_four_concurrent_requests_get_the_words_each_gets_alone(tiny_llama, kind, monkeypatch):
    if kind == "instruct":  # its fallback on the tiny model too (its default is the real SmolLM2)
        from recover_core.filling.instruct import InstructFiller

        filler = InstructFiller(tiny_llama, fallback_model=tiny_llama, infill=lambda m: get_filler("infill", m))
    else:
        filler = get_filler(kind, tiny_llama)
    passes = scheduler.share(filler.model)
    alone = [_words(filler, s, n) for n, s in enumerate(SENTENCES)]
    # Each drain waits a moment first, so that the other requests' calls are queued with it
    # (the app's models thread gathers them the same way while it runs a pass).
    monkeypatch.setattr(threads, "run", lambda fn: (time.sleep(0.002), fn())[1])
    before = passes.stats["shared"]
    got: list = [None] * len(SENTENCES)
    start = threading.Barrier(len(SENTENCES))

    def user(n: int) -> None:
        start.wait()
        got[n] = _words(filler, SENTENCES[n], n)

    users = [threading.Thread(target=user, args=(n,)) for n in range(len(SENTENCES))]
    for t in users:
        t.start()
    for t in users:
        t.join()
    assert got == alone
    assert passes.stats["shared"] > before  # passes were shared, not taken in turn


def test_a_failing_call_fails_alone(tiny_llama):
    model = get_filler("infill", tiny_llama).model
    passes = scheduler.share(model)
    good = scheduler._Call(dict(input_ids=torch.tensor([[5, 6, 7]]), use_cache=True))
    bad = scheduler._Call(dict(input_ids=torch.tensor([[5, 10 ** 9]]), use_cache=True))  # no such token
    with passes._lock:
        passes._pending += [good, bad]
    passes._drain()
    assert good.error is None and good.out.logits.shape[1] == 3
    assert bad.error is not None and bad.done.is_set()
