"""vocabThres (vats2024 §3.1): keep the N most frequent words of a generic corpus, mask the rest."""
from __future__ import annotations

from recover_core.data import lexicons
from recover_core.errors import RecoverError
from recover_core.masking.base import KeepListMasker, RankedKeep

DEFAULT_N = 10_000
MAX_N = lexicons.MAX_RANKED


class VocabThres(KeepListMasker):
    name = "vocabThres"

    def __init__(self, n: int = DEFAULT_N) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or not 100 <= n <= MAX_N:
            raise RecoverError(f"N for vocabThres must be a whole number from 100 to {MAX_N:,}; got {n!r}.")
        self.n = n
        super().__init__(RankedKeep(lexicons.word_ranks(), n))
