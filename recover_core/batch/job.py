"""What a batch run does, as plain data: the same object reaches every engine and worker.

A Job says which command runs with which settings: the engine's own (``obfuscator.Settings``,
one policy for every path) and the run's. ``settings()`` is everything that decides the
output bytes; `--resume` refuses to continue a run whose settings differ.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Literal

from recover_core.obfuscator import Settings

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
    skip_bad: bool = False
    quiet: bool = False
    # What the engine does (technique, filler, k, seed, rules, protect ...), as the API takes it.
    # fill masks nothing and mask fills nothing: the other half is not used, and fill's
    # keep-list is the command's to decide (pipeline.engine_settings).
    engine: Settings = field(default_factory=Settings)
    keep_originals: bool = False  # mask: jsonl output also holds the private words
    candidates: bool = False  # fill, obfuscate: jsonl output also lists the filler's candidates
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
        """Everything that decides the output, as JSON-able data. The engine's settings are
        flattened beside the run's, so a difference names the setting ('k: first run 10, now 20')."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in NOT_SETTINGS | {"engine"}}
        d |= asdict(self.engine)
        d["types"] = list(self.engine.types) if self.engine.types else None
        # What the command does not use reads None, as progress records have always said, so a
        # run started before the engine's settings were held whole still resumes.
        if self.command == "fill":
            d["technique"] = None
        if self.command == "mask":
            d["filler"] = None
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
        engine = dict(d["engine"])
        engine["types"] = tuple(engine["types"]) if engine.get("types") else None
        d["engine"] = Settings(**engine)
        d["key"] = key.hex if key is not None else None
        return cls(**d)


def differences(old: dict, new: dict) -> list[str]:
    """'name: first run X, now Y' for each setting that differs."""
    return [f"{k}: first run {old.get(k)!r}, now {new.get(k)!r}"
            for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
