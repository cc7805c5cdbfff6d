"""Checks on user text, shared by the CLI, the Python API and the UI.

Each check raises RecoverError with a message a person can act on. The checks
run before any model is touched (validate, then forward, then decode).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable
from pathlib import Path

from recover_core.runtime.env import MAX_CHARS, MAX_MASKS
from recover_core.text import spans
from recover_core.errors import RecoverError

# Markers we write ([MASK], [PERSON], ...) and the one RoBERTa-style models read (<mask>).
# Other bracketed text ("[AEDT]", "[laughter]") is not a marker: see spans.MARKER_RE.
MARKER_RE = spans.LivePattern(lambda: spans.MARKER_RE.pattern + "|<mask>")  # knows kinds added later
MAX_K = 50

# Characters that show nothing but split a word: a name written "Dar\u200bnell" reached the
# masker as two words and came out as "Phoenix\u200bnell" (issue 75). They are dropped before
# anything reads the text: every format character (Unicode category Cf: zero-width space and
# joiners, soft hyphen, bidi marks and isolates, BOM, tags), and the other default-ignorable
# code points (DerivedCoreProperties.txt: the grapheme joiner, variation selectors, fillers).
_IGNORABLE_RANGES = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Format characters lie in planes 0, 1 and 14 only (scanning those alone keeps the import fast).
_INVISIBLE = {cp: None for cp in (*range(0x20000), *range(0xE0000, 0xE1000)) if unicodedata.category(chr(cp)) == "Cf"} | {
    cp: None for lo, hi in _IGNORABLE_RANGES for cp in range(lo, hi + 1)}


def normalise(text: str) -> str:
    """``text`` with every invisible character dropped and its letters, digits, marks and
    punctuation in NFKC, so that what the masker reads is what a reader sees: "Dar\u200bnell"
    is one word, "Ｄａｒｎｅｌｌ" is "Darnell", "Griﬃths" is "Griffiths", "jane＠example．com" an
    e-mail address. Symbols and other numbers ("½", "²", "´") are kept as typed: NFKC would
    rewrite them as other characters ("1⁄2"), they hide no word, and the grid's public corpora
    hold them (a changed sentence would change every cached cell). Plain ASCII is returned as
    it is (nothing to change, and it is most lines)."""
    if text.isascii():
        return text
    text = text.translate(_INVISIBLE)
    if unicodedata.is_normalized("NFKC", text):
        return text
    out, start = [], 0
    for i, ch in enumerate(text):
        cat = unicodedata.category(ch)
        if cat[0] == "S" or cat == "No":  # kept as typed; what lies between is folded
            out += [unicodedata.normalize("NFKC", text[start:i]), ch]
            start = i + 1
    out.append(unicodedata.normalize("NFKC", text[start:]))
    # NFKC maps a few characters onto ignorable ones (a halfwidth filler), so drop once more.
    return "".join(out).translate(_INVISIBLE)


def _script_problem(text: str) -> str | None:
    for ch in text:
        cat = unicodedata.category(ch)
        if cat.startswith("L"):
            name = unicodedata.name(ch, "")
            if not name.startswith("LATIN"):
                script = name.split(" ")[0].title() if name else "an unknown"
                return (
                    f"Only English text in Latin script is supported; found {script} "
                    f"character {ch!r}. The models here are English-only, so such words "
                    "could be neither judged nor replaced safely."
                )
        # Symbols of ordinary text stay ("20°C", "©", "™", "→"); from U+2300 on they are
        # pictographs (⌚, ☀, ✈, the emoji blocks), which the models never read.
        elif (cat == "So" and ord(ch) >= 0x2300) or cat in ("Cs", "Co") or 0x1F000 <= ord(ch) <= 0x1FAFF:
            return (
                f"Emoji and pictographs are not supported (found {ch!r}); "
                "remove them and try again."
            )
    return None


def check_text(text: object, *, allow_markers: bool = False, what: str = "text") -> str:
    """Return ``text`` normalised (``normalise``) and stripped, or raise RecoverError saying
    what is wrong with it."""
    if not isinstance(text, str):
        raise RecoverError(f"The {what} must be a string, not {type(text).__name__}.")
    stripped = normalise(text).strip()
    if not stripped:
        raise RecoverError(f"The {what} is empty: type or paste a sentence.")
    if len(stripped) > MAX_CHARS:
        raise RecoverError(
            f"The {what} has {len(stripped):,} characters; the limit is {MAX_CHARS:,}. "
            "Split it into sentences (the command line takes one per line)."
        )
    if "\n" in stripped or "\r" in stripped:
        stripped = " ".join(stripped.split())
    markers = [m.group() for m in MARKER_RE.finditer(stripped)]
    if markers and not allow_markers:
        raise RecoverError(
            f"The {what} already contains the marker {markers[0]}. Masking it again would "
            "mix your markers with ours; use `fill` for text that is already masked, or "
            "remove the marker."
        )
    problem = _script_problem(stripped)
    if problem:
        raise RecoverError(problem)
    return stripped


# A document may be as long as this (a few hundred judgments' worth); the engine cuts it into
# pieces (masking/document.py), so the limit only keeps one call's memory bounded.
MAX_DOCUMENT_CHARS = 5_000_000
_BINARY = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def is_document(text: object) -> bool:
    """Whether ``text`` goes through the engine as a document: several lines, or longer than
    one sentence may be (MAX_CHARS). A document keeps its line breaks."""
    if not isinstance(text, str):
        return False
    stripped = text.strip()
    return len(stripped) > MAX_CHARS or "\n" in stripped or "\r" in stripped


def check_document(text: object, *, what: str = "document") -> str:
    """``text`` normalised (``normalise``, and Windows line ends as "\n"), or a RecoverError
    saying what is wrong: not text, empty, binary, or too long. Not stripped: a span's offsets
    are the document's own."""
    if isinstance(text, (bytes, bytearray)):
        raise RecoverError(f"The {what} is bytes: decode it as UTF-8 text first.")
    if not isinstance(text, str):
        raise RecoverError(f"The {what} must be a string, not {type(text).__name__}.")
    doc = normalise(text.replace("\r\n", "\n").replace("\r", "\n"))
    if not doc.strip():
        raise RecoverError(f"The {what} is empty: nothing to obfuscate.")
    if _BINARY.search(doc):
        raise RecoverError(f"The {what} holds control characters (such as NUL): it looks like a binary file, "
                           "not text.")
    if len(doc) > MAX_DOCUMENT_CHARS:
        raise RecoverError(f"The {what} has {len(doc):,} characters; the limit is {MAX_DOCUMENT_CHARS:,} per call. "
                           "Split it into documents.")
    return doc


