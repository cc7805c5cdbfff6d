"""``experiment``: the full grid of vats2024 §4 (recover_core.experiment), run from a TOML config.

    python -m recover_core experiment --config assets/experiments/cpu.toml
"""
from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path

from recover_core.cli.common import positive
from recover_core.experiment import Runner, cells, check_config, load_config


def cmd_experiment(args) -> None:
    cfg = load_config(args.config)
    overrides = {k: v for k, v in (("max_train", args.max_train), ("max_test", args.max_test),
                                   ("threads", args.threads), ("output", args.output),
                                   ("seeds", tuple(args.seeds) if args.seeds else None)) if v is not None}
    if overrides:
        cfg = replace(cfg, **overrides)
        check_config(cfg)
    # The rows record the command that ran the cells, not the one that wrote them out.
    command = shlex.join(["python", "-m", "recover_core", *(a for a in sys.argv[1:] if a != "--write-only")])
    if args.import_cells:  # the cells came from three commands, on two machines
        base = shlex.join(["python", "-m", "recover_core", "experiment", "--config", str(args.config)])
        name = args.import_cells.name
        command = (f"{base} --export-job JOB; python -m recover_core.cli.jobs lm-job JOB {name} (a GPU machine); "
                   f"{base} --import-cells {name}")
    runner = Runner(cfg, command, progress=not args.quiet)
    if args.write_only:  # the finished cells so far, e.g. while a long run goes on elsewhere
        done = sum(runner.cell(*c) is not None for c in cells(cfg))
        print(f"{done} of {len(cells(cfg))} cells finished; results: {runner.write_csv()}", file=sys.stderr)
        return
    if args.export_job:
        from recover_core.experiment import lm_job

        dest = lm_job.export(runner, args.export_job, args.job_datasets)
        n = sum(c[0] in (args.job_datasets or cfg.datasets) for c in cells(cfg))
        print(f"LM job for {n} cells: {dest}", file=sys.stderr)
        return
    if args.import_cells:
        from recover_core.experiment import lm_job

        n = lm_job.import_cells(runner, args.import_cells)
        print(f"{n} cells imported; results: {runner.write_csv()}", file=sys.stderr)
        return
    if args.import_smollm2:
        from recover_core.experiment import smollm2_job

        base = shlex.join(["python", "-m", "recover_core", "experiment", "--config", str(args.config)])
        name = args.import_smollm2.name
        command = (f"{base} --export-job JOB; python -m recover_core.cli.jobs smollm2-job JOB {name} --gguf "
                   f"SmolLM2-135M-Instruct.Q4_1.gguf (a GPU machine); {base} --import-smollm2 {name}")
        out = Path(args.output or smollm2_job.OUTPUT)
        n = smollm2_job.import_records(runner, args.import_smollm2, out, command)
        print(f"{n} SmolLM2 cells imported; results: {out}", file=sys.stderr)
        return
    if args.corpora_only:
        n = runner.corpora()
        print(f"{n} obfuscated train sets ready under {runner.root / 'corpora'}", file=sys.stderr)
        return
    runner.run()


def add_parser(sub) -> None:
    p = sub.add_parser("experiment", help="run the grid: masking x method x dataset -> adapted LM -> perplexity",
                       description=__doc__)
    p.set_defaults(fn=cmd_experiment)
    p.add_argument("--config", type=Path, required=True, help="a TOML file (see assets/experiments/)")
    p.add_argument("--max-train", type=positive, default=None, help="override the config")
    p.add_argument("--max-test", type=positive, default=None, help="override the config")
    p.add_argument("--output", default=None, help="override the config's CSV path")
    p.add_argument("--seeds", type=int, nargs="+", default=None, help="override the config's seeds")
    p.add_argument("--threads", type=positive, default=None)
    p.add_argument("--write-only", action="store_true",
                   help="write the CSV from the cells finished so far, and run nothing")
    p.add_argument("--corpora-only", action="store_true",
                   help="mask, fill and fine-tune every cell's train set (cached), and train no LM")
    p.add_argument("--export-job", type=Path, default=None, metavar="DIR",
                   help="write every cell's train set and the LM settings to DIR, for "
                        "python -m recover_core.cli.jobs lm-job on a machine with PyTorch only (a GPU)")
    p.add_argument("--job-datasets", nargs="+", default=None, metavar="DATASET",
                   help="with --export-job: only these datasets' cells (a job per dataset)")
    p.add_argument("--import-cells", type=Path, default=None, metavar="FILE",
                   help="store the records an LM job wrote as this grid's cells, then write the CSV")
    p.add_argument("--import-smollm2", type=Path, default=None, metavar="FILE",
                   help="check the records python -m recover_core.cli.jobs smollm2-job wrote (SmolLM2 adapted per "
                        "news cell), then write their perplexity and WER rows (--output, default "
                        "precomputed/ours/smollm2_grid.csv)")
    p.add_argument("--quiet", action="store_true")


