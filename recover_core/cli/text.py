"""The text commands: ``prepare``, ``models``, ``mask``, ``fill``, ``obfuscate``, ``mask-rates``.

Every command writes exactly as many lines as it reads, to a temporary file that is renamed
into place only when the whole input succeeded. Original private words are never written
unless --keep-originals is given. The work is the engine's (recover_core.obfuscator), run
over files by recover_core.batch; here are only the flags and what is printed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from recover_core import batch
from recover_core.batch.job import Job
from recover_core.data import corpora
from recover_core.masking.entity_tagger import EntityTagger
from recover_core.models import bundles
from recover_core.pseudonyms.key import fingerprint, read_key_file, write_key_file
from recover_core.runtime import env
from recover_core.text import validation
from recover_core.batch.pipeline import RateCounter, decode_record, engine_settings
from recover_core.cli.common import atomic_output, chunks, is_jsonl, positive, protect_arg, read_records
from recover_core.data.corpora import CORPORA
from recover_core.errors import RecoverError
from recover_core.filling import DEFAULT_K, KINDS, METHODS
from recover_core.filling.base import DEFAULT_SAMPLING, SAMPLINGS
from recover_core.masking import build, identifiers, mask_many, name_shape, names
from recover_core.obfuscator import RULES, Obfuscator, Settings
from recover_core.pseudonyms import CHOICES, DATE_POLICIES, load_mapping


# --- commands -----------------------------------------------------------------------

def cmd_prepare(args) -> None:
    """Convert and check every offline model once, so the first request is fast."""
    missing = []
    for name in bundles.names():
        b = bundles.get(name)
        if b.locate is None:
            continue
        t = time.time()
        ok = b.prepare() is not None  # converts and merges now, so the first request need not
        missing += [] if ok or not b.required else [f"{name} (package {b.offline_package})"]
        print(f"{name:18s} {'ready' if ok else 'not installed':14s} {time.time() - t:5.1f}s  {b.description}")
    t = time.time()
    name_shape.model()  # trained once per machine and cached, so the first masking need not
    print(f"{'name-shape':18s} {'ready':14s} {time.time() - t:5.1f}s  entityTagger's spelling model for names no list holds")
    if missing and not env.in_space():
        raise RecoverError(f"Offline models missing: {', '.join(missing)}. Install requirements-offline.txt.")


def _masker(args):
    types = args.types.split(",") if args.types else None
    return build(args.technique, n=args.n, ner_model=args.ner_model, types=types)


def _job(args, command: str):
    """The batch job the arguments describe, checked by the engine before any model is loaded."""
    fill = command != "mask"
    if fill and (args.consistent or args.mapping):
        _check_consistent(args, command)
    # mask fills nothing and fill masks nothing: the half a command does not use keeps the
    # values its progress record has always held
    filling = dict(filler=args.filler, model=args.model, method=args.method, k=args.k, sampling=args.sampling,
                   type_check=not args.no_type_check, one_pass=args.one_pass, rules=args.rules,
                   choice=args.choice) if fill else dict(type_check=False)
    masking = dict(technique=args.technique) if command != "fill" else {}
    engine = Settings(
        **masking, **filling, n=args.n, ner_model=args.ner_model, seed=args.seed,
        types=tuple(args.types.split(",")) if getattr(args, "types", None) else None, markers=args.markers,
        keep_list=getattr(args, "keep_list", None), protect=getattr(args, "protect", "direct"),
        dates=getattr(args, "dates", DATE_POLICIES[0]), identifiers=False if getattr(args, "no_identifiers", False) else None)
    job = Job(
        command=command, input=args.input, output=args.output, in_jsonl=is_jsonl(args.input, args.in_format),
        out_jsonl=is_jsonl(args.output, args.out_format), batch_size=args.batch_size,
        skip_bad=args.skip_bad, quiet=args.quiet, engine=engine,
        keep_originals=getattr(args, "keep_originals", False), candidates=args.candidates if fill else False,
        consistent=fill and (args.consistent or args.mapping is not None),
        mapping=str(args.mapping.resolve()) if fill and args.mapping else None,
        key=_key(args) if fill else None,
        # the progress record names this file instead of copying its key (issue 75)
        key_file=str(args.key_file.resolve()) if fill and args.key_file else None,
    )
    engine_settings(job)  # every setting checked here, with the API's messages
    return job


def _key(args) -> str | None:
    """The run's key as hex: the --key-file's, checked before any model loads; None for a
    fresh one (or the --mapping file's own, which the batch reads)."""
    return read_key_file(args.key_file).hex() if args.key_file else None


def cmd_key(args) -> None:
    """Write a fresh secret key, mode 600, for runs that must choose alike (--key-file)."""
    key = write_key_file(args.file)
    print(f"wrote a {len(key) * 8}-bit key to {args.file} (mode 600; id {fingerprint(key)}). Keep it secret: "
          "whoever has it can redo the mapping from originals to substitutes.", file=sys.stderr)


def _check_consistent(args, command: str) -> None:
    """--consistent needs the originals; the mapping file is kept apart from the text."""
    if command == "fill" and not is_jsonl(args.input, args.in_format):
        raise RecoverError("--consistent and --mapping need the original words: fill the JSONL that "
                           "`mask --keep-originals` writes, or use obfuscate.")
    if args.mapping:
        m = args.mapping.resolve()
        if m in (args.input.resolve(), args.output.resolve()):
            raise RecoverError(f"--mapping {args.mapping}: give a file apart from the input and the output; it "
                               "holds the original private words and is never written into the output.")
        if m.exists():
            load_mapping(m)  # a readable-by-others or foreign file is refused before any model loads


def _run_batch(args, command: str) -> None:
    job = _job(args, command)
    found = _identifiers_unmasked(args, job)
    summary = batch.run(job, engine=args.engine, workers=args.workers, resume=args.resume, restart=args.restart,
                        threads=args.threads)
    if found is not None:
        summary = _with_passed_through(summary, _passed_through(job, found))
    _summary(summary, args)


# --- identifiers a run does not mask ---------------------------------------------------
# Under --rules paper (vats2024's procedure) and --no-identifiers, card numbers, e-mails,
# phones, IDs, IBANs ... are not masked and reach the output as they are, while `leaks` counts
# only masked words whose substitute equals the original (issue 75). So such a run looks for
# them first: --rules paper refuses unless --allow-identifiers is given, --no-identifiers
# warns, and the summary counts those that came through. Counts and line numbers only: an
# identifier's text is never printed. A default run masks them and reads nothing more (the
# recognizers take about a millisecond a line).

def _identifiers_unmasked(args, job) -> dict[int, list[str]] | None:
    """The identifiers of each input line (0-based) that this run will not mask, checked
    before any model loads; None where the run masks them (the default), and nothing is read."""
    paper = job.engine.rules == "paper" and job.command != "mask"
    if not (paper or job.engine.identifiers is False):
        return None
    found = _identifiers_in(job.input, job.in_jsonl, job.field)
    if not found:
        return found
    n, lines, first = sum(map(len, found.values())), len(found), min(found) + 1
    where = f"{n} identifier{'s' if n != 1 else ''} (card numbers, e-mail addresses, phones, IDs, IBANs, ...) " \
            f"in {lines} line{'s' if lines != 1 else ''} of {job.input} (the first on line {first})"
    if paper and not getattr(args, "allow_identifiers", False):
        raise RecoverError(f"{where}. Under --rules paper identifiers are not masked: they would pass into the "
                           "output as they are. Use --rules ours, which replaces each by a substitute of its "
                           "shape, or give --allow-identifiers to let them through. Nothing was written.")
    why = "--rules paper" if paper else "--no-identifiers"
    print(f"warning: {where} are not masked ({why}): they pass into the output as they are. The summary "
          "counts them as identifiers_passed_through.", file=sys.stderr)
    return found


def _identifiers_in(path: Path, jsonl: bool, field: str) -> dict[int, list[str]]:
    """Per 0-based line, the identifiers the recognizers find in the text the run will read
    (normalised as validation.check_text does). Bad lines are left to the run to report."""
    found: dict[int, list[str]] = {}
    if not path.is_file():
        return found  # the run says the input is missing
    with path.open("rb") as f:
        for n, raw in enumerate(f):
            try:
                rec = decode_record(raw, jsonl, field, n + 1)
            except RecoverError:
                continue
            if rec is not None:
                ids = [s.text for s in identifiers.find(validation.normalise(rec[field]))]
                if ids:
                    found[n] = ids
    return found


def _passed_through(job, found: dict[int, list[str]]) -> int:
    """How many of the input's identifiers stand unchanged in the same line of the output."""
    n = 0
    if not found or not job.output.is_file():
        return n
    field = "masked" if job.command == "mask" else "text"
    with job.output.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i in found:
                text = (json.loads(line).get(field) or "") if job.out_jsonl else line
                n += sum(x in text for x in found[i])
    return n


def _with_passed_through(summary: dict, n: int) -> dict:
    """The summary with ``identifiers_passed_through`` beside ``leaks``, which never counts them."""
    out = {}
    for k, v in summary.items():
        if k == "seconds" and "identifiers_passed_through" not in out:
            out["identifiers_passed_through"] = n
        out[k] = v
        if k == "leaks":
            out["identifiers_passed_through"] = n
    out.setdefault("identifiers_passed_through", n)
    return out


def cmd_mask(args) -> None:
    if args.document:
        return _run_documents(args, "mask")
    _run_batch(args, "mask")


def cmd_fill(args) -> None:
    _run_batch(args, "fill")


def cmd_obfuscate(args) -> None:
    """mask then fill in one pass: the originals stay in memory, so leaks can be counted."""
    if args.document:
        return _run_documents(args, "obfuscate")
    _run_batch(args, "obfuscate")


def _run_documents(args, command: str) -> None:
    """--document: a .txt input is one document, and each record of a .jsonl input holds one
    (its text field, line breaks kept). Each document goes through the engine in one call
    (Obfuscator.obfuscate_document), so a person's substitute and the date shift are the same
    in every paragraph. The output is written whole or not at all (mode 600 until complete)."""
    if args.resume or args.restart or args.workers != 1 or args.engine != "local" or \
            getattr(args, "mapping", None) or getattr(args, "keep_originals", False):
        raise RecoverError("--document runs whole documents in this process: --resume, --restart, --workers, "
                           "--engine ray, --mapping and --keep-originals are for line-by-line runs.")
    job = _job(args, command)
    if job.in_jsonl != job.out_jsonl:
        raise RecoverError("--document writes what it reads: a .txt document to a .txt file, .jsonl records to "
                           ".jsonl (give --out-format to say otherwise).")
    docs = list(_documents(args.input, job.in_jsonl, job.field))
    key = _key(args) if command != "mask" else None
    engine = Obfuscator(engine_settings(job), key=bytes.fromhex(key) if key else None)
    counts = {"documents": len(docs), "characters": sum(len(d) for d in docs), "masked": 0}
    with atomic_output(args.output) as f:
        for doc in tqdm(docs, desc=command, unit="doc", disable=args.quiet or len(docs) < 2):
            if command == "mask":
                m = engine.mask(doc)
                counts["masked"] += len(m.spans)
                out, rec = m.masked, m.public()
            else:
                r = engine.obfuscate_document(doc, consistent=args.consistent)
                counts["masked"] += len(r.replacements)
                counts["leaks"] = counts.get("leaks", 0) + r.leaks
                out, rec = r.text, r.public(candidates=args.candidates)
            f.write(json.dumps(rec) + "\n" if job.out_jsonl else out)
    _summary(counts, args)


def _documents(path: Path, jsonl: bool, field: str) -> Iterator[str]:
    """The documents of an input file: the whole of a text file, or one per JSONL record."""
    if not path.is_file():
        raise RecoverError(f"Input file {str(path)!r} does not exist.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RecoverError(f"{path} is not UTF-8 text. Nothing was written.") from None
    if not jsonl:
        yield validation.check_document(text, what=f"document {path.name}")
        return
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise RecoverError(f"{path} line {n} is not JSON. Nothing was written.") from None
        if not isinstance(rec, dict) or not isinstance(rec.get(field), str):
            raise RecoverError(f"{path} line {n}: a record is an object with a {field!r} string.")
        yield validation.check_document(rec[field], what=f"document on line {n}")


def cmd_mask_rates(args) -> None:
    """Table 2 analogue: the share of words each technique masks, per corpus."""
    import pandas as pd

    if not args.corpus and not args.input:
        raise RecoverError("Give an input file or --corpus news.")

    def texts() -> Iterator[str]:  # read again for each technique: nothing is kept per line
        if args.corpus:
            return iter(corpora.CORPORA[args.corpus]())
        return (t for t in (r["text"] for r in read_records(args.input, args.in_format, "text") if r) if t.strip())

    from recover_core.batch.local import count_lines as _count_lines

    total = len(corpora.CORPORA[args.corpus]()) if args.corpus else _count_lines(args.input)

    rows = []
    for tech in args.techniques.split(","):
        masker = build(tech, n=args.n, ner_model=args.ner_model)
        tagger = next((m for m in getattr(masker, "parts", [masker]) if isinstance(m, EntityTagger)), None)
        rates, caseless = RateCounter(), 0
        with tqdm(total=total, desc=tech, unit="line", disable=args.quiet) as bar:
            for chunk in chunks(texts(), args.batch_size):
                for m in mask_many(chunk, masker):
                    rates.add(m)
                caseless += sum(tagger.path(t) == "caseless" for t in chunk) if tagger else 0
                bar.update(len(chunk))
        r = rates.result()
        rows.append({"technique": tech, "sentences": r["sentences"], "words": r["words"],
                     "mask_rate_%": round(100 * r["mask_rate"], 1),
                     "sentences_with_mask_%": round(100 * r["sentences_with_mask"] / max(r["sentences"], 1), 1),
                     # entityTagger restores case before NER on lines without it (Fisher, ASR output)
                     "caseless_%": round(100 * caseless / max(r["sentences"], 1), 1) if tagger else "-"})
    table = pd.DataFrame(rows)
    if (table["caseless_%"] == "-").all():  # no entityTagger: the column would say nothing
        table = table.drop(columns="caseless_%")
    print(table.to_string(index=False))


def _summary(d: dict, args) -> None:
    print(json.dumps(d, indent=None if args.quiet else 2), file=sys.stderr)


# --- argument parsing ---------------------------------------------------------------

def _io(p, out=True) -> None:
    p.add_argument("input", type=Path, help="a .txt file (one sentence per line) or .jsonl")
    if out:
        p.add_argument("-o", "--output", type=Path, required=True, help="where to write (.txt or .jsonl)")
    p.add_argument("--in-format", choices=["txt", "jsonl"], help="default: from the file suffix")
    p.add_argument("--out-format", choices=["txt", "jsonl"], help="default: from the file suffix")
    p.add_argument("--batch-size", type=positive, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-bad", action="store_true", help="write an empty line for a bad line instead of stopping")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run of the same command (same settings and input)")
    p.add_argument("--restart", action="store_true", help="discard an interrupted run's finished lines and start over")
    p.add_argument("--workers", type=positive, default=1,
                   help="processes on this machine (local engine), or Ray actors (--engine ray)")
    p.add_argument("--threads", type=positive, default=None,
                   help="torch threads per worker (default: the cores shared among the workers)")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="ray: run through Ray Data, on a local Ray or the cluster in RAY_ADDRESS")


def _masking_args(p) -> None:
    p.add_argument("--technique", default="entityTagger",
                   help=f"one of {', '.join(names())}, or several joined by '+'")
    p.add_argument("--n", type=int, default=None, help="vocabThres: keep the N most frequent words (10000)")
    p.add_argument("--ner-model", default=None, help="entityTagger: spacy-md (default) or spacy-sm")
    p.add_argument("--types", default=None, help="entityTagger: comma-separated entity types")
    p.add_argument("--markers", choices=["mask", "class"], default="mask", help="[MASK], or [PERSON]/[NUMBER]/...")
    p.add_argument("--no-identifiers", action="store_true",
                   help="do not mask card numbers, e-mails, phones, IBANs, IDs, addresses, spoken digits ... "
                        "(masked by default under --rules ours; never under --rules paper)")
    protect_arg(p)
    p.add_argument("--document", action="store_true",
                   help="whole documents: a .txt input is one document, each .jsonl record's text one; each "
                        "goes through in one call, of any length, paragraphs kept, a name and the date shift "
                        "the same throughout it")


def _filling_args(p) -> None:
    p.add_argument("--filler", choices=list(KINDS), default="mlm",
                   help="mlm: a masked LM (the fine-tuned MiniLM offline); infill: a causal LM; "
                        "instruct: the LoRA instruction-tuned causal LM (vats2024 'LLaMA2')")
    p.add_argument("--model", default=None, help="a model name (see `models`) or a local model folder")
    p.add_argument("--method", default="top1", help=f"one of {', '.join(METHODS)}")
    p.add_argument("--k", type=int, default=DEFAULT_K, help="Top-K: sample among the best K")
    p.add_argument("--sampling", default=DEFAULT_SAMPLING,
                   help=f"Top-K: {' or '.join(SAMPLINGS)}; uniform is vats2024's reading "
                        "('randomly choose a token from the top-K'), weighted follows the scores")
    p.add_argument("--candidates", action="store_true", help="jsonl output: include every candidate list")
    p.add_argument("--one-pass", action="store_true",
                   help="mlm: fill every mask of a line from one forward pass, about 2x faster; vats2024 fills "
                        "left to right, each mask seeing the substitutes before it (the default)")
    p.add_argument("--rules", choices=list(RULES), default=RULES[0],
                   help="ours: each substitute chosen by the pseudonym rules (a free name of the same type and "
                        "gender, never an original); paper: vats2024's plain procedure, the filler sees [MASK] only; "
                        "preiss: preiss2023's (the filler's best candidate the name lists accept, as speech chooses). "
                        "Under paper, identifiers (cards, e-mails, phones, IDs ...) are not masked: a run whose input "
                        "holds any is refused unless --allow-identifiers is given")
    p.add_argument("--allow-identifiers", action="store_true",
                   help="--rules paper: run even though the input holds identifiers, which then pass into the "
                        "output unmasked (a warning and the summary's identifiers_passed_through count them)")
    p.add_argument("--choice", choices=list(CHOICES), default=CHOICES[0],
                   help="our rules: prior (the default) draws each person's names and each place as real ones "
                        "occur (census shares of names a tagger reads as people; how often text names a place), the "
                        "filler's scores tilting the draw; rank takes the filler's best acceptable candidate, whose "
                        "few favourites then stand in for many different names")
    p.add_argument("--no-type-check", action="store_true",
                   help="do not ask the NER whether an entity substitute reads as the masked type")
    p.add_argument("--consistent", action="store_true",
                   help="one original -> one substitute across the whole run (default: within each line)")
    p.add_argument("--mapping", type=Path, default=None, metavar="FILE",
                   help="keep originals -> substitutes in FILE across runs (implies --consistent). FILE holds the "
                        "original private words and the run's key: it is written mode 600, never into the output, "
                        "and refused if others can read it")
    p.add_argument("--key-file", type=Path, default=None, metavar="FILE",
                   help="draw every substitute under the secret key in FILE (`python -m recover_core key FILE` "
                        "makes one), so runs with the same key and --seed choose alike. Default: a fresh random "
                        "key per run, so two runs give different substitutes. A published key undoes the "
                        "protection: anyone with it can map substitutes back to originals")


def cmd_models(args) -> None:
    for name in bundles.names():
        b = bundles.get(name)
        where = "offline" if b.offline_available() else ("hub" if b.hub_id else "missing")
        print(f"{name:20s} {b.kind:7s} {where:8s} {b.description}")




def add_parser(sub) -> None:
    sub.add_parser("prepare", help="convert and check the offline models once").set_defaults(fn=cmd_prepare)
    sub.add_parser("models", help="list model names").set_defaults(fn=cmd_models)
    p = sub.add_parser("mask", help="mask private words (vats2024 §3.1)")
    _io(p), _masking_args(p)
    p.add_argument("--keep-originals", action="store_true", help="jsonl output: also write the private words")
    p.set_defaults(fn=cmd_mask)
    p = sub.add_parser("fill", help="fill [MASK] markers of already-masked text (vats2024 §3.2)")
    _io(p), _filling_args(p)
    p.add_argument("--keep-list", default=None, help="Top-K avoids this technique's keep-list: allowList, vocabThres")
    p.add_argument("--n", type=int, default=None, help="N of vocabThres for --keep-list")
    p.add_argument("--ner-model", default=None, help="the NER for the type check: spacy-md (default) or spacy-sm")
    p.add_argument("--markers", default="mask", help=argparse.SUPPRESS)
    p.set_defaults(fn=cmd_fill)
    p = sub.add_parser("obfuscate", help="mask and fill in one pass; originals are never written")
    _io(p), _masking_args(p), _filling_args(p)
    p.set_defaults(fn=cmd_obfuscate)
    p = sub.add_parser("key", help="write a fresh secret key (mode 600) for --key-file")
    p.add_argument("file", type=Path, help="where to write it; never overwritten")
    p.set_defaults(fn=cmd_key)
    p = sub.add_parser("mask-rates", help="share of words each technique masks (vats2024 Table 2)")
    p.add_argument("input", type=Path, nargs="?")
    p.add_argument("--corpus", choices=sorted(CORPORA), default=None)
    p.add_argument("--techniques", default="allowList,vocabThres,entityTagger")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--ner-model", default=None)
    p.add_argument("--in-format", choices=["txt", "jsonl"])
    p.add_argument("--batch-size", type=positive, default=256)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(fn=cmd_mask_rates)
