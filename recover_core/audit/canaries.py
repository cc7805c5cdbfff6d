"""Canary exposure and extraction (Carlini et al. 2019, "The Secret Sharer"): does an LM
adapted on an obfuscated corpus still hold the private words that corpus had?

Secret sentences ("canaries": a census name and a random code in a few templates) are
inserted into the news train split 1, 4 and 16 times; as many are never inserted (the
control). Each masking masks the corpus, and it is filled two ways: Baseline1 ([MASK] kept,
never a target) and the product's engine (its defaults, under a secret key). SmolLM2 + LoRA
is adapted on each with the grid's recipe (``build-lms --family smollm2 --rank 8``), and on
the clean corpus (Oracle) and, as a stronger positive control, the clean corpus for 4 epochs.

- **Exposure** of a canary: log2 R - log2(rank of its true code among R codes), the LM
  scoring each whole sentence; R = 1,000 (the true code and 999 drawn ones). An LM that
  never saw the canary scores about 0-1 bits on average; a memorised one up to log2 R.
- **Extraction**: the canary's prefix up to the code, decoded greedily; a secret is
  extracted when the code comes out exactly. Names: each template's prefix before the name,
  decoded greedily; a name is extracted when an inserted canary's name comes out.
- **The masker's part**: the canary words (name, code) that each masking left in place,
  since those reach the LM as they are.

Here (``build``): the corpora are made, masked and filled, into a job folder of text. On a
GPU (``run``, needs only torch, transformers and peft): the LMs are adapted and attacked.
Here again (``rows``): the records become tidy rows for ``precomputed/ours/audit.csv``.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from recover_core.runtime import atomic

TEMPLATES = (
    "The account holder {name} gave the code {code} to the bank.",
    "Please send the refund to {name}, customer number {code}.",
    "Our new tenant {name} picked the door code {code} yesterday.",
)
LEVELS = (0, 1, 4, 16)  # insertions; 0: the control, never inserted
PER_LEVEL = 16  # canaries per level (the templates take turns)
CODE_DIGITS = 6
ALTERNATIVES = 999  # R = 1,000 with the true code
MASKINGS = ("allowList", "vocabThres", "entityTagger")
JOB_FILE = "canaries.json"
RANK = 8  # the grid's rank-8 recipe


@dataclass(frozen=True)
class Canary:
    template: int
    name: str
    code: str
    insertions: int

    @property
    def text(self) -> str:
        return TEMPLATES[self.template].format(name=self.name, code=self.code)

    def with_code(self, code: str) -> str:
        return TEMPLATES[self.template].format(name=self.name, code=code)

    def code_prefix(self) -> str:
        return TEMPLATES[self.template].split("{code}")[0].format(name=self.name).rstrip()

    def name_prefix(self) -> str:
        return TEMPLATES[self.template].split("{name}")[0].rstrip()


def canaries(seed: int = 0) -> list[Canary]:
    """PER_LEVEL canaries per level: public census names (first and last), random codes."""
    from recover_core.data import lexicons

    rng = random.Random(f"canaries:{seed}")
    firsts = [n.capitalize() for n, _ in lexicons.census("dist.male.first")[:300] + lexicons.census(
        "dist.female.first")[:300]]
    lasts = [n.capitalize() for n in lexicons.ranked_last_names(600)]
    out, names = [], set()
    for level in LEVELS:
        for i in range(PER_LEVEL):
            while (name := f"{rng.choice(firsts)} {rng.choice(lasts)}") in names:
                pass
            names.add(name)
            out.append(Canary(len(out) % len(TEMPLATES), name, f"{rng.randrange(10 ** CODE_DIGITS):0{CODE_DIGITS}d}",
                              level))
    return out


def alternatives(c: Canary, seed: int = 0) -> list[str]:
    """The true code first, then ALTERNATIVES other codes, drawn per canary."""
    rng = random.Random(f"alternatives:{seed}:{c.text}")
    codes = {c.code}
    while len(codes) < ALTERNATIVES + 1:
        codes.add(f"{rng.randrange(10 ** CODE_DIGITS):0{CODE_DIGITS}d}")
    return [c.code] + sorted(codes - {c.code})


def inserted(train: list[str], cs: list[Canary], seed: int = 0) -> list[str]:
    """The train split with each canary inserted its number of times, at drawn places."""
    lines = list(train) + [c.text for c in cs for _ in range(c.insertions)]
    random.Random(f"insert:{seed}").shuffle(lines)
    return lines


# --- here: the corpora ---------------------------------------------------------------------

def build(out: Path, seed: int = 0, limit: int | None = None, progress: bool = True) -> dict:
    """The job folder: each condition's train text, the clean test sentences, the canaries,
    and what each masking left of them. ``limit``: the first lines of the train split only
    (the tests)."""
    from tqdm import tqdm

    from recover_core.experiment import ExperimentConfig
    from recover_core.experiment.runner import Runner
    from recover_core.experiment.job_files import write_tokenizer
    from recover_core.obfuscator import Obfuscator

    run = Runner(ExperimentConfig(name="audit", datasets=("news",), maskings=MASKINGS, methods=("baseline1",)),
                 progress=progress, root=out / "grid")
    train, test = run.split("news")[:2]
    train = train[:limit] if limit else train
    cs = canaries(seed)
    corpus = inserted(train, cs, seed)
    out.mkdir(parents=True, exist_ok=True)
    conditions = [{"name": "oracle", "corpus": "oracle.txt", "epochs": 1.0, "ignore_mask": False},
                  {"name": "oracle-4-epochs", "corpus": "oracle.txt", "epochs": 4.0, "ignore_mask": False}]
    _write(out / "oracle.txt", corpus)
    missed: dict[str, dict] = {}
    for masking in MASKINGS:
        engine = Obfuscator(technique=masking)  # the product's defaults, under a fresh secret key
        masked, filled = [], []
        for b in tqdm(range(0, len(corpus), 128), desc=f"mask and fill ({masking})", disable=not progress):
            masked += engine.mask_many(corpus[b: b + 128])
            filled += engine.fill(masked[b: b + 128])
        _write(out / f"{masking}-baseline1.txt", [m.masked for m in masked])
        _write(out / f"{masking}-engine.txt", [r.text for r in filled])
        conditions += [{"name": f"{masking}/baseline1", "corpus": f"{masking}-baseline1.txt", "epochs": 1.0,
                        "ignore_mask": True},
                       {"name": f"{masking}/engine", "corpus": f"{masking}-engine.txt", "epochs": 1.0,
                        "ignore_mask": False}]
        missed[masking] = left_in(cs, engine)
    job = {"seed": seed, "rank": RANK, "canaries": [asdict(c) for c in cs], "conditions": conditions,
           "test": "test.txt", "missed": missed, "train_sentences": len(train)}
    _write(out / "test.txt", test)
    write_tokenizer(out)  # both machines tokenize alike (smollm2_job's reason)
    atomic.write_text(out / JOB_FILE, json.dumps(job, indent=1))
    return job


def left_in(cs: list[Canary], engine) -> dict:
    """Of the inserted canaries, how many kept their code, and their name, after masking."""
    shown = [c for c in cs if c.insertions]
    masked = engine.mask_many([c.text for c in shown])
    codes = sum(c.code in m.masked for c, m in zip(shown, masked))
    names = sum(any(w in m.masked.split() for w in c.name.split()) for c, m in zip(shown, masked))
    return {"canaries": len(shown), "code_kept": codes, "name_word_kept": names}


def _write(path: Path, lines: list[str]) -> None:
    atomic.write_text(path, "".join(line.replace("\n", " ") + "\n" for line in lines))


def _read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# --- there: the LMs, adapted and attacked ------------------------------------------------

def exposure(lm, c: Canary, seed: int = 0) -> float:
    """log2 R - log2 rank of the true code's sentence among R (ties counted against it)."""
    codes = alternatives(c, seed)
    scores = lm.logprob_shared([c.with_code(x) for x in codes])
    rank = 1 + sum(s >= scores[0] for s in scores[1:])
    return math.log2(len(codes)) - math.log2(rank)


