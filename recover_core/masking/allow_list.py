"""allowList (vats2024 §3.1): mask every word that a curated keep-list does not hold."""
from __future__ import annotations

from recover_core.data import lexicons
from recover_core.masking.base import KeepListMasker


class AllowList(KeepListMasker):
    name = "allowList"

    def __init__(self) -> None:
        super().__init__(lexicons.allow_list())
