"""Per-request reuse of the causal fillers' work (issue 12): the same output, less work,
and nothing kept once the request ends (the memo holds the user's text)."""
from recover_core.filling import get_filler, memo
from recover_core.filling.base import MaskInput


def test_top1_and_topk_share_the_infill_work_within_a_request_and_only_there(tiny_llama, monkeypatch):
    filler = get_filler("infill", tiny_llama)
    item = MaskInput.parse("Yesterday [MASK] drove from [MASK] to the coast with [MASK].")
    calls = []
    real = filler._candidates
    monkeypatch.setattr(filler, "_candidates", lambda *a: calls.append(a) or real(*a))

    def both():
        return [filler.fill([item], method=m, k=5, seed=3)[0] for m in ("top1", "topk")]

    alone = both()
    n_alone = len(calls)
    calls.clear()
    with memo.request():
        shared = both()
        assert memo._memo  # the work is held during the request
    assert memo._memo is None  # and dropped at its end
    assert [f.text for f in shared] == [f.text for f in alone]
    assert [[c.word for x in f.fills for c in x.candidates] for f in shared] == \
        [[c.word for x in f.fills for c in x.candidates] for f in alone]
    assert len(calls) < n_alone  # at least the first mask's candidates were computed once


def test_a_failed_request_drops_the_memo():
    try:
        with memo.request():
            memo.reuse("k", lambda: ["Maria"])
            raise ValueError
    except ValueError:
        pass
    assert memo._memo is None
    assert memo.reuse("k", lambda: ["fresh"]) == ["fresh"]
