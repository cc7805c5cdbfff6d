"""``asr-eval``: vats2024 Table 6's analogue on the spoken news stand-in, and the fusion tuning.

Every test utterance is encoded once and decoded once per LM (the recognizer alone, the
pretrained LM, the Oracle LM, adapted LMs). WER and CER are corpus-level (errors summed over
utterances); the noise is a 95% bootstrap interval over utterances (1,000 resamples). With
``--tune``, λ and β are first chosen per LM on the dev split (never the test split) and
written to assets/asr/fusion.json with the command that chose them.
"""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from recover_core.lm.pretrained import PretrainedLM
from recover_core.runtime import atomic
from recover_core.runtime import env
from recover_core.asr import audio, hypotheses, lms, wer
from recover_core.experiment import speech_set
from recover_core.asr.decode import DecodeConfig, n_best
from recover_core.asr.recognize import Recognizer
from recover_core.errors import RecoverError
from recover_core.results.tables import merge_rows, other_scales

LAMBDAS = (0.05, 0.1, 0.2, 0.3)
BETAS = (0.0, 0.5)
# Rescoring weighs a whole text's log-probability once per hypothesis, not per step: its λ
# sits higher (measured on dev: λ 0.2-2 all gain, β hardly matters).
RESCORE_LAMBDAS = (0.2, 0.5, 1.0, 1.5)
RESCORE_BETAS = (0.0, 1.0)
WHISPER = "whisper-tiny.en"
WIDE = "none@wide"  # the recognizer alone at the rescoring LMs' beam: what their n-best lists start from


class AudioBatch:
    """One batch of audio: encoded only if some configuration must search it, and its n-best
    lists (one per beam size, shared by every rescoring LM) taken from the store when kept."""

    def __init__(self, rec: Recognizer, clips: list, audios: list[str], store: hypotheses.Store | None):
        self.rec, self.clips, self.audios, self.store = rec, clips, audios, store
        self._encoded = None
        self._lists: dict[int, list] = {}

    def encoded(self):
        if self._encoded is None:
            self._encoded = self.rec.encode([c.samples for c in self.clips])
        return self._encoded

    def n_best(self, cfg: DecodeConfig) -> list:
        if cfg.beam_size not in self._lists:
            key = hypotheses.nbest_key(cfg, WHISPER)
            kept = [self.store.get(key, a) for a in self.audios] if self.store else [None]
            if None in kept:
                lists = n_best(self.rec.whisper, self.encoded()[0], dataclasses.replace(cfg, lm_weight=0.0))
                if self.store:
                    self.store.put(key, self.audios, [hypotheses.to_json(h) for h in lists])
            else:
                lists = [hypotheses.from_json(k) for k in kept]
            self._lists[cfg.beam_size] = lists
        return self._lists[cfg.beam_size]


