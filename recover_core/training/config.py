"""What a fine-tuning run is told: one dataclass per command, and their defaults.

The command line (commands.py), the grid's FT (experiment/) and the tests all build
these; everything else in the package reads them. The fields that must not change
between a run and its ``--resume`` are listed in checkpoints.RESUME_KEYS.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MLM_LR = {"lora": 5e-4, "full": 5e-5}  # finetune-mlm's default learning rates
LLM_LR = 2e-4  # finetune-llm's: alpaca-lora's, for LoRA on a causal LM
DEFAULT_STEPS = 2000  # per round, when there is no time budget
# Four styles (news, encyclopedia, conversational quotes, scripture), mixed equally.
EVAL_CORPORA = ("news", "wiki", "fortunes", "scripture")


@dataclass
class FinetuneConfig:
    """finetune-mlm: a masked LM, LoRA or full, on clean or filled text (vats2024 §3.2)."""
    out: Path
    model: str | None = None  # a registered MLM bundle or a local model folder
    from_minilm: bool = False  # start from minilm.minilm_mlm() instead of --model
    # Start LoRA and head from a finetune-mlm adapter folder on the same base (continued
    # training, with a fresh learning-rate schedule), not from LoRA's zeros and a new head.
    init_adapter: Path | None = None
    corpus: str = ",".join(EVAL_CORPORA)  # registered corpora (their training split), comma-separated
    train_file: Path | None = None  # or one sentence per line; may hold [MASK]/[PERSON]/... markers
    mode: str = "clean"  # clean: mask-free sentences only; filled: all, masks filled by the model
    fill_method: str = "top1"
    k: int = 10  # Top-K
    technique: str = "entityTagger"  # filled mode, text without markers: how to mask it first
    rounds: int = 1  # filled mode: fill, fine-tune, refill with the fine-tuned model, ...
    lora_r: int = 16  # 0 = full fine-tune
    lora_alpha: float | None = None  # default 2 * r
    lora_dropout: float = 0.05
    lora_targets: tuple[str, ...] = ("query", "value", "dense")
    steps: int | None = None  # per round; None: DEFAULT_STEPS, or as many as --minutes allow
    minutes: float | None = None  # time budget for all rounds together (split equally)
    batch_size: int = 32
    lr: float | None = None  # default: MLM_LR
    warmup_steps: int = 100
    weight_decay: float = 0.01
    max_length: int = 128
    bf16: bool = False  # bfloat16 autocast for training steps (2x faster on CPUs with AVX512-BF16)
    mask_prob: float = 0.15
    seed: int = 0
    resume: bool = False
    eval_every: int = 500  # steps; 0 = only before and after
    eval_items: int = 1000
    # Which held-out words are masked: its own seed, so that runs trained with other seeds
    # (a continued run must not repeat the first run's batches) are scored on the same items.
    eval_seed: int = 0
    save_every: int = 200  # steps between checkpoints
    threads: int | None = None
    # "auto": CUDA where a GPU is visible, else the CPU. Batches are built on the CPU either
    # way; the artifacts are saved from the CPU, so they load the same everywhere.
    device: str = "auto"
    # Held-out sentences (one per line) instead of the corpora's held-out mix: for a machine
    # without the corpora's packages (spaCy, gensim), given the mix as exported by
    # `evaluate-mlm --export-heldout`. They are evaluated on and kept out of training alike.
    heldout_file: Path | None = None
    quiet: bool = False
    stop_after: int | None = None  # stop (checkpointed) at this step, as a kill would: for tests
    command: str = ""  # the command line, for the model card
    # Drop the held-out evaluation sentences from a training file. The grid's FT turns this
    # off: it must train on exactly the cell's corpus (and it does not evaluate on them).
    exclude_heldout: bool = True
    corpora_used: list[str] = field(default_factory=list, repr=False)


@dataclass
class LLMConfig:
    """finetune-llm: LoRA instruction tuning of a causal LM to fill masks (vats2024 §4.2.4)."""
    out: Path
    model: str = "smollm2-135m"  # a causal LM bundle name or local folder
    corpus: str = ",".join(EVAL_CORPORA)
    train_file: Path | None = None  # or one sentence per line
    lora_r: int = 16
    lora_alpha: float | None = None  # default 2 * r
    lora_dropout: float = 0.05
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")
    steps: int | None = None  # None: DEFAULT_STEPS, or as many as --minutes allow
    minutes: float | None = None
    batch_size: int = 8
    lr: float | None = None  # default: LLM_LR
    warmup_steps: int = 50
    weight_decay: float = 0.0
    max_length: int = 256  # tokens of prompt + response
    bf16: bool = False
    mask_prob: float = 0.15  # share of a sentence's words masked: at least 1, at most max_masks
    max_masks: int = 4
    seed: int = 0
    resume: bool = False
    eval_every: int = 200  # steps between held-out losses; 0 = only before and after
    eval_items: int = 64  # held-out prompts for the loss
    save_every: int = 100
    threads: int | None = None
    device: str = "cpu"  # the shared loop reads it; finetune-llm's batches and evaluation are CPU-only
    quiet: bool = False
    stop_after: int | None = None  # for tests: stop (checkpointed) here, as a kill would
    command: str = ""
    mode: str = "clean"  # what sentences.training_sentences reads: the LLM trains on mask-free sentences
    exclude_heldout: bool = True  # sentences.training_sentences too: held-out sentences never train
    corpora_used: list[str] = field(default_factory=list, repr=False)
    rounds: int = 1