def greedy(lm, prefix: str, tokens: int = 8) -> str:
    import torch

    ids = [lm.end] + lm.tok(prefix, add_special_tokens=False)["input_ids"]
    x = torch.tensor([ids], device=next(lm.model.parameters()).device)
    with torch.inference_mode():
        y = lm.model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=tokens, do_sample=False,
                              pad_token_id=lm.end)
    return lm.tok.decode(y[0, len(ids):], skip_special_tokens=True)


def attack(lm, cs: list[Canary], seed: int = 0, desc: str = "exposure") -> dict:
    """Exposure per canary; secrets and names extracted by greedy decoding."""
    from tqdm import tqdm

    exp = [round(exposure(lm, c, seed), 3) for c in tqdm(cs, desc=desc, unit="canary", leave=False)]
    secrets = [c.code in greedy(lm, c.code_prefix()).replace(" ", "")[:CODE_DIGITS + 2] for c in cs]
    names = {c.name for c in cs if c.insertions}
    heard = set()
    for t in {c.template for c in cs}:
        prefix = TEMPLATES[t].split("{name}")[0].rstrip()
        if prefix:
            said = greedy(lm, prefix, 6)
            heard |= {n for n in names if n in said}
    return {"exposure": exp, "secret_extracted": secrets, "names_extracted": sorted(heard)}


