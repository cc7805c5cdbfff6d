"""``python -m recover_core obfuscate-audio IN... -o OUTDIR``: one WAV per input and a manifest.

Resumable: each output WAV is written to a temporary name and renamed, and only then is its
manifest line appended (flushed and synced). A rerun skips every input the manifest already
records, so after a crash or kill the work done is kept and nothing is half-written. The
manifest records the settings; a rerun with other settings is refused, naming them.

Outputs are numbered (``00000.wav``, ...), never named after their inputs: a recording's
file name often holds a person's name. The manifest, which names the inputs (and, with
--keep-originals, holds the original words), is owner only (mode 600; issue 75, finding 12).
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from recover_core.filling import KINDS
from recover_core.filling.base import DEFAULT_SAMPLING, SAMPLINGS
from recover_core.pseudonyms import load_pseudonyms, read_key_file, save_mapping
from recover_core.runtime import atomic
from recover_core.cli.common import positive, protect_arg
from recover_core.errors import RecoverError

MANIFEST = "manifest.jsonl"


def _settings(args):
    from recover_core.speech.plan import SPEECH_ENGINE, SpeechSettings

    types = tuple(t.strip().upper() for t in args.types.split(",") if t.strip()) if args.types else ("PERSON",)
    engine = dataclasses.replace(
        SPEECH_ENGINE, technique=args.technique, types=types if "entityTagger" in args.technique else None,
        n=args.n, ner_model=args.ner_model, filler=args.filler, model=args.model, method=args.method,
        sampling=args.sampling, k=args.k, seed=args.seed, identifiers=not args.no_identifiers, protect=args.protect,
        dates=args.dates)
    return SpeechSettings(engine=engine, mode=args.mode, voice=args.voice, conversion=args.conversion,
                          review_below=args.review_below,
                          second_pass=not args.no_second_pass, retries=0 if args.no_second_pass else args.retries,
                          respeak=not args.no_respeak).check()


# The settings a manifest records, in its order: a run resumes only under the same ones. The
# engine's that the command does not set (its rules, markers ...) are speech's fixed ones.
MANIFEST_SETTINGS = ("technique", "types", "n", "ner_model", "filler", "model", "method", "sampling", "k", "mode",
                     "voice", "exclude_voices", "seed", "review_below", "unsure_below", "second_pass", "retries",
                     "name_cues", "respeak", "identifiers", "protect", "choice")


def _fingerprint(settings, args) -> dict:
    own, engine = dataclasses.asdict(settings), dataclasses.asdict(settings.engine)
    d = {k: own[k] if k in own else engine[k] for k in MANIFEST_SETTINGS}
    d["types"] = d["types"] or ()  # no entityTagger: no types, as manifests have always said
    d |= {"consistent": args.consistent or args.mapping is not None, "keep_originals": args.keep_originals}
    if settings.conversion != "world":  # recorded where it is not the one every older manifest's clone used
        d["conversion"] = settings.conversion
    return json.loads(json.dumps(d))  # as a manifest holds it (tuples become lists)


def _open_manifest(path: Path) -> IO[bytes]:
    """The manifest, owner only (atomic.open_private): never a link, never another user's file."""
    try:
        return atomic.open_private(path)
    except OSError as e:
        raise RecoverError(f"{path}: cannot be used as the manifest ({e.strerror or e}); it must be a file of your "
                           "own, not a link. Remove it, or choose another output folder.") from None


def read_manifest(path: Path) -> list[dict]:
    """The records of a manifest; a last line cut short by a kill is dropped (and its file redone).
    A manifest from before it was owner only is made so here."""
    if not path.exists() and not path.is_symlink():
        return []
    with _open_manifest(path) as f:
        f.seek(0)
        raw = f.read()
        if raw and not raw.endswith(b"\n"):
            raw = raw[: raw.rfind(b"\n") + 1]
            f.truncate(len(raw))
    return [json.loads(x) for x in raw.decode("utf-8").splitlines() if x.strip()]


