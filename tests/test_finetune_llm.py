"""The LoRA instruction-tuned filler: examples, the output validator, training mechanics
on a tiny random LLaMA, the fallback to infill, and the shared evaluation."""
import json
import random

import pytest
import torch

from recover_core.errors import RecoverError
from recover_core.filling import MaskInput, get_filler
from recover_core.training import evaluate_fillers as ev
from recover_core.models.adapters import load_causal_adapter
from recover_core.models.bundles import causal_lm
from recover_core.training.config import LLMConfig
from recover_core.training.examples import encode, mask_example
from recover_core.training.llm import finetune_llm
from recover_core.filling.instruct import InstructFiller, _Hopeless, prompt, validate, viable
from recover_core.filling.base import merge_consecutive


from tiny import sentence_file  # tests/tiny.py, as conftest imports it

# Tiny models train fastest on one thread, and the results do not depend on a thread count.
pytestmark = pytest.mark.usefixtures("one_thread")


# --- the validator ----------------------------------------------------------------------------

VALID = [
    ("[PERSON] moved to [GPE] in 1998.", "Anna moved to Lyon in 1998.", ["Anna", "Lyon"]),
    ("The [MASK] was too hot to drink.", "The tea was too hot to drink.", ["tea"]),
    ("The [MASK] was too hot to drink.", "The  tea was too hot  to drink. ", ["tea"]),  # spacing is not content
    ("I met [PERSON] [PERSON] today.", "I met Maria Lopez today.", ["Maria Lopez"]),  # merged span
    ("Call [PERSON], please.", "Call Ann, please.", ["Ann"]),
    ("The  [MASK] sat\ton it.", "The cat sat on it.", ["cat"]),  # whitespace runs compare equal
    ("[MASK] and [MASK] went home.", "Tom and Jerry went home.", ["Tom", "Jerry"]),
    ("She flew to [GPE] today.", "She flew to New York City today.", ["New York City"]),  # entities: + 2 words
]


@pytest.mark.parametrize("masked,output,subs", VALID)
def test_validator_accepts_outputs_equal_outside_the_masks(masked, output, subs):
    assert validate(merge_consecutive(MaskInput.parse(masked)), output) == subs


@pytest.mark.parametrize("masked,output", [
    ("[PERSON] moved to [GPE] in 1998.", "Anna moved to Lyon in 1999."),  # changed outside a mask
    ("[PERSON] moved to [GPE] in 1998.", "Anna moved to Lyon."),  # dropped text
    ("The [MASK] was too hot to drink.", "The [MASK] was too hot to drink."),  # copied the marker
    ("The [MASK] was too hot to drink.", "The was too hot to drink."),  # empty substitute
    ("The [MASK] was too hot to drink.", "The tea that my aunt made for us was too hot to drink."),  # a rewrite
    ("The [MASK] was hot.", "The tea was hot.\nThe coffee was hot."),  # more than one line
    ("The [MASK] was hot.", "Sure! The tea was hot."),  # chatter
    ("The [MASK] sat.", "The very big cat sat."),  # one marker, one word
    ("She flew to [GPE] today.", "She flew to the old city of Rome today."),
    ("[MASK] and [MASK] went home.", "Tom and Jerry and Ann went home."),
])
def test_validator_rejects_everything_else(masked, output):
    assert validate(merge_consecutive(MaskInput.parse(masked)), output) is None


@pytest.mark.parametrize("masked,output,subs", VALID)
def test_every_prefix_of_a_valid_output_is_viable(masked, output, subs):
    """Beam search is stopped only where no beam is viable, so a prefix of an output that
    validates must never be called hopeless, cut anywhere, a character at a time."""
    item = merge_consecutive(MaskInput.parse(masked))
    assert all(viable(item, output[:j]) for j in range(len(output) + 1))


@pytest.mark.parametrize("masked,prefix", [
    ("[PERSON] moved to [GPE] in 1998.", "Anna moved to Lyon in the spring of"),  # past the word limit of [GPE]
    ("The [MASK] was too hot to drink.", "The tea that my"),  # a rewrite, past the word limit
    ("The [MASK] was hot.", "Sure!"),  # chatter
    ("The [MASK] sat.", "The very big"),
    ("She flew to [GPE] today.", "She flew to the old city of"),
    ("[MASK] and [MASK] went home.", "Tom and Jerry and Ann"),
    # the demo sentence's beams, as the LoRA filler wrote them
    ("[PERSON] [PERSON] flew from [GPE] to [GPE] last week to meet [PERSON] [PERSON], who works for [ORG].",
     "He flew from New York to Los Angeles last week to meet up with his family and"),
])
def test_a_prefix_that_left_the_input_is_not_viable(masked, prefix):
    item = merge_consecutive(MaskInput.parse(masked))
    assert not viable(item, prefix)
    assert all(validate(item, prefix + rest) is None for rest in ("", ".", " today.", " went home.", " 1998."))


