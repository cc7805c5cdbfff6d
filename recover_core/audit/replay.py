"""``replay``: the attacker who has our code, the released text, its public fill offsets
(``Result.public()``: start, end, label, word) and, where it leaked, the key.

The pseudonym rules are deterministic given the masked line, the key and the original: a
line draws under its masked line's subkey (``Obfuscator.new_mapping(line=...)``), and the
filler's candidates depend on the masked line alone. The masked line holds no original, and
the attacker rebuilds it from the output: each fill replaced by its marker again. So for each
candidate original of a public name list it puts the candidate where the name stood, runs
the engine's own choice on that line (``Obfuscator.propose`` once per line, then
``choose_many`` for every candidate) under the key it has, and keeps the candidates that give
the released substitute back. A victim is re-identified when the true name is among at most
``MAX_CANDIDATES`` such candidates; a name the masker left visible (a word of it in the
output outside every fill) counts as re-identified whatever the key.

- **Leaked key**: the attacker replays under the victim's key.
- **Secret key**: the attacker has to guess a key (a fresh one): what a released text alone gives.
- **Chance**: ``MAX_CANDIDATES`` guesses among the candidates.

Victims (the attacker's best case): held-out names no recognizer list holds
(``heldout.py``), each put into a real news sentence in which the masker
finds nothing (in place of "he"/"she", or in a news frame), so the name is the line's only
private word; the attacker knows the sentence, the place of the name, and that the name is
among its candidates (the true one and ``candidates - 1`` other held-out names).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from recover_core.audit import heldout
from recover_core.filling.base import MaskInput
from recover_core.masking.mask import MARKER
from recover_core.obfuscator import Obfuscator, Result
from recover_core.pseudonyms import new_key
from recover_core.text.spans import IDENTIFIER_LABELS, Span
from recover_core.text.validation import check_text

MAX_CANDIDATES = 10
PRONOUN_RE = re.compile(r"\b([Hh]e|[Ss]he)\b")
SLOT = "\x00"  # where the name goes in a template (no sentence holds it)


@dataclass(frozen=True)
class ReplayResult:
    victims: int
    missed: float  # share of victims whose name the masker left visible
    secret: float  # re-identified within MAX_CANDIDATES, the attacker guessing a key (misses included)
    leaked: float  # re-identified within MAX_CANDIDATES with the victim's key (misses included)
    leaked_any: float  # the true name among the candidates that give the substitute back, however many
    chance: float  # MAX_CANDIDATES / candidates
    candidates: int
    rebuilt: float  # share of attacked lines whose masked line the attacker rebuilt exactly


def templates(n: int, engine: Obfuscator, seed: int = 0) -> list[str]:
    """``n`` real news sentences in which ``engine``'s masker finds nothing,
    each with a slot (SLOT) for a name: in place of "he"/"she", else "According to NAME, ..."
    or "..., NAME said."."""
    from recover_core.data import corpora

    sents = [s.strip() for s in corpora.news() if 6 <= len(s.split()) <= 30 and SLOT not in s]
    rng = random.Random(f"replay-templates:{seed}")
    rng.shuffle(sents)
    out: list[str] = []
    for at in range(0, len(sents), 4 * n):
        part = [check_text(s) for s in sents[at:at + 4 * n]]
        out += [_slotted(s, rng) for s, m in zip(part, engine.mask_many(part)) if not m.markers]
        if len(out) >= n:
            break
    return [t for t in out if t][:n]


def _slotted(sent: str, rng: random.Random) -> str:
    m = PRONOUN_RE.search(sent)
    if m and rng.random() < 0.5:
        return sent[:m.start()] + SLOT + sent[m.end():]
    first = sent.split()[0]
    if first[:1].isupper() and first.lower() in ("the", "a", "in", "it", "this", "there", "but", "we", "they"):
        return f"According to {SLOT}, {first.lower()}{sent[len(first):]}"
    return f"{sent[:-1]}, {SLOT} said." if sent.endswith(".") else f"{sent} {SLOT} said."


def rebuild(public: dict) -> MaskInput:
    """The masked line the filler read, from the released text and its public fills. The
    masker marks a name word by word and the filler fills "[MASK] [MASK]" as one name, so a
    fill of several words was as many markers, one space apart; an identifier (e-mail,
    phone, ...) was one."""
    text, out, markers, at, pos = public["text"], [], [], 0, 0
    for f in sorted(public["fills"], key=lambda f: f["start"]):
        out.append(text[at:f["start"]])
        pos += f["start"] - at
        n = 1 if f["label"] in IDENTIFIER_LABELS else max(len(f["word"].split()), 1)
        for k in range(n):
            markers.append(Span(pos, pos + len(MARKER), MARKER, f["label"]))
            pos += len(MARKER) + (k < n - 1)
        out.append(" ".join([MARKER] * n))
        at = f["end"]
    out.append(text[at:])
    return MaskInput("".join(out), markers)


def _visible(name: str, public: dict) -> bool:
    """Whether a word of ``name`` stands in the output outside every fill."""
    text = public["text"]
    for f in sorted(public["fills"], key=lambda f: -f["start"]):
        text = text[:f["start"]] + " " * (f["end"] - f["start"]) + text[f["end"]:]
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text, re.IGNORECASE) for w in name.split())


def _moved(spans: Sequence[Span], start: int, name: str, cand: str, line: str) -> list[Span]:
    """The masker's spans of the victim's line, moved onto the candidate's line: a span in
    the name covers the same words of the candidate."""
    end, delta = start + len(name), len(cand) - len(name)
    nw, cw = [m.span() for m in re.finditer(r"\S+", name)], [m.span() for m in re.finditer(r"\S+", cand)]

    def pos(p: int, is_end: bool) -> int:
        if p <= start:
            return p
        if p >= end:
            return p + delta
        off = p - start
        k = next((i for i, (a, b) in enumerate(nw) if a <= off <= b), len(nw) - 1)
        k = min(k, len(cw) - 1)
        a, b = nw[k]
        return start + (cw[k][1] if is_end and off >= b else cw[k][0] if off <= a else min(cw[k][0] + off - a, cw[k][1]))

    out = []
    for s in spans:
        a, b = pos(s.start, False), pos(s.end, True)
        out.append(Span(a, b, line[a:b], s.label))
    return out


def attack_line(engine: Obfuscator, public: dict, line: str, spans: Sequence[Span], start: int, name: str,
                target: Sequence[int], candidates: Sequence[str], batch: int = 250) -> list[str]:
    """The candidates whose replay under ``engine``'s key gives back the released substitutes
    of the fills ``target`` (the fills where the name stood, in order of place)."""
    item = rebuild(public)
    filled = engine.propose([item])[0]
    fills = sorted(public["fills"], key=lambda f: f["start"])
    want = [fills[i]["word"] for i in target]
    hits = []
    for b in range(0, len(candidates), batch):
        part = candidates[b:b + batch]
        lines = [line[:start] + c + line[start + len(name):] for c in part]
        origs = [(ln, _moved(spans, start, name, c, ln)) for ln, c in zip(lines, part)]
        out = engine.choose_many([filled] * len(part), origs, None, masked=[item.text] * len(part))
        for c, r in zip(part, out):
            if len(r.replacements) == len(fills) and [r.replacements[i].substitute for i in target] == want:
                hits.append(c)
    return hits


def attack(make: Callable[[bytes], Obfuscator], *, victims: int = 200, candidates: int = 1000, seed: int = 0,
           progress: bool = False) -> ReplayResult:
    """The replay of ``victims`` lines, each against ``candidates`` held-out names, under the
    victim's key (leaked) and under a guessed one (secret). ``make(key)`` builds the engine."""
    from tqdm import tqdm

    key = new_key()
    victim = make(key)
    slots = templates(victims, victim, seed)
    pool = heldout.full_names(max(5 * candidates, 2000), seed)
    names = pool[:len(slots)]
    lines = [check_text(t.replace(SLOT, n)) for t, n in zip(slots, names)]
    starts = [t.index(SLOT) for t in slots]
    masked = victim.mask_many(lines)
    released = victim.fill(masked)
    leaked, guessed = make(key), make(new_key())
    missed = secret = leak = anyhow = rebuilt = attacked = 0
    bar = tqdm(range(len(lines)), desc="replay", unit="victim", disable=not progress)
    for i in bar:
        bar.set_postfix(missed=missed, attacked=attacked, secret=secret, leaked=leak, refresh=False)
        public, name = released[i].public(), names[i]
        if _visible(name, public):
            missed += 1
            continue
        rng = random.Random(f"replay-candidates:{seed}:{i}")
        cands = [name] + rng.sample([n for n in pool if n != name], candidates - 1)
        attacked += 1
        rebuilt += rebuild(public).text == masked[i].masked
        # which fills stand where the name stood (the attacker knows the sentence and the name's place)
        words = {w.lower() for w in name.split()}
        target = [j for j, r in enumerate(released[i].replacements) if words & {w.lower() for w in r.original.split()}]
        hits_l = attack_line(leaked, public, lines[i], masked[i].spans, starts[i], name, target, cands)
        # Under a guessed key the true name rarely gives the substitute back, and then no
        # other candidate can make it re-identified: the others are replayed only if it does.
        hits_s = attack_line(guessed, public, lines[i], masked[i].spans, starts[i], name, target, [name])
        if hits_s:
            hits_s = attack_line(guessed, public, lines[i], masked[i].spans, starts[i], name, target, cands)
        leak += name in hits_l and len(hits_l) <= MAX_CANDIDATES
        anyhow += name in hits_l
        secret += name in hits_s and len(hits_s) <= MAX_CANDIDATES
    n = max(len(lines), 1)
    return ReplayResult(len(lines), missed / n, (secret + missed) / n, (leak + missed) / n, (anyhow + missed) / n,
                        MAX_CANDIDATES / candidates, candidates, rebuilt / max(attacked, 1))
