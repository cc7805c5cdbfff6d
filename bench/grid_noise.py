"""Run-to-run noise of the experiment grid: one cell adapted again with other data-order
seeds, from the same pretrained LM and the same obfuscated corpus (both from the grid's
cache, so run the grid first). Prints each perplexity and its ratio to seed 0's. This is
the data-order part of the noise only; the grid's own seeds also redraw Top-K and FT.

    python bench/grid_noise.py --config assets/experiments/cpu.toml \\
        --cell fortunes::oracle --cell fortunes:vocabThres:mlm:minilm-wiki:topk --seeds 0 1 2
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    import torch

    from recover_core.experiment import Runner, load_config
    from recover_core.lm.train import TrainConfig, perplexity, train

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=Path("assets/experiments/cpu.toml"))
    ap.add_argument("--cell", action="append", required=True, help="dataset:masking:method (masking empty for oracle)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = load_config(args.config)
    runner = Runner(cfg, progress=False)
    base, tok, _ = runner.pretrained()
    for cell in args.cell:
        dataset, masking, method = cell.split(":", 2)
        texts, _ = runner.train_text(dataset, masking, method, cfg.seeds[0])
        first = None
        for seed in args.seeds:
            model = copy.deepcopy(base)
            train(model, tok, texts, TrainConfig(epochs=cfg.adapt_epochs, batch_size=cfg.batch_size, lr=cfg.adapt_lr,
                                                 seed=seed, bf16=cfg.bf16), progress=False)
            ppl = perplexity(model, tok, runner.split(dataset)[1])["ppl_word"]
            first = first or ppl
            print(f"{cell:45s} seed {seed}: perplexity {ppl:8.1f}  ratio to seed {args.seeds[0]}: {ppl / first:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
