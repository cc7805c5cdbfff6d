"""WER as a metric of the grid by rescoring one n-best list: Table 6 when the LMs train elsewhere.

Shallow fusion (grid_wer.py) needs the recognizer and the audio beside every adapted LM. The
grid's LM half runs as a job on a GPU machine that takes only text from here (64 MiB: Whisper
alone is 75 MB), so ``[asr] wer_mode = "rescore"`` splits the work by what each side holds:

- here, once: the recognizer's beam-8 search over the spoken test and dev utterances
  (``speech-set``), kept in the cache; its n-best lists' distinct texts travel with the job;
- wherever the LM is: each cell's adapted LM (and the pretrained one) scores every text,
  log p_LM(text) with its end (lm/train.py ``sentence_logprobs``), and the record keeps the
  scores;
- here, when the CSV is written: per utterance the hypothesis with the best
  (acoustic + λ·log p_LM + β·words) / tokens (rescore.py's rule) wins, and jiwer scores it.

λ and β are chosen on the dev utterances, which no grid LM sees: per seed from that seed's
Oracle LM, used for every adapted LM of the seed ("adapted" in assets/asr/fusion.json is the
same idea); the pretrained LM gets its own. The recognizer alone is the best of the same
list by its own score, so every row differs only in the LM.
"""
from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from recover_core.runtime import atomic, env
from recover_core.errors import RecoverError

BEAM = 8
LAMBDAS = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)  # a small LM's text log-probability is large and noisy
BETAS = (0.0, 0.5, 1.0)
BATCH = 8


@dataclass(frozen=True)
class Utt:
    ref: str
    hyps: tuple[tuple[int, float, int], ...]  # (index into texts, acoustic log-prob summed, text tokens)


@dataclass(frozen=True)
class NBestSet:
    """The first ``test`` and ``dev`` utterances of the spoken set and their n-best lists."""

    dataset: str
    max_train: int
    max_test: int
    test: int
    dev: int

    def path(self) -> Path:
        from recover_core.experiment import speech_set

        folder = speech_set.set_dir(self.dataset, self.max_train, self.max_test)
        return env.cache_dir() / "asr_hyps" / folder.name / f"grid-nbest-b{BEAM}-t{self.test}-d{self.dev}.json.gz"

    def build(self, progress: bool = True) -> Path:
        """Search every utterance once (n-best lists already kept by asr-eval are reused)."""
        import dataclasses

        from tqdm import tqdm

        from recover_core.asr import audio, hypotheses
        from recover_core.experiment import speech_set
        from recover_core.asr.decode import DecodeConfig
        from recover_core.experiment.asr_eval import WHISPER, AudioBatch
        from recover_core.asr.recognize import Recognizer

        out = self.path()
        if out.exists():
            return out
        folder = speech_set.set_dir(self.dataset, self.max_train, self.max_test)
        rows = speech_set.load_manifest(folder)
        chosen = {split: [r for r in rows if r.split == split][:n] for split, n in (("test", self.test), ("dev", self.dev))}
        if len(chosen["test"]) < self.test or len(chosen["dev"]) < self.dev:
            raise RecoverError(f"The speech set in {folder} has {len(chosen['test'])} test and {len(chosen['dev'])} "
                               f"dev utterances; the grid asks for {self.test} and {self.dev}.")
        rec, store = Recognizer(), hypotheses.Store(env.cache_dir() / "asr_hyps" / folder.name)
        cfg = dataclasses.replace(DecodeConfig(), beam_size=BEAM)
        w, texts, index, sets = rec.whisper, [], {}, {}
        todo = [(split, r) for split in ("test", "dev") for r in chosen[split]]
        with tqdm(total=len(todo), desc=f"n-best lists (beam {BEAM})", unit="utt", disable=not progress) as bar:
            for split, part in chosen.items():
                sets[split] = []
                for at in range(0, len(part), BATCH):
                    clips = [audio.load(folder / r.path) for r in part[at:at + BATCH]]
                    batch = AudioBatch(rec, clips, [hypotheses.audio_key(c.samples) for c in clips], store)
                    for r, hyps in zip(part[at:at + BATCH], batch.n_best(cfg)):
                        entry = []
                        for h in hyps:
                            text, n = w.token_text(h.tokens).strip(), max(len(h.tokens), 1)
                            i = index.setdefault(text, len(texts))
                            if i == len(texts):
                                texts.append(text)
                            entry.append([i, round(h.score * n, 4), n])
                        sets[split].append({"ref": r.text, "hyps": entry})
                    bar.update(len(clips))
        blob = {"recognizer": f"{WHISPER} beam {BEAM}", "texts": texts, **sets}
        blob["sha"] = _digest(texts, sets)
        with atomic.replacing(out) as tmp:
            with gzip.open(tmp, "wt", encoding="utf-8") as f:
                json.dump(blob, f)
        return out

    @functools.cached_property
    def data(self) -> dict:
        path = self.path()
        if not path.exists():
            raise RecoverError(f"No n-best lists for the grid's WER yet ({path}): run `python -m recover_core "
                               f"speech-set`, then the grid (it searches them first, once).")
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.load(f)

    @property
    def sha(self) -> str:
        return self.data["sha"]

    @property
    def texts(self) -> list[str]:
        return self.data["texts"]

    @functools.cached_property
    def _utts(self) -> dict[str, list[Utt]]:
        return {split: [Utt(u["ref"], tuple(tuple(h) for h in u["hyps"])) for u in self.data[split]]
                for split in ("test", "dev")}

    def utts(self, split: str) -> list[Utt]:
        return self._utts[split]

    def note(self, scale: str) -> str:
        from recover_core.experiment import speech_set

        return (f"{scale}; WER on {self.test} spoken {self.dataset} test utterances (TTS voices "
                f"{'/'.join(speech_set.VOICES)}), Whisper tiny.en beam-{BEAM} n-best list rescored by each LM "
                f"(λ, β per seed from the Oracle LM on {self.dev} dev utterances)")


