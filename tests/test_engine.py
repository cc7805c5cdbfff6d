"""The public engine (recover_core.Obfuscator), through its API as a Python user calls it, and
the proof that every path obfuscates through it: the same text for the same settings."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import cli_run
from recover_core import Obfuscator, Result, obfuscate
from recover_core.errors import RecoverError
from recover_core.experiment.runner import GRID_KEY
from recover_core.pseudonyms import genders, write_key_file

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def top1() -> Obfuscator:
    return Obfuscator(method="top1", seed=0, key=GRID_KEY)  # the grid's public key: every path below can take it


def test_the_readme_example_runs_as_written(capsys):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Python API.*?```python\n(.*?)```", readme, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    r, results = scope["r"], scope["results"]
    printed = capsys.readouterr().out
    assert isinstance(r, Result) and r.text in printed
    assert not {"Tom", "Chicago", "Margaret"} & set(re.findall(r"\w+", r.text))
    assert [x.original for x in r.replacements] == ["Tom", "Chicago", "Margaret"]
    assert all(r.text[x.start : x.end] == x.substitute for x in r.replacements)
    assert [x.label for x in r.replacements] == ["PERSON", "GPE", "PERSON"] and r.replacements[0].candidates
    # consistent=True: one substitute per person across the two lines
    first = {x.original: x.substitute for x in results[0].replacements}
    second = {x.original: x.substitute for x in results[1].replacements}
    assert first == second and len(set(first.values())) == 2
    assert [(s.text, s.label) for s in scope["spans"]][0] == ("Maria", "PERSON")


@pytest.mark.parametrize("settings, message", [
    ({"method": "top3"}, "Unknown filling method 'top3'"),
    ({"k": 0}, "K must be from 1 to 50"),
    ({"technique": "regexList"}, "Unknown masking technique"),
    ({"filler": "gpt"}, "Unknown filler 'gpt'"),
    ({"rules": "none"}, "Unknown rules 'none'"),
    ({"sampling": "softmax"}, "Unknown Top-K sampling"),
    ({"filler": "infill", "one_pass": True}, "one_pass is for the MLM filler"),
    ({"types": ["PERSONS"]}, "Unknown entity type 'PERSONS'"),
    ({"seed": "zero"}, "The seed must be a whole number"),
    ({"methd": "top1"}, "Unknown setting 'methd'"),
])
def test_settings_are_checked_when_the_engine_is_made(settings, message):
    with pytest.raises(RecoverError, match=re.escape(message)):
        Obfuscator(**settings)


def test_bad_text_and_bad_spans_get_clear_messages(top1):
    with pytest.raises(RecoverError, match="empty"):
        top1.obfuscate("   ")
    with pytest.raises(RecoverError, match="already contains the marker"):
        top1.obfuscate("Hello [MASK] there.")
    with pytest.raises(RecoverError, match="not inside the text"):
        top1.replace("Call Maria.", [(5, 50, "PERSON")])
    with pytest.raises(RecoverError, match="overlap"):
        top1.replace("Call Maria Lopez.", [(5, 10, "PERSON"), (8, 16, "PERSON")])
    with pytest.raises(RecoverError, match="Unknown span label"):
        top1.replace("Call Maria.", [(5, 10, "HUMAN")])


def test_replace_applies_every_rule_to_spans_from_elsewhere(top1):
    """Spans another detector found (or a person edited): the names keep their gender, two
    people get two names, no original comes back, and words outside the spans stay."""
    text = "Yesterday Maria Lopez phoned Daniel about the invoice."
    spans = [{"start": 10, "end": 15, "label": "PERSON"}, {"start": 16, "end": 21, "label": "PERSON"},
             (29, 35, "PERSON")]
    r = top1.replace(text, spans)
    assert r.text.startswith("Yesterday ") and r.text.endswith(" about the invoice.")
    assert [x.original for x in r.replacements] == ["Maria Lopez", "Daniel"]  # a name's two words: one person
    maria, daniel = (x.substitute for x in r.replacements)
    assert genders().get(maria.split()[0].lower()) == "f" and genders().get(daniel.lower()) == "m"
    assert maria.split()[0] != daniel and r.leaks == 0


def test_a_result_shows_no_original_unless_asked(top1):
    r = top1.obfuscate("Margaret Thatcher visited Bristol.")
    assert "Thatcher" not in repr(r) and "Bristol" not in repr(r)
    public = r.public(candidates=True)
    assert "Thatcher" not in str(public) and "Bristol" not in str(public)
    assert {x.original for x in r.replacements} == {"Margaret Thatcher", "Bristol"}  # asked for: in memory


def test_the_paper_procedure_is_a_setting_not_another_path():
    ours, paper = Obfuscator(method="top1"), Obfuscator(method="top1", rules="paper")
    text = "Maria flew from Boston to Denver with Maria's brother."
    a, b = ours.obfuscate(text), paper.obfuscate(text)
    assert paper.filler is ours.filler  # one model, two procedures
    assert {x.label for x in paper.filler_inputs([_item(paper, text)])[0].markers} == {"MASK"}
    assert a.leaks == 0 and len({x.substitute for x in a.replacements if x.original == "Maria"}) == 1
    assert len(b.replacements) == len(a.replacements)


def _item(ob, text):
    from recover_core.filling import MaskInput

    m = ob.mask(text)
    return MaskInput(m.masked, m.markers)


def test_a_line_gets_the_same_text_alone_or_in_a_batch():
    """Draws are seeded by the masked line, not its place: Top-K alone == Top-K in a batch."""
    ob = Obfuscator(method="topk", seed=3)
    lines = ["Tom met Ann in Paris.", "Nobody here.", "Ann wrote to Tom from Lagos.", "Tom met Ann in Paris."]
    batch = [r.text for r in ob.obfuscate_many(lines)]
    assert batch == [ob.obfuscate(t).text for t in lines] and batch[0] == batch[3]
    assert batch != [r.text for r in Obfuscator(method="topk", seed=4).obfuscate_many(lines)]


def test_the_one_off_form_is_the_engine(top1):
    assert obfuscate("Tom met Ann in Paris.", method="top1", key=GRID_KEY).text == top1.obfuscate("Tom met Ann in Paris.").text


def test_every_path_writes_the_same_text(tmp_path, top1):
    """For one setting, seed and key, on 200 news lines: the API, the `obfuscate` command, the
    grid's fill of a cell run with the product's rules, and the Text tab's MLM Top-1 column."""
    from recover_core import experiment as X
    from recover_core.explorer import sentence as explore

    method = "mlm:minilm-mlm:top1+typed"  # +typed: the engine with our rules
    cfg = X.ExperimentConfig(name="same", datasets=("news",), maskings=("entityTagger",), methods=(method,),
                             max_train=200, max_test=10, type_check=True)
    runner = X.Runner(cfg, progress=False, root=tmp_path / "grid")
    lines = runner.split("news")[0]
    assert len(lines) == 200

    api = [r.text for r in top1.obfuscate_many(lines)]
    grid = runner.train_text("news", "entityTagger", method, 0)[0]
    src, out = tmp_path / "news.txt", tmp_path / "out.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    key = tmp_path / "grid.key"
    write_key_file(key, GRID_KEY)
    cli_run.run("obfuscate", src, "-o", out, "--method", "top1", "--seed", "0", "--quiet", "--key-file", key)
    command = out.read_text(encoding="utf-8").splitlines()
    column = explore.Column("mlm", "top1")
    tab = []
    for line in lines:
        m = explore.mask(line, "entityTagger", 10000, "mask")
        tab.append(explore.fill(m, column, "minilm-mlm", 10, 0, "entityTagger", 10000, key=GRID_KEY).text
                   if m.spans else m.masked)
    assert sum(a != b for a, b in zip(api, lines)) > 100  # most lines hold something private
    assert command == api
    assert grid == api
    assert tab == api
