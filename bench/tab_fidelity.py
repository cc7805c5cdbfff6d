"""What a reader and an attacker see in whole obfuscated judgments (issue 83), on TAB's train/dev.

bench/tab.py scores what is masked; this scores the output, one ``obfuscate_document`` call per
TAB document under ``protect="quasi"``, never the test split (``tab.load_tab`` drops it unread):

* public text kept: the mentions TAB's legal experts left unmasked (NO_MASK: the Court, the
  Convention, states as parties, public dates), by entity type: share that no span touches;
* legal references kept: "Article 6 § 1", "Rule 39", "Protocol No. 11", "§ 2" found by this
  file's own pattern (not the engine's), share untouched;
* headings kept: lines that are a list marker and a short title, or in capitals, holding no
  mention the experts mask: share written out unchanged;
* substitute kind kept: each replaced PERSON / LOC / ORG mention (TAB's gold type), re-tagged by
  spaCy md in the output: share whose substitute reads as its kind (PERSON; GPE/LOC/FAC; ORG);
* dates of laws and treaties kept: the experts' NO_MASK dates in a sentence that dates a law or
  a treaty (entry into force, ratification, gazette, signature: this file's own pattern), share
  untouched;
* the one-known-date attack: for each date of a law or treaty that was moved, and for each date
  the experts left unmasked (NO_MASK DATETIME; lodging dates among them) that was moved, the offset
  it gives applied to the document's other moved dates: share undone; and, as the reference, the
  same with one private date known (the shift policy's own exposure);
* the interval fingerprint: each output's day gaps matched against every original's: share of
  outputs whose best match is their own source;
* ``--consistent N``: N documents in one consistent run; one date known in one document, the
  share of the other documents' dates it undoes.

Run (dev: about 6 minutes on 2 cores; --splits train dev for both):
    python bench/tab_fidelity.py [--splits dev] [--dates shift|year] [--limit N] [--consistent 6]
"""
from __future__ import annotations

import argparse
import itertools
import re
import sys
import time
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from typing import Sequence

from tqdm import tqdm

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from tab import ALLOWED_SPLITS, DEFAULT_DATA, FETCH_HELP, GoldDoc, load_tab  # noqa: E402

_MONTHS = "January February March April May June July August September October November December".split()
_FULL_DATE = re.compile(rf"\b(\d{{1,2}}) ({'|'.join(_MONTHS)}) ((?:1[89]|20)\d\d)\b")
# This bench's own reading of a citation, kept apart from the engine's (masking/public_text.py).
_REFERENCE = re.compile(r"\b(?:Articles?|Rules?|Protocol No\.|Protocol)\s+\d+(?:\s*§+\s*\d+)?|§+\s*\d+")
_HEADING = re.compile(r"^(?:[A-Z]|[IVX]{1,5}|\d{1,2})\. \S.{0,80}$|^[A-Z][A-Z ,’'-]{3,80}$")
# This bench's own reading of a law's or treaty's date: an experts' NO_MASK date in a sentence that
# dates a law or a treaty.
# A sentence that dates a law or a treaty: its entry into force, ratification, publication or
# signature. (Only "naming a law" took in "lodged under Article 34 of the Convention on 14 May
# 1998", the date of the application, which is the case's.)
_LAW_SENTENCE = re.compile(r"into force|[Gg]azette|ratif|promulgat|enact|\bsigned (?:in|at) |\badopted on")
_KINDS = {"PERSON": {"PERSON"}, "LOC": {"GPE", "LOC", "FAC"}, "ORG": {"ORG", "GPE", "FAC", "NORP"}}


def _date(text: str) -> date | None:
    m = _FULL_DATE.fullmatch(text.strip())
    return datetime.strptime(f"{m[1]} {m[2]} {m[3]}", "%d %B %Y").date() if m else None


