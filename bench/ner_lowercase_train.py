"""An alternative for entityTagger's caseless path: a spaCy NER model trained on caseless text.

entityTagger truecases caseless text (Fisher, normalised ASR output) and runs the cased spaCy
md model on the truecased copy (truecase.py). This script measures the other road: an NER
model that never sees capitals or punctuation.

  1. Silver data: spaCy md tags the cased sentences of corpora.news() and corpora.wiki()
     (~20k); its PERSON, GPE, LOC, ORG, FAC, NORP entities are kept. Each sentence is then
     made caseless exactly as bench/ner_recall.py's ``caseless_piece`` does (lower case,
     punctuation to spaces, " - " dropped, runs of spaces collapsed), with a character map so
     that the entity offsets follow. Sentences with ``corpora.is_heldout`` are the dev set,
     the rest the training set (spaCy DocBins under ~/.cache/recover/ner-lowercase/).
  2. ``spacy init config`` (en, ner, efficiency, CPU) and ``spacy train``, capped by
     ``training.max_epochs`` / ``training.max_steps`` (and a wall-clock timeout as a backstop).
     Measured on 2 CPU cores: the first epoch (small, growing batches) about 3.2 min, so the
     default is 7 epochs, capped at 25 min.
  3. The caseless slices of bench/ner_recall.py (census+off-list, fisher-style, world),
     scored with its ``score_generic``: the trained model alone, the trained model with the
     lists (name list, name slots, place list on the truecased copy), and entityTagger
     (case="auto": truecase, then spaCy md and the lists) in the same run.

Run:  python bench/ner_lowercase_train.py [--max-epochs N] [--max-steps N] [--retrain]
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import pandas as pd  # noqa: E402

import ner_recall as B  # noqa: E402
from recover_core.models import bundles  # noqa: E402
from recover_core.data import corpora  # noqa: E402
from recover_core.data import lexicons  # noqa: E402
from recover_core.masking.entity_tagger import (DEFAULT_TYPES, EntityTagger, name_list_spans,  # noqa: E402
                                                place_list_spans)
from recover_core.masking.name_cues import cue_spans  # noqa: E402
from recover_core.masking.truecase import truecase, truecase_with_names  # noqa: E402
from recover_core.text.spans import WORD_RE, Span, merge  # noqa: E402

CACHE = Path.home() / ".cache" / "recover" / "ner-lowercase"
KEEP = frozenset(DEFAULT_TYPES)  # PERSON, GPE, LOC, ORG, FAC, NORP
_SPACE = re.compile(r"\s")


# --- silver data -------------------------------------------------------------------------

def silver(sents: list[str]) -> list[list[tuple[int, int, str]]]:
    """spaCy md's entities of the kept types in each cased sentence, as character offsets."""
    nlp = bundles.load_ner("spacy-md")
    with bundles.spacy_zone(nlp) as z:
        return [[(e.start_char, e.end_char, e.label_) for e in d.ents if e.label_ in KEEP]
                for d in z.pipe(sents, batch_size=64)]


def caseless_map(text: str) -> tuple[str, list[int | None]]:
    """``caseless_piece(text).strip()`` and, for each character of ``text``, where it lands
    in it (None: dropped)."""
    t = B.PUNCT_RE.sub(" ", text)  # one character for one: offsets unchanged
    keep = [True] * len(t)
    i = 0
    while (j := t.find(" - ", i)) >= 0:  # str.replace(" - ", " "): left to right, no overlaps
        keep[j + 1] = keep[j + 2] = False
        i = j + 3
    out: list[str] = []
    where: list[int | None] = [None] * len(t)
    prev_space = False
    for k, c in enumerate(t):
        if not keep[k]:
            continue
        if _SPACE.match(c):
            if prev_space:
                continue
            prev_space = True
            where[k] = len(out)
            out.append(" ")
        else:
            prev_space = False
            low = c.lower()
            where[k] = len(out)
            out.extend(low)
    s = "".join(out)
    lead = len(s) - len(s.lstrip())
    body = s.strip()
    where = [None if w is None or w < lead or w - lead >= len(body) else w - lead for w in where]
    return body, where


def caseless_example(text: str, ents: list[tuple[int, int, str]]):
    """(caseless text, [(start, end, label)]) or None when the map disagrees with caseless_piece."""
    low, where = caseless_map(text)
    if low != B.caseless_piece(text).strip():
        return None
    out = []
    for s, e, label in ents:
        pos = [where[k] for k in range(s, e) if where[k] is not None]
        if not pos:
            continue
        a, b = min(pos), max(pos) + 1
        while a < b and not low[a].isalnum():
            a += 1
        while b > a and not low[b - 1].isalnum():
            b -= 1
        if a < b:
            out.append((a, b, label))
    return low, out


