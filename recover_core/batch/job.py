"""What a batch run does, as plain data: the same object reaches every engine and worker.

A Job says which command runs with which settings. ``settings()`` is everything that
decides the output bytes; `--resume` refuses to continue a run whose settings differ.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Literal

Command = Literal["mask", "fill", "obfuscate"]

# Neither the output's bytes nor its summary depend on these: a resumed run may change them.
NOT_SETTINGS = {"input", "output", "skip_bad", "quiet", "key", "key_file"}


class KeyArg:
    """The run's key, passed apart from the Job's dict (``to_dict`` leaves it out): Ray
    ships its workers' constructor arguments and may print them, and its repr names no key."""

    __slots__ = ("hex",)

    def __init__(self, hex: str | None):
        self.hex = hex

    def __repr__(self) -> str:
        return "KeyArg(<hidden>)" if self.hex else "KeyArg(None)"


@dataclass(frozen=True)
class Job:
    command: Command
    input: Path
    output: Path
    in_jsonl: bool
    out_jsonl: bool
    batch_size: int = 64  # a chunk: the unit of work, of commit and of resume
    seed: int = 0
    skip_bad: bool = False
    quiet: bool = False
    # masking (mask, obfuscate)
    technique: str | None = None
    n: int | None = None
    ner_model: str | None = None
    types: tuple[str, ...] | None = None
    markers: str = "mask"
    keep_originals: bool = False
    # filling (fill, obfuscate)
    filler: str | None = None
    model: str | None = None
    method: str = "top1"
    k: int = 10
    sampling: str = "weighted"
    candidates: bool = False
    type_check: bool = True
    keep_list: str | None = None
    one_pass: bool = False  # mlm: every mask of a line from one forward pass (--one-pass)
    rules: str = "ours"  # ours: the pseudonym rules; paper: vats2024's plain procedure (obfuscator.RULES)
    choice: str = "prior"  # ours: drawn as real names occur (prior), or the filler's best acceptable candidate (rank)
    identifiers: bool | None = None  # None: identifiers masked under our rules (--no-identifiers: False)
    protect: str = "direct"  # direct | quasi: what is private beside the technique (obfuscator.Settings)
    # one original -> one substitute across the whole run (--consistent), kept across runs
    # in a mode-600 file (--mapping FILE, which implies --consistent)
    consistent: bool = False
    mapping: str | None = None
    # The run's secret key as hex (pseudonyms/key.py): from --key-file, else the --mapping
    # file's, else a fresh one that the checkpoint keeps until the run ends (for --resume).
    key: str | None = field(default=None, repr=False)
    # The --key-file the key was read from (absolute): the progress record names it instead of
    # copying the key (issue 75, finding 11).
    key_file: str | None = None

    @property
    def field(self) -> str:
        """The JSONL field that holds each line's text."""
        return "masked" if self.command == "fill" and self.in_jsonl else "text"

    def settings(self) -> dict:
        """Everything that decides the output, as JSON-able data."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in NOT_SETTINGS}
        d["types"] = list(self.types) if self.types else None
        return d

    def to_dict(self) -> dict:
        """The job as JSON-able data, without its key: a dict is what gets shipped, printed
        and logged, so the key travels apart (``KeyArg``) or not at all."""
        d = asdict(self)
        del d["key"]
        d["input"], d["output"] = str(self.input), str(self.output)
        return d

    @classmethod
    def from_dict(cls, d: dict, key: KeyArg | None = None) -> "Job":
        """The job ``to_dict`` gave, with the key passed apart."""
        d = dict(d)
        d["input"], d["output"] = Path(d["input"]), Path(d["output"])
        d["types"] = tuple(d["types"]) if d.get("types") else None
        d["key"] = key.hex if key is not None else None
        return cls(**d)


def differences(old: dict, new: dict) -> list[str]:
    """'name: first run X, now Y' for each setting that differs."""
    return [f"{k}: first run {old.get(k)!r}, now {new.get(k)!r}"
            for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
