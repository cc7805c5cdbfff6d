"""``build-lms``: the LMs that ASR fuses (pretrained, oracle, adapted), built into the LM store
(recover_core/experiment/build_lms.py does the building; this file only reads the flags)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from recover_core.asr import lms
from recover_core.errors import RecoverError
from recover_core.experiment import build_lms as B
from recover_core.results.tables import merge_rows


def add_parser(sub) -> None:
    p = sub.add_parser("build-lms", help="build the LMs that ASR fuses (pretrained, oracle, adapted) into the LM store")
    p.add_argument("conditions", nargs="*", default=["oracle"],
                   help="oracle, or MASKING/METHOD as in the grid (e.g. vocabThres/baseline1), or pretrained "
                        "(only the pretrained LM); default: oracle")
    p.add_argument("--config", type=Path, default=B.CONFIG)
    p.add_argument("--pretrain-epochs", type=float, default=1.0,
                   help="1 for a demo (about 9 min on 2 cores); 5 = the grid's (reuses its cached LM)")
    p.add_argument("--family", choices=["transformer", B.SMOLLM2], default="transformer",
                   help="transformer: our LM, pretrained here and fused token by token (default); smollm2: the "
                        "pretrained SmolLM2-135M, adapted with LoRA, rescoring the n-best list")
    p.add_argument("--rank", type=int, default=None,
                   help="smollm2: the LoRA rank (default 16, the grid's); the adapters in assets/lms use 8")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--ship", action="store_true",
                   help="smollm2: then copy these LMs into assets/lms (float16 adapters, model cards), so that "
                        "a fresh clone and a Space offer them with no build")
    p.add_argument("--csv", type=Path, default=None,
                   help="smollm2: then write these LMs' perplexities as a tidy CSV (the Results tab reads "
                        "precomputed/ours/*.csv)")
    p.add_argument("--seed", type=int, action="append", default=None, dest="seeds", metavar="SEED",
                   help="smollm2: a seed to build, once per seed (LoRA's initialisation and data order, and the "
                        "Top-K draws of the fill); an LM of seed N > 0 is stored as NAME-sN (default: 0)")
    p.add_argument("--export-job", type=Path, default=None, metavar="DIR",
                   help="smollm2: make these cells' train texts here, for --seeds, and write the folder "
                        "python -m recover_core.cli.jobs smollm2-job adapts them from (a GPU machine); build nothing")
    p.add_argument("--import-job", type=Path, default=None, metavar="FILE",
                   help="smollm2: check the records that job wrote against this machine's train texts and add them "
                        "to --csv as rows with their seed; build nothing")
    p.add_argument("--quiet", action="store_true")

    def cmd(args) -> None:
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        args.seeds = list(dict.fromkeys(args.seeds or [0]))
        if args.family != B.SMOLLM2 and (args.export_job or args.import_job or args.seeds != [0]):
            raise RecoverError("--seed, --export-job and --import-job are for --family smollm2.")
        rank = [f"--rank {args.rank}"] if args.rank else []
        seeds = [f"--seed {s}" for s in args.seeds] if args.seeds != [0] else []
        if args.family == B.SMOLLM2 and args.export_job:
            command = " ".join(["python -m recover_core build-lms --family smollm2", *rank, *seeds,
                                f"--export-job {args.export_job}", *args.conditions])
            dest = B.export_job(B.runner(args.config, None, not args.quiet), args.export_job, args.conditions,
                              args.seeds, args.rank, command=command)
            n = len(json.loads((dest / "job.json").read_text())["cells"])
            size = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file()) / 2 ** 20
            print(f"job: {n} cells in {dest} ({size:.1f} MiB); there: python -m recover_core.cli.jobs smollm2-job "
                  f"{dest} OUT.json --gguf SmolLM2-135M-Instruct.Q4_1.gguf --workers 12 --threads 1 --deadline S",
                  file=sys.stderr)
            return
        if args.family == B.SMOLLM2 and args.import_job:
            if not args.csv:
                raise RecoverError("--import-job needs --csv, the CSV its rows go into.")
            job = json.loads(args.import_job.read_text()) if args.import_job.is_file() else {}
            there = job.get("job_command") or "python -m recover_core build-lms --family smollm2 ... --export-job JOB"
            command = (f"{there}; python -m recover_core.cli.jobs smollm2-job JOB {args.import_job.name} --gguf "
                       f"SmolLM2-135M-Instruct.Q4_1.gguf (a GPU machine); python -m recover_core build-lms --family "
                       f"smollm2 {' '.join(rank)} --import-job {args.import_job.name} --csv {args.csv}")
            n, notes = B.import_job(B.runner(args.config, None, not args.quiet), args.import_job, args.csv, command)
            for line in notes:
                print(line, file=sys.stderr)
            print(f"{n} rows added to {args.csv}", file=sys.stderr)
            return
        if args.family == B.SMOLLM2:
            command = " ".join(["python -m recover_core build-lms --family smollm2", *rank, *seeds, *args.conditions,
                                *(["--ship"] if args.ship else []), *([f"--csv {args.csv}"] if args.csv else [])])
            built, names = [], []
            for seed in args.seeds:
                built += B.build_smollm2(args.conditions, args.config, seed=seed, progress=not args.quiet,
                                       rank=args.rank)
                done = [B.smollm2_name(m, meth, seed) for m, meth in B.wanted(args.conditions)]
                names += done
                if args.csv:  # after each seed: a run cut off in its third seed keeps the first two's rows
                    merge_rows(args.csv, B.perplexity_rows(list(dict.fromkeys(done)), command))
            if args.ship:
                print(f"shipped: {', '.join(p.stem for p in B.ship(names, command))}", file=sys.stderr)
        else:
            built = B.build(args.conditions, args.config, args.pretrain_epochs, progress=not args.quiet)
        print(f"built: {', '.join(built) or 'nothing new'}; available: {', '.join(lms.available())} "
              f"(in {lms.lm_dir()})", file=sys.stderr)
    p.set_defaults(fn=cmd)