def count_masks(text: str) -> int:
    """The markers in ``text``, each counted ('[PERSON] [PERSON]' is two)."""
    return sum(1 for _ in MARKER_RE.finditer(text))


def check_mask_count(n: int, *, what: str = "text") -> int:
    """Return ``n``, the number of masks one request asks to fill, or raise RecoverError
    if it is over MAX_MASKS: each mask is filled in turn, so the work grows with them."""
    if n > MAX_MASKS:
        raise RecoverError(
            f"The {what} has {n:,} masks; the limit is {MAX_MASKS} per sentence, as each mask is "
            "filled in turn. Split it into sentences (the command line takes one per line), "
            "or mask fewer words."
        )
    return n


def check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, float)) or int(k) != k:
        raise RecoverError(f"K must be a whole number from 1 to {MAX_K}, not {k!r}.")
    k = int(k)
    if not 1 <= k <= MAX_K:
        raise RecoverError(f"K must be from 1 to {MAX_K}; got {k}.")
    return k


def check_choice(kind: str, name: object, known: list[str]) -> str:
    if name not in known:
        raise RecoverError(f"Unknown {kind} {name!r}. Known: {', '.join(known)}.")
    return str(name)


def read_lines(path: Path, what: str = "Input file") -> list[str]:
    """The non-empty lines of a UTF-8 sentence file, stripped; a clear message if it is
    missing or not text."""
    path = Path(path)
    if not path.is_file():
        raise RecoverError(f"{what} {str(path)!r} does not exist.")
    try:
        return [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except UnicodeDecodeError:
        raise RecoverError(f"{path} is not UTF-8 text.") from None


def check_spans(text: str, given: Iterable[spans.Span | tuple | dict]) -> list[spans.Span]:
    """Spans given by a caller (another detector's, or a person's edit), checked against the
    text: inside it, matching it, of a known label, not overlapping; sorted."""
    out = []
    for s in given:
        if isinstance(s, dict):
            s = (s.get("start"), s.get("end"), s.get("label", s.get("entity_type", "MASK")))
        if isinstance(s, tuple):
            if len(s) not in (2, 3):
                raise RecoverError(f"A span is (start, end) or (start, end, label); got {s!r}.")
            start, end, label = (*s, "MASK")[:3]
            if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
                raise RecoverError(f"Span ({start!r}, {end!r}) is not inside the text (0 to {len(text)}).")
            s = spans.Span(start, end, text[start:end], str(label))
        if not isinstance(s, spans.Span):
            raise RecoverError(f"A span is a Span, a (start, end, label) tuple or a dict; got {type(s).__name__}.")
        if s.end > len(text) or text[s.start : s.end] != s.text:
            raise RecoverError(f"Span {s.start}-{s.end} does not match the text there.")
        if s.label not in ("MASK", "WORD", "NUMBER", *spans.ENTITY_LABELS, *spans.IDENTIFIER_LABELS):
            raise RecoverError(f"Unknown span label {s.label!r}. Known: MASK, NUMBER, "
                               f"{', '.join(spans.ENTITY_LABELS + spans.IDENTIFIER_LABELS)}.")
        out.append(s)
    out.sort(key=lambda s: s.start)
    for a, b in zip(out, out[1:]):
        if b.start < a.end:
            raise RecoverError(f"Spans {a.start}-{a.end} and {b.start}-{b.end} overlap.")
    return out