def _touched(a: int, b: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(s < b and a < e for s, e in spans)


def _sentence(text: str, at: int) -> str:
    a = max(text.rfind(". ", 0, at), text.rfind("\n", 0, at)) + 1
    b = min([i for i in (text.find(". ", at), text.find("\n", at)) if i >= 0] or [len(text)])
    return text[a:b]


def _one_date_attack(pairs: list[tuple[date, date]], known: tuple[date, date]) -> float | None:
    """Share of ``pairs`` (original, output) that the offset of ``known`` undoes."""
    others = [p for p in pairs if p != known]
    if not others:
        return None
    offset = known[1] - known[0]
    return sum(out - offset == orig for orig, out in others) / len(others)


def score(doc: GoldDoc, ob, nlp) -> dict:
    masked = ob.mask(doc.text)
    spans = [(s.start, s.end) for s in masked.spans]
    result = ob.obfuscate_document(doc.text)
    out: dict = {"doc": doc.doc_id}
    # public text: the experts' NO_MASK mentions, by type
    public = Counter()
    for e in doc.entities:
        for (a, b), needs in zip(e.mentions, e.mention_masking):
            if not needs:
                public[(e.entity_type, "all")] += 1
                public[(e.entity_type, "kept")] += not _touched(a, b, spans)
    out["public"] = public
    laws = [(a, b) for e in doc.entities if e.entity_type == "DATETIME"
            for (a, b), needs in zip(e.mentions, e.mention_masking) if not needs and _LAW_SENTENCE.search(_sentence(doc.text, a))]
    out["law_dates"] = (sum(not _touched(a, b, spans) for a, b in laws), len(laws))
    out["laws"] = laws
    refs = [(m.start(), m.end()) for m in _REFERENCE.finditer(doc.text)]
    out["refs"] = (sum(not _touched(a, b, spans) for a, b in refs), len(refs))
    # headings: lines with no mention the experts mask
    masked_gold = [(a, b) for e in doc.entities for (a, b), needs in zip(e.mentions, e.mention_masking) if needs]
    in_lines, out_lines, at, heads = doc.text.split("\n"), result.text.split("\n"), 0, [0, 0]
    for i, line in enumerate(in_lines):
        if _HEADING.match(line.strip()) and not _touched(at, at + len(line), masked_gold) and len(out_lines) == len(in_lines):
            heads[1] += 1
            heads[0] += out_lines[i] == line
        at += len(line) + 1
    out["headings"] = tuple(heads)
    # the substitute's kind, as spaCy md reads the output; each replacement found in the original
    # by its words (in memory only), in order
    placed = _placed(doc.text, result.replacements)
    kinds = [0, 0]
    if placed:
        ents = [(x.start_char, x.end_char, x.label_) for x in nlp(result.text).ents]
        for s, r in placed:
            gold = next((e.entity_type for e in doc.entities for (a, b), needs in zip(e.mentions, e.mention_masking)
                         if needs and a <= s.start < b and e.entity_type in _KINDS), None)
            if gold is None or not r.substitute.strip():
                continue
            read = {lab for a, b, lab in ents if a < r.end and r.start < b}
            kinds[1] += 1
            kinds[0] += bool(read & _KINDS[gold])
    out["kinds"] = tuple(kinds)
    # dates: (original, output) of each moved full date; which are public
    pairs, public_pairs = [], []
    public_dates = [(a, b) for e in doc.entities if e.entity_type == "DATETIME"
                    for (a, b), needs in zip(e.mentions, e.mention_masking) if not needs]
    for s, r in placed:
        o, n = _date(s.text), _date(r.substitute)
        if o and n:
            pairs.append((o, n))
            if _touched(s.start, s.end, public_dates):
                public_pairs.append((o, n))
    out["pairs"] = pairs
    out["public_attack"] = [x for p in public_pairs if (x := _one_date_attack(pairs, p)) is not None]
    law_pairs = [(o, n) for s, r in placed if (o := _date(s.text)) and (n := _date(r.substitute))
                 and _touched(s.start, s.end, laws)]
    out["law_attack"] = [x for p in law_pairs if (x := _one_date_attack(pairs, p)) is not None]
    out["law_docs"] = bool(laws)
    out["private_attack"] = [x for p in pairs[:1] if (x := _one_date_attack(pairs, p)) is not None]
    out["output_dates"] = [n for _, n in pairs]
    out["original_dates"] = [d for d in (_date(m.group()) for m in _FULL_DATE.finditer(doc.text)) if d]
    return out


class _At:
    def __init__(self, start: int, end: int, text: str):
        self.start, self.end, self.text = start, end, text


def _placed(text: str, reps) -> list:
    """(where in ``text``, replacement) for each replacement, found in order by its original."""
    out, at = [], 0
    for r in reps:
        i = text.find(r.original, at)
        if i < 0:
            continue
        out.append((_At(i, i + len(r.original), r.original), r))
        at = i + len(r.original)
    return out


def _gaps(dates: Sequence[date]) -> set[int]:
    return {abs((a - b).days) for a, b in itertools.combinations(sorted(set(dates)), 2)}


def fingerprint(rows: list[dict]) -> tuple[int, int]:
    """(outputs whose best gap match is their own source, outputs with 3+ dates)."""
    originals = {r["doc"]: _gaps(r["original_dates"]) for r in rows}
    hits = n = 0
    for r in rows:
        gaps = _gaps(r["output_dates"])
        if len(r["output_dates"]) < 3:
            continue
        n += 1
        ranked = sorted(originals, key=lambda d: -len(gaps & originals[d]))
        best = len(gaps & originals[ranked[0]])
        hits += best > 0 and r["doc"] in [d for d in ranked if len(gaps & originals[d]) == best][:1]
    return hits, n


def consistent_attack(docs: list[GoldDoc], ob) -> float | None:
    """One consistent run over ``docs``; the first document's first moved date known: the share
    of the other documents' moved dates its offset undoes."""
    results = ob.obfuscate_many([d.text for d in docs], consistent=True)
    per_doc = []
    for d, r in zip(docs, results):
        per_doc.append([(o, n) for x in r.replacements if (o := _date(x.original)) and (n := _date(x.substitute))])
    known = next((p[0] for p in per_doc if p), None)
    others = [p for pairs in per_doc[1:] for p in pairs]
    if known is None or not others:
        return None
    offset = known[1] - known[0]
    return sum(n - offset == o for o, n in others) / len(others)


def _share(pair: tuple[int, int]) -> str:
    return f"{pair[0] / pair[1]:.3f} ({pair[0]}/{pair[1]})" if pair[1] else "n/a"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--splits", nargs="+", default=["dev"], choices=ALLOWED_SPLITS)
    p.add_argument("--dates", choices=["jitter", "shift", "year"], default="jitter")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--consistent", type=int, default=6, help="documents in the consistent-run attack (0: skip)")
    args = p.parse_args(argv)
    if not args.data.exists():
        print(FETCH_HELP, file=sys.stderr)
        return 2
    from recover_core import Obfuscator
    from recover_core.models import bundles

    docs = load_tab(args.data, args.splits, args.limit)
    ob = Obfuscator(protect="quasi", dates=args.dates)
    nlp = bundles.load_ner("spacy-md")
    t0 = time.perf_counter()
    rows = [score(d, ob, nlp) for d in tqdm(docs, desc="documents", unit="doc")]
    public = sum((r["public"] for r in rows), Counter())
    total = lambda key: (sum(r[key][0] for r in rows), sum(r[key][1] for r in rows))  # noqa: E731
    mean = lambda xs: f"{sum(xs) / len(xs):.3f} over {len(xs)}" if xs else "n/a (none moved)"  # noqa: E731
    print(f"\nTAB {'+'.join(args.splits)}, {len(docs)} documents, protect=quasi, dates={args.dates} "
          f"({time.perf_counter() - t0:.0f} s)")
    for etype in sorted({k for k, _ in public}):
        print(f"  public text kept, {etype:9s} {_share((public[(etype, 'kept')], public[(etype, 'all')]))}")
    print(f"  legal references kept       {_share(total('refs'))}")
    print(f"  dates of laws and treaties kept (NO_MASK, in a sentence dating a law) {_share(total('law_dates'))}")
    print(f"  headings kept               {_share(total('headings'))}")
    print(f"  substitute kind kept        {_share(total('kinds'))}")
    law_docs = sum(r["law_docs"] for r in rows)
    law_attack = [x for r in rows for x in r["law_attack"]]
    print(f"  one date of a law or treaty known: share of the other dates undone   "
          f"{mean(law_attack) if law_attack else f'0 (none of the {law_docs} documents with one moved it)'}")
    print(f"  one date the experts left unmasked known (lodging dates included): share undone   "
          f"{mean([x for r in rows for x in r['public_attack']])}")
    print(f"  one private date known (reference): share undone        "
          f"{mean([x for r in rows for x in r['private_attack']])}")
    print(f"  interval fingerprint: outputs matched to their source   {_share(fingerprint(rows))}")
    if args.consistent:
        x = consistent_attack(docs[:args.consistent], ob)
        print(f"  consistent run of {min(args.consistent, len(docs))}: one known date undoes of the other "
              f"documents' dates  {'n/a' if x is None else f'{x:.3f}'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
