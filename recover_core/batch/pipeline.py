"""One chunk of input lines in, the same number of output lines out: the batch pipeline.

Read, validate, mask, fill, write and count, written once. The local engine calls it in
this process or in worker processes; the Ray engine calls it inside its actors. Each
Pipeline builds its models once. A chunk's output depends only on the chunk and its
place in the file (fills are seeded by line number), so chunks may run anywhere and in
any order, and a resumed run writes the same bytes as an uninterrupted one.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace

from recover_core import pseudonyms
from recover_core.text import validation
from recover_core.batch.job import Job
from recover_core.errors import RecoverError
from recover_core.filling.base import MaskInput
from recover_core.masking.mask import Masked
from recover_core.obfuscator import Obfuscator, Settings
from recover_core.text.spans import Span


@dataclass
class Chunk:
    index: int  # chunk number: lines [first_line, first_line + len(lines))
    first_line: int  # 0-based
    lines: list[bytes]  # raw, line ends included


@dataclass
class ChunkResult:
    index: int
    text: str  # one output line per input line, each ending in "\n"
    counts: dict = field(default_factory=dict)
    error: str | None = None  # a bad line without --skip-bad: nothing of this chunk is written
    started: float = 0.0  # time.time() when the work began and ended, for throughput
    ended: float = 0.0
    # --consistent: the filled lines before their substitutes are chosen; the engine chooses
    # them (finish) in input order, with the run's one mapping
    pending: tuple | None = None


# Public text that asks for every default entity type, a number, and the caseless path
# (truecasing and its lists); the masked form asks `fill` for each kind of marker.
WARM_UP = ("Anna Novak of Shell flew from Chicago to Lagos across the Sahara with 12 French engineers, "
           "landing at Heathrow Airport.",
           "anna novak met tom in paris")
WARM_UP_MASKED = ("[PERSON] Novak of [ORG] flew from [GPE] to [MASK] across the [LOC] with [NUMBER] [NORP] "
                  "engineers, landing at [FAC] Airport.",
                  "[MASK] met [MASK] in [MASK]")


class BadLine(RecoverError):
    pass


def decode_line(raw: bytes, job: Job, line: int) -> dict | None:
    return decode_record(raw, job.in_jsonl, job.field, line)


def decode_record(raw: bytes, jsonl: bool, field: str, line: int) -> dict | None:
    """The record of one raw line ({field: text, ...}); None for a blank line; BadLine if
    it is not UTF-8 or not the JSON object expected. Lines end at "\\n"; a "\\r" before it
    (Windows) is part of the line end, one inside the line is whitespace of that line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadLine(f"line {line}: not UTF-8 text (byte {raw[e.start]:#04x} at column {e.start + 1}).") from None
    text = text.removesuffix("\n").removesuffix("\r")
    if not text.strip():
        return None
    if not jsonl:
        return {field: text}
    try:
        rec = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadLine(f"line {line}: not valid JSON ({e.msg}).") from None
    if not isinstance(rec, dict) or not isinstance(rec.get(field), str):
        raise BadLine(f"line {line}: expected a JSON object with a string field {field!r}.")
    return rec if rec[field].strip() else None  # `mask` writes blank lines as empty records


