"""``audit``: the project attacks its own output (recover_core/audit) and prints what came back."""
from __future__ import annotations

import csv
import io
import shlex
import sys
from pathlib import Path

from tqdm import tqdm

from recover_core import atomic
from recover_core.errors import RecoverError

# The grid's tidy columns (results.TIDY_COLUMNS), and how many times a canary was inserted.
COLUMNS = ["dataset", "masking", "method", "metric", "value", "model", "scale", "seed", "command", "repetitions"]


def cmd_audit(args) -> None:
    if args.canaries_job or args.canaries_import:
        return _canaries(args)
    from recover_core.audit.inversion import attack, settings_audited

    if args.size < 20 or args.victims < 1:
        raise RecoverError("--size must be at least 20 names and --victims at least 1 line.")
    command = "python -m recover_core audit " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if \
        sys.argv[1:2] == ["audit"] else f"python -m recover_core audit --size {args.size} --victims {args.victims}"
    rows = []
    print(f"inversion attack: {args.victims} victim lines of census names, a dictionary of {args.size} first names "
          f"and {args.size} surnames; re-identified = the original among at most 10 names mapping to its substitute")
    print(f"{'setting':30s} {'name words':>10s} {'re-identified':>14s} {'among any':>10s} {'chance':>7s} "
          f"{'same in 2 runs':>15s}")
    for setting, published, make in tqdm(settings_audited(), desc="audit", unit="setting", disable=args.quiet):
        r = attack(make, setting=setting, published=published, size=args.size, victims=args.victims, seed=args.seed)
        same = f"{r.same_across_runs:.1%}" if r.same_across_runs is not None else "-"
        print(f"{setting:30s} {r.name_words:10d} {r.reidentified:14.1%} {r.among_any:10.1%} {r.chance:7.1%} {same:>15s}",
              flush=True)
        for metric, value in (("reidentified", r.reidentified), ("reidentified_any", r.among_any),
                              ("reidentified_chance", r.chance), ("same_across_runs", r.same_across_runs)):
            if value is not None:
                rows.append({"dataset": "census-lines", "masking": "entityTagger", "method": setting, "metric": metric,
                             "value": round(value, 4), "model": "pseudonyms", "repetitions": "", "seed": args.seed,
                             "scale": f"{args.victims} victim lines; dictionary of {args.size} first names and "
                                      f"{args.size} surnames (US census 1990)", "command": command})
    if args.csv:
        write_rows(args.csv, rows, replace=lambda row: row["metric"].startswith(("reidentified", "same_across")))


def _canaries(args) -> None:
    """The canary audit's two halves here: the job folder of text, and its records as rows."""
    import json

    from recover_core.audit import canaries

    if args.canaries_job:
        job = canaries.build(args.canaries_job, seed=args.seed, limit=args.limit, progress=not args.quiet)
        print(f"wrote {args.canaries_job}: {len(job['conditions'])} conditions, {len(job['canaries'])} canaries. "
              f"On a GPU: python -m recover_core.audit.canaries {args.canaries_job} OUT.json --model SMOLLM2_FOLDER")
        for masking, m in job["missed"].items():
            print(f"  {masking}: kept the code of {m['code_kept']} and a name word of {m['name_word_kept']} of "
                  f"{m['canaries']} inserted canaries")
        return
    path = args.canaries_import
    if not path.is_file():
        raise RecoverError(f"{path} does not exist: give the records the GPU job wrote.")
    if not args.job or not (args.job / canaries.JOB_FILE).is_file():
        raise RecoverError("--canaries-import needs --job DIR, the folder --canaries-job wrote.")
    job = json.loads((args.job / canaries.JOB_FILE).read_text(encoding="utf-8"))
    records = json.loads(path.read_text(encoding="utf-8"))
    rows = canaries.rows(job, records, args.command or "python -m recover_core audit --canaries-import")
    for r in rows:
        if r["metric"] in ("exposure", "extracted") and r["repetitions"] in (0, 16):
            print(f"{r['masking'] or '-':13s} {r['method']:16s} {r['metric']:10s} x{r['repetitions']:<3} {r['value']}")
    if args.csv:  # a condition's rows are replaced; other conditions' (an earlier job's) are kept
        ran = {(r["masking"], r["method"]) for r in rows}
        write_rows(args.csv, rows, replace=lambda row: row["dataset"] == "news+canaries"
                   and (row["masking"], row["method"]) in ran)


def write_rows(path: Path, rows: list[dict], replace) -> None:
    """Merge ``rows`` into the CSV at ``path`` (the rows ``replace`` picks are dropped first),
    atomically."""
    kept = []
    if path.exists():
        with path.open(newline="", encoding="utf-8") as f:
            kept = [r for r in csv.DictReader(f) if not replace(r)]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS)
    w.writeheader()
    w.writerows(kept + rows)
    atomic.write_text(path, buf.getvalue())


def add_parser(sub) -> None:
    p = sub.add_parser("audit", help="attack our own output: the dictionary inversion of the pseudonyms")
    p.add_argument("--size", type=int, default=1000, help="dictionary: this many first names and as many surnames")
    p.add_argument("--victims", type=int, default=200, help="victim lines of census names to obfuscate")
    p.add_argument("--seed", type=int, default=0, help="which victim lines are drawn")
    p.add_argument("--csv", type=Path, default=None, help="merge the figures into this tidy CSV")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--canaries-job", type=Path, default=None, metavar="DIR",
                   help="canary exposure, step 1: write DIR, the corpora with canaries, masked and filled, for "
                        "`python -m recover_core.audit.canaries DIR OUT.json` (a GPU; 10 LoRA runs)")
    p.add_argument("--limit", type=int, default=None, help="with --canaries-job: the first N train lines only")
    p.add_argument("--canaries-import", type=Path, default=None, metavar="OUT.json",
                   help="canary exposure, step 3: the GPU job's records as rows (with --job DIR and --csv); "
                        "the conditions it holds replace their rows, other conditions' rows stay")
    p.add_argument("--job", type=Path, default=None, help="the folder --canaries-job wrote")
    p.add_argument("--command", default=None, help="the command recorded in the rows")
    p.set_defaults(fn=cmd_audit)
