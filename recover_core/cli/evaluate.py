"""``evaluate-fillers``: held-out masked-word top-1 and top-10 of every filler, on the same items."""
from __future__ import annotations

import argparse
import json

from recover_core.cli.common import positive
from recover_core.training.evaluate_fillers import DEFAULT_FILLERS, __doc__ as DOC, format_results, run


def cmd_evaluate_fillers(args) -> None:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    specs = [s.strip() for s in args.fillers.split(",") if s.strip()]
    corpora = [c.strip() for c in args.corpus.split(",") if c.strip()] if args.corpus else None
    if args.json:
        print(json.dumps(run(specs, args.items, args.seed, args.k, corpora, progress=not args.quiet), indent=2))
        return
    print(format_results([], args.k), flush=True)  # the header; each row as soon as it is known
    run(specs, args.items, args.seed, args.k, corpora, progress=not args.quiet,
        on_row=lambda r: print(format_results([r], args.k).split("\n", 1)[1], flush=True))


def add_parser(sub) -> None:
    p = sub.add_parser("evaluate-fillers", help="held-out masked-word top-1/top-10 of every filler, same items",
                       description=DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(fn=cmd_evaluate_fillers)
    p.add_argument("--fillers", default=",".join(DEFAULT_FILLERS),
                   help="kind:model pairs, comma-separated (kinds: mlm, infill, instruct)")
    p.add_argument("--items", type=positive, default=200)
    p.add_argument("--k", type=positive, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--corpus", default=None, help="held-out split of these corpora, mixed equally (default: all four)")
    p.add_argument("--threads", type=positive, default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