class Pipeline:
    """The engine of one job, its models built once, and what it does to a chunk."""

    def __init__(self, job: Job):
        self.job = job
        self.engine = Obfuscator(engine_settings(job), key=job.key)
        self.masker = self.engine.masker if job.command in ("mask", "obfuscate") else None
        self.filler = self.engine.filler if job.command in ("fill", "obfuscate") else None
        if self.filler is not None:  # built now, with the models, not on the first chunk
            _ = self.engine.keep, self.engine.type_check
        self._warm_up()

    def _warm_up(self) -> None:
        """Run once on a fixed public chunk, output dropped: what is built on first use (the
        name and place lists, the filler's candidate table per kind of mask, the tagger's
        caches, about 2 s) is built with the models, so no chunk of the input pays for it
        and a run's warm rate is what a long run sees. A causal filler takes seconds per
        mask and builds little on first use: it is left out, the masker still warms."""
        if self.filler is not None and self.filler.name != "mlm":
            if self.masker is not None:
                self.masker.find_many(list(WARM_UP))
            return
        lines = WARM_UP_MASKED if self.masker is None else WARM_UP
        if self.job.in_jsonl:
            lines = tuple(json.dumps({self.job.field: t}) for t in lines)
        self.run(Chunk(-1, 0, [(t + "\n").encode() for t in lines]))

    @property
    def filler_name(self) -> str:
        return f"{self.job.engine.filler}:{self.filler.model_name}" if self.filler else ""

    @property
    def technique_name(self) -> str:
        return self.masker.name if self.masker else ""

    # --- per chunk --------------------------------------------------------------------

    def run(self, chunk: Chunk) -> ChunkResult:
        started = time.time()
        counts = {"lines": len(chunk.lines), "blank": 0, "bad": 0}
        texts: list[tuple[int, str | None, dict | None]] = []  # (1-based line, clean text, record)
        try:
            for i, raw in enumerate(chunk.lines):
                line = chunk.first_line + i + 1
                texts.append(self._validated(raw, line, counts))
            if self.job.command == "mask":
                out = self._mask(texts, counts)
            else:
                prepared, filled = self._fill(chunk, texts, counts)
                if self.job.consistent:
                    return ChunkResult(chunk.index, "", counts, None, started, time.time(), (prepared, filled))
                out = write_filled(self.job, self.engine, prepared, filled, counts)
        except BadLine as e:
            return ChunkResult(chunk.index, "", {}, str(e))
        return ChunkResult(chunk.index, "".join(s + "\n" for s in out), counts, None, started, time.time())

    def _validated(self, raw: bytes, line: int, counts: dict) -> tuple[int, str | None, dict | None]:
        try:
            rec = decode_line(raw, self.job, line)
            if rec is None:
                counts["blank"] += 1
                return line, None, None
            allow = self.masker is None  # `fill` reads our markers; mask/obfuscate refuse them
            text = validation.check_text(rec[self.job.field], allow_markers=allow, what="line")
            if allow:
                validation.check_mask_count(validation.count_masks(text), what="line")
            return line, text, rec
        except RecoverError as e:
            self._bad(e, line, counts)
            return line, None, None

    def _bad(self, e: RecoverError, line: int, counts: dict) -> None:
        """With --skip-bad a bad line becomes an empty line; otherwise the run stops there."""
        if not self.job.skip_bad:
            msg = str(e)
            raise BadLine(msg if msg.startswith(f"line {line}:") else f"line {line}: {msg}")
        counts["bad"] += 1

    def _mask(self, texts, counts: dict) -> list[str]:
        masked = iter(self.engine.mask_many([t for _, t, _ in texts if t is not None]))
        rates = RateCounter()
        out = []
        for _, text, _ in texts:
            if text is None:
                out.append(json.dumps({"masked": "", "masks": []}) if self.job.out_jsonl else "")
                continue
            m = next(masked)
            rates.add(m)
            out.append(json.dumps(self._masked_record(m)) if self.job.out_jsonl else m.masked)
        counts.update(rates.counts())
        return out

    def _masked_record(self, m: Masked) -> dict:
        rec = m.public()
        if self.job.keep_originals:
            rec["original"] = m.original
            rec["originals"] = [s.text for s in m.spans]
        return rec

    def _fill(self, chunk: Chunk, texts, counts: dict) -> tuple[list, list]:
        job = self.job
        for key in ("no_mask", "words", "masked_words", "fills", "fallbacks", "infill_fallbacks", "infill_masks",
                    "leaks", "leak_checked"):
            counts[key] = 0
        masked = iter(self.engine.mask_many([t for _, t, _ in texts if t is not None])) if self.masker else None
        # prepared: None | ("copy", text, None, line) | ("fill", item index, originals, line)
        items, prepared = [], []
        for line, text, rec in texts:
            if text is None:
                prepared.append(None)
                continue
            if masked is not None:
                m = next(masked)
                try:  # a line is known to have too many masks only once masked
                    validation.check_mask_count(len(m.markers), what="line once masked")
                except RecoverError as e:
                    self._bad(e, line, counts)
                    prepared.append(None)
                    continue
                counts["words"] += m.n_words
                counts["masked_words"] += len(m.spans)
                if not m.spans:
                    prepared.append(("copy", m.masked, None, line))
                    continue
                item, orig = MaskInput(m.masked, m.markers), (m.original, m.spans)
            else:
                if not validation.MARKER_RE.search(text):
                    prepared.append(("copy", text, None, line))
                    continue
                item = fill_input(rec, text)
                orig = jsonl_originals(rec, item)
                if orig is None and job.consistent:
                    self._bad(RecoverError("--consistent and --mapping need each line's original words: fill the "
                                           "JSONL that `mask --keep-originals` writes, or use obfuscate."), line, counts)
                    prepared.append(None)
                    continue
            prepared.append(("fill", len(items), orig, line))
            items.append(item)
        return prepared, self.engine.propose(items)


