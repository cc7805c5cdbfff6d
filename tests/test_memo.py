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
    with memo.request() as held:
        shared = both()
        assert held  # the work is held during the request
    assert not held and memo.current() is None  # and dropped at its end
    assert [f.text for f in shared] == [f.text for f in alone]
    assert [[c.word for x in f.fills for c in x.candidates] for f in shared] == \
        [[c.word for x in f.fills for c in x.candidates] for f in alone]
    assert len(calls) == n_alone // 2  # Top-K asked nothing that Top-1 had not
    top1, topk = shared
    # One candidate computation: each mask's list is the one Top-1 shows, and Top-K's word
    # is drawn from it.
    assert [x.candidates for x in topk.fills] == [x.candidates for x in top1.fills]
    assert all(x.word.lower() in {c.word.lower() for c in x.candidates} for x in topk.fills)


def test_a_drawn_topk_word_never_changes_the_next_masks_context(tiny_llama, monkeypatch):
    filler = get_filler("infill", tiny_llama)
    item = MaskInput.parse("[MASK] met [MASK] and [MASK] in the park.")
    lefts = {}
    real = filler._candidates
    for method in ("top1", "topk"):
        seen = lefts.setdefault(method, [])
        monkeypatch.setattr(filler, "_candidates", lambda *a, seen=seen: seen.append(a[0]) or real(*a))
        for seed in range(4):
            filler.fill([item], method=method, k=5, seed=seed)
    assert lefts["topk"] == lefts["top1"]


def test_a_failed_request_drops_the_memo():
    try:
        with memo.request() as held:
            memo.reuse("k", lambda: ["Maria"])
            raise ValueError
    except ValueError:
        pass
    assert not held and memo.current() is None
    assert memo.reuse("k", lambda: ["fresh"]) == ["fresh"]


def test_concurrent_requests_each_read_their_own_memo():
    """Requests run side by side (their passes shared): each reads its own answers only."""
    import threading

    got = {}

    def request(name: str, ready: threading.Barrier) -> None:
        with memo.request():
            memo.reuse("k", lambda: [name])
            ready.wait()  # both memos are filled before either reads
            got[name] = memo.reuse("k", lambda: ["recomputed"])

    ready = threading.Barrier(2)
    runs = [threading.Thread(target=request, args=(n, ready)) for n in ("a", "b")]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    assert got == {"a": ["a"], "b": ["b"]}
