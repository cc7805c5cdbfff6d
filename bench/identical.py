"""Do `obfuscate`, `mask` and a grid cell give the same bytes at two commits, under one key?

A refactor (issue 76: modules moved into folders, the engine's steps shared) must change no
output. This prints a digest of each output for the tree it runs in; with ``--against REV`` it
also runs itself in a git worktree of REV and compares, digest by digest.

    python bench/identical.py --against 1b33b21     # exit 1 if any output differs

The inputs are written here, not drawn from a test or a word list the code reads. The key is a
fixed public one: this compares outputs, it protects nothing.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY = hashlib.sha256(b"bench/identical.py: a public key, for comparing outputs only").digest()
SENTENCES = [
    "Call Marguerite Okonkwo on 020 7946 0958 or write to m.okonkwo@brightmail.co.uk today.",
    "On 14 March 2021 the patient, a 47-year-old Nigerian woman, was seen in Leeds by Dr Patel.",
    "My card is 4111 1111 1111 1111 and my IBAN is GB82 WEST 1234 5698 7654 32.",
    "Henrik Solberg met Henrik Solberg's sister in Bergen last Tuesday at 10:30.",
    "The applicant, Mr Tomasz Wielgosz, was born on 2 February 1961 and lives at 12 Elm Street.",
    "we spoke to jim about the invoice and he said the price was fifty dollars",
]
DOCUMENT = ("The applicant, Mrs Agnieszka Borowczyk, was born in 1958 and lives in Gdynia.\n\n"
            "On 3 May 1999 Mrs Borowczyk lodged a complaint (no. 36110/97) with the Gdańsk Regional Court. "
            "She was 41 years old. On 17 June 1999 the court dismissed it; A. Borowczyk appealed in July 1999.")


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def outputs() -> dict[str, str]:
    sys.path.insert(0, str(Path.cwd()))
    from recover_core import Obfuscator
    from recover_core.experiment.config import ExperimentConfig
    from recover_core.experiment.runner import Runner

    out = {}
    for protect in ("direct", "quasi"):
        engine = Obfuscator(key=KEY, protect=protect)
        out[f"mask {protect}"] = digest([engine.mask(s).masked for s in SENTENCES])
        out[f"obfuscate {protect}"] = digest([engine.obfuscate(s).text for s in SENTENCES])
        out[f"obfuscate_document {protect}"] = digest(engine.obfuscate_document(DOCUMENT).text)
    out["obfuscate entityTagger mlm topk"] = digest(
        [Obfuscator(key=KEY, filler="mlm", method="topk", seed=1).obfuscate(s).text for s in SENTENCES])
    with tempfile.TemporaryDirectory() as root:
        cfg = ExperimentConfig(name="identical", datasets=("news",), maskings=("entityTagger",),
                               methods=("mlm:minilm-mlm:topk", "mlm:minilm-mlm:topk+typed"), max_train=40,
                               max_test=10)
        runner = Runner(cfg, progress=False, root=Path(root))
        for method in cfg.methods:
            out[f"grid cell news/entityTagger/{method}"] = digest(runner.train_text("news", "entityTagger", method, 0)[0])
    return out


def at(rev: str) -> dict[str, str]:
    """This script's outputs for the tree at ``rev``, run in a throwaway worktree."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), rev], check=True)
        try:
            env = dict(os.environ, PYTHONPATH=str(tree))
            run = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json"], cwd=tree, env=env,
                                 capture_output=True, text=True)
            if run.returncode:
                sys.exit(f"{rev}: {run.stderr[-2000:]}")
            return json.loads(run.stdout.strip().splitlines()[-1])
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", metavar="REV", help="compare with this commit's outputs")
    ap.add_argument("--json", action="store_true", help="print the digests as one JSON line")
    args = ap.parse_args()
    here = outputs()
    if args.json:
        print(json.dumps(here))
        return
    there = at(args.against) if args.against else {}
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    print(f"| output | {head} (tree) |" + (f" {args.against} | same |" if there else ""))
    print("|---|---|" + ("---|---|" if there else ""))
    differ = 0
    for name, value in here.items():
        if there:
            same = there.get(name) == value
            differ += not same
            print(f"| {name} | {value} | {there.get(name, '-')} | {'yes' if same else 'NO'} |")
        else:
            print(f"| {name} | {value} |")
    if there:
        print(f"\n{len(here) - differ} of {len(here)} outputs byte-identical")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
