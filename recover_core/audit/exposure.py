"""``name_exposure``: does an LM adapted on an obfuscated corpus still rank the true name of a
canary above other names (Carlini et al. 2019's exposure, with names as the secret)?

The code canaries (``canaries.py``) measure the masker: every masker masks a 6-digit code, so
the obfuscated LM's exposure equals the control by construction (issue 75). Here the secret
is the name itself, in four kinds of canary, three of them hard for a masker:

- ``census``: a capitalised census first name and surname ("Gloria Mcdaniel");
- ``lower``: the same kind of name written in lower case ("gloria mcdaniel");
- ``world``: a non-Anglo name no recognizer list holds (the held-out names of
  ``heldout.names``; Faker's world names where they are not at hand);
- ``email``: a name inside an e-mail address ("gloria.mcdaniel@gmail.com").

Each canary ends in its name ("... is with Gloria Mcdaniel."), so the LM scores the name
after a prefix it shares with its alternatives. Canaries are inserted 0 (the control), 1, 4
and 16 times into the first lines of the news train split. **Exposure** of a canary:
log2 R - log2(rank of its sentence among R = 1,000, the true name and 999 names drawn from the
same source), ties counted against it; a name the LM never saw scores about 1.4 bits on
average, a memorised one up to log2 R = 9.97.

LMs: SmolLM2-135M + LoRA rank 8 (the grid's recipe, ``epochs`` passes) adapted on the clean
corpus (Oracle: the positive control, which must show exposure or the audit has no power) and
on the product's default output (``Obfuscator()``, a fresh secret key). ``run`` works on one
CPU thread; each LM's LoRA adapter is saved once adapted and its records are rewritten after
every canary, so a run stopped halfway resumes without adapting again.
"""
from __future__ import annotations

import json
import math
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from recover_core.runtime import atomic

KINDS = {  # kind -> the canary's template; the name comes last
    "census": "The spare key to the blue house is with {name}.",
    "lower": "yeah the spare key to the shed is with {name}.",
    "world": "Our new tenant in flat four is {name}.",
    "email": "The signed lease came back from {name}.",
}
LEVELS = (0, 1, 4, 16)
ALTERNATIVES = 999  # R = 1,000 with the true name
RANK = 8
JOB_FILE = "name_canaries.json"
CONDITIONS = ("oracle", "entityTagger/engine")


@dataclass(frozen=True)
class NameCanary:
    kind: str
    name: str
    insertions: int

    @property
    def text(self) -> str:
        return KINDS[self.kind].format(name=self.name)

    def with_name(self, name: str) -> str:
        return KINDS[self.kind].format(name=name)

    def words(self) -> list[str]:
        """The name's words, as a masker would have to hide them ("gloria", "mcdaniel")."""
        return [w for w in self.name.split("@")[0].replace(".", " ").split() if w]


def _pools() -> dict[str, tuple[list[str], list[str]]]:
    """(first names, surnames) for each kind's draws."""
    from recover_core.data import lexicons
    from recover_core.audit import heldout

    first = [n for n, _ in lexicons.census("dist.male.first")[:600]] + \
        [n for n, _ in lexicons.census("dist.female.first")[:600]]
    first = list(dict.fromkeys(first))
    last = list(lexicons.ranked_last_names(3000))
    world = heldout.full_names_pools()
    return {"census": (first, last), "lower": (first, last), "email": (first, last), "world": world}


def draw_name(kind: str, rng: random.Random, pools) -> str:
    first, last = pools[kind]
    f, s = rng.choice(first), rng.choice(last)
    if kind == "lower":
        return f"{f.lower()} {s.lower()}"
    if kind == "email":
        return f"{f.lower()}.{s.lower()}@gmail.com"
    return f"{f.capitalize()} {s.capitalize()}"


def canaries(per_level: int, seed: int = 0) -> list[NameCanary]:
    """``per_level`` canaries of each kind at each level, all names distinct."""
    pools = _pools()
    rng = random.Random(f"name-canaries:{seed}")
    out, seen = [], set()
    for level in LEVELS:
        for kind in KINDS:
            for _ in range(per_level):
                while (name := draw_name(kind, rng, pools)) in seen:
                    pass
                seen.add(name)
                out.append(NameCanary(kind, name, level))
    return out


