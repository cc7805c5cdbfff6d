"""The project attacks its own output (issue 57): what could someone with our code and
public data recover from an obfuscated text, or from an LM adapted on it?

- ``inversion``: the dictionary attack on the pseudonyms. Run the tool over a dictionary of
  census names, read the mapping backwards, and see how many of a victim's names come back.
- ``replay`` (issue 75): the leaked-key attacker, who rebuilds a victim's masked line from the
  output and its public offsets and replays the engine over candidate names; ``membership``:
  which names were originals, read from the substitutes a consistent run releases;
  ``exposure``: the rank of a canary's true name among 1,000 in an LM adapted on the output
  (``heldout``: the names no recognizer list holds, for both).
- ``canaries``: canary exposure and extraction (Carlini et al. 2019) on SmolLM2 + LoRA
  adapted on obfuscated corpora; its LMs run where torch, transformers and peft are, so
  this package imports nothing at import time.
"""
