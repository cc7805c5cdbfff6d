"""``claims``: vats2024 §4.3's claims checked on tidy results, printed as markdown."""
from __future__ import annotations

from pathlib import Path

from recover_core.results.claims import claim_datasets, claims_markdown
from recover_core.errors import RecoverError
from recover_core.results.tables import SKIPPED, grid_markdown, load, read_tidy


def cmd_claims(args) -> None:
    if args.csv:
        missing = [p for p in args.csv if not Path(p).is_file()]
        if missing:
            raise RecoverError(f"No such file: {', '.join(map(str, missing))}.")
        df = read_tidy(args.csv)
        if SKIPPED:
            raise RecoverError("; ".join(SKIPPED) + ".")
    else:
        df = load()
    present = claim_datasets(df)
    unknown = [d for d in args.dataset or [] if d not in present]
    if unknown:
        raise RecoverError(f"No perplexity or WER results for {', '.join(unknown)}. "
                           f"Present: {', '.join(present) or 'none'}.")
    if args.tables:
        for d in args.dataset or present:
            print(grid_markdown(df, d))
    print(claims_markdown(df, args.dataset or present, args.every_claim), end="")


def add_parser(sub) -> None:
    p = sub.add_parser("claims", help="check vats2024 §4.3's claims on perplexity and WER results (a markdown table)")
    p.set_defaults(fn=cmd_claims)
    p.add_argument("--csv", type=Path, nargs="+", help="tidy CSVs (default: everything in precomputed/)")
    p.add_argument("--dataset", nargs="+", help="datasets to check (default: all with perplexity or WER results)")
    p.add_argument("--tables", action="store_true",
                   help="first print each dataset's perplexity table (mean over seeds, range, leak rate)")
    p.add_argument("--every-claim", action="store_true",
                   help="check every claim on every dataset, not only where vats2024 draws it (its perplexity "
                        "claims come from Fisher and Reddit; news stands in for WSJ)")
