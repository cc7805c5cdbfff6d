"""The pretrained LM as a judge (lm/pretrained.py) and n-best rescoring (asr/rescore.py): its
scores against the model's own loss, baseline1's targets, the LM store, and the real
SmolLM2 rescoring the recognizer on real recorded speech."""
from __future__ import annotations

import math

import pytest

from recover_core.asr.decode import DecodeConfig


def test_logprob_is_the_models_own_loss(tiny_llama):
    """Batched and padded, each text's log-probability equals what the model's own loss gives
    for that text alone."""
    import torch

    from recover_core.lm.pretrained import PretrainedLM

    lm = PretrainedLM.load(tiny_llama)
    texts = ["The council met on Tuesday.", "Rain.", "A much longer sentence about the harbour and its ships."]
    got = lm.logprob(texts, batch_size=2)
    for text, lp in zip(texts, got):
        ids, _ = lm.encode(text)
        x = torch.tensor([ids])
        with torch.no_grad():
            loss = lm.model(input_ids=x, labels=x).loss.item()  # the mean over len(ids) - 1 targets
        assert lp == pytest.approx(-loss * (len(ids) - 1), rel=1e-4)
    ppl = lm.perplexity(texts)
    assert ppl["ppl_word"] == pytest.approx(math.exp(-sum(got) / (sum(len(t.split()) for t in texts) + 3)), rel=1e-6)


def test_shared_start_scores_as_whole_texts(tiny_llama):
    """The canary audit scores 1,000 codes after one shared start through the KV cache; each
    text's score must be what scoring it whole gives, padding and uneven lengths included."""
    from recover_core.lm.pretrained import PretrainedLM

    lm = PretrainedLM.load(tiny_llama)
    texts = [f"The account holder Ann Lee gave the code {c} to the bank." for c in ("004211", "98", "31415926")]
    assert lm.logprob_shared(texts, batch_size=2) == pytest.approx(lm.logprob(texts), abs=1e-3)
    assert lm.logprob_shared(["Rain.", "Snow."]) == pytest.approx(lm.logprob(["Rain.", "Snow."]), abs=1e-3)


def test_baseline1_never_targets_the_mask_tokens(tiny_llama):
    from recover_core.lm.pretrained import PretrainedLM

    lm = PretrainedLM.load(tiny_llama)
    text = "Yesterday [MASK] flew to [MASK] with friends."
    ids, plain = lm.encode(text)
    _, targets = lm.encode(text, ignore_mask=True)
    assert plain == ids
    skipped = [lm.tok.decode([i]) for i, t in zip(ids, targets) if t == -100]
    assert "".join(skipped).replace(" ", "") == "[MASK][MASK]"
    assert sum(t != -100 for t in targets) == len(lm.encode("Yesterday flew to with friends.")[0])


def test_an_adapted_lm_round_trips_through_the_store(tiny_llama, tmp_path, monkeypatch):
    """Adapt (LoRA), save to the LM store, load by name: the same scores; only the adapter is kept."""
    from recover_core.asr import lms, wer
    from recover_core.experiment import asr_eval
    from recover_core.lm.pretrained import AdaptConfig, PretrainedLM

    monkeypatch.setenv("RECOVER_LMS", str(tmp_path))
    lm = PretrainedLM.load(tiny_llama)
    texts = ["The ferry left Hobart at noon.", "The minister spoke in Canberra."]
    before = lm.logprob(texts)
    stats = lm.adapt(texts * 8, AdaptConfig(batch_size=4, lr=1e-2, rank=4), progress=False)
    after = lm.logprob(texts)
    assert stats["steps"] == 4 and sum(after) > sum(before)  # it learned the text it saw
    lms.save(lm, lms.LMCard("smollm2-test", "test", {"base": tiny_llama}, 0.5, 0.0, family="smollm2", adapter=True))
    assert "smollm2-test" in lms.available()
    assert not list(tmp_path.glob("*.safetensors")) and (tmp_path / "smollm2-test.adapter").is_dir()
    again = lms.load("smollm2-test")
    assert isinstance(again, PretrainedLM)
    assert again.logprob(texts) == pytest.approx(after, rel=1e-4)
    # Its WER rows name the rank (two ranks are two recipes, never pooled as seeds of one cell).
    assert lms.lora_rank("smollm2-test") == 4 and lms.lora_rank("none") is None
    rows = asr_eval._rows_for("smollm2-test", wer.score(["a b"], ["a b"]), (0.0, 0.0), 1, "s", "c",
                              lms.card("smollm2-test"), lms.lora_rank("smollm2-test"))
    assert rows[0]["model"].startswith("asr-whisper-tiny.en+smollm2-135m-lora-r4 n-best rescoring")


