"""Batch commands over files: one sentence per line (.txt) or one JSON object per line (.jsonl).

Every command writes exactly as many lines as it reads, to a temporary file that
is renamed into place only when the whole input succeeded. Original private
words are never written unless --keep-originals is given.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from recover_core import env, validation
from recover_core.errors import RecoverError
from recover_core.filling import DEFAULT_K, KINDS, METHODS, MaskInput, get_filler
from recover_core.filling.base import DEFAULT_SAMPLING, SAMPLINGS, check_method, check_sampling
from recover_core.masking import build, mask_many, names
from recover_core.masking.mask import Masked
from recover_core.spans import Span
from recover_core import quality
from recover_core.corpora import CORPORA


# --- input and output -------------------------------------------------------------

def _is_jsonl(path: Path, fmt: str | None) -> bool:
    return fmt == "jsonl" if fmt else path.suffix == ".jsonl"


def read_records(path: Path, fmt: str | None, field: str) -> Iterator[dict | None]:
    """One dict per line ({field: text, ...}); None for a blank line."""
    if not path.is_file():
        raise RecoverError(f"Input file {str(path)!r} does not exist.")
    jsonl = _is_jsonl(path, fmt)
    # Lines end at "\n" only (as count_lines counts them): a stray "\r" inside a line is
    # whitespace of that line, not a line end of its own. "\r\n" (Windows) ends a line too.
    with path.open(encoding="utf-8", errors="strict", newline="\n") as f:
        for n, line in enumerate(f, 1):
            line = line.removesuffix("\n").removesuffix("\r")
            if not line.strip():
                yield None
            elif jsonl:
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise RecoverError(f"{path}:{n}: not valid JSON ({e.msg}).") from None
                if not isinstance(rec, dict) or not isinstance(rec.get(field), str):
                    raise RecoverError(f"{path}:{n}: expected an object with a string field {field!r}.")
                yield rec if rec[field].strip() else None  # `mask` writes blank lines as empty records
            else:
                yield {field: line}


def count_lines(path: Path) -> int:
    """Lines as read_records reads them: each ended by a newline (the last one need not be)."""
    if not path.is_file():
        raise RecoverError(f"Input file {str(path)!r} does not exist.")
    with path.open("rb") as f:
        return sum(1 for _ in f)


@contextmanager
def atomic_output(path: Path):
    """Write next to the target and rename at the end: a failed run leaves nothing behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def chunks(records: Iterator, size: int) -> Iterator[list]:
    buf = []
    for r in records:
        buf.append(r)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def _validate(rec: dict | None, field: str, line: int, skip_bad: bool, allow_markers: bool) -> tuple[str | None, bool]:
    """(clean text or None, was bad)."""
    if rec is None:
        return None, False
    try:
        text = validation.check_text(rec[field], allow_markers=allow_markers, what="line")
        if allow_markers:
            validation.check_mask_count(validation.count_masks(text), what="line")
        return text, False
    except RecoverError as e:
        return None, _bad_line(e, line, skip_bad)


def _bad_line(e: RecoverError, line: int, skip_bad: bool) -> bool:
    """The rule for a bad line: with --skip-bad it becomes an empty line (True), otherwise
    the command stops, naming the line, before anything is written."""
    if skip_bad:
        return True
    raise RecoverError(f"line {line}: {e} Nothing was written; use --skip-bad to write an empty "
                       "line for such lines instead.") from None


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


def _masked_record(m: Masked, keep_originals: bool) -> dict:
    rec = m.public()
    if keep_originals:
        rec["original"] = m.original
        rec["originals"] = [s.text for s in m.spans]
    return rec


def cmd_mask(args) -> None:
    masker = _masker(args)
    total = count_lines(args.input)
    rates = RateCounter()
    stats = {"bad": 0, "blank": 0}
    t0 = time.time()
    jsonl_out = _is_jsonl(args.output, args.out_format)
    with atomic_output(args.output) as out, tqdm(total=total, desc="mask", unit="line", disable=args.quiet) as bar:
        line = 0
        for chunk in chunks(read_records(args.input, args.in_format, "text"), args.batch_size):
            texts, slots = [], []
            for rec in chunk:
                line += 1
                text, bad = _validate(rec, "text", line, args.skip_bad, allow_markers=False)
                stats["bad"] += bad
                stats["blank"] += rec is None
                slots.append(text)
                if text is not None:
                    texts.append(text)
            results = iter(mask_many(texts, masker, args.markers))
            for text in slots:
                if text is None:
                    out.write(json.dumps({"masked": "", "masks": []}) + "\n" if jsonl_out else "\n")
                    continue
                m = next(results)
                rates.add(m)
                out.write(json.dumps(_masked_record(m, args.keep_originals)) + "\n" if jsonl_out else m.masked + "\n")
            bar.update(len(chunk))
    rate = rates.result()
    _summary({
        "command": "mask", "technique": masker.name, "lines": total, "blank": stats["blank"], "bad": stats["bad"],
        "words": rate["words"], "masked_words": rate["masked_words"], "mask_rate": round(rate["mask_rate"], 4),
        "by_label": rate["by_label"], "seconds": round(time.time() - t0, 2), "output": str(args.output),
    }, args)