def build_data() -> dict:
    """Silver DocBins train.spacy and dev.spacy in CACHE (reused when there)."""
    import spacy
    from spacy.tokens import DocBin

    CACHE.mkdir(parents=True, exist_ok=True)
    stats_path = CACHE / "data_stats.json"
    if (CACHE / "train.spacy").exists() and (CACHE / "dev.spacy").exists() and stats_path.exists():
        return json.loads(stats_path.read_text())
    t0 = time.time()
    sents = list(dict.fromkeys(list(corpora.news()) + list(corpora.wiki())))
    ents = silver(sents)
    t_silver = time.time() - t0
    nlp = spacy.blank("en")
    bins = {"train": DocBin(store_user_data=False), "dev": DocBin(store_user_data=False)}
    st = Counter()
    labels = {"train": Counter(), "dev": Counter()}
    for sent, es in zip(sents, ents):
        got = caseless_example(sent, es)
        if got is None:
            st["skipped (map mismatch)"] += 1
            continue
        low, spans = got
        doc = nlp.make_doc(low)
        keep = []
        for a, b, label in spans:
            sp = doc.char_span(a, b, label, alignment_mode="contract") or \
                doc.char_span(a, b, label, alignment_mode="expand")
            if sp is None or (keep and sp.start < keep[-1].end):
                st["entities lost in alignment"] += 1
                continue
            keep.append(sp)
        doc.ents = keep
        part = "dev" if corpora.is_heldout(sent) else "train"
        bins[part].add(doc)
        st[f"{part} sentences"] += 1
        st[f"{part} words"] += len(doc)
        labels[part].update(sp.label_ for sp in keep)
    for part, db in bins.items():
        db.to_disk(CACHE / f"{part}.spacy")
    stats = dict(st, silver_s=round(t_silver, 1), labels={p: dict(c) for p, c in labels.items()},
                 n_sentences=len(sents))
    stats_path.write_text(json.dumps(stats, indent=1))
    return stats


# --- training ----------------------------------------------------------------------------

def spacy_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "spacy", *args]


