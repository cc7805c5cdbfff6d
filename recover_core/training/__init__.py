"""Training the fillers: ``finetune-mlm`` (a masked LM, vats2024 §3.2 FT) and
``finetune-llm`` (LoRA instruction tuning of a causal LM, vats2024 §4.2.4).

Filling (recover_core/filling/) uses models; this package makes them. The two commands
share one loop, one checkpoint format and one way of writing artifacts and cards; they
differ only in their model, data and loss. One file per concept:

    config.py       FinetuneConfig, LLMConfig and the defaults
    sentences.py    which sentences train: corpora or a file, held-out excluded, filled mode
    batches.py      finetune-mlm's batches: whole-word masking, reproducible for --resume
    examples.py     finetune-llm's examples: masked sentence -> prompt -> original sentence
    lora.py         which weights train: base model, LoRA, the MLM head; merging
    loop.py         the shared loop: learning-rate schedule, step, time budget, stop
    checkpoints.py  OUT/checkpoint: save, find, load (what --resume needs)
    log.py          OUT/metrics.jsonl and the messages on stderr
    evaluate.py     held-out sentences; MLM masked-word accuracy, LLM response loss
    artifacts.py    OUT/model and OUT/adapter, written atomically
    model_card.py   model_card.md for both
    mlm.py          finetune_mlm(): the masked-LM run, round by round
    llm.py          finetune_llm(): the instruction-tuning run
    commands.py     the command line: finetune-mlm, evaluate-mlm, finetune-llm

Reading an adapter back is not here: recover_core/models/adapters.py does it, beside the
models (the MiniLM MLM itself is recover_core/models/minilm.py), so that loading a model never
imports a trainer. Nothing here imports torch until a function runs.
"""
