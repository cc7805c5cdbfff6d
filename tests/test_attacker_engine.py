"""What an attacker reads from the engine (issue 75): reprs that print originals, invisible
characters that split a name, identifiers that the paper's rules pass through, and the grid's
public key on corpora that are not public."""
import dataclasses
import os
import warnings

import pytest

from cli_run import run, summary
from recover_core import experiment as X
from recover_core.text import validation
from recover_core.errors import RecoverError
from recover_core.experiment.runner import GRID_KEY
from recover_core.masking import build, mask_text
from recover_core.obfuscator import IdentifierWarning, Obfuscator
from recover_core.pseudonyms import write_key_file
from recover_core.text.spans import Span

CARD, EMAIL, PHONE = "4111 1111 1111 1111", "jane.doe@example.com", "(415) 555-0132"
IDENTIFIERS = f"Pay with card {CARD} or write to {EMAIL} today.\nCall me on {PHONE} after lunch.\n"


# --- finding 1: the paper's rules pass identifiers through --------------------------------------

def test_paper_rules_refuse_identifiers_before_any_model_loads(tmp_path):
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text(IDENTIFIERS)
    p = run("obfuscate", src, "-o", out, "--rules", "paper", check=False)
    assert p.returncode == 2 and "--allow-identifiers" in p.stderr and "3 identifiers" in p.stderr
    assert not out.exists()
    for secret in (CARD, EMAIL, PHONE, "4111", "jane"):
        assert secret not in p.stderr + p.stdout


def test_paper_rules_with_allow_identifiers_warn_and_count_what_passed(tmp_path, tiny_bert):
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text(IDENTIFIERS)
    p = run("fill", src, "-o", out, "--rules", "paper", "--model", tiny_bert, check=False)
    assert p.returncode == 2 and "--allow-identifiers" in p.stderr  # fill takes --rules too
    p = run("obfuscate", src, "-o", out, "--rules", "paper", "--model", tiny_bert,
            "--allow-identifiers")
    text = out.read_text()
    assert EMAIL in text and PHONE in text  # what the paper's procedure does, now said out loud
    s = summary(p.stderr)
    assert s["leaks"] == 0 and s["identifiers_passed_through"] >= 2
    warning = p.stderr[: p.stderr.index("{")]
    assert "warning: 3 identifiers" in warning and "identifiers_passed_through" in warning
    for secret in (CARD, EMAIL, PHONE, "jane"):
        assert secret not in p.stderr


def test_our_rules_mask_identifiers_and_read_no_input_twice(tmp_path, tiny_bert):
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text(IDENTIFIERS)
    p = run("obfuscate", src, "-o", out, "--model", tiny_bert)
    assert EMAIL not in out.read_text() and "warning" not in p.stderr
    assert "identifiers_passed_through" not in summary(p.stderr)  # the default run is as it was