def engine_settings(job: Job) -> Settings:
    """The engine's settings for a batch job (checked: a bad setting is refused before any model loads)."""
    # `fill` has no masking technique: its keep-list is the one named, or none; mask and
    # obfuscate keep their technique's own
    keep_list = (job.engine.keep_list or "none") if job.command == "fill" else None
    return replace(job.engine, keep_list=keep_list).check()


def write_filled(job: Job, engine: Obfuscator, prepared: list, filled: list, counts: dict,
                 shared: pseudonyms.Pseudonyms | None = None) -> list[str]:
    """The output lines of filled text: each substitute chosen by the engine's rules, with
    one mapping per line, or ``shared`` for the whole run (--consistent)."""
    for key in ("fills", "fallbacks", "infill_fallbacks", "infill_masks", "leaks", "leak_checked"):
        counts.setdefault(key, 0)
    # Every line's substitutes chosen in one call: the tagger checks the draws of the whole
    # chunk together (pseudonyms.consistent_many), not one draw at a time.
    to_fill = [p for p in prepared if p is not None and p[0] == "fill"]
    chosen = iter(engine.choose_many([filled[p[1]] for p in to_fill], [p[2] for p in to_fill], shared))
    out = []
    for p in prepared:
        if p is None:
            out.append(json.dumps({"text": ""}) if job.out_jsonl else "")
            continue
        kind, val, orig, line = p
        if kind == "copy":
            counts["no_mask"] += 1
            out.append(json.dumps({"text": val, "fills": []}) if job.out_jsonl else val)
            continue
        # the originals, where known, choose one substitute per original, never shared
        r = next(chosen)
        counts["fills"] += len(r.replacements)
        counts["fallbacks"] += sum(x.fallback for x in r.replacements)
        counts["infill_fallbacks"] += r.filled_by == "infill"  # instruct output failed validation
        counts["infill_masks"] += sum(x.source == "infill" for x in r.replacements)  # ... for these masks only
        if orig is not None:
            counts["leaks"] += r.leaks
            counts["leak_checked"] += len(r.replacements)
        out.append(json.dumps(r.public(job.candidates)) if job.out_jsonl else r.text)
    return out


def finish(job: Job, engine: Obfuscator, res: ChunkResult, shared: pseudonyms.Pseudonyms) -> ChunkResult:
    """--consistent: a chunk's substitutes chosen by the run's one mapping, in input order."""
    if res.pending is None:
        return res
    prepared, filled = res.pending
    counts = dict(res.counts)
    out = write_filled(job, engine, prepared, filled, counts, shared)
    return ChunkResult(res.index, "".join(s + "\n" for s in out), counts, None, res.started, res.ended)


def fill_input(rec: dict, text: str) -> MaskInput:
    item = MaskInput.parse(text)
    labels = [m.get("label") for m in rec.get("masks", [])] if isinstance(rec.get("masks"), list) else []
    if len(labels) == len(item.markers):  # JSONL from `mask` keeps the labels even with [MASK] markers
        item.markers = [Span(s.start, s.end, s.text, lab or s.label) for s, lab in zip(item.markers, labels)]
    return item


def jsonl_originals(rec: dict, item: MaskInput):
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


class RateCounter:
    """masking.mask_rate as running counts: a summary of any number of lines without
    keeping a record per line. ``counts()`` are plain numbers that add up across chunks."""

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

    def counts(self) -> dict:
        return {"sentences": self.sentences, "words": self.words, "masked_words": self.masked_words,
                "sentences_with_mask": self.sentences_with_mask, "by_label": dict(self.by_label)}

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


def add_counts(total: dict, more: dict) -> dict:
    """Sum two chunks' counts (numbers add; by_label adds per label)."""
    for k, v in more.items():
        if isinstance(v, dict):
            d = total.setdefault(k, {})
            for kk, vv in v.items():
                d[kk] = d.get(kk, 0) + vv
        else:
            total[k] = total.get(k, 0) + v
    return total
