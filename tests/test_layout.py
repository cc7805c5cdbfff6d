"""The package's shape (issues 12 and 44): files a newcomer can read, packages that depend
downward only, and models that know nothing of their users."""
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
    for name in ("bundles.py", "adapters.py", "minilm.py", "sources.py"):
        users = {m for m in _imported(PACKAGE / "models" / name)
                 if m.startswith(("recover_core.training", "recover_core.filling", "recover_core.experiment"))}
        assert not users, f"{name} imports {users}"
    # the registry finds the loaders, never the reverse
    for name in ("adapters.py", "minilm.py", "sources.py"):
        assert not {m for m in _imported(PACKAGE / "models" / name) if m.startswith("recover_core.models.bundles")}, name


def test_loading_a_bundle_pulls_in_no_trainer():
    code = ("import sys, recover_core.models.bundles, recover_core.models.adapters; "
            "print([m for m in sys.modules if m.startswith(('recover_core.training', 'recover_core.filling'))])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout.strip()
    assert out == "[]"


def _graph() -> dict[str, dict[str, set[str]]]:
    """Package-level imports: each top-level package or module of recover_core -> the ones it
    imports, with the modules that do (function-local imports count: they knot the code just
    the same). The package's own __init__ (the offline environment, the lazy engine) is not a node."""
    def node(module: str) -> str | None:
        parts = module.split(".")
        name = parts[1] if len(parts) > 1 else ""
        return name if (PACKAGE / "models" / name).is_dir() or (PACKAGE / f"{name}.py").exists() else None

    out: dict[str, dict[str, set[str]]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("").as_posix().replace("/", ".")
        src = node(rel)
        for m in _imported(path):
            dst = node(m)
            if src and dst and dst != src:
                out.setdefault(src, {}).setdefault(dst, set()).add(rel)
    return out


def _first_circle(graph: dict) -> list[str]:
    """A circle of nodes in ``graph`` (node -> the nodes it imports), depth first; [] if none."""
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(v: str, path: list[str]) -> list[str]:
        seen[v] = 1
        for w in sorted(graph.get(v, ())):
            if seen.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in seen and (circle := visit(w, path + [w])):
                return circle
        seen[v] = 2
        return []

    return next((c for v in sorted(graph) if v not in seen and (c := visit(v, [v]))), [])


def test_no_import_cycle_between_packages():
    graph = _graph()
    cycle = _first_circle(graph)
    hops = [f"{a} -> {b} ({', '.join(sorted(graph[a][b]))})" for a, b in zip(cycle, cycle[1:])]
    assert not cycle, "import cycle: " + "; ".join(hops)


def test_nothing_imports_the_command_line():
    users = {a for a, deps in _graph().items() if "cli" in deps and a not in ("cli", "__main__")}
    assert not users, f"these import recover_core.cli: {users}"


def test_no_recognizer_reads_the_held_out_names():
    # bench/heldout_names.py measures recall on Mimesis's names because nothing in the package
    # reads them; a recognizer that did would be measured on its own list (issue 45).
    readers = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
               if "mimesis" in p.read_text(encoding="utf-8").lower()]
    assert not readers, f"{readers} read the held-out name source"


def test_at_most_six_modules_at_the_top():
    # Issue 76: the flat modules live in folders named after what they are; at the top stay the
    # package's face: the engine, the two registries, its one error, __init__ and __main__.
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 6, f"move these into folders: {top}"


def test_argparse_only_in_the_command_line():
    users = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
             if p.relative_to(PACKAGE).parts[0] != "cli"
             and any(isinstance(n, (ast.Import, ast.ImportFrom)) and "argparse" in ast.unparse(n)
                     or isinstance(n, ast.Attribute) and n.attr in ("add_argument", "add_parser", "parse_args")
                     for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert not users, f"argument parsing belongs in recover_core/cli/: {users}"


def test_no_import_circle_between_files():
    """Files, not only packages: a circle of files that import each other (function-local
    imports included) cannot be read one file at a time. A package's __init__ is a node."""
    def name(path: Path) -> str:
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    files = {name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("recover_core"):
                deps |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                         for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("recover_core")}
        graph[mod] = {d for d in deps if d in files and d != mod}
    circle = _first_circle(graph)
    assert not circle, "import circle: " + " -> ".join(circle)
