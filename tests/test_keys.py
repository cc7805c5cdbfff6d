"""Secret-keyed pseudonyms (issue 57): a default run draws under a fresh secret key, so nobody
can run the code over a name dictionary and read the mapping backwards; a kept key makes
runs repeatable; no original word leaves the engine in a candidate list, a repr or a cache."""
import os
import stat

import pytest

from cli_run import run
from recover_core import Obfuscator
from recover_core.models import bundles
from recover_core.explorer import sentence as explore
from recover_core.runtime import word_caches
from recover_core.errors import RecoverError
from recover_core.filling.base import Candidate, Fill, Filled
from recover_core.pseudonyms import Pseudonyms, load_pseudonyms, read_key_file, save_mapping, write_key_file

LINES = ["Tom met Anna in Denver.", "Kevin Walsh called Maria on Sunday.", "Ask Peter and Linda about it.",
         "Greg sold his car to Julia.", "Sandra Moore moved to Boston.", "Dennis wrote to Karen and Paul."]


def people(results) -> list[str]:
    return [r.substitute for res in results for r in res.replacements if r.label == "PERSON"]


def test_two_default_runs_give_different_substitutes_and_one_key_the_same():
    a = people(Obfuscator().obfuscate_many(LINES))
    b = people(Obfuscator().obfuscate_many(LINES))
    assert len(a) == len(b) >= 9
    same = sum(x == y for x, y in zip(a, b))
    assert same <= len(a) // 3, f"{same} of {len(a)} person substitutes were the same in two default runs"
    key = os.urandom(32)
    assert people(Obfuscator(key=key).obfuscate_many(LINES)) == people(Obfuscator(key=key).obfuscate_many(LINES))


def test_a_consistent_run_keeps_one_substitute_per_original():
    ob = Obfuscator()
    out = ob.obfuscate_many(["Kevin met Anna.", "Anna thanked Kevin.", "Kevin left."], consistent=True)
    subs = {}
    for res in out:
        for r in res.replacements:
            subs.setdefault(r.original, set()).add(r.substitute)
    assert subs.keys() >= {"Kevin", "Anna"} and all(len(v) == 1 for v in subs.values())
    assert all(r.original != r.substitute for res in out for r in res.replacements)


def test_no_original_nor_a_sound_alike_in_the_candidate_lists():
    """A filler never sees the original, but may propose it: the list that leaves the engine
    (public(), the CLI's jsonl, the app's table) has it taken out, and its sound-alikes too."""
    from recover_core.masking.mask import render
    from recover_core.text.spans import Span

    ob = Obfuscator(key=os.urandom(32))
    text = "Kevin flew to Paris."
    m = render(text, [Span(0, 5, "Kevin", "PERSON"), Span(14, 19, "Paris", "GPE")], "mask")
    proposed = [Candidate("Kevin", 0.5), Candidate("Kevan", 0.2), Candidate("Mark", 0.1)]
    places = [Candidate("Paris", 0.6), Candidate("Berlin", 0.3)]
    filled = Filled("Kevin flew to Paris.", [Fill(0, 5, "PERSON", "Kevin", proposed), Fill(14, 19, "GPE", "Paris", places)])
    r = ob.choose(filled, (m.original, m.spans), masked=m.masked)
    listed = [c.word for x in r.replacements for c in x.candidates]
    assert listed == ["Mark", "Berlin"]
    record = r.public(candidates=True)
    assert "Kevin" not in str(record) and "Paris" not in str(record) and "Kevan" not in str(record)


def test_no_repr_shows_an_original_or_the_key():
    key = os.urandom(32)
    ob = Obfuscator(key=key)
    r = ob.obfuscate("Kevin Walsh flew to Denver.")
    p = ob.new_mapping()
    p.person(["Kevin"], [])
    for text in (repr(ob), repr(r), repr(r.replacements), repr(p)):
        assert "Kevin" not in text and "Walsh" not in text and key.hex() not in text


def test_an_app_request_leaves_no_word_in_the_rules_caches():
    m = explore.mask("Quendrick Zorblax met Anna in Denver.", "entityTagger", 10000, "mask")
    explore.fill(m, explore.Column("mlm", "top1"), "minilm-mlm", 5, 0, "entityTagger", 10000)
    assert word_caches.held() > 0  # the rules did look the words up
    bundles.forget_request_state()
    assert word_caches.held() == 0


