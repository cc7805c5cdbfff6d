"""Masking techniques (vats2024 §3.1). Each finds spans; ``mask`` turns them into markers."""
from recover_core.masking.base import Masker
from recover_core.masking.techniques import get, names, register
from recover_core.masking.mask import Masked, build, mask_text, mask_many, mask_rate

__all__ = ["Masker", "Masked", "build", "get", "names", "register", "mask_text", "mask_many", "mask_rate"]
