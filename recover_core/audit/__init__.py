"""The project attacks its own output (issue 57): what could someone with our code and
public data recover from an obfuscated text, or from an LM adapted on it?

- ``inversion``: the dictionary attack on the pseudonyms. Run the tool over a dictionary of
  census names, read the mapping backwards, and see how many of a victim's names come back.
- ``canaries``: canary exposure and extraction (Carlini et al. 2019) on SmolLM2 + LoRA
  adapted on obfuscated corpora; its LMs run where torch, transformers and peft are, so
  this package imports nothing at import time.
"""