class RateCounter:
    """masking.mask_rate as running counts: a summary of any number of lines without
    keeping a record per line."""

    def __init__(self) -> None:
        self.sentences = self.words = self.masked_words = self.sentences_with_mask = 0
        self.by_label: dict[str, int] = {}

    def add(self, m: Masked) -> None:
        self.sentences += 1
        self.words += m.n_words
        self.masked_words += len(m.spans)
        self.sentences_with_mask += bool(m.spans)
        for s in m.spans:
            self.by_label[s.label] = self.by_label.get(s.label, 0) + 1

    def result(self) -> dict:
        """The same dict as masking.mask_rate over every line added."""
        return {
            "sentences": self.sentences,
            "words": self.words,
            "masked_words": self.masked_words,
            "mask_rate": self.masked_words / self.words if self.words else 0.0,
            "sentences_with_mask": self.sentences_with_mask,
            "by_label": dict(sorted(self.by_label.items(), key=lambda kv: -kv[1])),
        }


def _fill_inputs(rec: dict, text: str) -> MaskInput:
    item = MaskInput.parse(text)
    labels = [m.get("label") for m in rec.get("masks", [])] if isinstance(rec.get("masks"), list) else []
    if len(labels) == len(item.markers):  # JSONL from `mask` keeps the labels even with [MASK] markers
        item.markers = [Span(s.start, s.end, s.text, lab or s.label) for s, lab in zip(item.markers, labels)]
    return item


def _keep_list(args):
    if args.keep_list in (None, "none"):
        return None
    return build(args.keep_list, n=args.n).keep


def cmd_fill(args) -> None:
    method = check_method(args.method)
    check_sampling(args.sampling)
    k = validation.check_k(args.k)
    filler = get_filler(args.filler, args.model)
    keep = _keep_list(args)
    _run_fill(args, filler, method, k, keep, masker=None)


def cmd_obfuscate(args) -> None:
    """mask then fill in one pass: the originals stay in memory, so leaks can be counted."""
    method = check_method(args.method)
    check_sampling(args.sampling)
    k = validation.check_k(args.k)
    masker = _masker(args)
    filler = get_filler(args.filler, args.model)
    _run_fill(args, filler, method, k, masker.keep, masker=masker)


def _type_check(args):
    """Entity substitutes must read as the masked type to the same NER that masks (default on)."""
    if args.no_type_check:
        return None
    from recover_core import bundles
    from recover_core.filling.candidates import ner_type_check

    return ner_type_check(bundles.load_ner(getattr(args, "ner_model", None) or "spacy-md"))


def _run_fill(args, filler, method, k, keep, masker) -> None:
    total = count_lines(args.input)
    type_check = _type_check(args)
    field = "text" if masker else ("masked" if _is_jsonl(args.input, args.in_format) else "text")
    n = {"lines": total, "blank": 0, "bad": 0, "no_mask": 0, "words": 0, "masked_words": 0, "fills": 0,
         "fallbacks": 0, "infill_fallbacks": 0, "leaks": 0, "leak_checked": 0}
    t0 = time.time()
    jsonl_out = _is_jsonl(args.output, args.out_format)
    with atomic_output(args.output) as out, tqdm(total=total, desc="fill", unit="line", disable=args.quiet) as bar:
        line = 0
        for chunk in chunks(read_records(args.input, args.in_format, field), args.batch_size):
            slots: list[tuple[str, object] | None] = []  # ("fill", MaskInput) | ("copy", text) | None
            originals: list[tuple[str, list[Span]] | None] = []
            texts = []
            for rec in chunk:
                line += 1
                text, bad = _validate(rec, field, line, args.skip_bad, allow_markers=masker is None)
                n["bad"] += bad
                n["blank"] += rec is None
                slots.append(None if text is None else (line, text, rec))
                if text is not None:
                    texts.append(text)
            masked = iter(mask_many(texts, masker, "class" if args.markers == "class" else "mask")) if masker else None
            items, prepared = [], []
            for slot in slots:
                if slot is None:
                    prepared.append(None)
                    continue
                at, text, rec = slot
                if masked is not None:
                    m = next(masked)
                    try:  # masked here: a line is known to have too many masks only now
                        validation.check_mask_count(len(m.markers), what="line once masked")
                    except RecoverError as e:
                        n["bad"] += _bad_line(e, at, args.skip_bad)
                        prepared.append(None)
                        continue
                    n["words"] += m.n_words
                    n["masked_words"] += len(m.spans)
                    if not m.spans:
                        prepared.append(("copy", m.masked, None))
                        continue
                    item = MaskInput(m.masked, m.markers)
                    orig = (m.original, m.spans)
                else:
                    if not validation.MARKER_RE.search(text):
                        prepared.append(("copy", text, None))
                        continue
                    item = _fill_inputs(rec, text)
                    orig = _jsonl_originals(rec, item)
                prepared.append(("fill", len(items), orig))
                items.append(item)
            filled = filler.fill(items, method=method, k=k, seed=args.seed, keep=keep, first_id=line - len(chunk),
                                 type_check=type_check, sampling=args.sampling)
            for p in prepared:
                if p is None:
                    out.write(json.dumps({"text": ""}) + "\n" if jsonl_out else "\n")
                    continue
                kind, val, orig = p
                if kind == "copy":
                    n["no_mask"] += 1
                    out.write(json.dumps({"text": val, "fills": []}) + "\n" if jsonl_out else val + "\n")
                    continue
                f = filled[val]
                n["fills"] += len(f.fills)
                n["fallbacks"] += sum(x.fallback for x in f.fills)
                n["infill_fallbacks"] += f.fallback == "infill"  # instruct output failed validation
                if orig is not None:
                    originals_ = quality.originals_per_fill(orig[0], orig[1], f)
                    n["leaks"] += quality.leaks(f, originals_)
                    n["leak_checked"] += len(f.fills)
                out.write(json.dumps(_filled_record(f, args.candidates)) + "\n" if jsonl_out else f.text + "\n")
            bar.update(len(chunk))
    summary = {"command": "obfuscate" if masker else "fill", "filler": f"{args.filler}:{filler.model_name}",
               "method": method, "k": k, "sampling": args.sampling, "seed": args.seed, **n}
    if masker:
        summary["technique"] = masker.name
        summary["mask_rate"] = round(n["masked_words"] / n["words"], 4) if n["words"] else 0.0
    summary["leak_rate"] = round(n["leaks"] / n["leak_checked"], 4) if n["leak_checked"] else None
    if summary["leak_rate"] is None:
        summary["leak_rate_note"] = "originals not available: mask with --keep-originals, or use obfuscate"
    summary["seconds"] = round(time.time() - t0, 2)
    summary["output"] = str(args.output)
    _summary(summary, args)