def test_a_hopeless_search_stops_but_not_after_a_valid_beam_ended(trained, tiny_llama):
    f = InstructFiller(str(trained / "adapter"), beams=4, fallback_model=tiny_llama)
    item = merge_consecutive(MaskInput.parse("The [MASK] sat on the mat."))
    stop = f._stop_ids()[0]

    def row(text: str, *, ended: bool = False, after: str = "") -> torch.Tensor:
        ids = [7, 8, 9] + f.tok(text, add_special_tokens=False)["input_ids"] + ([stop] if ended else [])
        return torch.tensor([ids + f.tok(after, add_special_tokens=False)["input_ids"]])  # [1, 3 + generated]

    hopeless = _Hopeless(item, f.tok, 3, f._stop_ids())
    assert not hopeless(row("The cat sat")).any()
    assert not hopeless(row("The cat")).any()
    assert hopeless(row("The cat stood")).all() and hopeless.fired

    # A beam that ended valid: the search goes on to its end, whatever the others do.
    once_valid = _Hopeless(item, f.tok, 3, f._stop_ids())
    assert not once_valid(row("The cat sat on the mat.", ended=True)).any()
    assert not once_valid(row("The cat stood")).any() and not once_valid.fired
    # An ended beam is read only up to its end: what beam search pads it with is not text.
    ended_bad = _Hopeless(item, f.tok, 3, f._stop_ids())
    assert ended_bad(row("The cat stood.", ended=True, after=" sat on the mat.")).all()


def test_stopping_a_hopeless_search_changes_no_valid_beam(monkeypatch, trained, tiny_llama):
    """The tiny model writes nothing valid: the search stops early, with fewer passes, and
    the beams that validate are the same as without the stop (none)."""
    import recover_core.filling.instruct as instruct

    f = InstructFiller(str(trained / "adapter"), beams=4, fallback_model=tiny_llama)
    text = "The [MASK] sat on the mat with a [MASK] all day."
    item = merge_consecutive(MaskInput.parse(text))
    passes, forward = [], f.model.forward
    monkeypatch.setattr(f.model, "forward", lambda *a, **kw: passes.append(1) or forward(*a, **kw))
    stopped = f._generate(text, 4)
    n_stopped = len(passes)
    assert f.stats["stopped_hopeless"] == 1

    class Never(_Hopeless):
        def __call__(self, input_ids, scores=None, **kwargs):
            return torch.zeros(input_ids.shape[0], dtype=torch.bool)

    monkeypatch.setattr(instruct, "_Hopeless", Never)
    full = f._generate(text, 4)
    assert n_stopped < len(passes) - n_stopped
    assert [o for o, _ in stopped if validate(item, o)] == [o for o, _ in full if validate(item, o)]


def test_validator_stays_fast_on_many_masks():
    # A regular expression with lazy groups between repeated literals took minutes here.
    masked = " , ".join(["[MASK]"] * 40) + " end."
    assert validate(MaskInput.parse(masked), " , ".join(["a"] * 40) + " end!") is None
    assert validate(MaskInput.parse(masked), " , ".join(["a"] * 40) + " end.") == ["a"] * 40


# --- training examples ------------------------------------------------------------------------

def test_examples_mask_a_few_whole_words_and_keep_punctuation():
    s = "Yesterday Maria flew from Boston to Paris, and she paid 300 dollars for it."
    for seed in range(30):
        m = mask_example(s, random.Random(seed), mask_prob=0.15, max_masks=4)
        item = MaskInput.parse(m)
        assert 1 <= len(item.markers) <= 4
        assert validate(item, s) is not None  # the original is always a valid answer
        assert m.endswith(".")


def test_encode_puts_the_loss_on_the_response_only(tiny_llama):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_llama)
    ids, labels = encode(tok, "The [MASK] sat.", "The cat sat.", 256)
    n_prompt = len(tok(prompt("The [MASK] sat."), add_special_tokens=False)["input_ids"])
    assert labels[:n_prompt] == [-100] * n_prompt
    assert labels[n_prompt:] == ids[n_prompt:] and ids[-1] == tok.eos_token_id
    assert tok.decode(ids[n_prompt:-1]) == "The cat sat."


