"""recover: privacy-preserving masking and LLM-based recovery (vats2024, preiss2023).

Importing the package sets the offline environment first, so that no code path
ever tries a model hub on a machine that has none. In a Hugging Face Space
(``SPACE_ID`` is set) the hub is reachable and is left alone.
"""
from recover_core import env as _env

_env.configure()

__all__ = ["__version__"]
__version__ = "0.1.0"