def _jsonl_originals(rec: dict, item: MaskInput):
    """Originals for leak counting, when `mask --keep-originals` wrote them."""
    if not isinstance(rec.get("originals"), list) or len(rec["originals"]) != len(item.markers):
        return None
    # Rebuild an 'original' text with the same markers-to-words layout.
    text, spans, pos = "", [], 0
    for m, word in zip(item.markers, rec["originals"]):
        text += item.text[pos : m.start]
        spans.append(Span(len(text), len(text) + max(len(word), 1), word or "?", m.label))
        text += word or "?"
        pos = m.end
    return text + item.text[pos:], spans


def _filled_record(f, with_candidates: bool) -> dict:
    rec: dict = {"text": f.text, "fills": []}
    if f.fallback:
        rec["filled_by"] = f.fallback
    for x in f.fills:
        d = {"start": x.start, "end": x.end, "label": x.label, "word": x.word}
        if x.fallback:
            d["fallback"] = True
        if with_candidates:
            d["candidates"] = [[c.word, round(c.score, 5)] for c in x.candidates]
        rec["fills"].append(d)
    return rec


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

    total = len(corpora.CORPORA[args.corpus]()) if args.corpus else count_lines(args.input)
    rows = []
    for tech in args.techniques.split(","):
        masker = build(tech, n=args.n, ner_model=args.ner_model)
        rates = RateCounter()
        with tqdm(total=total, desc=tech, unit="line", disable=args.quiet) as bar:
            for chunk in chunks(texts(), args.batch_size):
                for m in mask_many(chunk, masker):
                    rates.add(m)
                bar.update(len(chunk))
        r = rates.result()
        rows.append({"technique": tech, "sentences": r["sentences"], "words": r["words"],
                     "mask_rate_%": round(100 * r["mask_rate"], 1),
                     "sentences_with_mask_%": round(100 * r["sentences_with_mask"] / max(r["sentences"], 1), 1)})
    print(pd.DataFrame(rows).to_string(index=False))


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
    p.add_argument("--no-type-check", action="store_true",
                   help="do not ask the NER whether an entity substitute reads as the masked type")


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
    from recover_core.filling import finetune  # finetune-mlm, evaluate-mlm (vats2024 §3.2 FT)

    finetune.add_parser(sub)
    from recover_core.filling import finetune_llm  # finetune-llm (vats2024 §4.2.4)

    finetune_llm.add_parser(sub)
    from recover_core.filling import evaluate  # evaluate-fillers: every filler on the same items

    evaluate.add_parser(sub)
    from recover_core import experiment  # the downstream grid (vats2024 §4)

    experiment.add_parser(sub)
    from recover_core import results  # claims: vats2024 §4.3 checked on any tidy results

    results.add_parser(sub)
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
        print(("terminated" if isinstance(e, Terminated) else "interrupted") + ": no output was written"
              + (" (the last checkpoint is kept: add --resume)" if args.command in ("finetune-mlm", "finetune-llm") else ""),
              file=sys.stderr)
        return 128 + e.signum if isinstance(e, Terminated) else 130
    return 0
