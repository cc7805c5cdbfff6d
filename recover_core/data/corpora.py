"""Open text corpora that install here, as lists of sentences.

None of them is Fisher, Reddit or WSJ: they are stand-ins with the same roles.
"""
from __future__ import annotations

import bz2
import functools
import hashlib
import json
import re
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterable

from recover_core.runtime import atomic
from recover_core.runtime import env
from recover_core.models.sources import package_dir
from recover_core.errors import RecoverError


@functools.lru_cache(maxsize=1)
def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(text: str) -> list[str]:
    return [s.text.strip() for s in _sentencizer()(text).sents if s.text.strip()]


def kept_on_disk(sources: Callable[[], Iterable[Path]]) -> Callable:
    """Keep a public corpus's sentences in the cache folder: splitting the Wikipedia excerpt,
    the news and the fortunes into sentences takes about 13 s a process (spaCy's
    sentencizer, gensim's markup filter), paid by every grid, FT and build-lms command and
    every test worker. The file is keyed by the source files (path, size, modification
    time), this module's code and the versions of spaCy and gensim, so any change to what
    the sentences come from reads them again. Only the public corpora registered here are
    kept: a licensed corpus read from ``format:PATH`` never is."""
    def wrap(read: Callable[[], tuple[str, ...]]) -> Callable[[], tuple[str, ...]]:
        @functools.wraps(read)
        def cached() -> tuple[str, ...]:
            stamp = [read.__name__, _code_digest(), _version("spacy"), _version("gensim")]
            stamp += [(str(p), st.st_size, st.st_mtime_ns) for p in sources() for st in [p.stat()]]
            path = env.cache_dir() / "corpora" / f"{read.__name__}-{_sha(json.dumps(stamp))[:16]}.json"
            try:
                kept = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(kept, list) and all(isinstance(s, str) for s in kept):
                    return tuple(kept)
            except (OSError, ValueError):
                pass  # not kept yet, or torn: read the corpus again
            out = read()
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_text(path, json.dumps(list(out)))
            return out
        return functools.lru_cache(maxsize=1)(cached)
    return wrap


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    return _sha(Path(__file__).read_text(encoding="utf-8"))


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""


def _news_file() -> Path:
    return package_dir("gensim") / "test" / "test_data" / "lee_background.cor"


@kept_on_disk(lambda: [_news_file()])
def news() -> tuple[str, ...]:
    """The Lee background corpus (Australian news, 300 documents) shipped in gensim's test data."""
    path = _news_file()
    out: list[str] = []
    for doc in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        out += [s for s in split_sentences(doc) if 4 <= len(s.split()) <= 60]
    return tuple(out)


# A shortened English Wikipedia dump (206 pages, CC BY-SA) in gensim's test data: a second,
# encyclopedic style next to the news, so that no single style dominates an evaluation.
WIKI_DUMP = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
# What is left of markup that filter_wiki does not remove (tables, templates, lists, links).
_WIKI_LEFTOVER = re.compile(r"[|{}<>=\[\]*#_\\]|https?:|&[a-z]+;")
_WIKI_NOT_PROSE = ("=", "*", "#", "|", "{", "!", ":", ";")  # headings, lists, tables, indents


@kept_on_disk(lambda: [package_dir("gensim") / "test" / "test_data" / WIKI_DUMP])
def wiki() -> tuple[str, ...]:
    """Prose sentences of the Wikipedia excerpt shipped in gensim's test data (~17k sentences)."""
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    path = package_dir("gensim") / "test" / "test_data" / WIKI_DUMP
    out: dict[str, None] = {}  # ordered and de-duplicated
    with bz2.open(path) as f:
        for _title, text, _pageid in extract_pages(f, filter_namespaces=("0",)):
            if text.lstrip().lower().startswith("#redirect"):
                continue
            plain = filter_wiki(text).replace("'''", "").replace("''", "")  # bold, italics
            for para in re.split(r"\n\s*\n", plain):
                lines = [ln.strip() for ln in para.splitlines()]
                para = " ".join(ln for ln in lines if ln and not ln.startswith(_WIKI_NOT_PROSE))
                if len(para) < 40:
                    continue
                for s in split_sentences(para):
                    s = re.sub(r"\s+", " ", s)
                    s = re.sub(r" ?\(\s*[,;]?\s*\)", "", s).replace(" ,", ",")  # "( )" left by removed templates
                    if _WIKI_LEFTOVER.search(s) or not 4 <= len(s.split()) <= 60:
                        continue
                    if (s[0].isupper() or s[0].isdigit()) and s[-1] in ".!?\"":
                        out[s] = None
    return tuple(out)