def test_the_api_counts_identifiers_the_paper_rules_pass_and_warns_with_counts_only(tiny_bert):
    ob = Obfuscator(rules="paper", model=tiny_bert)
    with pytest.warns(IdentifierWarning) as caught:
        r = ob.obfuscate(IDENTIFIERS.splitlines()[0])
    assert r.leaks == 0 and r.identifiers_passed == 2 and EMAIL in r.text
    message = str(caught[0].message)
    assert "2 (card numbers" in message and CARD not in message and EMAIL not in message
    # The grid says it means it (identifiers=False, on public corpora): quiet, and no time spent.
    grid = Obfuscator(rules="paper", model=tiny_bert, identifiers=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EMAIL in grid.obfuscate(IDENTIFIERS.splitlines()[0]).text
        assert Obfuscator(model=tiny_bert).obfuscate(
            IDENTIFIERS.splitlines()[0]).identifiers_passed == 0  # our rules mask them


# --- finding 3: invisible characters split a name -----------------------------------------------

SPLIT = "Dar\u200bnell Whit\u00adcombe called me yesterday."


def test_format_characters_are_dropped_and_words_are_nfkc():
    assert validation.check_text(SPLIT) == "Darnell Whitcombe called me yesterday."
    hidden = "\ufeffDar\u200dnell\u2060 \u202eWhit\u200ccombe\u202c\u034f called\ufe0f me."
    assert validation.check_text(hidden) == "Darnell Whitcombe called me."
    assert validation.check_text("\uff24\uff41\uff52\uff4e\uff45\uff4c\uff4c called.") == "Darnell called."
    assert validation.check_text("Gri\ufb03ths wrote to jane\uff20example\uff0ecom.") == \
        "Griffiths wrote to jane@example.com."
    assert validation.check_text("Jose\u0301 came.") == "Jos\u00e9 came."
    # Symbols and other numbers stay as typed: they hide no word, and the public corpora hold them.
    assert validation.check_text("Add \u00bd cup, x\u00b2 \u00b4twice\u00b4.") == "Add \u00bd cup, x\u00b2 \u00b4twice\u00b4."
    with pytest.raises(RecoverError, match="empty"):
        validation.check_text("\u200b\u00ad \u2060")
    plain = "Tom met Ann in Paris, caf\u00e9 au lait."
    assert validation.check_text(plain) == plain  # normal text is as it was


def test_a_name_split_by_invisible_characters_is_masked_whole():
    spans = Obfuscator().find(SPLIT)
    assert {(s.text, s.label) for s in spans} >= {("Darnell", "PERSON"), ("Whitcombe", "PERSON")}
    assert not any("nell" in s.text and s.text != "Darnell" or s.text == "combe" for s in spans)


# --- finding 4: no repr prints an original ------------------------------------------------------

def test_a_span_repr_shows_where_and_what_kind_but_not_the_words():
    shown = repr(Span(0, 17, "Darnell Whitcombe", "PERSON"))
    assert "Darnell" not in shown and "Whitcombe" not in shown
    assert "start=0" in shown and "end=17" in shown and "PERSON" in shown


def test_a_masked_repr_leaves_the_original_text_and_its_spans_out():
    m = mask_text("Zorblax Quendrick paid the bill.", build("vocabThres"))
    assert m.spans and m.original.startswith("Zorblax")  # still there, in memory
    shown = repr(m) + repr(m.spans) + repr(m.markers)
    assert "Zorblax" not in shown and "Quendrick" not in shown
    assert "[MASK]" in shown  # the masked text is what may be shown


# --- finding 9: the grid's public key on licensed corpora ---------------------------------------

def _grid(tmp_path, **kw) -> X.Runner:
    folder = tmp_path / "fisher"
    folder.mkdir(exist_ok=True)
    (folder / "fe_03_00001.txt").write_text("".join(
        f"{i}.0 {i}.5 A: hello my name is kevin walsh and i live in denver number {i}\n" for i in range(30)))
    cfg = X.ExperimentConfig(name="t", datasets=("news", f"fisher:{folder}"), maskings=("vocabThres",),
                             methods=("oracle",), max_train=20, max_test=5, **kw)
    return X.Runner(cfg, progress=False, root=tmp_path / "grid")


def test_the_public_grid_key_draws_only_the_built_in_corpora(tmp_path):
    runner = _grid(tmp_path)
    fisher = runner.cfg.datasets[1]
    spec = X.MethodSpec.parse("mlm:minilm-wiki:topk+typed")
    assert runner.draw_key("news") == GRID_KEY
    secret = runner.draw_key(fisher)
    assert secret != GRID_KEY and len(secret) >= 32 and runner.draw_key(fisher) == secret
    assert runner.engine("vocabThres", spec, 0, dataset=fisher)._key == secret
    assert runner.engine("vocabThres", spec, 0, dataset="news")._key == GRID_KEY
    assert _grid(tmp_path).draw_key(fisher) != secret  # a fresh one per run
    # A kept key makes a licensed corpus's cells repeatable, and is no setting of the results.
    write_key_file(tmp_path / "grid.key")
    kept = _grid(tmp_path, key_file=str(tmp_path / "grid.key"))
    assert kept.draw_key(fisher) == bytes.fromhex((tmp_path / "grid.key").read_text())
    assert kept.key == runner.key and kept.draw_key("news") == GRID_KEY
    os.chmod(tmp_path / "grid.key", 0o644)
    with pytest.raises(RecoverError, match="other users can read"):
        _grid(tmp_path, key_file=str(tmp_path / "grid.key"))


def test_a_config_key_file_is_checked_and_kept_out_of_the_settings_key():
    cfg = X.ExperimentConfig(name="t", datasets=("news",), maskings=("vocabThres",), methods=("oracle",))
    assert X.settings_key(cfg) == X.settings_key(dataclasses.replace(cfg, key_file="/secure/grid.key"))
    with pytest.raises(RecoverError, match="key_file"):
        X.check_config(dataclasses.replace(cfg, key_file=""))