def _append(path: Path, record: dict) -> None:
    with _open_manifest(path) as f:
        f.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def output_names(todo: list[Path], records: list[dict]) -> dict[Path, str]:
    """The output file of each input still to do: the lowest numbers no record of the manifest
    has taken, in the inputs' order. Never the input's own name, which often holds a person's."""
    taken = {r.get("output") for r in records}
    names: dict[Path, str] = {}
    n = 0
    for p in todo:
        while f"{n:05d}.wav" in taken:
            n += 1
        names[p] = f"{n:05d}.wav"
        taken.add(names[p])
    return names


def cmd_obfuscate_audio(args) -> None:
    from tqdm import tqdm

    from recover_core.asr import audio
    from recover_core.cli.asr import expand_inputs
    from recover_core.speech.obfuscate import SpeechObfuscator

    settings = _settings(args)
    paths = expand_inputs(args.audio)
    out_dir: Path = args.output
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir):  # a random name: a link planted at a fixed one is never written
            pass
    except OSError as e:
        raise RecoverError(f"{out_dir}: cannot write there ({e.strerror}).") from None
    for stale in out_dir.glob(".*.tmp.wav"):  # a kill mid-write
        stale.unlink()
    manifest = out_dir / MANIFEST
    fingerprint = _fingerprint(settings, args)
    done = {}
    records = read_manifest(manifest)
    for rec in records:
        if rec.get("settings") != fingerprint:
            old = rec.get("settings") or {}
            differ = sorted(k for k in fingerprint.keys() | old.keys() if fingerprint.get(k) != old.get(k))
            raise RecoverError(f"{manifest} was written with other settings ({', '.join(differ)}); use the same "
                               "settings to resume, or another output folder.")
        if "error" in rec or (out_dir / rec["output"]).exists():
            done[rec["path"]] = rec
    todo = [p for p in paths if str(p) not in done]
    targets = output_names(todo, records)
    key = read_key_file(args.key_file) if args.key_file else None
    ob = SpeechObfuscator(settings, key=key)
    # --mapping: the substitutes of earlier runs (mode 600) and their key, saved after each file
    pseudonyms = (load_pseudonyms(args.mapping, settings.engine.seed, settings.engine.choice, key=key) if args.mapping
                  else ob.engine.new_mapping()) \
        if args.consistent or args.mapping else None
    bad = flagged = retried = 0
    seconds = work = 0.0
    for p in tqdm(todo, desc=f"obfuscate-audio ({settings.mode})", unit="file", disable=args.quiet):
        t0 = time.perf_counter()
        try:
            clip = audio.load(p, keep_native=True)
        except RecoverError as e:
            if not args.skip_bad:
                raise RecoverError(f"{e} Finished files are kept; rerun with --skip-bad to record this one and go on.") \
                    from None
            _append(manifest, {"path": str(p), "error": str(e), "settings": fingerprint})
            bad += 1
            continue
        result = ob.run(clip, pseudonyms)
        if args.mapping:
            save_mapping(args.mapping, pseudonyms)
        target = out_dir / targets[p]
        audio.write(target, result.samples, result.rate)
        record = {"path": str(p), "output": target.name, "seconds": round(clip.seconds, 3), "rate": result.rate,
                  **result.public(args.keep_originals), "settings": fingerprint}
        _append(manifest, record)
        seconds += clip.seconds
        work += time.perf_counter() - t0
        flagged += result.needs_review
        retried += result.retries > 0
    print(f"{len(todo) - bad} files obfuscated ({len(paths) - len(todo)} already done, {bad} unreadable), "
          f"{seconds:.1f} s of audio in {work:.1f} s (RTF {work / seconds if seconds else 0:.2f}); "
          f"{flagged} need review; {retried} rendered again where a substitute was not heard. Output: {out_dir}",
          file=sys.stderr)


