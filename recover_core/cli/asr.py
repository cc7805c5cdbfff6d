"""The speech commands: ``transcribe`` (audio -> JSONL with word times) and ``wer``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from recover_core.asr import audio, lms
from recover_core.cli import build_lms
from recover_core.cli.common import atomic_output, positive
from recover_core.errors import RecoverError

AUDIO_SUFFIXES = {".wav", ".flac", ".ogg", ".mp3", ".sph", ".wv1", ".wv2", ".nist"}


def expand_inputs(items: list[str]) -> list[Path]:
    """Files, folders (their audio files, sorted, recursively) and list files (.txt/.lst: one
    path per line, relative to the list), in the order given."""
    out: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix.lower() in AUDIO_SUFFIXES and f.is_file())
            if not found:
                raise RecoverError(f"{p}: no audio files in this folder ({', '.join(sorted(AUDIO_SUFFIXES))}).")
            out += found
        elif p.is_file() and p.suffix.lower() in (".txt", ".lst", ".scp"):
            lines = [ln.strip() for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
            out += [(p.parent / ln) if not Path(ln).is_absolute() else Path(ln) for ln in lines]
        elif p.is_file():
            out.append(p)
        else:
            raise RecoverError(f"{p}: no such file or folder.")
    if not out:
        raise RecoverError("No audio given: name files, folders, or a list file.")
    return out


def cmd_transcribe(args) -> None:
    from tqdm import tqdm

    from recover_core.asr.decode import DecodeConfig
    from recover_core.asr.recognize import Recognizer, split_long

    paths = expand_inputs(args.audio)
    card = lms.card(args.lm)
    lm = lms.load(args.lm)
    cfg = DecodeConfig(beam_size=args.beam, lm_weight=card.lm_weight if args.lm_weight is None else args.lm_weight,
                       word_bonus=card.word_bonus if args.word_bonus is None else args.word_bonus)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    rec = Recognizer()
    loaded: list[tuple[Path, object]] = []
    for p in paths:
        try:
            loaded.append((p, audio.load(p)))
        except RecoverError as e:
            if not args.skip_bad:
                raise RecoverError(f"{e} Nothing was written; use --skip-bad to record the error and go on.") from None
            loaded.append((p, e))
    good = [(p, a) for p, a in loaded if not isinstance(a, RecoverError)]
    if args.engine == "emformer-rnnt":  # the paper's recognizer (a Space only): n-best rescored, no word times
        from recover_core.asr import emformer
        from recover_core.asr.recognize import Transcript

        emformer.ensure()  # the offline message, before any work
        results = [Transcript(emformer.rescore(emformer.nbest(a.samples), lm, cfg.lm_weight, cfg.word_bonus), [],
                              a.seconds) for _, a in tqdm(good, desc="transcribe (emformer)", disable=args.quiet)]
    else:
        pieces = sum(len(split_long(a.samples)) for _, a in good)
        with tqdm(total=pieces, desc=f"transcribe (lm: {args.lm})", unit="window", disable=args.quiet) as bar:
            results = rec.transcribe([a for _, a in good], cfg, lm, batch_size=args.batch_size, on_batch=bar.update)
    by_path = {id(a): t for (_, a), t in zip(good, results)}
    with atomic_output(args.output) as f:
        for p, a in loaded:
            row = {"path": str(p)}
            if isinstance(a, RecoverError):
                row["error"] = str(a)
            else:
                row |= by_path[id(a)].to_dict() | {"engine": args.engine, "lm": args.lm, "lm_weight": cfg.lm_weight,
                                                   "word_bonus": cfg.word_bonus, "beam": cfg.beam_size}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(good)} of {len(paths)} files transcribed, {sum(a.seconds for _, a in good):.1f} s of audio; "
          f"output: {args.output}", file=sys.stderr)


def cmd_wer(args) -> None:
    from recover_core.asr import references, wer

    # Either side: JSONL (transcribe's output or id/text records), WSJ .dot/.lsn/.ptx, or text.
    refs, hyps = references.read(args.ref), references.read(args.hyp)
    numbered = all(k.isdigit() for k in refs) or all(k.isdigit() for k in hyps)
    if numbered:  # at least one side has no ids: pair by order
        if len(refs) != len(hyps):
            raise RecoverError(f"{len(refs)} references but {len(hyps)} hypotheses, and no utterance ids to pair them.")
        pairs = list(zip(refs, hyps))
    else:
        missing = [k for k in hyps if k.lower() not in {r.lower() for r in refs}]
        if missing:
            raise RecoverError(f"{args.ref} has no reference for {len(missing)} hypotheses, such as {missing[:3]}.")
        lower = {r.lower(): r for r in refs}
        pairs = [(lower[k.lower()], k) for k in hyps]
    for r, _ in pairs:
        wer.check_reference(refs[r], f"reference {r!r}")
    s = wer.score([refs[r] for r, _ in pairs], [hyps[h] for _, h in pairs])
    out = {"utterances": len(pairs), **s.to_dict(), "normalizer": "Whisper EnglishTextNormalizer"}
    print(json.dumps(out, indent=1))


def cmd_speech_set(args) -> None:
    from recover_core.experiment import speech_set

    folder = speech_set.build(args.dataset, args.max_train, args.max_test, progress=not args.quiet)
    rows = speech_set.load_manifest(folder)
    by = {}
    for r in rows:
        by.setdefault((r.split, r.voice), []).append(r.seconds)
    summary = {f"{s}/{v}": {"utterances": len(x), "seconds": round(sum(x), 1)} for (s, v), x in sorted(by.items())}
    print(json.dumps({"folder": str(folder), **summary}, indent=1))


def cmd_asr_eval(args) -> None:
    # Imported here: the recognizer's modules import torch (3 s), which `mask` or `--help` never need.
    from recover_core.experiment import asr_eval

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    names = [n.strip() for n in args.lms.split(",") if n.strip()]
    if not names:
        raise RecoverError("--lms names no LM.")
    command = "python -m recover_core " + " ".join(sys.argv[1:]) if sys.argv[0].endswith("__main__.py") else ""
    print(json.dumps(asr_eval.evaluate(names, args.output, args.tune, args.max_utterances, not args.quiet,
                                       command or "python -m recover_core asr-eval", args.dev_utterances,
                                       not args.no_reuse), indent=1))


def add_parser(sub) -> None:
    build_lms.add_parser(sub)
    p = sub.add_parser("asr-eval", help="WER of ASR fused with each LM on the spoken news set (Table 6's analogue)")
    p.add_argument("--lms", default="none,pretrained,oracle", help="comma-separated LM names (see build-lms)")
    p.add_argument("--tune", action="store_true", help="first tune λ, β per LM on the dev split")
    p.add_argument("--max-utterances", type=int, default=None, help="test utterances (default: all)")
    p.add_argument("--dev-utterances", type=int, default=40, help="dev utterances for --tune")
    p.add_argument("-o", "--output", type=Path, default=Path("precomputed/ours/asr_news.csv"))
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--no-reuse", action="store_true",
                   help="decode every utterance again (transcripts of earlier runs are kept in the cache, asr_hyps/)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(fn=cmd_asr_eval)

    p = sub.add_parser("speech-set", help="speak the news dev/test sentences with offline TTS voices (WSJ stand-in)")
    p.add_argument("--dataset", default="news")
    p.add_argument("--max-train", type=positive, default=2000, help="as the grid's: dev sentences come after these")
    p.add_argument("--max-test", type=positive, default=400, help="as the grid's: the test sentences")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(fn=cmd_speech_set)

    p = sub.add_parser("transcribe", help="speech to text with word times (Whisper tiny.en, optional fused LM)")
    p.add_argument("audio", nargs="+", help="audio files, folders, or a .txt/.lst list of paths")
    p.add_argument("-o", "--output", type=Path, required=True, help="JSONL: one object per input, in input order")
    p.add_argument("--lm", default="none", help="an LM to fuse: none, pretrained, oracle, ... (see build-lms)")
    p.add_argument("--lm-weight", type=float, default=None, help="λ (default: the LM's tuned value)")
    p.add_argument("--word-bonus", type=float, default=None, help="β per word (default: the LM's tuned value)")
    p.add_argument("--beam", type=positive, default=4)
    p.add_argument("--engine", choices=["whisper-tiny.en", "emformer-rnnt"], default="whisper-tiny.en",
                   help="emformer-rnnt: the paper's recognizer (downloads its weights: a Space, not offline)")
    p.add_argument("--batch-size", type=positive, default=8, help="30 s windows decoded together")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--skip-bad", action="store_true", help="write an error record for unreadable audio and go on")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(fn=cmd_transcribe)
    p = sub.add_parser("wer", help="word and character error rates (jiwer, Whisper's English normalizer)")
    p.add_argument("--ref", type=Path, required=True, help="text, WSJ .dot/.lsn/.ptx, or JSONL")
    p.add_argument("--hyp", type=Path, required=True, help="text or JSONL (transcribe's output)")
    p.set_defaults(fn=cmd_wer)
