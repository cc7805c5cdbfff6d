"""Named entities obfuscated in speech (preiss2023), on this project's recognizer and fillers.

The pipeline, one file per step:

- ``boundaries``: the recognizer's word times, refined by forced alignment (pocketsphinx) so
  that a cut never clips a neighbouring word; energy minima where alignment cannot run.
- ``pseudonyms``: which substitute each private word gets (name lists, titles, gender, the
  same original -> the same substitute, two originals never share one).
- ``voices``: offline TTS voices, and the speaker's pitch to choose one by.
- ``splice``: loudness matched to the neighbouring words, raised-cosine crossfades, bleeps
  and silence, and a click check at every seam.
- ``plan``: the settings, and the data model the pipeline passes along (entities, plan, result).
- ``obfuscate``: the whole pipeline, including the second recognition pass that decides
  whether a person must review the result.
- ``commands``: ``python -m recover_core obfuscate-audio``.
"""