def train(max_epochs: int, max_steps: int, eval_frequency: int, timeout_s: int, retrain: bool) -> dict:
    out_dir = CACHE / "model"
    info_path = CACHE / "train_info.json"
    if not retrain and (out_dir / "model-best").exists() and info_path.exists():
        info = json.loads(info_path.read_text())
        info["reused"] = True
        return info
    cfg = CACHE / "config.cfg"
    subprocess.run(spacy_cmd("init", "config", str(cfg), "--lang", "en", "--pipeline", "ner",
                             "--optimize", "efficiency", "--force"), check=True)
    cmd = spacy_cmd("train", str(cfg), "--output", str(out_dir), "--gpu-id", "-1",
                    "--paths.train", str(CACHE / "train.spacy"), "--paths.dev", str(CACHE / "dev.spacy"),
                    "--training.max_epochs", str(max_epochs), "--training.max_steps", str(max_steps),
                    "--training.eval_frequency", str(eval_frequency))
    print("$", " ".join(cmd), flush=True)
    t = time.time()
    log_lines: list[str] = []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # spaCy prints a row only every eval_frequency steps: a timer kills the run at timeout_s
    # (model-best, saved at each improving evaluation, stays)
    timer = threading.Timer(timeout_s, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            print("  | " + line.rstrip(), flush=True)
            log_lines.append(line.rstrip())
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
    timed_out = time.time() - t >= timeout_s and proc.returncode != 0
    seconds = time.time() - t
    if not (out_dir / "model-best").exists():
        raise SystemExit(f"training left no model-best (rc {proc.returncode})")
    # the last table row: epoch, step, losses, ents_f/p/r, score
    rows = [ln.split() for ln in log_lines if re.match(r"^\s*\d+\s+\d+\s", ln)]
    info = dict(seconds=round(seconds, 1), timed_out=timed_out, returncode=proc.returncode,
                last_row=rows[-1] if rows else None, epochs_started=int(rows[-1][0]) + 1 if rows else None,
                steps=int(rows[-1][1]) if rows else None, max_epochs=max_epochs, max_steps=max_steps,
                best_row=max(rows, key=lambda r: float(r[-1])) if rows else None)
    info_path.write_text(json.dumps(info, indent=1))
    return info


def du(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


# --- evaluation ----------------------------------------------------------------------------

def ner_spans(doc, types) -> list[Span]:
    """One span per word of each entity of the wanted types, as EntityTagger._entity_spans."""
    return [Span(ent.start_char + m.start(), ent.start_char + m.end(), m.group(), ent.label_, "lowerNER")
            for ent in doc.ents if ent.label_ in types
            for m in WORD_RE.finditer(ent.text)
            if m.group().lower() not in lexicons.FUNCTION_WORDS]


def run_lower(nlp, texts: list[str], types, lists: str) -> list[list[Span]]:
    """lists: "" (the model alone), "lists" (+ name list, slots, place list on truecase(text)),
    "lists+ctx" (also truecase's context names, as entityTagger adds them)."""
    with bundles.spacy_zone(nlp) as z:
        found = [ner_spans(d, types) for d in z.pipe(texts, batch_size=64)]
    if not lists:
        return [merge(s) for s in found]
    out = []
    for text, spans in zip(texts, found):
        if lists == "lists+ctx":
            v, by_context = truecase_with_names(text)
        else:
            v, by_context = truecase(text), []
        extra = []
        if "PERSON" in types:
            extra += name_list_spans(v) + cue_spans(v) + by_context
        if "GPE" in types:
            extra += place_list_spans(v)
        out.append(merge(spans + extra))
    return out


def evaluate(model_dir: Path) -> pd.DataFrame:
    import spacy

    nlp = spacy.load(model_dir)
    sents, tagged = B.tag_news()
    no_person = [s for s, a, b in zip(sents, tagged["spacy-sm"], tagged["spacy-md"]) if not a and not b]
    items = B.build_gold(no_person)
    person = ("PERSON",)
    sets = [("census+off-list", B.caseless_items(items, True), person),
            ("fisher-style", B.fisher_items(B.name_pools(), True), person),
            ("world", B.world_items(True), DEFAULT_TYPES)]
    configs = [("lowercase NER alone", "lower", ""),
               ("lowercase NER + lists", "lower", "lists"),
               ("lowercase NER + lists + ctx", "lower", "lists+ctx"),
               ("entityTagger auto (truecase+md+lists)", "ours", None)]
    rows = []
    for set_name, its, types in sets:
        texts = [it["text"] for it in its]
        n_caseless = sum(t == t.lower() for t in texts)
        for label, kind, lists in configs:
            if kind == "lower":
                def fn(ts, types=types, lists=lists):
                    return run_lower(nlp, ts, types, lists)
            else:
                tagger = EntityTagger(model="spacy-md", types=types, case="auto")
                fn = tagger.find_many
            fn(texts[:16])  # load + warm up
            dt = float("inf")
            for _ in range(2):  # best of two: the machine is shared
                t = time.perf_counter()
                res = fn(texts)
                dt = min(dt, time.perf_counter() - t)
            df, fp, masked, n_words = B.score_generic(its, res)
            row = dict(set=set_name, config=label, recall=df.found.mean() * 100)
            for lab in ("PERSON", "GPE", "ORG"):
                row[lab] = df[df.label == lab].found.mean() * 100 if (df.label == lab).any() else float("nan")
            if set_name != "world":
                for sl in ("off-list", "fisher off-list", "word-like", "fisher word-like"):
                    if (df.slice == sl).any():
                        row[sl.replace("fisher ", "")] = df[df.slice == sl].found.mean() * 100
            row["precision"] = (masked - fp) / masked * 100 if masked else float("nan")
            row["FP/1k"] = fp / n_words * 1000
            row["sent/s"] = len(texts) / dt
            rows.append(row)
            if kind == "lower" and lists == "":
                miss = sorted({g["name"] for it, spans in zip(its, res) for g in it["gold"]
                               if not all(B.covered(spans, a, b) for a, b in g["words"])})
                print(f"{set_name}: {len(texts)} sentences ({n_caseless} all lower-case); lowercase NER alone "
                      f"misses {len(miss)} distinct names, first 20: {', '.join(miss[:20])}")
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-epochs", type=int, default=7)
    ap.add_argument("--max-steps", type=int, default=6000)
    ap.add_argument("--eval-frequency", type=int, default=500)
    ap.add_argument("--timeout", type=int, default=25 * 60, help="wall-clock backstop for training, s")
    ap.add_argument("--retrain", action="store_true", help="train again even if a model is cached")
    ap.add_argument("--eval-only", action="store_true")
    args = ap.parse_args()
    t0 = time.time()

    stats = build_data()
    print("silver data:", json.dumps(stats), flush=True)
    if not args.eval_only:
        info = train(args.max_epochs, args.max_steps, args.eval_frequency, args.timeout, args.retrain)
        print(f"\ntraining: {info['seconds']:.0f}s wall ({info['seconds'] / 60:.1f} min), epochs started "
              f"{info['epochs_started']} (max_epochs {info['max_epochs']}), steps {info['steps']} "
              f"(max_steps {info['max_steps']}), timed out: {info['timed_out']}"
              f"{' (cached model reused)' if info.get('reused') else ''}")
        print(f"  last row (E, #, LOSS TOK2VEC, LOSS NER, ENTS_F, ENTS_P, ENTS_R, SCORE): {info['last_row']}")
        print(f"  best row on the silver dev set: {info['best_row']}")
    best = CACHE / "model" / "model-best"
    print(f"model-best: {best}, {du(best):.1f} MiB on disk", flush=True)

    res = evaluate(best)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    print("\nCaseless slices of bench/ner_recall.py: recall (% of gold entities whose every word is masked),")
    print("by label and slice; precision over masked words; false-positive words per 1000 words; sentences/s:")
    print(res.round(1).to_string(index=False))
    print(f"\nelapsed {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