def decode_all(rec: Recognizer, clips: list, configs: list[tuple[str, DecodeConfig]], batch_size: int = 8,
               progress: bool = True, store: hypotheses.Store | None = None) -> dict[str, list[str]]:
    """Texts per configuration name; each batch of audio is encoded at most once for all of them.
    ``store``: transcripts and n-best lists decoded before are taken from it, new ones added
    after each batch."""
    from tqdm import tqdm

    from recover_core.asr.rescore import rescore

    out: dict[str, list[str]] = {name: [] for name, _ in configs}
    models = {name: lms.load(name.split("@")[0]) for name, _ in configs}
    keys = {name: hypotheses.config_key(name, cfg, WHISPER) for name, cfg in configs}
    memos: dict[str, dict[str, float]] = {}  # per rescoring LM: its score of each text
    w = rec.whisper
    with tqdm(total=len(clips) * len(configs), desc="asr decode", unit="utt", disable=not progress) as bar:
        for at in range(0, len(clips), batch_size):
            audios = [hypotheses.audio_key(c.samples) for c in clips[at:at + batch_size]]
            batch = AudioBatch(rec, clips[at:at + batch_size], audios, store)
            known = {name: [store.get(keys[name], a) for a in audios] if store else [None] for name, _ in configs}
            for name, cfg in configs:
                if None not in known[name]:
                    texts = known[name]
                    out[name] += texts
                    bar.update(len(audios))
                    continue
                lm = models[name]
                if isinstance(lm, PretrainedLM) and cfg.lm_weight:
                    wide = dataclasses.replace(cfg, beam_size=max(cfg.beam_size, cfg.rescore_beam))
                    memo = memos.setdefault(name.split("@")[0], {})
                    hyps = rescore(w, batch.n_best(wide), lm, cfg.lm_weight, cfg.word_bonus, memo)
                    texts = [w.token_text(h.tokens).strip() for h in hyps]
                elif lm is None and cfg.beam_size > DecodeConfig.beam_size:
                    # the recognizer alone at a wider beam is that search's own best: no second search
                    texts = [w.token_text(max(hyps, key=lambda h: h.score).tokens).strip() if hyps else ""
                             for hyps in batch.n_best(cfg)]
                else:
                    texts = rec.texts(*batch.encoded(), cfg, lm)
                out[name] += texts
                if store:
                    store.put(keys[name], audios, texts)
                bar.update(len(audios))
    return out


def per_utterance(score: wer.Score) -> tuple[np.ndarray, np.ndarray]:
    """Errors and reference words of each utterance, from the alignment."""
    errors = np.array([sum(op != "equal" for op, _, _ in row) for row in score.alignment], dtype=float)
    words = np.array([sum(op != "insert" for op, _, _ in row) for row in score.alignment], dtype=float)
    return errors, words


def bootstrap(errors: np.ndarray, words: np.ndarray, n: int = 1000, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(errors), size=(n, len(errors)))
    rates = 100 * errors[idx].sum(1) / np.maximum(words[idx].sum(1), 1)
    return float(np.percentile(rates, 2.5)), float(np.percentile(rates, 97.5))


def grid_for(name: str) -> list[tuple[float, float]]:
    """The (λ, β) values tried for an LM: rescoring LMs have their own."""
    rescoring = lms.card(name).family != "transformer"
    return [(lw, wb) for lw in (RESCORE_LAMBDAS if rescoring else LAMBDAS)
            for wb in (RESCORE_BETAS if rescoring else BETAS)]


