"""Speech recognition (vats2024 §4.2.2; preiss2023's first and last pass): Whisper tiny.en with
beam search and shallow fusion of a recover_core LM, word times and confidences, audio
readers for WSJ's formats, references and WER.

One file per concept: ``whisper`` (the bundle), ``ct2_weights`` (the offline weights),
``audio`` (files in), ``decode`` (beam search), ``fusion`` (the LM term), ``alignment``
(word times), ``recognize`` (end to end), ``references`` (WSJ transcripts), ``wer``.
"""
