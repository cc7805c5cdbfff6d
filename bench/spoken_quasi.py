"""Spoken quasi-identifiers end to end (issue 85): dates, ages, sums and durations said by a
flite voice go through ``obfuscate-audio --protect quasi``'s find and render; the second pass is
read by value (text/spoken.values), so "the 25th April" is heard for "twenty fifth of April".

Two arms on the same plans: ``figures``, the substitute as the engine writes it (in figures
where Whisper wrote the original in figures), which the voice reads its own way; ``said``, the
substitute written as a person says it (text/spoken.say_figures) before the voice speaks it.

    python bench/spoken_quasi.py [--voice flite-slt]

Prints per utterance each entity's label, substitute and whether it was heard, then per arm: originals heard
and substitutes heard (by value), out of the entities found. No original is printed.
"""
from __future__ import annotations

import argparse
import dataclasses
import subprocess
import tempfile
from pathlib import Path

SENTENCES = ["my son is forty seven years old", "she was seventy two when she sold the house",
             "we bought it for three hundred thousand pounds", "on the fourteenth of march nineteen sixty",
             "he was born on the ninth of november nineteen eighty nine", "it took six months"]
_DATES = ("EVENT_DATE", "DATE_OF_BIRTH")


def _run(values: list[int], heard: list[int]) -> bool:
    """Whether ``values`` occur in ``heard`` in a row."""
    n = len(values)
    return n > 0 and any(heard[i:i + n] == values for i in range(len(heard) - n + 1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--voice", default="flite-slt", help="the voice that says the sentences (flite's slt or rms)")
    args = p.parse_args()

    from recover_core.asr.audio import load
    from recover_core.speech.obfuscate import SpeechObfuscator
    from recover_core.speech.plan import SPEECH_ENGINE, SpeechSettings
    from recover_core.text import spoken

    settings = SpeechSettings(engine=dataclasses.replace(SPEECH_ENGINE, protect="quasi"), retries=0)
    so = SpeechObfuscator(settings, key=b"b" * 32)
    totals = {"figures": [0, 0, 0], "said": [0, 0, 0]}  # entities, originals heard, substitutes heard
    with tempfile.TemporaryDirectory() as tmp:
        for i, sentence in enumerate(SENTENCES):
            wav = Path(tmp) / f"{i}.wav"
            subprocess.run(["flite", "-voice", args.voice.split("-")[-1], "-t", sentence, "-o", str(wav)], check=True)
            clip = load(wav, keep_native=True)
            for arm in ("figures", "said"):
                plan = so.find(clip, so.new_mapping())
                originals = [(e.label, e.original) for e in plan.entities]
                if arm == "said":
                    for e in plan.entities:
                        e.substitute = spoken.say_figures(e.substitute, e.label)
                result = so.render(clip, plan)
                heard = spoken.values(result.second.text, years=True) if result.second else []
                row = []
                for (label, original), e in zip(originals, result.entities):
                    years = label in _DATES
                    orig_v = spoken.values(original, years=years)
                    sub_v = spoken.values(e.substitute, years=years)
                    o_heard = _run(orig_v, heard) and orig_v != sub_v
                    s_heard = _run(sub_v, heard)
                    t = totals[arm]
                    t[0] += 1
                    t[1] += o_heard
                    t[2] += s_heard
                    row.append(f"{label}: substitute {'heard' if s_heard else 'NOT heard'}"
                               f"{', ORIGINAL HEARD' if o_heard else ''} ({e.substitute!r})")
                print(f"{i} {arm:7s} {'; '.join(row) or 'nothing found'}", flush=True)  # never an original
    for arm, (n, o, s) in totals.items():
        print(f"{arm}: {n} entities; originals heard {o}/{n}; substitutes heard {s}/{n} ({100 * s / max(n, 1):.0f}%)")


if __name__ == "__main__":
    main()