def test_an_adapter_folder_that_is_missing_makes_no_lm(tmp_path, monkeypatch):
    import json

    from recover_core.asr import lms
    from recover_core.errors import RecoverError

    monkeypatch.setenv("RECOVER_LMS", str(tmp_path))
    (tmp_path / "smollm2-gone.json").write_text(json.dumps(lms.LMCard("smollm2-gone", "x", {}, family="smollm2",
                                                                       adapter=True).to_dict()))
    assert "smollm2-gone" not in lms.available()
    with pytest.raises(RecoverError, match="not available here"):
        lms.load("smollm2-gone")


@pytest.fixture(scope="module")
def recognizer():
    from recover_core.asr.recognize import Recognizer

    return Recognizer()


def test_rescoring_picks_an_n_best_entry_and_no_lm_is_the_search(recognizer, recordings, tiny_llama):
    from recover_core.asr import audio
    from recover_core.asr.decode import beam_search, n_best
    from recover_core.lm.pretrained import PretrainedLM

    clips = [audio.load(p) for p in recordings[:3]]
    enc, frames = recognizer.encode([c.samples for c in clips])
    w = recognizer.whisper
    lists = n_best(w, enc)
    assert all(len(hyps) >= 4 for hyps in lists)
    assert [h.tokens for h in beam_search(w, enc)] == [max(hyps, key=lambda h: h.score).tokens for hyps in lists]
    picked = recognizer.decode(enc, frames, DecodeConfig(lm_weight=5.0), PretrainedLM.load(tiny_llama))
    wide = n_best(w, enc, DecodeConfig(beam_size=DecodeConfig.rescore_beam))  # what rescoring chooses among
    assert sum(len(h) for h in wide) > sum(len(h) for h in lists)
    for (tokens, words), hyps in zip(picked, wide):
        assert tokens in [h.tokens for h in hyps] and words


# Misrecognitions that the recognizer ranked first on spoken news dev utterances (TTS voices),
# each with what was said; the n-best list held both.
MISHEARD = [
    ("He has promised to round up suicide bumbers before but very few in fact have been arrested.",
     "He has promised to round up suicide bombers before, but very few in fact have been arrested."),
    ("The patrol boats then sank the vessel and its 15 men grew as thrown into the sea.",
     "The patrol boats then sank the vessel and its 15 man crew was thrown into the sea."),
    ("He says savings will also be achieved with flexibility in the workplace, including conditions, work revolves "
     "and rustering.", "He says savings will also be achieved with flexibility in the workplace, including "
     "conditions, work revolves, and rostering."),
    ("Human rights through feminist international has condemned deliberate attacks by the Palestinian suicide "
     "bomber that we can't.", "Human rights through feminist international has condemned deliberate attacks by "
     "the Palestinian suicide bombers at the weekend."),
]


