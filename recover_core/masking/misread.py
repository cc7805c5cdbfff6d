"""What the tagger misreads, fixed by the words around it.

- A place read as a person: "She lives in Izmir" came out PERSON, so the city was replaced by a
  woman's name ("She lives in Pamela"). It is relabelled, and gets a place.
- A month read as a person: "on Jan 3rd, 2021" came out PERSON, and the date read "on Charles
  3rd, 2021". It is no one's name, so it is no span: a date of an event is the `quasi`
  profile's to change, as the rest of that date is.
"""
from __future__ import annotations

import re
from dataclasses import replace

from recover_core.data import lexicons
from recover_core.text.dates import MONTH
from recover_core.text.spans import Span

# "in", "from", "near" before a single capitalised word: a place far more often than a person
# ("a letter from Anna" is why a first name must also read as a place, lexicons.reads_as_place).
_BEFORE = re.compile(r"\b(?:in|from|near)\s+$")
# Where only a place can stand: "lives in", "was born in", "a lawyer practising in", "a village in".
_PLACE_BEFORE = re.compile(r"\b(?:lives|lived|living|live|born|practising|practicing|resident|residing|detention|"
                           r"detained|imprisoned|village|villages|town|city|locality|district|province|moved|travelled|"
                           r"arrived|family|bridge|municipality|county|area|region|Court|Courts|court)\s+"
                           r"(?:in|of|at|to|known as)\s+$")
# "the Konya court", "the Edirne prison": a place before what a body is, in lower case
_BODY_AFTER = re.compile(r" (?:court|courts|prison|garrison|police|municipality|governorship|gendarmerie|district|"
                         r"prosecutor['’]s office|public prosecutor)\b")
_MONTH = re.compile(MONTH, re.I)  # the date recognizers' month names, whole or cut short
_DAY_AFTER = re.compile(r" \d{1,2}(?:st|nd|rd|th)?\b")
_DAY_BEFORE = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)? (?:of )?$")


def read_as_places(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with a PERSON span labelled GPE where it is a place: one word after "in", "from"
    or "near" that reads as a well-known place ("Izmir", "Lagos"; not "Mary", a distant town); one
    word before a body in lower case ("the Konya court"); up to two words where only a place can
    stand ("lives in Tammi", "a lawyer practising in Aydın", "the municipality of Jokkmokk")."""
    out = []
    for s in spans:
        if (s.label == "PERSON" and " " not in s.text and _BEFORE.search(text[max(0, s.start - 12):s.start])
                and lexicons.reads_as_place(s.text)):
            s = replace(s, label="GPE")
        elif s.label == "PERSON" and " " not in s.text and _BODY_AFTER.match(text, s.end):
            s = replace(s, label="GPE")  # "the Konya court", "the Tekke district": what stands before a body is a place
        elif s.label == "PERSON" and len(s.text.split()) <= 2 and _PLACE_BEFORE.search(text, max(0, s.start - 30), s.start):
            s = replace(s, label="GPE")  # a town no list holds, where only a place can stand ("lives in Tammi")
        out.append(s)
    return out


# A firm named after its partners: "represented by Royds Rdw, solicitors in London", "Glynn, a firm
# of lawyers". Read as a person, it became a person ("represented by Steven Rollins, solicitors").
# "Mr T. Villa, lawyers practising in ...": one of the lawyers, named with a title or an initial.
_ONE_PERSON = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\b|\b[A-Z]\.")
_TITLE_BEFORE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?(?: [A-Z]\.)* $|\b[A-Z]\. $")
_FIRM_AFTER = re.compile(r",? (?:a firm of |a law firm|solicitors\b|lawyers\b|attorneys\b|advocates\b|LLP\b|& Co\b)")


# What names a body, right before its name: "a company named Lund", "the political party “Frank”".
_BODY_BEFORE = re.compile(r"\b(?:company|firm|association|party|union|organisation|organization|foundation|"
                          r"society|club|bank|newspaper|magazine|group)(?:,? (?:named|called|known as))?\s+[“\"]?$")


def read_as_firms(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with a PERSON span that names a firm or a body labelled ORG, so that a firm stands
    in for it: right before ", solicitors", ", a firm of lawyers", or right after "a company named",
    "the association"."""
    return [replace(s, label="ORG") if s.label == "PERSON" and not _ONE_PERSON.search(s.text) and (
        (_FIRM_AFTER.match(text, s.end) and not _TITLE_BEFORE.search(text, max(0, s.start - 20), s.start))
        or _BODY_BEFORE.search(text, max(0, s.start - 40), s.start)) else s for s in spans]


_NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP"})


def without_common_words(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less a name the tagger read into ordinary lower-case words of a cased text ("a
    claim for compensation" as an organisation, which became "for britain"). A text in lower
    case (a transcript) has its names in lower case too: there every span stays."""
    if text.lower() == text:
        return spans
    return [s for s in spans if not (s.label in _NAME_LABELS and s.text.islower()
                                     and all(lexicons.everyday(w) for w in re.findall(r"[a-z]+", s.text)))]


def without_months(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less the PERSON spans that are a month beside a day ("Jan 3rd", "3 May"):
    "Jan Kowalski" or "May said" stay names."""
    return [s for s in spans if not (
        s.label == "PERSON" and _MONTH.fullmatch(s.text)
        and (_DAY_AFTER.match(text, s.end) or _DAY_BEFORE.search(text[max(0, s.start - 10):s.start])))]
