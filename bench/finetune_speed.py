"""Training speed and memory of `finetune-mlm` and `finetune-llm` on this machine.

Each command runs as a user runs it (a subprocess, so peak memory is its own) for a
few steps in float32 and in bfloat16 autocast; the reference for the ratio is the
float32 run of the same command, measured in the same run of this script. The
figures are the commands' own report (optimizer steps only, no evaluation or saving).

    python bench/finetune_speed.py [--steps 30] [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = re.compile(r"([\d.]+) steps/s, ([\d.]+) tokens/s; peak memory (\d+) MB")


def run(cmd: list[str]) -> tuple[float, float, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "recover_core", *cmd], capture_output=True, text=True, env=env, cwd=ROOT)
    m = REPORT.search(p.stderr)
    if p.returncode != 0 or not m:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return float(m.group(1)), float(m.group(2)), int(m.group(3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    common = ["--steps", str(args.steps), "--threads", str(args.threads), "--eval-every", "0", "--quiet"]
    commands = {
        "finetune-mlm (MiniLM, LoRA r=32, batch 32)": ["finetune-mlm", "--from-minilm", "--lora-r", "32",
                                                      "--lora-targets", "query,key,value,dense", "--eval-items", "50"],
        "finetune-llm (SmolLM2-135M, LoRA r=16, batch 8)": ["finetune-llm"],
    }
    print(f"{args.steps} steps, {args.threads} threads; ratio = bf16 steps/s over fp32 steps/s (same command)")
    print(f"{'command':50s} {'precision':9s} {'steps/s':>8s} {'tokens/s':>9s} {'peak MB':>8s} {'ratio':>6s}")
    for name, cmd in commands.items():
        results = {}
        for precision in ("fp32", "bf16"):
            with tempfile.TemporaryDirectory() as out:
                extra = ["--bf16"] if precision == "bf16" else []
                results[precision] = run(cmd + common + extra + ["--out", out])
            sps, tps, mb = results[precision]
            ratio = sps / results["fp32"][0]
            print(f"{name:50s} {precision:9s} {sps:8.3f} {tps:9.1f} {mb:8d} {ratio:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
