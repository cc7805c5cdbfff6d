"""Nothing a user types stays in the process after the request: not in spaCy's shared
vocabulary, not in a tokenizer's word cache."""
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from recover_core.models import bundles
from recover_core.explorer import sentence as explore

# Made-up words: no model has them in its vocabulary until a request brings them.
NAMES = ("Zorblaxia", "Quendrick", "Plomborg")
THING = "zorblaxium"  # a common-noun slot: entityTagger leaves it in the masked text


def remembered(nlp, words) -> list[str]:
    return [w for word in words for w in (word, word.lower()) if w in nlp.vocab.strings or w in nlp.vocab]


@pytest.fixture(scope="module")
def nlp():
    nlp = bundles.load_ner("spacy-md")
    assert not remembered(nlp, NAMES + (THING,)), "the test words must be new to spaCy"
    return nlp


def test_a_mask_request_leaves_no_private_word_in_spacy(nlp):
    import app

    masked, note = app.on_mask("Zorblaxia Quendrick flew to Plomborg with Anna.", "entityTagger", 10000, "class")
    assert masked["text"].startswith("[PERSON] [PERSON] flew to") and "Masked" in note
    assert not remembered(nlp, NAMES)


def test_a_batch_of_sentences_leaves_no_private_word_in_spacy(nlp):
    from recover_core.masking import build, mask_many

    out = mask_many([f"{w} met Anna in Denver." for w in NAMES], build("entityTagger", ner_model="spacy-md"))
    assert [m.spans[0].text for m in out] == list(NAMES)  # the spans outlive the zone as plain strings
    assert not remembered(nlp, NAMES)


def test_the_fill_type_check_leaves_no_private_word_in_spacy(nlp):
    """The tagger re-reads each filled sentence; the words that were not masked are in it."""
    m = explore.mask(f"Anna bought a {THING} in Denver.", "entityTagger", 10000, "mask")
    assert THING in m.masked
    filled = explore.fill(m, explore.Column("mlm", "top1"), "minilm-mlm", 5, 0, "entityTagger", 10000)
    assert THING in filled.text and len(filled.replacements) == 2
    assert not remembered(nlp, (THING,))


def test_spacy_zones_nest_and_take_turns(nlp):
    with bundles.spacy_zone(nlp):
        with bundles.spacy_zone(nlp):  # joins the outer zone instead of ending it early
            inner = [e.text for e in nlp("Quendrick met Anna.").ents]
        outer = [e.text for e in nlp("Zorblaxia met Anna.").ents]
        assert "Quendrick" in inner and "Zorblaxia" in outer
    assert not remembered(nlp, NAMES)


class _RecordingBPE:
    def __init__(self):
        self.calls = []

    def _resize_cache(self, n):
        self.calls.append(("resize", n))

    def _clear_cache(self):
        self.calls.append("clear")


def test_forget_words_turns_the_bpe_word_cache_off():
    model = _RecordingBPE()
    bundles.forget_words(SimpleNamespace(backend_tokenizer=SimpleNamespace(model=model)))  # transformers
    bundles.forget_words(SimpleNamespace(model=model))  # tokenizers.Tokenizer
    assert model.calls == [("resize", 0), "clear"] * 2
    bundles.forget_words(SimpleNamespace(backend_tokenizer=SimpleNamespace(model=object())))  # WordPiece: nothing


def test_the_apps_bpe_tokenizers_are_forgetful_and_still_right():
    _, tok = bundles.load_causal("smollm2-135m")
    assert tok in set(bundles._TOKENIZERS)  # emptied again after every request
    ids = tok("Zorblaxia met Quendrick.")["input_ids"]
    bundles.forget_request_state()
    assert tok("Zorblaxia met Quendrick.")["input_ids"] == ids
    assert hasattr(tok.backend_tokenizer.model, "_resize_cache")  # this tokenizers can turn the cache off