def test_the_real_lm_rescores_a_mishearing_to_what_was_said(recognizer):
    """SmolLM2 as it ships (no adaptation), through the rescoring rule with equal acoustic
    scores per token: the LM alone must pick what was said."""
    from recover_core.asr.decode import Hypothesis
    from recover_core.asr.rescore import rescore
    from recover_core.lm.pretrained import PretrainedLM

    w = recognizer.whisper

    def hyp(text: str) -> Hypothesis:
        tokens = w.tokenizer.encode(" " + text, add_special_tokens=False).ids
        return Hypothesis(tokens, [-0.1] * len(tokens), -0.1)

    lm = PretrainedLM.load()
    lists = [[hyp(heard), hyp(said)] for heard, said in MISHEARD]
    best = rescore(w, lists, lm, lm_weight=1.0, word_bonus=0.0)
    assert [w.token_text(h.tokens).strip() for h in best] == [said for _, said in MISHEARD]

    # The paper's recognizer (where it downloads) writes lowercase words without punctuation;
    # its n-best list goes through the same LM.
    import re

    from recover_core.asr import emformer

    def plain(text: str) -> str:
        return re.sub(r"[^a-z0-9' ]", "", text.lower())

    for heard, said in MISHEARD:
        n = emformer.NBest([plain(heard), plain(said)], [0.0, 0.0])
        assert emformer.rescore(n, lm, 1.0, 0.0) == plain(said)
        assert emformer.rescore(n, None, 1.0, 0.0) == plain(heard)  # no LM: the recognizer's own first


def test_asr_eval_decodes_each_lm_and_shares_the_wide_search(recognizer, recordings, tiny_llama, tmp_path,
                                                             monkeypatch):
    """asr-eval's decoding: the rescoring LMs share one beam-8 search per batch, and the
    recognizer alone at beam 8 is that search's own best (no second search)."""
    from recover_core.asr import audio, lms
    from recover_core.experiment import asr_eval as evaluate
    from recover_core.asr.decode import beam_search

    monkeypatch.setenv("RECOVER_LMS", str(tmp_path))
    lms.save(None, lms.LMCard("smollm2", "tiny", {"base": tiny_llama}, 1.0, 0.0, family="smollm2"))
    clips = [audio.load(p) for p in recordings[:3]]
    configs = [("none", DecodeConfig()), ("smollm2", DecodeConfig(lm_weight=1.0)),
               ("smollm2@0.2@0", DecodeConfig(lm_weight=0.2)), (evaluate.WIDE, DecodeConfig(beam_size=8))]
    texts = evaluate.decode_all(recognizer, clips, configs, progress=False)
    w = recognizer.whisper
    enc, frames = recognizer.encode([c.samples for c in clips])
    assert texts["none"] == recognizer.texts(enc, frames, DecodeConfig())
    wide = beam_search(w, enc, DecodeConfig(beam_size=8))
    assert texts[evaluate.WIDE] == [w.token_text(h.tokens).strip() for h in wide]
    assert texts["smollm2"] == recognizer.texts(enc, frames, DecodeConfig(lm_weight=1.0), lms.load("smollm2"))
    assert all(len(t) == 3 and all(t) for t in texts.values())