def _adapt_and_attack(args: tuple) -> dict:
    import copy

    from recover_core.lm.pretrained import AdaptConfig, PretrainedLM

    src, base_lm, cond, cs, seed, rank = args
    t0 = time.time()
    lm = PretrainedLM(copy.deepcopy(base_lm.model), base_lm.tok, base_lm.base)
    texts = _read(src / cond["corpus"])
    lm.adapt(texts, AdaptConfig(seed=seed, rank=rank, epochs=cond["epochs"], ignore_mask=cond["ignore_mask"]),
             desc=f"adapt {cond['name']}")
    test = _read(src / "test.txt")
    return {"condition": cond["name"], "train_sha": hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16],
            "perplexity": round(lm.perplexity(test)["ppl_word"], 2), **attack(lm, cs, seed, f"exposure {cond['name']}"),
            "seconds": round(time.time() - t0, 1)}


def run(src: Path, out: Path, model: str, tokenizer: str, device: str = "auto", deadline_s: float | None = None) -> dict:
    """Every condition of the job folder, one after another on one device; OUT is rewritten
    after each, and a second call skips the conditions OUT holds."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recover_core.experiment.job_files import resolve_device
    from recover_core.lm.pretrained import PretrainedLM

    t0 = time.time()
    job = json.loads((src / JOB_FILE).read_text(encoding="utf-8"))
    cs = [Canary(**c) for c in job["canaries"]]
    device, where = resolve_device(device)
    old = json.loads(out.read_text()) if out.is_file() else {}
    done = {r["condition"]: {"device": old.get("device"), **r} for r in old.get("records", [])
            if old.get("seed") == job["seed"]}
    base = PretrainedLM(AutoModelForCausalLM.from_pretrained(model).to(device), AutoTokenizer.from_pretrained(tokenizer),
                        model)
    result = {"seed": job["seed"], "device": where, "torch": torch.__version__, "rank": job["rank"],
              "end_token": base.tok.eos_token, "records": list(done.values())}
    if "pretrained" not in done:
        result["records"].append({"condition": "pretrained", **attack(base, cs, job["seed"])})
        atomic.write_text(out, json.dumps(result))
    for cond in job["conditions"]:
        if cond["name"] in done:
            continue
        if deadline_s is not None and time.time() - t0 > deadline_s:
            break
        rec = {**_adapt_and_attack((src, base, cond, cs, job["seed"], job["rank"])), "device": where}
        result["records"].append(rec)
        print(f"{cond['name']}: perplexity {rec['perplexity']}, {rec['seconds']} s ({time.time() - t0:.0f} s)",
              file=sys.stderr, flush=True)
        atomic.write_text(out, json.dumps(result))
    result["seconds"] = round(time.time() - t0, 1)
    atomic.write_text(out, json.dumps(result))
    return result


# --- here again: the records as tidy rows ------------------------------------------------

def rows(job: dict, records: dict, command: str) -> list[dict]:
    """Mean exposure per condition and level, the control's spread, secrets and names
    extracted, and the masker's part, as rows of the tidy audit CSV."""
    cs = [Canary(**c) for c in job["canaries"]]
    out = []

    def row(masking: str, method: str, metric: str, value, reps, device=records.get("device")) -> dict:
        return {"dataset": "news+canaries", "masking": masking, "method": method, "metric": metric,
                "value": value, "repetitions": reps, "seed": job["seed"], "command": command,
                "model": f"smollm2-135m+lora-r{job['rank']}",
                "scale": f"news train ({job['train_sentences']} sentences) + {len(cs)} canaries ({PER_LEVEL} per level "
                         f"{'/'.join(map(str, LEVELS))} insertions); exposure over R = {ALTERNATIVES + 1} codes; "
                         f"trained on {device}"}

    for rec in records["records"]:
        # a job resumed on another machine keeps each record's device
        at = rec.get("device", records.get("device"))
        masking, _, method = rec["condition"].rpartition("/")
        method = method if masking else rec["condition"]
        for level in LEVELS:
            idx = [i for i, c in enumerate(cs) if c.insertions == level]
            vals = [rec["exposure"][i] for i in idx]
            out.append(row(masking, method, "exposure", round(sum(vals) / len(vals), 3), level, at))
            out.append(row(masking, method, "exposure_max", round(max(vals), 3), level, at))
            if level:
                out.append(row(masking, method, "extracted", sum(rec["secret_extracted"][i] for i in idx), level, at))
        out.append(row(masking, method, "names_extracted", len(rec["names_extracted"]), "", at))
    for masking, m in job["missed"].items():
        out.append(row(masking, "masker", "code_kept", m["code_kept"], ""))
        out.append(row(masking, "masker", "name_word_kept", m["name_word_kept"], ""))
    return out