# --- training ---------------------------------------------------------------------------------

SENTENCES = ["The cat sat on the mat.", "The dog sat on the rug.", "A bird sang in the tree.",
             "We walked along the river."] * 8


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return sentence_file(tmp_path_factory.mktemp("llm-corpus"), SENTENCES)


def config(model, corpus, out, **kw):
    base = dict(out=out, model=model, train_file=corpus, lora_r=4, lora_targets=("q_proj", "v_proj"), steps=40,
                batch_size=8, lr=3e-2, warmup_steps=2, eval_every=0, eval_items=8, save_every=10, quiet=True)
    return LLMConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def trained(tiny_llama, corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("llm-ft")
    finetune_llm(config(tiny_llama, corpus, out))
    return out


def test_loss_falls_and_the_adapter_is_saved(trained):
    recs = [json.loads(x) for x in (trained / "metrics.jsonl").read_text().splitlines()]
    ls = [r["loss"] for r in recs if "loss" in r]
    assert len(ls) == 40 and sum(ls[-5:]) / 5 < sum(ls[:5]) / 5 - 1.0, ls
    for f in ("adapter_config.json", "adapter_model.safetensors", "artifact.json", "model_card.md"):
        assert (trained / "adapter" / f).exists(), f
    card = (trained / "adapter" / "model_card.md").read_text()
    assert "Predict the [MASK] tokens" in card and "steps/s" in card


def test_reloaded_adapter_gives_the_same_outputs(trained, tiny_llama, corpus, tmp_path):
    model, tok = load_causal_adapter(trained / "adapter", causal_lm)
    again, _ = load_causal_adapter(trained / "adapter", causal_lm)
    ids = tok(prompt("The [MASK] sat on the mat."), return_tensors="pt")["input_ids"]
    with torch.no_grad():
        a, b = model(input_ids=ids).logits, again(input_ids=ids).logits
    assert torch.equal(a, b)
    base, _ = causal_lm(tiny_llama)
    with torch.no_grad():
        assert not torch.allclose(a, base(input_ids=ids).logits)  # the adapter does something


def test_resume_continues_from_the_checkpoint(tiny_llama, corpus, tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    finetune_llm(config(tiny_llama, corpus, whole, steps=12, save_every=4))
    finetune_llm(config(tiny_llama, corpus, split, steps=12, save_every=4, stop_after=6))
    with pytest.raises(RecoverError, match="--resume"):
        finetune_llm(config(tiny_llama, corpus, split, steps=12, save_every=4))
    finetune_llm(config(tiny_llama, corpus, split, steps=12, save_every=4, resume=True))
    a, _ = load_causal_adapter(whole / "adapter", causal_lm)
    b, _ = load_causal_adapter(split / "adapter", causal_lm)
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        assert torch.allclose(p, q, atol=1e-6), n


# --- the filler -------------------------------------------------------------------------------

def test_invalid_outputs_fall_back_to_infill_and_are_counted(trained, tiny_llama):
    f = InstructFiller(str(trained / "adapter"), beams=2, fallback_model=tiny_llama)
    out = f.fill([MaskInput.parse("[PERSON] moved to [GPE] last year.")], method="topk", k=5, seed=1)[0]
    # A tiny random model cannot copy a sentence: the infill filler did the work, and said so.
    assert out.fallback == "infill" and f.stats["fallback_infill"] == 1 and f.stats["sentences"] == 1
    assert "[" not in out.text and out.text.endswith(" last year.")


def test_valid_generations_become_candidates(monkeypatch, trained, tiny_llama):
    f = InstructFiller(str(trained / "adapter"), beams=3, fallback_model=tiny_llama)
    beams = [("Anna moved to Lyon last year.", -1.0), ("Anna moved to Paris last year.", -2.0),
             ("Somebody moved away.", -0.5)]  # the best-scored beam is invalid and ignored
    monkeypatch.setattr(f, "generate", lambda text, n=None, item=None: beams)
    out = f.fill([MaskInput.parse("[PERSON] moved to [GPE] last year.")])[0]
    assert out.fallback is None and out.text == "Anna moved to Lyon last year."
    assert [c.word for c in out.fills[1].candidates] == ["Lyon", "Paris"]
    assert out.fills[0].candidates[0].score == pytest.approx(1.0)


def test_a_mask_without_an_acceptable_word_is_filled_by_infill_and_the_others_keep_the_llms(
        monkeypatch, trained, tiny_llama):
    """Valid beams that write an everyday word in a place's mask ("the new clinic") keep
    their person's name; only the place's mask gets infill's candidates, and says so."""
    from recover_core.filling.base import Candidate

    f = InstructFiller(str(trained / "adapter"), beams=2, fallback_model=tiny_llama)
    beams = [("Dr. Johnson said the results from the new clinic would come.", -1.0),
             ("Dr. Johnson said the results from the old clinic would come.", -2.0)]
    monkeypatch.setattr(f, "generate", lambda text, n=None, item=None: beams)
    infill = get_filler("infill", tiny_llama)
    asked = []
    monkeypatch.setattr(infill, "candidates", lambda left, right, label, k, context=None, prefixes=None: asked.append(
        (left, right, label)) or [Candidate("Lyon", 0.7), Candidate("Paris", 0.3)])
    out = f.fill([MaskInput.parse("Dr. [PERSON] said the results from the [GPE] clinic would come.")])[0]
    assert out.fallback is None and out.text == "Dr. Johnson said the results from the Lyon clinic would come."
    assert [x.source for x in out.fills] == [None, "infill"]
    assert asked == [("Dr. Johnson said the results from the ", " clinic would come.", "GPE")]  # sees the LLM's word
    assert f.stats["infill_masks"] == 1 and f.stats["fallback_infill"] == 0
    from recover_core.explorer.sentence import fallback_note
    from recover_core.obfuscator import Obfuscator

    out = Obfuscator(filler="instruct").choose(out)  # what the Text tab shows: the engine's result
    assert fallback_note(out) == " · 1 of 2 masks filled by causal infill (no valid word from the LLM)"
    from recover_core.explorer.sentence import candidates_table

    assert set(candidates_table(out)["label"]) == {"PERSON", "GPE · infill"}  # the app's table says whose words


def test_the_prompt_is_encoded_once_for_all_beams(monkeypatch, trained, tiny_llama):
    """generate repeats the prompt once per beam before its first pass; the filler encodes
    it once and copies the cache. The beams are the same as without that cache."""
    import torch

    f = InstructFiller(str(trained / "adapter"), beams=4, fallback_model=tiny_llama)
    text = "The [MASK] sat on the mat with a [MASK] all day."
    rows, forward = [], f.model.forward
    monkeypatch.setattr(f.model, "forward",
                        lambda *a, **kw: rows.append(tuple(kw["input_ids"].shape)) or forward(*a, **kw))
    once = f._generate(text, 4)
    n_prompt = len(f.tok(prompt(text), add_special_tokens=False)["input_ids"])
    assert rows[0] == (1, n_prompt - 1) and all(r[1] == 1 for r in rows[1:])  # no pass of 4 rows x the prompt
    monkeypatch.setattr(f, "_prompt_cache", lambda ids, n: None)  # as generate does it alone
    each = f._generate(text, 4)
    assert [t for t, _ in once] == [t for t, _ in each]
    assert torch.allclose(torch.tensor([s for _, s in once]), torch.tensor([s for _, s in each]), atol=1e-4)


def test_the_registry_and_cli_know_the_instruct_filler(trained, tmp_path):
    from recover_core.cli import main

    assert isinstance(get_filler("instruct", str(trained / "adapter")), InstructFiller)
    assert main(["fill", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "o.txt"), "--filler", "instruct"]) == 2


# --- one evaluation for every filler ----------------------------------------------------------

def test_evaluation_items_are_fixed_content_words():
    sents = ["The old lighthouse keeper painted the door green.", "It is what it is.",
             "Rivers flow into the sea."]
    a, b = ev.items(sents, 10, seed=0), ev.items(sents, 10, seed=0)
    assert a == b and len(a) == 2  # "It is what it is." has no content word
    for it in a:
        assert it.masked.count("[MASK]") == 1 and it.gold.isalpha() and it.gold == it.gold.lower()


def test_evaluate_fillers_scores_every_filler_on_the_same_items(tiny_bert, capsys):
    from recover_core.cli import main

    assert main(["evaluate-fillers", "--fillers", f"mlm:{tiny_bert},mlm:bert-base-uncased", "--items", "6",
                 "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["items"] == 6 and 0 <= rows[0]["top1"] <= rows[0]["top10"] <= 1
    assert "cannot reach" in rows[1]["skipped"]