def test_asr_eval_keeps_each_transcript_and_decodes_only_what_it_has_not_seen(recognizer, recordings, tiny_llama,
                                                                              tmp_path, monkeypatch):
    """An hour-long asr-eval run that is cut off resumes: transcripts already decoded come from
    the store, new utterances are decoded, and a rebuilt rescoring LM rescores the kept n-best
    lists without searching again."""
    from recover_core.asr import audio, hypotheses, lms, rescore
    from recover_core.experiment import asr_eval as evaluate

    monkeypatch.setenv("RECOVER_LMS", str(tmp_path / "lms"))
    lms.save(None, lms.LMCard("smollm2", "tiny", {"base": tiny_llama}, 1.0, 0.0, family="smollm2"))
    clips = [audio.load(p) for p in recordings[:3]]
    configs = [("none", DecodeConfig()), ("smollm2", DecodeConfig(lm_weight=1.0)),
               (evaluate.WIDE, DecodeConfig(beam_size=8))]
    store = hypotheses.Store(tmp_path / "hyps")
    first = evaluate.decode_all(recognizer, clips[:2], configs, batch_size=2, progress=False, store=store)
    assert first == evaluate.decode_all(recognizer, clips[:2], configs, batch_size=2, progress=False)  # same texts

    encoded, rescored = [], []
    real_encode, real_rescore = recognizer.encode, rescore.rescore
    monkeypatch.setattr(recognizer, "encode", lambda s: encoded.append(len(s)) or real_encode(s))
    monkeypatch.setattr(rescore, "rescore", lambda w, lists, *a: rescored.append(len(lists)) or real_rescore(w, lists, *a))
    again = hypotheses.Store(tmp_path / "hyps")  # a new run: read from disk
    assert evaluate.decode_all(recognizer, clips[:2], configs, batch_size=2, progress=False, store=again) == first
    assert encoded == [] and rescored == []  # nothing decoded again
    more = evaluate.decode_all(recognizer, clips, configs, batch_size=2, progress=False, store=again)
    assert encoded == [1] and rescored == [1] and {k: v[:2] for k, v in more.items()} == first  # the third only
    lms.save(None, lms.LMCard("smollm2", "rebuilt", {"base": tiny_llama}, 1.0, 0.0, family="smollm2"))
    assert evaluate.decode_all(recognizer, clips[:2], configs, batch_size=2, progress=False, store=again) == first
    assert rescored == [1, 2] and encoded == [1]  # the rebuilt LM rescores the kept n-best lists: no search
    assert evaluate.decode_all(recognizer, clips[:2], configs, batch_size=2, progress=False,
                               store=hypotheses.Store(tmp_path / "hyps", reuse=False)) == first
    assert encoded == [1, 2]


def test_the_paired_bootstrap_resamples_both_systems_on_the_same_utterances():
    from recover_core.asr import wer
    from recover_core.experiment import asr_eval as evaluate

    refs = [f"the ship left port number {i} at noon" for i in range(40)]
    good = list(refs)
    bad = [r.replace("ship", "sheep") if i % 4 == 0 else r for i, r in enumerate(refs)]  # 10 errors in 320 words
    same = evaluate.paired_bootstrap(wer.score(refs, good), wer.score(refs, good))
    assert same == (0.0, 0.0, 0.0)
    diff, low, high = evaluate.paired_bootstrap(wer.score(refs, bad), wer.score(refs, good))
    assert diff == pytest.approx(100 * 10 / 320)
    assert 0 < low < diff < high  # the errors are all on one side: the interval never crosses zero


def test_each_grid_cells_lm_is_compared_with_its_own_familys_oracle_and_pretrained_lm():
    from recover_core.asr import lms
    from recover_core.experiment import asr_eval as evaluate

    def card(name, masking="", family="transformer"):
        return lms.LMCard(name, "", {}, 0.5, 0.0, masking=masking, family=family)

    cards = {n: card(n) for n in ("none", "pretrained", "oracle")}
    cards |= {"smollm2": card("smollm2", family="smollm2"), "smollm2-oracle": card("smollm2-oracle", family="smollm2"),
              "smollm2-vocabThres-baseline1": card("smollm2-vocabThres-baseline1", "vocabThres", "smollm2"),
              "vocabThres-baseline1": card("vocabThres-baseline1", "vocabThres")}
    got = evaluate.pairs(cards)
    assert ("smollm2-vocabThres-baseline1", "smollm2-oracle") in got
    assert ("smollm2-vocabThres-baseline1", "smollm2") in got
    assert ("vocabThres-baseline1", "oracle") in got and ("vocabThres-baseline1", "pretrained") in got
    assert ("vocabThres-baseline1", "smollm2-oracle") not in got  # never across families
    assert ("oracle", "pretrained") in got and ("smollm2-oracle", "smollm2") in got
