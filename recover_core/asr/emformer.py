"""The paper's own kind of recognizer, where it can download: torchaudio's Emformer RNN-T
trained on LibriSpeech (vats2024 §4.2.2 used an Emformer RNN-T of about 80M parameters;
``EMFORMER_RNNT_BASE_LIBRISPEECH``, test-clean WER 4.56).

Its weights (293 MB) download from download.pytorch.org, which a Hugging Face Space reaches
and these machines do not; offline it says so. The LM is fused by rescoring the RNN-T's
n-best list (the beam search is torchaudio's own): score = RNN-T log-score + λ·log p_LM(text)
+ β·words. Unlike Whisper it writes lowercase text without punctuation, so the LM (trained
on cased text) is given the text capitalized at the start; it gives no word times.

NOT exercised on these machines (no download possible): the offline message is tested, the
Space path is written against torchaudio 2.11's documented API.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import torch

from recover_core.runtime import env
from recover_core.errors import RecoverError

NAME = "emformer-rnnt"
N_BEST = 10
_LOCK = threading.Lock()
_LOADED: dict = {}


def available() -> bool:
    return not env.offline()


def ensure() -> None:
    """Load now, or raise the clear message (offline: why it cannot)."""
    _load()


def _load():
    if env.offline():
        raise RecoverError("The Emformer RNN-T (the paper's recognizer) downloads its weights from "
                           "download.pytorch.org, which this machine cannot reach; it works in a Hugging Face "
                           "Space. Offline, use whisper-tiny.en.")
    with _LOCK:
        if not _LOADED:
            try:
                from torchaudio.pipelines import EMFORMER_RNNT_BASE_LIBRISPEECH as B

                _LOADED.update(features=B.get_feature_extractor(), decoder=B.get_decoder(),
                               tokens=B.get_token_processor())
            except Exception as e:  # noqa: BLE001  (a download or import failure: say which)
                raise RecoverError(f"The Emformer RNN-T could not be loaded ({type(e).__name__}: {e}).") from None
        return _LOADED


@dataclass
class NBest:
    texts: list[str]
    scores: list[float]  # the RNN-T's own log-scores


@torch.no_grad()
def nbest(samples) -> NBest:
    m = _load()
    features, length = m["features"](torch.as_tensor(samples, dtype=torch.float32))
    hyps = m["decoder"](features, length, N_BEST)
    return NBest([m["tokens"](h[0]) for h in hyps], [float(h[3]) for h in hyps])


@torch.no_grad()
def rescore(n: NBest, lm, lm_weight: float, word_bonus: float) -> str:
    """The n-best entry with the best fused score (the RNN-T's best when no LM is given)."""
    if not n.texts:
        return ""
    if lm is None or lm_weight == 0.0:
        return n.texts[0]
    from recover_core.asr.rescore import text_logprobs

    lps = text_logprobs(lm, [text[:1].upper() + text[1:] for text in n.texts])
    fused = [score + lm_weight * lp + word_bonus * len(text.split()) for text, score, lp in zip(n.texts, n.scores, lps)]
    return n.texts[max(range(len(fused)), key=fused.__getitem__)]
