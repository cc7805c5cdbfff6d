"""The downstream judge (vats2024 §3.3, §4.2.1): a Transformer LM pretrained on generic text,
adapted on an obfuscated corpus, scored by per-word perplexity on clean in-domain text.

It never knows how a corpus was obfuscated: it reads sentences, and for the two
baselines the [MASK] marker is one token of its own.
"""
