"""Training speed of the downstream LM (recover_core/lm) on this machine.

Trains each preset for a few steps on news sentences in float32 and in bfloat16
autocast; the reference for the ratio is the float32 run of the same preset, measured
in the same run of this script.

    python bench/lm_speed.py [--steps 20] [--threads 2]
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    import torch

    from recover_core.data import corpora
    from recover_core.lm import tokenizer as T
    from recover_core.lm.model import PRESETS
    from recover_core.lm.train import TrainConfig, new_model, train

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--presets", default="cpu,paper")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tok = T.load()
    sents = corpora.split("news")[0][: 32 * args.steps]
    epochs = args.steps / math.ceil(len(sents) / 32)
    print(f"{args.steps} steps of batch 32 news sentences, {args.threads} threads; ratio = bf16 over fp32 tokens/s")
    print(f"{'preset':8s} {'params':>8s} {'precision':9s} {'tokens/s':>9s} {'ratio':>6s}")
    for name in args.presets.split(","):
        ref = None
        for bf16 in (False, True):
            torch.manual_seed(0)
            model = new_model(PRESETS[name], tok)
            s = train(model, tok, sents, TrainConfig(epochs=epochs, bf16=bf16), progress=False)
            ref = ref or s["tokens_per_s"]
            print(f"{name:8s} {model.n_params() / 1e6:7.1f}M {'bf16' if bf16 else 'fp32':9s} {s['tokens_per_s']:9.1f} "
                  f"{s['tokens_per_s'] / ref:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
