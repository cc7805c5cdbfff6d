"""``audit``: the project attacks its own output (recover_core/audit) and prints what came back."""
from __future__ import annotations

import csv
import io
import shlex
import sys
from pathlib import Path

from tqdm import tqdm

from recover_core.runtime import atomic
from recover_core.errors import RecoverError

# The grid's tidy columns (results.TIDY_COLUMNS), and how many times a canary was inserted.
COLUMNS = ["dataset", "masking", "method", "metric", "value", "model", "scale", "seed", "command", "repetitions"]


def cmd_audit(args) -> None:
    if args.canaries_job or args.canaries_import:
        return _canaries(args)
    if args.name_exposure:
        return _name_exposure(args)
    if args.replay or args.membership:
        return _attacks(args)
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
              f"On a GPU: python -m recover_core.cli.jobs canaries-job {args.canaries_job} OUT.json --model SMOLLM2_FOLDER")
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


def _command(default: str) -> str:
    return "python -m recover_core audit " + " ".join(shlex.quote(str(a)) for a in sys.argv[2:]) \
        if sys.argv[1:2] == ["audit"] else default


def _attacks(args) -> None:
    """replay and membership: attacks on the released text through the real engine."""
    from recover_core.obfuscator import Obfuscator

    if args.victims < 1 or args.candidates < 20:
        raise RecoverError("--victims must be at least 1 line and --candidates at least 20 names.")
    rows, scale_seed = [], args.seed

    def row(metric: str, method: str, value: float, scale: str, command: str) -> dict:
        return {"dataset": "news-heldout-names", "masking": "entityTagger", "method": method, "metric": metric,
                "value": round(value, 4), "model": "pseudonyms", "repetitions": "", "seed": scale_seed,
                "scale": scale, "command": command}

    if args.replay:
        from recover_core.audit import heldout, replay

        r = replay.attack(lambda key: Obfuscator(key=key), victims=args.victims, candidates=args.candidates,
                          seed=args.seed, progress=not args.quiet)
        command = _command(f"python -m recover_core audit --replay --victims {args.victims} "
                           f"--candidates {args.candidates}")
        scale = (f"{r.victims} victim lines (news sentences with a {heldout.source()} name); "
                 f"{r.candidates} candidate names each; re-identified within {replay.MAX_CANDIDATES}")
        print(f"replay: {r.victims} victims, {r.candidates} candidates each; masker missed {r.missed:.1%}; "
              f"re-identified within {replay.MAX_CANDIDATES}: secret key {r.secret:.1%}, leaked key {r.leaked:.1%} "
              f"(the true name among any matches {r.leaked_any:.1%}), chance {r.chance:.1%}; masked line rebuilt "
              f"exactly {r.rebuilt:.1%}", flush=True)
        rows += [row("replay", m, v, scale, command) for m, v in (
            ("secret key", r.secret), ("leaked key", r.leaked), ("leaked key, any number of matches", r.leaked_any),
            ("chance", r.chance), ("masker missed", r.missed))]
    if args.membership:
        from recover_core.audit import membership

        command = _command(f"python -m recover_core audit --membership --members {args.members}")
        for m in membership.attack(lambda key: Obfuscator(key=key), members=args.members, seed=args.seed,
                                   progress=not args.quiet):
            print(f"membership ({m.setting}): precision {m.precision:.1%} against a base rate of "
                  f"{m.base_rate:.1%} ({m.guessed} guessed of {m.population}); the commonest quarter only: "
                  f"{m.common_precision:.1%} against {m.common_base_rate:.1%} ({m.common_guessed} guessed)", flush=True)
            scale = (f"{m.population} census names, {m.members} of them originals in {m.lines} lines obfuscated "
                     f"with consistent=True; guess: a name never released as a substitute was an original")
            rows += [row("membership", f"{m.setting}: precision", m.precision, scale, command),
                     row("membership", f"{m.setting}: base rate", m.base_rate, scale, command),
                     row("membership", f"{m.setting}: precision, commonest quarter", m.common_precision, scale,
                         command),
                     row("membership", f"{m.setting}: base rate, commonest quarter", m.common_base_rate, scale,
                         command)]
    if args.csv:
        ran = {r["metric"] for r in rows}
        write_rows(args.csv, rows, replace=lambda row: row["metric"] in ran)


