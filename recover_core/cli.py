"""Batch commands over files: one sentence per line (.txt) or one JSON object per line (.jsonl).

Every command writes exactly as many lines as it reads, to a temporary file that
is renamed into place only when the whole input succeeded. Original private
words are never written unless --keep-originals is given.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from recover_core import atomic, env, validation
from recover_core.errors import RecoverError
from recover_core.filling import DEFAULT_K, KINDS, METHODS
from recover_core.filling.base import DEFAULT_SAMPLING, SAMPLINGS, check_method, check_sampling
from recover_core.masking import build, mask_many, names
from recover_core.corpora import CORPORA


# --- input and output -------------------------------------------------------------

def _is_jsonl(path: Path, fmt: str | None) -> bool:
    return fmt == "jsonl" if fmt else path.suffix == ".jsonl"


def read_records(path: Path, fmt: str | None, field: str) -> Iterator[dict | None]:
    """One dict per line ({field: text, ...}); None for a blank line. Lines are decoded as
    the batch engines decode them (batch.pipeline.decode_record)."""
    from recover_core.batch.pipeline import decode_record

    if not path.is_file():
        raise RecoverError(f"Input file {str(path)!r} does not exist.")
    jsonl = _is_jsonl(path, fmt)
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            yield decode_record(raw, jsonl, field, n)


@contextmanager
def atomic_output(path: Path):
    """Write next to the target and rename at the end: a failed run leaves nothing behind.
    The file is created mode 600 (it may hold private words until it is complete)."""
    with atomic.writing(path, unique=True, suffix=".part") as f:
        yield f


def chunks(records: Iterator, size: int) -> Iterator[list]:
    buf = []
    for r in records:
        buf.append(r)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


# --- commands -----------------------------------------------------------------------

def cmd_prepare(args) -> None:
    """Convert and check every offline model once, so the first request is fast."""
    from recover_core import bundles

    missing = []
    for name in bundles.names():
        b = bundles.get(name)
        if b.locate is None:
            continue
        t = time.time()
        ok = b.prepare() is not None  # converts and merges now, so the first request need not
        missing += [] if ok or not b.required else [f"{name} (package {b.offline_package})"]
        print(f"{name:18s} {'ready' if ok else 'not installed':14s} {time.time() - t:5.1f}s  {b.description}")
    if missing and not env.in_space():
        raise RecoverError(f"Offline models missing: {', '.join(missing)}. Install requirements-offline.txt.")


def _masker(args):
    types = args.types.split(",") if args.types else None
    return build(args.technique, n=args.n, ner_model=args.ner_model, types=types)


def _job(args, command: str):
    """The batch job the arguments describe, checked before any model is loaded."""
    from recover_core.batch.job import Job

    fill = command != "mask"
    if fill:
        check_method(args.method)
        check_sampling(args.sampling)
        validation.check_k(args.k)
        validation.check_choice("filler", args.filler, list(KINDS))
        if args.one_pass and args.filler != "mlm":
            raise RecoverError(f"--one-pass is for the MLM filler (--filler mlm); {args.filler} fills word by word.")
    if command != "fill":
        for part in args.technique.split("+"):
            validation.check_choice("masking technique", part.strip(), names())
    if fill and (args.consistent or args.mapping):
        _check_consistent(args, command)
    return Job(
        command=command, input=args.input, output=args.output, in_jsonl=_is_jsonl(args.input, args.in_format),
        out_jsonl=_is_jsonl(args.output, args.out_format), batch_size=args.batch_size, seed=args.seed,
        skip_bad=args.skip_bad, quiet=args.quiet,
        technique=getattr(args, "technique", None) if command != "fill" else None, n=args.n,
        ner_model=args.ner_model, types=tuple(args.types.split(",")) if getattr(args, "types", None) else None,
        markers=args.markers, keep_originals=getattr(args, "keep_originals", False),
        filler=args.filler if fill else None, model=args.model if fill else None,
        method=args.method if fill else "top1", k=args.k if fill else 10,
        sampling=args.sampling if fill else DEFAULT_SAMPLING, candidates=args.candidates if fill else False,
        type_check=not args.no_type_check if fill else False, keep_list=getattr(args, "keep_list", None),
        one_pass=fill and args.one_pass,
        consistent=fill and (args.consistent or args.mapping is not None),
        mapping=str(args.mapping.resolve()) if fill and args.mapping else None,
    )


def _check_consistent(args, command: str) -> None:
    """--consistent needs the originals; the mapping file is kept apart from the text."""
    if command == "fill" and not _is_jsonl(args.input, args.in_format):
        raise RecoverError("--consistent and --mapping need the original words: fill the JSONL that "
                           "`mask --keep-originals` writes, or use obfuscate.")
    if args.mapping:
        m = args.mapping.resolve()
        if m in (args.input.resolve(), args.output.resolve()):
            raise RecoverError(f"--mapping {args.mapping}: give a file apart from the input and the output; it "
                               "holds the original private words and is never written into the output.")
        if m.exists():
            from recover_core.pseudonyms import load_mapping

            load_mapping(m)  # a readable-by-others or foreign file is refused before any model loads


def _run_batch(args, command: str) -> None:
    from recover_core import batch

    job = _job(args, command)
    _summary(batch.run(job, engine=args.engine, workers=args.workers, resume=args.resume, restart=args.restart,
                       threads=args.threads), args)


def cmd_mask(args) -> None:
    _run_batch(args, "mask")


def cmd_fill(args) -> None:
    _run_batch(args, "fill")


def cmd_obfuscate(args) -> None:
    """mask then fill in one pass: the originals stay in memory, so leaks can be counted."""
    _run_batch(args, "obfuscate")


def cmd_mask_rates(args) -> None:
    """Table 2 analogue: the share of words each technique masks, per corpus."""
    import pandas as pd

    from recover_core import corpora

    if not args.corpus and not args.input:
        raise RecoverError("Give an input file or --corpus news.")

    def texts() -> Iterator[str]:  # read again for each technique: nothing is kept per line
        if args.corpus:
            return iter(corpora.CORPORA[args.corpus]())
        return (t for t in (r["text"] for r in read_records(args.input, args.in_format, "text") if r) if t.strip())

    from recover_core.batch.local import count_lines as _count_lines
    from recover_core.batch.pipeline import RateCounter
    from recover_core.masking.entity_tagger import EntityTagger

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
    p.add_argument("--batch-size", type=_positive, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-bad", action="store_true", help="write an empty line for a bad line instead of stopping")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run of the same command (same settings and input)")
    p.add_argument("--restart", action="store_true", help="discard an interrupted run's finished lines and start over")
    p.add_argument("--workers", type=_positive, default=1,
                   help="processes on this machine (local engine), or Ray actors (--engine ray)")
    p.add_argument("--threads", type=_positive, default=None,
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
    p.add_argument("--no-type-check", action="store_true",
                   help="do not ask the NER whether an entity substitute reads as the masked type")
    p.add_argument("--consistent", action="store_true",
                   help="one original -> one substitute across the whole run (default: within each line)")
    p.add_argument("--mapping", type=Path, default=None, metavar="FILE",
                   help="keep originals -> substitutes in FILE across runs (implies --consistent). FILE holds the "
                        "original private words: it is written mode 600, never into the output, and refused if "
                        "others can read it")


def _positive(v: str) -> int:
    i = int(v)
    if i < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return i


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m recover_core", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
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
    p = sub.add_parser("mask-rates", help="share of words each technique masks (vats2024 Table 2)")
    p.add_argument("input", type=Path, nargs="?")
    p.add_argument("--corpus", choices=sorted(CORPORA), default=None)
    p.add_argument("--techniques", default="allowList,vocabThres,entityTagger")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--ner-model", default=None)
    p.add_argument("--in-format", choices=["txt", "jsonl"])
    p.add_argument("--batch-size", type=_positive, default=256)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(fn=cmd_mask_rates)
    from recover_core.training import commands as training_commands  # finetune-mlm, evaluate-mlm, finetune-llm

    training_commands.add_parser(sub)
    from recover_core.filling import evaluate  # evaluate-fillers: every filler on the same items

    evaluate.add_parser(sub)
    from recover_core import experiment  # the downstream grid (vats2024 §4)

    experiment.add_parser(sub)
    from recover_core import claims  # claims: vats2024 §4.3 checked on any tidy results

    claims.add_parser(sub)
    from recover_core.asr import commands as asr_commands  # transcribe, wer (vats2024 §4.2.2)

    asr_commands.add_parser(sub)
    from recover_core.speech import commands as speech_commands  # obfuscate-audio (preiss2023)

    speech_commands.add_parser(sub)
    return ap


def cmd_models(args) -> None:
    from recover_core import bundles

    for name in bundles.names():
        b = bundles.get(name)
        where = "offline" if b.offline_available() else ("hub" if b.hub_id else "missing")
        print(f"{name:20s} {b.kind:7s} {where:8s} {b.description}")


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) during a command: unwinds like Ctrl-C, so every temporary file
    is removed on the way out (atomic_output; with --keep-originals its .part file holds
    the private words)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def terminate_cleanly():
    """For the duration of a command, turn SIGTERM and SIGHUP into ``Terminated``. Only the
    first signal raises: a second one while the first unwinds must not cut the cleanup short."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread (main() called from a worker)
        return
    fired = []

    def handler(signum, frame):
        if not fired:
            fired.append(signum)
            raise Terminated(signum)

    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), handler) for n in names}
    try:
        yield
    finally:
        for n, h in previous.items():
            signal.signal(getattr(signal, n), h)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        with terminate_cleanly():
            args.fn(args)
    except RecoverError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"error: {getattr(args, 'input', None) or getattr(args, 'config', 'the input')} is not UTF-8 text. "
              "Nothing was written.", file=sys.stderr)
        return 2
    except OSError as e:  # unreadable input, unwritable output, full disk
        print(f"error: {e.strerror or e}: {e.filename or ''}. Nothing was written.", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print(("terminated" if isinstance(e, Terminated) else "interrupted") + ": "
              + getattr(e, "kept", "no output was written")
              + (" (the last checkpoint is kept: add --resume)" if args.command in ("finetune-mlm", "finetune-llm") else ""),
              file=sys.stderr)
        return 128 + e.signum if isinstance(e, Terminated) else 130
    return 0
