"""The package's shape (issue 12, item 6): files a newcomer can read, and models that know
nothing of their users."""
import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "recover_core"
MAX_LINES = 500


def test_no_module_is_over_500_lines():
    long = {p.relative_to(PACKAGE).as_posix(): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these: {long}"


def _imported(path: Path) -> set[str]:
    """Every recover_core module a file imports, at the top or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("recover_core"):
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("recover_core")}
    return out


def test_models_do_not_import_their_users():
    # bundles and adapters load models; trainers, fillers and the grid use them, never the reverse.
    for name in ("bundles.py", "adapters.py", "minilm.py"):
        users = {m for m in _imported(PACKAGE / name)
                 if m.startswith(("recover_core.training", "recover_core.filling", "recover_core.experiment"))}
        assert not users, f"{name} imports {users}"


def test_loading_a_bundle_pulls_in_no_trainer():
    code = ("import sys, recover_core.bundles, recover_core.adapters; "
            "print([m for m in sys.modules if m.startswith(('recover_core.training', 'recover_core.filling'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout.strip()
    assert out == "[]"