def add_parser(sub) -> None:
    from recover_core.speech.plan import CONVERSIONS, MODES, VOICE_CHOICES
    from recover_core.speech.voices import VOICES

    p = sub.add_parser("obfuscate-audio", help="replace, bleep or silence the names spoken in audio (preiss2023)")
    p.add_argument("audio", nargs="+", help="audio files, folders, or a .txt/.lst list of paths")
    p.add_argument("-o", "--output", type=Path, required=True, help="a folder: one WAV per input, numbered (00000.wav, ...: never "
                   "named after the input, whose name may hold a person's), and manifest.jsonl (mode 600), which "
                   "says which input each is")
    p.add_argument("--mode", choices=MODES, default="substitute")
    p.add_argument("--technique", default="entityTagger", help="masking technique(s), as for `obfuscate`")
    p.add_argument("--types", default=None, help="entityTagger: comma-separated entity types (default PERSON)")
    p.add_argument("--n", type=int, default=None, help="vocabThres: keep the N most frequent words")
    p.add_argument("--ner-model", default=None, help="entityTagger: spacy-md (default) or spacy-sm")
    p.add_argument("--filler", choices=list(KINDS), default="mlm")
    p.add_argument("--model", default=None)
    p.add_argument("--method", choices=["top1", "topk"], default="top1")
    p.add_argument("--k", type=positive, default=50,
                   help="candidates the filler offers to the name rules (Top-K draws among them)")
    p.add_argument("--sampling", choices=SAMPLINGS, default=DEFAULT_SAMPLING,
                   help="Top-K: the filler's word drawn among the best K uniformly or by its scores, as for "
                        "`obfuscate`; the rules take it where the name lists accept it, else the next best")
    p.add_argument("--voice", choices=[*VOICE_CHOICES, *VOICES], default="auto",
                   help="auto: the clearest voice in the speaker's pitch range; clone: that voice moved toward the "
                        "speaker's own pitch and timbre (WORLD vocoder; docs/speech_obfuscation.md)")
    p.add_argument("--conversion", choices=CONVERSIONS, default="world",
                   help="--voice clone: how the insert is moved toward the speaker. world (default): pitch, formants "
                        "and a filter; knn-cmn: also each sound toward the speaker's own, from the stock voice whose "
                        "converted inserts are nearest the speaker: closer in voice (half the gap to a perfect clone, "
                        "against a third) but heard less often by a recognizer (docs/speech_obfuscation.md)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--consistent", action="store_true", help="one original -> one substitute across all files")
    p.add_argument("--mapping", type=Path, default=None, metavar="FILE",
                   help="keep originals -> substitutes in FILE across runs (implies --consistent); written mode 600, "
                        "refused if others can read it")
    p.add_argument("--key-file", type=Path, default=None, metavar="FILE",
                   help="draw the substitutes under the secret key in FILE (`python -m recover_core key FILE`); "
                        "default: a fresh key per recording (per run with --consistent)")
    p.add_argument("--review-below", type=float, default=0.8, help="confidence under which a file needs review")
    p.add_argument("--no-second-pass", action="store_true", help="skip the checking recognition pass (faster)")
    p.add_argument("--retries", type=int, default=1, metavar="N",
                   help="substitute mode: where the second pass does not hear a substitute, render again with the "
                        "rules' next choice, at most N times (0-5; default 1); kept only when it does better")
    p.add_argument("--no-respeak", action="store_true",
                   help="substitute mode: cut the name alone (by default a 'to' or 'at' spoken into the name is "
                        "said again with the substitute, since a cut through it loses it)")
    protect_arg(p)
    p.add_argument("--no-identifiers", action="store_true",
                   help="leave spoken digit strings, phone and card numbers ... alone (by default each is replaced "
                        "by one of its shape, or bleeped, like a name)")
    p.add_argument("--keep-originals", action="store_true", help="also write the original words and transcript")
    p.add_argument("--skip-bad", action="store_true", help="record an unreadable file in the manifest and go on")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(fn=cmd_obfuscate_audio)