def test_the_lm_tokenizer_is_forgetful_and_still_right():
    from recover_core.lm import tokenizer

    lm = tokenizer.load()
    assert lm.decode(lm.encode("Zorblaxia met Quendrick.")).count("Zorblaxia") == 1


def test_every_request_ends_by_forgetting(monkeypatch):
    import app

    calls = []
    monkeypatch.setattr(bundles, "forget_request_state", lambda: calls.append(1))
    app.on_mask("Anna moved to Denver.", "entityTagger", 10000, "mask")
    with pytest.raises(Exception):
        app.on_mask("", "entityTagger", 10000, "mask")  # a bad request too
    assert calls == [1, 1]


def test_an_app_process_keeps_its_files_apart_and_sweeps_dead_ones(tmp_path):
    """Gradio's uploads and outputs go to a folder of the app process's own; at start, the
    folders of app processes that are gone (a server killed mid-request) are removed, and
    the folders of live ones are left alone."""
    import os
    import subprocess

    from recover_core.runtime import env

    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = tmp_path / f"{env.APP_TEMP_PREFIX}{gone.pid}"
    (dead / "abc").mkdir(parents=True)
    (dead / "abc" / "private-upload.wav").write_bytes(b"RIFF")
    alive = tmp_path / f"{env.APP_TEMP_PREFIX}1"  # init, always running
    alive.mkdir()
    other = tmp_path / "gradio"  # not ours: never touched
    other.mkdir()
    mine = env.app_temp_dir(tmp_path)
    assert mine.parent == tmp_path and mine.name.startswith(f"{env.APP_TEMP_PREFIX}{os.getpid()}-") and mine.is_dir()
    assert oct(mine.stat().st_mode & 0o777) == "0o700"
    assert not dead.exists() and alive.is_dir() and other.is_dir()


def test_an_app_process_that_exits_removes_its_own_folder(tmp_path):
    """The last outputs (the user's speech outside the names) are gone at a normal exit,
    not left for the next start to sweep."""
    import subprocess
    import sys
    from pathlib import Path

    from recover_core.runtime import env

    code = ("import sys; from pathlib import Path; from recover_core.runtime import env; "
            "d = env.app_temp_dir(Path(sys.argv[1])); (d / 'out.wav').write_bytes(b'RIFF'); print(d)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    folder = Path(out.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith(env.APP_TEMP_PREFIX) and not folder.exists()


def test_an_app_process_stopped_with_sigterm_removes_its_own_folder(tmp_path):
    """kill, docker stop and service managers send SIGTERM, which by default skips atexit."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, time; from pathlib import Path; from recover_core.runtime import env; "
            "d = env.app_temp_dir(Path(sys.argv[1])); env.exit_on_sigterm(); (d / 'out.wav').write_bytes(b'RIFF'); "
            "print(d, flush=True); time.sleep(120)")
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                         cwd=Path(__file__).resolve().parent.parent)
    folder = Path(p.stdout.readline().strip())
    assert (folder / "out.wav").exists()
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 0
    assert not folder.exists()


def test_the_cache_sweep_removes_a_leftover_upload_and_keeps_the_examples():
    """Gradio's delete_cache sweep is the backstop for uploads a request could not remove.
    It once removed the examples' cached copies too (Gradio copies them at build time without
    marking them to keep), and an example clicked after the first sweep failed."""
    from gradio.route_utils import delete_files_created_by_app

    import app

    built = set().union(*app.demo.temp_file_sets)
    assert {Path(p).name for p in built} >= {"austen-0880.flac", "austen.dot", "dashwood-0870.flac"}
    audio = next(b for b in app.demo.blocks.values() if b.temp_files & built)
    upload = Path(tempfile.mkdtemp(dir=os.environ["GRADIO_TEMP_DIR"])) / "my-private-upload.wav"
    upload.write_bytes(b"RIFF private")
    audio.temp_files.add(str(upload))  # as Gradio records an upload it cached
    delete_files_created_by_app(app.demo, age=0)
    assert not upload.exists()
    assert all(Path(p).exists() for p in built)