def _digest(texts: list[str], sets: dict) -> str:
    from recover_core.experiment.config import sha

    return sha(json.dumps([texts, sets], sort_keys=True))[:16]


def pick(utts: Sequence[Utt], texts: Sequence[str], logprobs: Sequence[float] | None, lm_weight: float,
         word_bonus: float) -> list[str]:
    """The best text per utterance by the fused score; ``logprobs`` None: the recognizer alone."""
    out = []
    for u in utts:
        def fused(h: tuple[int, float, int]) -> float:
            i, acoustic, n = h
            if logprobs is None:
                return acoustic / n
            return (acoustic + lm_weight * logprobs[i] + word_bonus * len(texts[i].split())) / n

        out.append(texts[max(u.hyps, key=fused)[0]] if u.hyps else "")
    return out


def tune(nb: NBestSet, logprobs: Sequence[float], lambdas: Sequence[float] = LAMBDAS,
         betas: Sequence[float] = BETAS) -> tuple[float, float, float]:
    """(λ, β, dev WER) with the lowest dev WER; ties go to the smaller λ, then β."""
    from recover_core.asr import wer

    dev = nb.utts("dev")
    refs = [u.ref for u in dev]
    best = min((wer.score(refs, pick(dev, nb.texts, logprobs, lw, wb)).wer, lw, wb) for lw in lambdas for wb in betas)
    return best[1], best[2], best[0]


def score(nb: NBestSet, logprobs: Sequence[float] | None, lm_weight: float = 0.0, word_bonus: float = 0.0) -> dict:
    """WER, CER and a 95% bootstrap interval over the test utterances, as a cell record's fields."""
    from recover_core.asr import wer
    from recover_core.experiment.asr_eval import bootstrap, per_utterance

    test = nb.utts("test")
    s = wer.score([u.ref for u in test], pick(test, nb.texts, logprobs, lm_weight, word_bonus))
    lo, hi = bootstrap(*per_utterance(s))
    return {"wer_percent": round(s.wer, 3), "cer_percent": round(s.cer, 3), "wer_ci95": [round(lo, 3), round(hi, 3)],
            "wer_utterances": len(test), "lm_weight": lm_weight, "word_bonus": word_bonus}


def lm_scores(model, tok, nb_texts: Sequence[str]) -> list[float]:
    """Every n-best text's log-probability under one LM, rounded as records keep it."""
    from recover_core.lm.train import sentence_logprobs

    return [round(v, 3) for v in sentence_logprobs(model, tok, nb_texts)]


REFERENCE = "asr_rescore_reference.json"  # beside the cells: the pretrained LM's scores


def reference(run) -> dict:
    """The pretrained LM's scores of the n-best texts, cached beside the cells of ``run`` (an
    experiment.Runner). An LM job's import writes the same file from the job's own LM."""
    from recover_core.experiment.config import read_json

    path = run.root / "cells" / REFERENCE
    rec = read_json(path) if path.exists() else {}
    if rec.get("key") == run.key and rec.get("nbest_sha") == run.nbest.sha:
        return rec
    model, tok, pre = run.pretrained()
    rec = {"key": run.key, "nbest_sha": run.nbest.sha, "pretrained": pre.get("key"),
           "nbest_logprobs": lm_scores(model, tok, run.nbest.texts)}
    atomic.write_text(path, json.dumps(rec))
    return rec


def rows(run, done: dict, common: dict) -> list[dict]:
    """The grid's WER rows: its pretrained LM's scores from the reference file, its cells'
    from their records (``table``)."""
    from recover_core.experiment.config import read_json

    nb = run.nbest
    path = run.root / "cells" / REFERENCE
    ref = read_json(path) if path.exists() else {}
    ref = ref.get("nbest_logprobs") if ref.get("key") == run.key and ref.get("nbest_sha") == nb.sha else None
    scored = {(m, meth, seed): rec["nbest_logprobs"] for (d, m, meth, seed), rec in done.items()
              if d == nb.dataset and rec.get("nbest_sha") == nb.sha}
    return table(nb, ref, scored, {**common, "scale": nb.note(common["scale"])})


def table(nb: NBestSet, pretrained: Sequence[float] | None, scored: dict, common: dict,
          lambdas: Sequence[float] = LAMBDAS, betas: Sequence[float] = BETAS) -> list[dict]:
    """Tidy wer_percent and cer_percent rows: the recognizer alone, the pretrained LM (once),
    and every cell of ``scored`` ((masking, method, seed) -> its LM's scores of the texts) with
    its seed's weights. A seed whose Oracle cell is not there has no weights yet, so its
    cells wait for it."""
    from recover_core.experiment.grid_wer import NO_LM, PRETRAINED

    found = [(("", NO_LM, ""), score(nb, None))]
    if pretrained is not None:
        found.append((("", PRETRAINED, ""), score(nb, pretrained, *tune(nb, pretrained, lambdas, betas)[:2])))
    for seed in sorted({s for _, _, s in scored}):
        oracle = next((lp for (_, meth, s), lp in scored.items() if s == seed and meth == "oracle"), None)
        if oracle is None:
            continue
        lw, wb, _ = tune(nb, oracle, lambdas, betas)
        found += [(k, score(nb, lp, lw, wb)) for k, lp in scored.items() if k[2] == seed]
    return [{"dataset": nb.dataset, "masking": m, "method": meth, "metric": metric, "value": rec[metric],
             "seed": seed, **common} for (m, meth, seed), rec in found for metric in ("wer_percent", "cer_percent")]