def _name_exposure(args) -> None:
    """name_exposure: the job folder made here (once), its LMs adapted and attacked on this
    machine's CPU (resumable), and the rows merged into --csv."""
    import json

    from recover_core.audit import exposure as E

    job_file = args.name_exposure / E.JOB_FILE
    if job_file.is_file():
        job = json.loads(job_file.read_text(encoding="utf-8"))
    else:
        job = E.build(args.name_exposure, limit=args.limit or 256, per_level=args.per_level, epochs=args.epochs,
                      seed=args.seed, progress=not args.quiet)
    print(f"name canaries: the masker kept a name word in {job['name_word_kept']} "
          f"of {job['canaries_per_kind']} per kind", flush=True)
    conditions = args.conditions.split(",") if args.conditions else E.CONDITIONS
    if bad := [c for c in conditions if c not in E.CONDITIONS]:
        raise RecoverError(f"--conditions: {bad[0]!r} is not one of {', '.join(E.CONDITIONS)}.")
    records = E.load_records(args.name_exposure) if args.no_train else \
        E.run(args.name_exposure, threads=args.threads, conditions=conditions, progress=not args.quiet)
    for cond, levels in E.summary(job, records).items():
        print(f"{cond:22s} " + "  ".join(f"x{lv}: {m:.2f} (sd {sd:.2f}, n {n})" for lv, (m, sd, n) in levels.items()))
    rows = E.rows(job, records, _command(f"python -m recover_core audit --name-exposure {args.name_exposure}"))
    if args.csv and rows:
        write_rows(args.csv, rows, replace=lambda row: row["metric"] == "name_exposure")


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
                        "`python -m recover_core.cli.jobs canaries-job DIR OUT.json` (a GPU; 10 LoRA runs)")
    p.add_argument("--limit", type=int, default=None, help="with --canaries-job: the first N train lines only")
    p.add_argument("--canaries-import", type=Path, default=None, metavar="OUT.json",
                   help="canary exposure, step 3: the GPU job's records as rows (with --job DIR and --csv); "
                        "the conditions it holds replace their rows, other conditions' rows stay")
    p.add_argument("--job", type=Path, default=None, help="the folder --canaries-job wrote")
    p.add_argument("--command", default=None, help="the command recorded in the rows")
    p.add_argument("--replay", action="store_true",
                   help="replay: the leaked-key attacker rebuilds each victim's masked line from the output and "
                        "replays the engine over --candidates held-out names (and with a guessed key)")
    p.add_argument("--candidates", type=int, default=1000, help="replay: candidate names per victim")
    p.add_argument("--membership", action="store_true",
                   help="membership: which census names were originals, guessed from the substitutes released "
                        "under consistent=True")
    p.add_argument("--members", type=int, default=300, help="membership: originals in the simulation")
    p.add_argument("--name-exposure", type=Path, default=None, metavar="DIR",
                   help="name_exposure: name canaries (census, lower case, held-out world names, inside an "
                        "e-mail) in the first --limit news lines (default 256), SmolLM2 + LoRA adapted here on "
                        "the clean corpus (Oracle) and on the engine's output; DIR keeps the job and its records "
                        "(a second call resumes)")
    p.add_argument("--per-level", type=int, default=2, help="name_exposure: canaries per kind and level")
    p.add_argument("--epochs", type=float, default=3.0, help="name_exposure: LoRA epochs of every LM")
    p.add_argument("--threads", type=int, default=1, help="name_exposure: torch threads")
    p.add_argument("--conditions", default=None,
                   help="name_exposure: the LMs to adapt here, comma-separated (default: oracle,entityTagger/engine; "
                        "two processes may each take one)")
    p.add_argument("--no-train", action="store_true", help="name_exposure: only turn DIR's records into rows")
    p.set_defaults(fn=cmd_audit)