def test_key_files_are_checked_with_a_clear_message(tmp_path):
    path = tmp_path / "k"
    key = write_key_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and read_key_file(path) == key
    with pytest.raises(RecoverError, match="never overwritten"):
        write_key_file(path)
    with pytest.raises(RecoverError, match="no such file"):
        read_key_file(tmp_path / "missing")
    os.chmod(path, 0o644)
    with pytest.raises(RecoverError, match="chmod 600"):
        read_key_file(path)
    short = tmp_path / "short"
    short.write_text("abcd\n")
    os.chmod(short, 0o600)
    with pytest.raises(RecoverError, match="at least 16"):
        read_key_file(short)
    with pytest.raises(RecoverError, match="bytes"):
        Obfuscator(key=b"0")


def test_a_mapping_file_keeps_its_key(tmp_path):
    p = Pseudonyms(key=os.urandom(32))
    first = p.person(["Kevin"], [])
    save_mapping(tmp_path / "m.json", p)
    again = load_pseudonyms(tmp_path / "m.json")
    assert again.key == p.key and again.person(["Kevin"], []) == first
    # a new original is drawn as the first run would have drawn it
    assert again.person(["Linda"], []) == Pseudonyms(key=p.key, mapping=dict(p.mapping)).person(["Linda"], [])
    with pytest.raises(RecoverError, match="another key"):
        load_pseudonyms(tmp_path / "m.json", key=os.urandom(32))


def test_obfuscate_with_a_key_file_repeats_and_without_one_does_not(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(LINES * 2) + "\n")
    key = tmp_path / "run.key"
    assert run("key", key).returncode == 0 and stat.S_IMODE(key.stat().st_mode) == 0o600
    outs = {}
    for name, extra in (("a", ["--key-file", key]), ("b", ["--key-file", key]), ("c", []), ("d", [])):
        run("obfuscate", src, "-o", tmp_path / f"{name}.txt", "--quiet", *extra)
        outs[name] = (tmp_path / f"{name}.txt").read_text()
    assert outs["a"] == outs["b"]
    assert outs["c"] != outs["d"] and outs["c"] != outs["a"]
    os.chmod(key, 0o640)
    p = run("obfuscate", src, "-o", tmp_path / "e.txt", "--key-file", key, check=False)
    assert p.returncode == 2 and "chmod 600" in p.stderr and not (tmp_path / "e.txt").exists()


def test_speech_chooses_with_the_engines_choose_under_its_key():
    """Speech has no rules of its own: preiss2023's procedure is the engine's rules="preiss"
    (the filler's best candidate the name lists accept, else a keyed draw), one key gives
    speech and text the same substitutes, and a recording without a kept key draws under a
    fresh one. No model is built here: the filler's output is given."""
    from recover_core.data import lexicons
    from recover_core.text.spans import Span
    from recover_core.speech.obfuscate import SpeechObfuscator
    from recover_core.speech.plan import SpeechSettings

    text = "Yesterday I called Margaret Thompson, Kevin, Dr. Quist and Linda Baker."
    private = [Span(text.index(w), text.index(w) + len(w), w, "PERSON")
               for w in ("Margaret Thompson", "Kevin", "Quist", "Linda Baker")]
    filled = Filled("Yesterday I called Mary, Brian, Dr. X and Y.", [
        Fill(19, 23, "PERSON", "Mary", [Candidate("Margaret", 0.5), Candidate("Mary", 0.3), Candidate("Smith", 0.1)]),
        Fill(25, 30, "PERSON", "Brian", [Candidate("Kevin", 0.6), Candidate("Brian", 0.2)]),
        Fill(36, 37, "PERSON", "X", []), Fill(42, 43, "PERSON", "Y", [])])  # nothing offered: drawn
    key = os.urandom(32)
    speech = SpeechObfuscator(SpeechSettings(), recognizer=object(), key=key)
    assert speech.engine.settings.rules == "preiss" and speech.engine.type_check is None
    r = speech.engine.choose(filled, (text, private), speech.new_mapping())
    subs = [x.substitute for x in r.replacements]
    assert subs[:2] == ["Mary Smith", "Brian"], subs  # the best candidates the lists accept; never the original
    assert subs[2] != "Quist" and subs[2].lower() in lexicons.last_names()  # after a title: a surname, drawn
    assert "Margaret" not in str([c.word for x in r.replacements for c in x.candidates])
    # text under the same key and one mapping: the same choices (without a mapping, text draws
    # each line under the line's own subkey of the key: issue 75)
    text_engine = Obfuscator(rules="preiss", key=key)
    assert [x.substitute for x in text_engine.choose(filled, (text, private), text_engine.new_mapping()).replacements] == subs
    fresh = SpeechObfuscator(SpeechSettings(), recognizer=object())  # no kept key: each recording its own
    draws = {tuple(x.substitute for x in fresh.engine.choose(filled, (text, private), fresh.new_mapping()).replacements)
             for _ in range(4)}
    assert len(draws) > 1