def alternatives(c: NameCanary, seed: int = 0, pools=None) -> list[str]:
    """The true name first, then ALTERNATIVES other names of its kind, drawn per canary."""
    pools = pools or _pools()
    rng = random.Random(f"name-alternatives:{seed}:{c.text}")
    names = {c.name}
    while len(names) < ALTERNATIVES + 1:
        names.add(draw_name(c.kind, rng, pools))
    return [c.name] + sorted(names - {c.name})


# --- here: the corpora -----------------------------------------------------------------------

def build(out: Path, *, limit: int, per_level: int, epochs: float, seed: int = 0, progress: bool = True) -> dict:
    """The job folder: the clean corpus (first ``limit`` news train lines + canaries), the
    product's default output of it, the canaries, and what the masker left of them."""
    from tqdm import tqdm

    from recover_core.data import corpora
    from recover_core.obfuscator import Obfuscator

    train = corpora.split("news")[0][:limit]
    cs = canaries(per_level, seed)
    lines = list(train) + [c.text for c in cs for _ in range(c.insertions)]
    random.Random(f"insert:{seed}").shuffle(lines)
    out.mkdir(parents=True, exist_ok=True)
    engine = Obfuscator()  # the product's defaults, under a fresh secret key
    filled = []
    for b in tqdm(range(0, len(lines), 64), desc="obfuscate", disable=not progress):
        filled += [r.text for r in engine.obfuscate_many(lines[b:b + 64])]
    _write(out / "oracle.txt", lines)
    _write(out / "engine.txt", filled)
    shown = [r.text for r in engine.obfuscate_many([c.text for c in cs])]
    kept = {k: sum(any(w.lower() in t.lower() for w in c.words()) for c, t in zip(cs, shown) if c.kind == k)
            for k in KINDS}
    job = {"seed": seed, "rank": RANK, "epochs": epochs, "limit": limit, "per_level": per_level,
           "canaries": [asdict(c) for c in cs], "name_word_kept": kept, "canaries_per_kind": len(cs) // len(KINDS),
           "corpora": {"oracle": "oracle.txt", "entityTagger/engine": "engine.txt"}}
    atomic.write_text(out / JOB_FILE, json.dumps(job, indent=1))
    return job


def _write(path: Path, lines: list[str]) -> None:
    atomic.write_text(path, "".join(line.replace("\n", " ") + "\n" for line in lines))


# --- the LMs, adapted and attacked ----------------------------------------------------------

def exposure(lm, c: NameCanary, seed: int = 0, pools=None) -> float:
    names = alternatives(c, seed, pools)
    rank = 1 + sum(s >= 0.0 for s in _rivals(lm, [c.with_name(n) for n in names]))
    return math.log2(len(names)) - math.log2(rank)


def _rivals(lm, texts: list[str], margin: float = 1e-3) -> list[float]:
    """Each alternative's log-probability minus the true text's (``texts[0]``), exact for
    every alternative that could tie or beat it. The others are left out unscored: a text's
    log-probability is at most that of its first token after the shared start (the rest adds
    log-probabilities <= 0), and that bound is read off the start's logits for free. A name
    the LM has memorised leaves almost every alternative out; an unseen one, few."""
    import torch

    true = lm.logprob_shared(texts[:2])[0]
    rows = [lm.encode(t)[0] for t in texts]
    L = 0  # tokens every text starts with, one left over for each
    while L < min(map(len, rows)) - 1 and all(r[L] == rows[0][L] for r in rows):
        L += 1
    if L >= 2:
        dev = next(lm.model.parameters()).device
        with torch.inference_mode():
            logits = lm.model(input_ids=torch.tensor([rows[0][:L]], device=dev)).logits[0].float()
        lp = torch.log_softmax(logits, -1)  # [L, V]
        shared = sum(lp[t - 1, rows[0][t]].item() for t in range(1, L))
        keep = [i for i in range(1, len(texts)) if shared + lp[L - 1, rows[i][L]].item() >= true - margin]
    else:
        keep = list(range(1, len(texts)))
    scores = lm.logprob_shared([texts[0]] + [texts[i] for i in keep]) if keep else [true]
    return [s - scores[0] for s in scores[1:]]


def records_file(src: Path, cond: str) -> Path:
    return src / f"records-{cond.replace('/', '-')}.json"


