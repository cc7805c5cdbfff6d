"""`pip install .` (issue 76): a wheel builds from the checkout with the `recover` console
script, the package and the licence, as a data team's install would see it."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_wheel_builds_with_the_recover_command_and_the_licence(tmp_path):
    src = tmp_path / "src"  # a copy: the build leaves build/ and *.egg-info beside pyproject.toml
    src.mkdir()
    for name in ("pyproject.toml", "LICENSE", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "recover_core", src / "recover_core", ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("recover_core-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry = next(n for n in names if n.endswith("entry_points.txt"))
        assert "recover = recover_core.cli:main" in z.read(entry).decode()
        assert any(n.endswith("licenses/LICENSE") or n.endswith("/LICENSE") for n in names)
        assert "recover_core/obfuscator.py" in names and "recover_core/kinds/dates.py" in names
        metadata = z.read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "Provides-Extra: app" in metadata and "Provides-Extra: speech" in metadata
    assert "Provides-Extra: train" in metadata and "Provides-Extra: ray" in metadata
