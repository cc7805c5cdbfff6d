"""Corpora: the installed stand-ins, and readers for the licensed formats users hold."""
import json

import pytest

from recover_core.data import corpora as C
from recover_core.errors import RecoverError


@pytest.mark.parametrize("name,least", [("news", 2000), ("wiki", 15000), ("fortunes", 10000), ("scripture", 25000)])
def test_stand_ins_install_here_and_split_the_same_way_everywhere(name, least):
    sents = C.CORPORA[name]()
    assert len(sents) >= least  # news repeats some sentences (the Lee corpus does); the split keeps them together
    train, test = C.split(name)
    assert not set(train) & set(test) and 0.1 < len(test) / len(sents) < 0.2
    assert all(4 <= len(s.split()) <= 60 for s in sents[:500])


def test_a_public_corpus_is_split_once_and_read_from_the_cache_until_its_source_changes(tmp_path, monkeypatch):
    from recover_core.runtime import env

    monkeypatch.setattr(env, "cache_dir", lambda: tmp_path / "cache")
    source = tmp_path / "quotes.txt"
    source.write_text("It rained. Then it stopped.")
    reads = []

    @C.kept_on_disk(lambda: [source])
    def quotes() -> tuple[str, ...]:
        reads.append(1)
        return tuple(C.split_sentences(source.read_text()))

    assert quotes() == ("It rained.", "Then it stopped.")
    quotes.cache_clear()  # another process: the sentences come from the cache folder
    assert quotes() == ("It rained.", "Then it stopped.") and len(reads) == 1
    [kept] = (tmp_path / "cache" / "corpora").iterdir()
    kept.write_text('["It rai')  # torn: read the corpus again
    quotes.cache_clear()
    assert quotes() == ("It rained.", "Then it stopped.") and len(reads) == 2
    source.write_text("Sun at last.")  # the source changed: so does the key
    quotes.cache_clear()
    assert quotes() == ("Sun at last.",) and len(reads) == 3
    # The stand-ins read this way are the corpora as split from their sources.
    assert C.news() == C.news.__wrapped__()


def test_fisher_reader(tmp_path):
    (tmp_path / "fe_03_00001.txt").write_text(
        "# fe_03_00001.sph\n\n0.51 2.30 A: hello [laughter] my name is ((john))\n"
        "2.40 4.10 B: hi john [noise]\n5.00 5.20 A: [laughter]\n")
    assert C.read_fisher(tmp_path) == ["hello my name is john", "hi john"]


def test_reddit_reader(tmp_path):
    p = tmp_path / "RC_2015-01.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in [
        {"body": "I moved to Denver last year. Best decision ever!"}, {"body": "[deleted]"},
        {"title": "Ask me anything", "selftext": "[removed]"}]) + "\n")
    assert C.read_reddit(p) == ["I moved to Denver last year.", "Best decision ever!", "Ask me anything"]
    (tmp_path / "bad.jsonl").write_text("not json\n")
    with pytest.raises(RecoverError, match="JSON lines"):
        C.read_reddit(tmp_path / "bad.jsonl")


def test_wsj_reader(tmp_path):
    (tmp_path / "4k0c0301.dot").write_text(
        "Frank Bennett says a price [loud_breath] is right \\period (4k0c0301)\n"
        "the ~partial word <unclear> stays *out* (4k0c0302)\n")
    assert C.read_wsj(tmp_path) == ["Frank Bennett says a price is right", "the partial word stays out"]


def test_load_takes_registered_names_or_format_and_path(tmp_path):
    (tmp_path / "a.dot").write_text("one two three (4k0c0301)\n")
    assert C.load("wsj:" + str(tmp_path)) == ("one two three",)
    with pytest.raises(RecoverError, match="Unknown corpus"):
        C.load("switchboard")
    with pytest.raises(RecoverError, match="does not exist"):
        C.load("fisher:" + str(tmp_path / "nope"))
