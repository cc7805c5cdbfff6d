"""recover: privacy-preserving masking and LLM-based recovery (vats2024, preiss2023).

Importing the package sets the offline environment first, so that no code path
ever tries a model hub on a machine that has none. In a Hugging Face Space
(``SPACE_ID`` is set) the hub is reachable and is left alone.

The engine (recover_core/obfuscator.py) is the package's Python API:

    from recover_core import Obfuscator
    ob = Obfuscator(technique="entityTagger", filler="mlm", method="topk", seed=0)
    ob.obfuscate("Tom lives in Chicago with his sister Margaret.").text
"""
from recover_core.runtime import env as _env

_env.configure()

__all__ = ["Obfuscator", "Result", "Replacement", "Settings", "obfuscate", "__version__"]
__version__ = "0.1.0"
_ENGINE = {"Obfuscator", "Result", "Replacement", "Settings", "obfuscate"}


def __getattr__(name: str):
    # The engine on first use: `import recover_core` stays light for the CLI's --help and the app.
    if name in _ENGINE:
        from recover_core import obfuscator

        return getattr(obfuscator, name)
    raise AttributeError(f"module 'recover_core' has no attribute {name!r}")