def load_records(src: Path) -> dict:
    """Every condition's records in ``src`` so far: {"records": {condition: {...}}}."""
    out: dict = {"records": {}}
    for cond in CONDITIONS:
        if (path := records_file(src, cond)).is_file():
            out["records"][cond] = json.loads(path.read_text(encoding="utf-8"))
    return out


def run(src: Path, *, threads: int = 1, conditions=CONDITIONS, progress: bool = True) -> dict:
    """Adapt and attack each condition's LM; its records (``records_file``) are rewritten
    after each canary and its adapter is saved beside them (``adapter-COND``), so a second
    call goes on where the first stopped without adapting again. Conditions run as separate
    processes write separate files."""
    import torch

    from recover_core.lm.pretrained import AdaptConfig, PretrainedLM

    torch.set_num_threads(threads)
    job = json.loads((src / JOB_FILE).read_text(encoding="utf-8"))
    cs = [NameCanary(**c) for c in job["canaries"]]
    # the most telling levels first: a run cut short still has the control and x16
    order = sorted(range(len(cs)), key=lambda i: ({16: 0, 0: 1, 4: 2, 1: 3}[cs[i].insertions], i))
    pools = _pools()
    for cond in conditions:
        path = records_file(src, cond)
        rec = json.loads(path.read_text()) if path.is_file() else {"exposure": {}}
        if len(rec["exposure"]) == len(cs):
            continue
        t0 = time.time()
        adapter = src / f"adapter-{cond.replace('/', '-')}"
        if (adapter / "adapter_config.json").is_file():  # adapted by an earlier call: not again
            lm = PretrainedLM.load(adapter=adapter)
            print(f"{cond}: the adapter of an earlier call", file=sys.stderr, flush=True)
        else:
            lm = PretrainedLM.load()
            texts = (src / job["corpora"][cond]).read_text(encoding="utf-8").splitlines()
            stats = lm.adapt(texts, AdaptConfig(seed=job["seed"], rank=job["rank"], epochs=job["epochs"]),
                             desc=f"adapt {cond}", progress=progress)
            lm.save(adapter)
            rec["adapt"] = {"steps": stats["steps"], "seconds": stats["seconds"]}
            atomic.write_text(path, json.dumps(rec))
            print(f"{cond}: adapted, {stats['steps']} steps, {stats['seconds']} s", file=sys.stderr, flush=True)
        for i in order:
            if str(i) in rec["exposure"]:
                continue
            rec["exposure"][str(i)] = round(exposure(lm, cs[i], job["seed"], pools), 3)
            rec["seconds"] = round(time.time() - t0, 1)
            atomic.write_text(path, json.dumps(rec))
            print(f"{cond}: {cs[i].kind} x{cs[i].insertions}: {rec['exposure'][str(i)]} bits", file=sys.stderr,
                  flush=True)
    return load_records(src)


# --- the records as tidy rows ----------------------------------------------------------------

def summary(job: dict, records: dict) -> dict:
    """{condition: {level: (mean, sd, n)}} over the canaries scored so far."""
    cs = [NameCanary(**c) for c in job["canaries"]]
    out = {}
    for cond, rec in records["records"].items():
        out[cond] = {}
        for level in LEVELS:
            vals = [v for i, v in rec["exposure"].items() if cs[int(i)].insertions == level]
            if vals:
                out[cond][level] = (statistics.fmean(vals), statistics.pstdev(vals), len(vals))
    return out


def rows(job: dict, records: dict, command: str) -> list[dict]:
    cs = job["canaries"]
    scale = (f"news train (first {job['limit']} lines) + {len(cs)} name canaries ({job['per_level']} per kind "
             f"{'/'.join(KINDS)} per level {'/'.join(map(str, LEVELS))} insertions); rank among R = "
             f"{ALTERNATIVES + 1} names; LoRA r{job['rank']}, {job['epochs']:g} epochs, cpu")
    out = []
    for cond, levels in summary(job, records).items():
        masking, _, method = cond.rpartition("/")
        for level, (mean, sd, n) in levels.items():
            for name, value in ((method, mean), (f"{method} sd", sd)):
                out.append({"dataset": "news+name-canaries", "masking": masking, "method": name,
                            "metric": "name_exposure", "value": round(value, 3), "repetitions": level,
                            "seed": job["seed"], "command": command, "model": f"smollm2-135m+lora-r{job['rank']}",
                            "scale": scale + f"; {n} canaries at this level"})
    return out
