"""Full names in call transcripts, cased and caseless (issue 74: "jim robo", "sandy brown").

Earnings calls and service calls name people in a few ways: introductions ("this is X"),
hand-overs ("I'll turn the call over to X"), the operator's queue ("our next question comes
from X with Y"), thanks, and plain mentions. ASR writes them in lower case, and many
surnames are everyday words (Brown, Powers, Street, May), which no spelling or list rule
can tell from the word. This bench writes such lines from templates written for it, some
with a hand-over cue and some without, and fills them with full names:

* "everyday surname": a census first name and a census surname that is an everyday word;
* "census surname": a census first name and any other census surname (top 5,000);
* "held-out": a first name and a surname that no recognizer list holds (bench/heldout_names.py).

A name counts as found when every word of it is masked; precision is over masked words
(an organisation's words count neither way). ``python bench/call_names.py N`` prints the
first N lines with a name missed.
The first names come from the census list the recognizers read, so the first word of a name
is no test of the lists; the surname and the context are.

Run:  python bench/call_names.py [N]   (about a minute on 2 cores)
"""
from __future__ import annotations

import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recover_core.data import lexicons  # noqa: E402
from recover_core.data.lexicons import everyday  # noqa: E402

SEED = 7404
PER_TEMPLATE = 15
TEMPLATES = [
    # hand-overs, introductions, the operator's queue
    "Good morning and welcome. This is {full}, and with me today is {full}, our chief financial officer.",
    "Thank you, operator. I'll now turn the call over to {full}.",
    "Our first question comes from {full} with {org}. Please go ahead.",
    "The next question is from the line of {full} of {org}.",
    "Let me hand it back to {full} for closing remarks.",
    "I'd like to introduce {full}, who runs our retail business.",
    "We were joined by {full} from the board.",
    "Hi, {full}, thanks for taking my question.",
    "Thanks, {full}, and good morning, everyone.",
    "Congratulations, {full}, on the promotion.",
    "Yes, this is {full} calling about my account.",
    "My name is {full} and my account number is on file.",
    # no hand-over cue right before the name
    "{full}, our CFO, will walk you through the numbers.",
    "I spoke with {full} last week and she said it was fine.",
    "Can I speak to {full}, please?",
    "Okay, {full}, let me pull that up for you.",
    "{full} mentioned the shipment would arrive on Monday.",
    "Please send the invoice to {full} at the main office.",
    "Great question, {full}. So the way we think about it is this.",
    "I'll ask {full} to take that one.",
]
SLICES = ("everyday surname", "census surname", "held-out")


def _pools() -> dict[str, list]:
    import heldout_names as H

    firsts = [n for n, _ in lexicons.census("dist.male.first")[:600]] + [n for n, _ in lexicons.census("dist.female.first")[:600]]
    lasts = [n for n, _ in lexicons.census("dist.all.last")[:5000]]
    firsts = [n.lower() for n in firsts]
    return {"first": sorted(set(firsts)), "everyday": sorted({n.lower() for n in lasts if everyday(n.lower())}),
            "census": sorted({n.lower() for n in lasts if not everyday(n.lower())}), "orgs": H.orgs(),
            "heldout": H}


def items(caseless: bool) -> list[dict]:
    """One dict per line: text, the gold names' word ranges, and the slice of its names."""
    rng = random.Random(SEED)
    p = _pools()
    out = []
    for tpl in TEMPLATES:
        for k in range(PER_TEMPLATE):
            sl = SLICES[k % len(SLICES)]
            text, gold, orgs, pos = "", [], [], 0
            for m in re.finditer(r"\{(\w+)\}", tpl):
                text += tpl[pos:m.start()]
                if m.group(1) == "org":
                    word = rng.choice(p["orgs"])
                    orgs.append((len(text), len(text) + len(word)))
                else:
                    if sl == "held-out":
                        word = p["heldout"].full_name(rng)
                    else:
                        word = f"{rng.choice(p['first'])} {rng.choice(p['everyday' if sl.startswith('everyday') else 'census'])}"
                    word = " ".join(w.capitalize() for w in word.split())
                    gold.append([(len(text) + a.start(), len(text) + a.end()) for a in re.finditer(r"\S+", word)])
                text += word
                pos = m.end()
            text += tpl[pos:]
            if caseless:  # as ASR writes it: lower case, no punctuation
                text = re.sub(r"[.,?!]", " ", text).lower()
            out.append({"text": text, "gold": gold, "orgs": orgs, "slice": sl})
    return out


def score(its: list[dict], found: list[list]) -> dict[str, float]:
    hit: dict[str, list[int]] = {s: [] for s in SLICES}
    right = masked = 0
    missed = []
    for it, spans in zip(its, found):
        cover = [(s.start, s.end) for s in spans]
        gold_words = {w for name in it["gold"] for w in name}
        for name in it["gold"]:
            ok = all(any(a <= x and y <= b for a, b in cover) for x, y in name)
            hit[it["slice"]].append(ok)
            if not ok:
                missed.append(it["text"])
        for s in spans:
            for m in re.finditer(r"\w+", it["text"][s.start:s.end]):
                if any(a <= s.start + m.start() < b for a, b in it["orgs"]):
                    continue  # an organisation's word: private too, neither right nor wrong here
                masked += 1
                right += any(a <= s.start + m.start() and s.start + m.end() <= b for a, b in gold_words)
    row = {sl: 100 * sum(v) / len(v) for sl, v in hit.items()}
    row["all"] = 100 * sum(sum(v) for v in hit.values()) / sum(len(v) for v in hit.values())
    row["precision"] = 100 * right / masked if masked else float("nan")
    row["missed"] = missed  # type: ignore[assignment]
    return row


def main() -> int:
    from recover_core.masking.entity_tagger import EntityTagger

    tagger = EntityTagger()
    tagger.find_many(["Warm-up: Anna Smith met the judge."])
    for caseless in (False, True):
        its = items(caseless)
        t = time.perf_counter()
        found = tagger.find_many([it["text"] for it in its])
        dt = time.perf_counter() - t
        row = score(its, found)
        names = sum(len(it["gold"]) for it in its)
        print(f"{'caseless' if caseless else 'cased':8s} {names} names in {len(its)} lines: "
              + ", ".join(f"{k} {row[k]:.1f}%" for k in (*SLICES, "all", "precision")) + f"  ({dt:.1f} s)")
        for line in row["missed"][:int(sys.argv[1]) if len(sys.argv) > 1 else 0]:  # type: ignore[index]
            print(f"         missed: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