def paired_bootstrap(a: wer.Score, b: wer.Score, n: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """WER of a minus WER of b, in points, with its 95% interval: both resampled on the same
    utterances, which is what tells two systems apart (their own intervals overlap far more)."""
    (ea, words), (eb, _) = per_utterance(a), per_utterance(b)
    idx = np.random.default_rng(seed).integers(0, len(ea), size=(n, len(ea)))
    diff = 100 * (ea[idx].sum(1) - eb[idx].sum(1)) / np.maximum(words[idx].sum(1), 1)
    return a.wer - b.wer, float(np.percentile(diff, 2.5)), float(np.percentile(diff, 97.5))


PAIRS = (("pretrained", "none"), ("oracle", "pretrained"), ("smollm2", "none"), ("smollm2-oracle", "none"),
         ("smollm2-oracle", "smollm2"), ("smollm2", WIDE))


def pairs(cards: dict[str, lms.LMCard]) -> list[tuple[str, str]]:
    """The differences worth a paired bootstrap: PAIRS, and each grid cell's adapted LM against
    its family's Oracle and pretrained LMs (Table 6's question: how close to Oracle, and is it
    better than no adaptation at all)."""
    out = [(a, b) for a, b in PAIRS if a in cards and b in cards]
    for name, card in cards.items():
        if card.masking:
            oracle, pretrained = ("oracle", "pretrained") if card.family == "transformer" else (
                f"{card.family}-oracle", card.family)
            out += [(name, b) for b in (oracle, pretrained) if b in cards]
    return out


def tune(rec: Recognizer, dev: list, refs: list[str], names: list[str], progress: bool = True,
         store: hypotheses.Store | None = None) -> dict:
    configs = [(f"{n}@{lw}@{wb}", DecodeConfig(lm_weight=lw, word_bonus=wb)) for n in names for lw, wb in grid_for(n)]
    texts = decode_all(rec, dev, configs + [("none", DecodeConfig())], progress=progress, store=store)
    alone = wer.score(refs, texts["none"]).wer
    weights = {}
    for n in names:
        grid = grid_for(n)
        scored = [(wer.score(refs, texts[f"{n}@{lw}@{wb}"]).wer, lw, wb) for lw, wb in grid]
        best = min(scored)
        weights[n] = {"lm_weight": best[1], "word_bonus": best[2], "dev_wer_percent": round(best[0], 2),
                      "dev_grid": {f"{lw}/{wb}": round(w, 2) for w, lw, wb in scored}}
    return {"dev_wer_percent_no_lm": round(alone, 2), "weights": weights}


def _rows_for(name: str, score: wer.Score, ci: tuple[float, float], n: int, scale: str, command: str,
              card: lms.LMCard, rank: int | None = None) -> list[dict]:
    # Table 6's row names; an adapted LM's card says which grid cell it comes from.
    method = {"none": "ASR-without-LM", WIDE: f"ASR-without-LM-beam{DecodeConfig.rescore_beam}",
              "pretrained": "Pre-Trained-LM", "oracle": "Oracle",
              "smollm2": "Pre-Trained-LM", "smollm2-oracle": "Oracle"}.get(name) or card.method
    masking = card.masking
    # One scale for every row of a run (the claim checker compares rows of one scale); each
    # LM's own λ and β go with its model name.
    lm = (f"+smollm2-135m{f'-lora-r{rank}' if rank else ''} n-best rescoring" if card.family != "transformer"
          else f"+lm-{card.preset.get('n_embd', '?')}d")
    model = f"asr-{WHISPER}" + {"none": "", WIDE: f" beam {DecodeConfig.rescore_beam}"}.get(
        name, f"{lm} (λ {card.lm_weight:g}, β {card.word_bonus:g})")
    base = {"dataset": "news", "masking": masking, "method": method, "model": model, "seed": "0",
            "scale": scale, "command": command}
    return [base | {"metric": "wer_percent", "value": round(score.wer, 3)},
            base | {"metric": "cer_percent", "value": round(score.cer, 3)},
            base | {"metric": "wer_ci95_low", "value": round(ci[0], 3)},
            base | {"metric": "wer_ci95_high", "value": round(ci[1], 3)},
            base | {"metric": "n_utterances", "value": n}]


def evaluate(names: list[str], output: Path, do_tune: bool, max_utts: int | None, progress: bool, command: str,
             dev_utts: int = 40, reuse: bool = True) -> dict:
    folder = speech_set.set_dir("news", 2000, 400)
    rows = speech_set.load_manifest(folder)
    store = hypotheses.Store(env.cache_dir() / "asr_hyps" / folder.name, reuse)
    rec = Recognizer()
    for n in names:
        lms.card(n)
    summary: dict = {}
    if do_tune:
        dev = [r for r in rows if r.split == "dev"][:dev_utts]
        tuned = tune(rec, [audio.load(folder / r.path) for r in dev], [r.text for r in dev],
                     [n for n in names if n != lms.NONE], progress, store)
        for oracle, adapted in (("oracle", "adapted"), ("smollm2-oracle", "smollm2-adapted")):
            if oracle in tuned["weights"]:
                tuned["weights"][adapted] = {k: tuned["weights"][oracle][k] for k in ("lm_weight", "word_bonus")}
        for entry in tuned["weights"].values():
            entry |= {"dev_wer_percent_no_lm": tuned["dev_wer_percent_no_lm"], "dev_utterances": len(dev),
                      "command": command}
        path = env.assets_dir() / "asr" / "fusion.json"
        old = json.loads(path.read_text()) if path.exists() else {}
        # A run tunes the LMs it names; the others keep the values they had, and each entry
        # carries the run that tuned it (older files kept that run's facts at the top).
        context = {k: old.pop(k) for k in ("dev_wer_percent_no_lm", "dev_utterances", "command") if k in old}
        for entry in old.get("weights", {}).values():
            for k, v in context.items():
                entry.setdefault(k, v)
        merged = old | {
            "weights": old.get("weights", {}) | tuned["weights"], "speech_set": folder.name,
            "note": "λ, β chosen per LM by dev WER over the grid LAMBDAS x BETAS of recover_core/asr/evaluate.py "
                    "(RESCORE_LAMBDAS x RESCORE_BETAS for smollm2 LMs, which rescore the n-best list); adapted LMs "
                    "use their family's Oracle LM's; each entry records the command that tuned it"}
        atomic.write_text(path, json.dumps(merged, indent=1))
        for n, w in tuned["weights"].items():  # the built LMs' cards carry the tuned values
            card_path = lms.lm_dir() / f"{n}.json"
            if card_path.exists():
                c = json.loads(card_path.read_text()) | {"lm_weight": w["lm_weight"], "word_bonus": w["word_bonus"]}
                atomic.write_text(card_path, json.dumps(c, indent=1))
        summary["tuned"] = {n: (w["lm_weight"], w["word_bonus"], w.get("dev_wer_percent")) for n, w in
                            tuned["weights"].items()}
    test = [r for r in rows if r.split == "test"][:max_utts]
    clips = [audio.load(folder / r.path) for r in test]
    refs = [r.text for r in test]
    cards = {n: lms.card(n) for n in names}
    t0 = time.time()
    configs = [(n, DecodeConfig(lm_weight=cards[n].lm_weight, word_bonus=cards[n].word_bonus)) for n in names]
    if any(c.family != "transformer" for c in cards.values()):  # rescoring: compare with its wider beam too
        configs.append((WIDE, DecodeConfig(beam_size=DecodeConfig.rescore_beam)))
        cards[WIDE] = lms.card(lms.NONE)
    secs = sum(c.seconds for c in clips)
    family = " + ".join(sorted({cards[n].family for n in names if n != lms.NONE})) or "none"
    ranks = {n: lms.lora_rank(n) for n in names}
    if any(ranks.values()):
        family += f" (LoRA rank {'/'.join(map(str, sorted(set(filter(None, ranks.values())))))})"
    scale = (f"news speech stand-in: {len(test)} test utterances, {secs / 60:.1f} min, TTS voices "
             f"{'/'.join(speech_set.VOICES)}; Whisper tiny.en beam 4; LMs: {family}; λ, β tuned per LM on dev "
             f"(assets/asr/fusion.json)")
    if clash := other_scales(output, scale):  # before an hour of decoding, not after
        raise RecoverError(clash)
    texts = decode_all(rec, clips, configs, progress=progress, store=store)
    out_rows, scores = [], {}
    for n, _ in configs:
        s = scores[n] = wer.score(refs, texts[n])
        ci = bootstrap(*per_utterance(s))
        out_rows += _rows_for(n, s, ci, len(test), scale, command, cards[n], ranks.get(n))
        summary[n] = {"wer_percent": round(s.wer, 2), "ci95": [round(ci[0], 2), round(ci[1], 2)],
                      "cer_percent": round(s.cer, 2)}
    summary["paired"] = {f"{a} - {b}": [round(x, 2) for x in paired_bootstrap(scores[a], scores[b])]
                         for a, b in pairs(cards)}
    summary["seconds"] = round(time.time() - t0, 1)
    # Into the file's other rows: a run for one new LM keeps the rows of the LMs it did not decode.
    merge_rows(output, out_rows, one_scale=True)
    return summary