# Debian packages: conversational quotes and scripture, the stand-ins for Fisher and Reddit
# styles next to news (WSJ) and Wikipedia.
FORTUNE_DIR = Path("/usr/share/games/fortunes")
BIBLE_BIN = "/usr/bin/bible"
# Pictures, untranslated text, program code and terminal transcripts are not sentences.
_FORTUNE_SKIP = {"art", "ascii-art", "translate-me", "perl", "linux", "debian", "linuxcookie", "computers"}
_ATTRIBUTION = re.compile(r"^\s*(--|-- |~~)")
_PLAIN = re.compile(r"^[A-Za-z0-9 ,.;:!?'\"()$%&/-]+$")


def _missing(package: str) -> RecoverError:
    return RecoverError(f"the {package} corpus comes from Debian's '{package}' package, which is not "
                        f"installed: run `apt-get install {package}` (or `make data`)")


def _keep(s: str) -> bool:
    return (4 <= len(s.split()) <= 60 and bool(_PLAIN.match(s))
            and (s[0].isupper() or s[0].isdigit()) and s[-1] in ".!?\"")


def _fortune_files() -> list[Path]:
    if not FORTUNE_DIR.is_dir():
        raise _missing("fortunes")
    return sorted(p for p in FORTUNE_DIR.iterdir() if not (p.suffix or p.name in _FORTUNE_SKIP or p.is_dir()))


@kept_on_disk(_fortune_files)
def fortunes() -> tuple[str, ...]:
    """Sentences of Debian's `fortunes` quotes and sayings (conversational style, ~15k)."""
    out: dict[str, None] = {}
    for path in _fortune_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r".\x08", "", text)  # overstriking (bold, underline)
        for quote in text.split("\n%\n"):
            lines = [ln for ln in quote.splitlines() if not _ATTRIBUTION.match(ln)]
            if any(ln.startswith(("\t", "    ")) for ln in lines[1:]):
                continue  # verse, dialogue layout, code: not running prose
            para = re.sub(r"\s+", " ", " ".join(lines)).strip()
            for s in split_sentences(para):
                if _keep(s):
                    out[s] = None
    return tuple(out)


@functools.lru_cache(maxsize=1)
def scripture() -> tuple[str, ...]:
    """The King James Bible from Debian's `bible-kjv` package, one verse per item (~31k)."""
    import subprocess

    if not Path(BIBLE_BIN).exists():
        raise _missing("bible-kjv")
    dump = subprocess.run([BIBLE_BIN, "-f", "Gen1:1-Rev22:21"], capture_output=True, text=True,
                          check=True).stdout
    out: dict[str, None] = {}
    for line in dump.splitlines():
        verse = line.split(" ", 1)[1].strip() if " " in line else ""
        if _keep(verse):
            out[verse] = None
    return tuple(out)


CORPORA = {"news": news, "wiki": wiki, "fortunes": fortunes, "scripture": scripture}


# --- readers for the licensed corpora of vats2024, for users who hold them --------------

# Fisher (LDC2004T19, LDC2005T19) transcripts: "start end A: words", '#' comments,
# non-speech in [brackets], unclear words in (( double parentheses )).
_FISHER_LINE = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+[AB]\d*:\s*(.*)$")
_FISHER_NOISE = re.compile(r"\[[^\]]*\]|\(\(\s*|\s*\)\)")
# WSJ0/WSJ1 .dot transcripts: "words (utterance-id)"; noise in [brackets], verbalized
# punctuation as \\words, <unclear> and ~partial~ words, *mispronounced* marks.
_WSJ_ID = re.compile(r"\s*\([0-9a-z]{8}\)\s*$", re.I)
_WSJ_NOISE = re.compile(r"\[[^\]]*\]|<[^>]*>|\\\S+|~|\*")
REDDIT_DROPPED = {"[deleted]", "[removed]", ""}


