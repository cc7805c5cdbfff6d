"""What a document says of the law, not of a person, stays as it is (issue 83).

A judgment cites "Article 27 § 1", "Rule 28", "Protocol No. 11", "Law no. 4928 of 19 July
2003" and the "Police and Criminal Evidence Act 1984"; it dates a treaty ("signed in Rome on
4 November 1950") and a law's entry into force ("on 1 November 1998, when Protocol No. 11
came into force"); its headings read "A. Arrest and detention". None of that singles anyone
out, and changing it costs twice:

* a reader: "Article 71 § 1" beside an unchanged "Article 27 § 2", "S. Hogan and detention";
* the date shift: a public date moved with the private ones gives the shift to anyone who
  looks it up, and every other date of the document falls with it.

``public_ranges`` finds those stretches; ``without_public_text`` drops the spans inside them
and trims those that reach into them. Direct identifiers (a card, an e-mail, a person named
in full outside a heading) are never dropped here: only the kinds a citation or a heading is
misread as.
"""
from __future__ import annotations

import re
from dataclasses import replace

from recover_core.data.lexicons import everyday
from recover_core.text.dates import MONTH
from recover_core.text.spans import Span

# The kinds a citation, a law's date or a heading word is misread as. A card, a phone or an
# address in a citation's sentence is still the person's.
MISREAD_KINDS = frozenset({"EVENT_DATE", "CASE_NUMBER", "COUNT", "DURATION", "AMOUNT", "AGE", "ID_NUMBER",
                           "NUMBER", "MASK", "PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "MISC", "NATIONALITY"})

_MONTH = rf"(?i:{MONTH})"
_DATE = rf"(?:\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH},? (?:1[6-9]|20)\d\d|{_MONTH} \d{{1,2}},? (?:1[6-9]|20)\d\d|(?:1[6-9]|20)\d\d)"
# A number of a provision: "27", "5-1", "6(1)(c)", "II", and its sub-parts "(1)", "(c)".
_NUM = r"(?:\d+[A-Za-z]?(?:[-./]\d+[A-Za-z]?)*|[IVXLC]+\b)(?: ?\((?:\d{1,3}|[a-z]{1,4})\))*"
# Written as judgments write them: "article" and "section" may be lower case, "Act" and "Code" not
# ("acts 5 and 6", "in part 2,000" are no citations).
_HEAD = (r"(?:[Aa]rticles?|Art\.|[Rr]ules?|Protocols?|[Ss]ections?|[Cc]hapters?|Parts?|[Pp]aragraphs?|[Pp]aras?\.|"
         r"Appendix|Annex|Schedule|[Cc]lauses?|Laws?|Acts?|Decrees?|Regulations?|Ordinances?|Directives?|Codes?|"
         r"Resolutions?|§§?)")
_NO = r"(?: (?:[Nn]o|[Nn]os|[Nn]r|[Nn]um)\.?)?"
_JOIN = r"(?:,? (?:and|or|to|in fine|taken together with|in conjunction with) |, | ?[-–] ?| ?§§? ?| ?\(| of (?=§))"
# "Article 5 §§ 1 (c) and 3", "Rule 39 of the Rules of Court", "Law no. 5190 of 16 June 2004".
_PROVISION = re.compile(
    rf"(?<![\w-]){_HEAD}{_NO} ?{_NUM}(?:{_JOIN}(?:{_HEAD}{_NO} ?)?{_NUM})*\)?"
    rf"(?: of (?:the )?(?:{_DATE}))?")
# A named law or treaty, with its year or date: "the Police and Criminal Evidence Act 1984", "the
# Reindeer Grazing Act of 1886", "the Code of Criminal Procedure", "the Law of 27 December 1993".
_NAME_WORD = r"[A-Z][\w’'-]*"
_LAW_WORD = r"(?:Act|Code|Law|Decree|Ordinance|Regulations?|Convention|Treaty|Charter|Protocol|Constitution|Statute)"
_NAMED_LAW = re.compile(
    rf"(?:{_NAME_WORD}(?: (?:and|of|on|for|the|in|to|de))* ){{0,7}}{_LAW_WORD}"
    rf"(?: (?:of|on|for) (?:the )?{_NAME_WORD}(?: (?:and|of|on|for|the|in) {_NAME_WORD}| {_NAME_WORD})*)?"
    rf"(?:,? (?:of |dated )?(?:{_DATE}))?(?![\w])"
    # "the Ankara Martial Law Court" is a court, not a law
    r"(?! (?:Courts?|Tribunals?|Commissions?|Council|Committee|Office|Board|Authority|Department|Directorate|Institute|Service)\b)")
# A law report ("R v. Lambert [2001] 3 WLR 206", "(1978) 2 EHRR 25") and a law named by its year
# ("the 1998 Act", "the 1886 and 1898 Acts").
_LAW_REPORT = re.compile(r"[\[(](?:1[6-9]|20)\d\d[\])] (?:\d{1,3} )?[A-Z][A-Za-z.]{1,8}(?: \([A-Za-z]+\))? \d{1,4}")
_YEAR_LAW = re.compile(r"\b(?:1[6-9]|20)\d\d(?:(?:,| and| or) (?:1[6-9]|20)\d\d)* (?:Acts?|Law|Laws|Code|Constitution|Regulations?)\b")
# Where a sentence dates a law or a treaty rather than an event of the case.
_IN_FORCE = re.compile(r"(?i)\b(?:(?:came|come|comes|coming|entered|enter|enters|entering|entry|put) into force|"
                       r"ratif(?:ied|ication|ying)|promulgat\w+|official gazette|enacted|signed (?:in|at) [A-Z]\w+|"
                       # the Court's own public calendar: "On 1 November 2001 the Court changed the
                       # composition of its Sections" is the same date in every judgment of the time
                       r"composition of its sections)\b")
# Where the Government's agent works is the Government's: "the Foreign and Commonwealth Office,
# London". (The applicant's lawyer's town is not public: TAB's experts mask it, as it points to
# where the applicant lives.)
_AGENT_PLACE = re.compile(r"(?:\bOffice,|\bMinistry of [A-Z][\w ]{0,40},) ([A-Z][\w’'-]+(?: [A-Z][\w’'-]+)?)")
# How near a date must stand to what makes it a law's ("entered into force on 10 January 1998"):
# further off in a long sentence it dates the case ("... acquired jurisdiction and on 26 December
# 1994 the case file was transmitted").
_FORCE_NEAR = 60
_SIGNED_IN = re.compile(r"\bsigned (?:in|at) ([A-Z][\w’'-]+(?: [A-Z][\w’'-]+)?)")
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(“\"])|\n")
# A heading: a marker ("A.", "II.", "3.", "(b)") or none, then a short title with no full stop,
# alone on its line; or a line in capitals ("THE FACTS", "I. THE CIRCUMSTANCES OF THE CASE").
_MARKER = re.compile(r"(?:[A-Z]|[IVXLC]{1,6}|\d{1,3}(?:\.\d{1,3})*)\.(?= )|\((?:[a-z]{1,3}|\d{1,3}|[ivx]{1,6})\)(?= )")
_HEADING_WORDS = 14


def _line_bounds(text: str) -> list[tuple[int, int]]:
    out, at = [], 0
    for line in text.split("\n"):
        out.append((at, at + len(line)))
        at += len(line) + 1
    return out


def headings(text: str) -> list[tuple[int, int, int]]:
    """(start, marker end, end) of each heading line of ``text``: a short line of one sentence led
    by a list marker, or in capitals with no full stop."""
    out = []
    for a, b in _line_bounds(text):
        line = text[a:b]
        stripped = line.strip()
        if not stripped or len(stripped.split()) > _HEADING_WORDS or stripped.endswith((";", ",", ":")):
            continue
        lead = len(line) - len(line.lstrip())
        m = _MARKER.match(line, lead)
        capitals = stripped.upper() == stripped and any(c.isalpha() for c in stripped)
        # a marked heading may end with a full stop ("A. Proceedings concerning a claim."), one sentence only
        if (m and not re.search(r"[.!?]\s", stripped[m.end() - lead:])) or (capitals and not stripped.endswith(".")):
            out.append((a, a + (m.end() if m else lead), b))
    return out


def _sentences(text: str) -> list[tuple[int, int]]:
    out, at = [], 0
    for m in _SENTENCE_END.finditer(text):
        out.append((at, m.start()))
        at = m.end()
    out.append((at, len(text)))
    return out


def public_ranges(text: str) -> list[tuple[int, int]]:
    """[start, end) of each stretch of ``text`` that cites the law: provisions with their
    numbers, named laws and treaties with their years and dates, the dates a sentence gives for
    when a law or treaty was signed, ratified or came into force, and the Government agent's town."""
    ranges = [(m.start(), m.end()) for m in _PROVISION.finditer(text)]
    ranges += [(m.start(), m.end()) for m in _NAMED_LAW.finditer(text) if _names_a_law(m.group())]
    ranges += [(m.start(), m.end()) for pattern in (_LAW_REPORT, _YEAR_LAW) for m in pattern.finditer(text)]
    # the agent's office's town, where the agent represents the Government
    ranges += [(m.start(1), m.end(1)) for m in _AGENT_PLACE.finditer(text)
               if "represent" in text[max(0, m.start() - 160):m.start()]]
    for a, b in _sentences(text):
        force = [(m.start(), m.end()) for m in _IN_FORCE.finditer(text, a, b)]
        if force:
            ranges += [(a + m.start(), a + m.end()) for m in re.finditer(_DATE, text[a:b], re.I)
                       if any(a + m.end() >= fa - _FORCE_NEAR and a + m.start() <= fb + _FORCE_NEAR for fa, fb in force)]
            # where a treaty was signed ("signed in Rome on 4 November 1950") is the treaty's
            ranges += [(a + m.start(1), a + m.end(1)) for m in _SIGNED_IN.finditer(text[a:b])]
    return sorted(ranges)


def _names_a_law(found: str) -> bool:
    # "Act" alone, or "the Law" with nothing after it, names no law; a name, a year or a date does.
    words = found.split()
    return len(words) > 1 or bool(re.search(r"\d", found))


def _inside(span: Span, ranges: list[tuple[int, int]]) -> bool:
    return any(a <= span.start and span.end <= b for a, b in ranges)


def _trimmed(span: Span, text: str, ranges: list[tuple[int, int]]) -> Span | None:
    """``span`` less the part of it inside a public range (at either end), or None when what
    remains holds no letter or digit."""
    start, end = span.start, span.end
    for a, b in ranges:
        if a <= start < b < end:
            start = b
        elif start < a < end <= b:
            end = a
    piece = text[start:end]
    lead, trail = len(piece) - len(piece.lstrip(" ,;:()")), len(piece) - len(piece.rstrip(" ,;:()"))
    start, end = start + lead, end - trail
    if text.count("(", start, end) > text.count(")", start, end) and text.startswith(")", end):
        end += 1  # a gloss in brackets stays whole, its ")" with it
    if start >= end or not re.search(r"\w", text[start:end]):
        return None
    if (start, end) == (span.start, span.end):
        return span
    return replace(span, start=start, end=end, text=text[start:end])


def _heading_word(span: Span, text: str) -> bool:
    """A name read into a heading's ordinary words ("Arrest" of "A. Arrest and detention")."""
    words = re.findall(r"[^\W\d_][\w’'-]*", text[span.start:span.end])
    return bool(words) and all(everyday(w.lower().rstrip("’'s")) or w.isupper() for w in words)


def without_public_text(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less what cites the law or heads a section. A span of a kind a citation is
    misread as (``MISREAD_KINDS``) is dropped inside a citation and trimmed where it reaches
    into one; in a heading, a list marker is never part of a span, and a name read into its
    ordinary words is no name."""
    ranges = public_ranges(text)
    heads = headings(text)
    out = []
    for s in spans:
        if s.label in MISREAD_KINDS:
            if _inside(s, ranges):
                continue
            s = _trimmed(s, text, ranges)
            if s is None:
                continue
        head = next(((a, m, b) for a, m, b in heads if a <= s.start < b), None)
        if head is not None and s.label in MISREAD_KINDS:
            s = _trimmed(s, text, [(head[0], head[1])]) if s.start < head[1] else s
            if s is None or (s.label != "EVENT_DATE" and _heading_word(s, text)):
                continue
        out.append(s)
    return out