def _files(path: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
    raise RecoverError(f"{str(path)!r} does not exist.")


def read_fisher(path: Path | str) -> list[str]:
    """Utterances of Fisher transcript files (a file or a folder of *.txt)."""
    out = []
    for f in _files(Path(path), (".txt",)):
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            m = _FISHER_LINE.match(line)
            if m and not line.lstrip().startswith("#"):
                text = re.sub(r"\s+", " ", _FISHER_NOISE.sub(" ", m.group(1))).strip()
                if text:
                    out.append(text)
    return out


def read_reddit(path: Path | str) -> list[str]:
    """Sentences of Reddit dumps in JSON lines (pushshift style: comments' ``body``,
    submissions' ``title`` and ``selftext``); deleted and removed posts are skipped."""
    import html
    import json

    out = []
    for f in _files(Path(path), (".jsonl", ".json", ".ndjson")):
        with f.open(encoding="utf-8", errors="replace") as lines:  # dumps are large: a line at a time
            for n, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    rec = None
                if not isinstance(rec, dict):
                    raise RecoverError(f"{f}, line {n}: not JSON lines (each line must be a JSON object).")
                for key in ("title", "selftext", "body"):
                    text = html.unescape(str(rec.get(key) or "")).strip()
                    if text not in REDDIT_DROPPED:
                        out += [s for s in split_sentences(re.sub(r"\s+", " ", text)) if len(s.split()) >= 2]
    return out


def read_wsj(path: Path | str) -> list[str]:
    """Utterance transcripts of WSJ0/WSJ1 .dot files (a file or a folder of them)."""
    out = []
    for f in _files(Path(path), (".dot",)):
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            text = _WSJ_NOISE.sub(" ", _WSJ_ID.sub("", line))
            text = re.sub(r"\s+", " ", text).strip()
            if text:
                out.append(text)
    return out


READERS = {"fisher": read_fisher, "reddit": read_reddit, "wsj": read_wsj}


def load(name: str) -> tuple[str, ...]:
    """A registered corpus (``news``), or a licensed one from disk as ``format:path``
    (``fisher:/data/fisher/trans``, ``reddit:/data/rc.jsonl``, ``wsj:/data/wsj0``)."""
    if name in CORPORA:
        return CORPORA[name]()
    fmt, sep, path = name.partition(":")
    if sep and fmt in READERS:
        if not path.strip():
            raise RecoverError(f"{name!r}: give the path after '{fmt}:'.")
        sents = tuple(dict.fromkeys(READERS[fmt](path)))
        if not sents:
            raise RecoverError(f"{name!r}: no {fmt} text found there (check the path and the format).")
        return sents
    raise RecoverError(f"Unknown corpus {name!r}. Known: {', '.join(CORPORA)}, or "
                       f"{'|'.join(READERS)}:PATH for files you hold.")

# Share of each corpus held out for evaluation. The split hashes the sentence text, so it is
# the same on every machine and for every caller, and does not move when a corpus grows.
HELDOUT_PERCENT = 15


def is_heldout(sentence: str) -> bool:
    return int(hashlib.sha1(sentence.encode("utf-8")).hexdigest()[:8], 16) % 100 < HELDOUT_PERCENT


def split(name: str) -> tuple[list[str], list[str]]:
    """(train, held-out) sentences of a registered corpus."""
    sents = load(name)
    return [s for s in sents if not is_heldout(s)], [s for s in sents if is_heldout(s)]


def heldout_mix(names: tuple[str, ...] = ("news", "wiki")) -> list[str]:
    """Held-out sentences of several corpora in equal numbers, interleaved: no single style
    dominates (the larger corpora are cut, in their hash order, to the smallest one's size)."""
    parts = []
    for name in names:
        held = split(name)[1]
        parts.append(sorted(held, key=lambda s: hashlib.sha1(s.encode("utf-8")).hexdigest()))
    n = min(len(p) for p in parts)
    return [p[i] for i in range(n) for p in parts]
