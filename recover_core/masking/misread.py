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

from recover_core.data import countries, lexicons
from recover_core.text.dates import MONTH
from recover_core.text.spans import Span

# "in", "from", "near" before a single capitalised word: a place far more often than a person
# ("a letter from Anna" is why a first name must also read as a place, lexicons.reads_as_place).
_BEFORE = re.compile(r"\b(?:in|from|near)\s+$")
# Where only a place can stand: "lives in", "was born in", "a lawyer practising in", "a village in".
_PLACE_BEFORE = re.compile(r"\b(?:lives|lived|living|live|born|practising|practicing|resident|residing|detention|"
                           r"detained|imprisoned|village|villages|town|city|locality|district|province|moved|travelled|"
                           r"arrived|family|bridge|municipality|county|area|region|Court|Courts|court|Government|"
                           r"street|avenue|road)(?: of (?:Appeal|Appeals|First Instance))?(?: \([^()]{1,40}\))?\s+(?:in|of|at|to|known as|named|called)\s+$"
                           # "four villages (samebyar): A, B, C and D": a list of places (the rest by _in_lists)
                           r"|\b(?:villages|towns|cities|municipalities|districts|provinces|regions)(?: \([^()]{1,40}\))?:\s+$")
# "the Konya court", "the Edirne prison": a place before what a body is, in lower case
_BODY_AFTER = re.compile(r" (?:court|courts|prison|garrison|police|municipality|governorship|gendarmerie|district|"
                         r"prosecutor['’]s office|public prosecutor|village|villages|Prison|Garrison|Airport)\b")
_MONTH = re.compile(MONTH, re.I)  # the date recognizers' month names, whole or cut short
_DAY_AFTER = re.compile(r" \d{1,2}(?:st|nd|rd|th)?\b")
_DAY_BEFORE = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)? (?:of )?$")


_STREET_WORDS = frozenset({"Street", "Avenue", "Road", "Boulevard", "Lane", "Square", "Alley"})


def _runs(text: str, spans: list[Span]) -> list[list[int]]:
    """Indices of ``spans`` in runs joined by a space or a hyphen only: one name the tagger read
    word by word ("Nedre" "Norrland"), which a cue before the first word or after the last names as a whole."""
    order = sorted(range(len(spans)), key=lambda i: spans[i].start)
    runs: list[list[int]] = []
    for i in order:
        if runs and text[spans[runs[-1][-1]].end:spans[i].start] in (" ", "-", "‐"):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def read_as_places(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with a PERSON span labelled GPE where it is a place: one word after "in", "from"
    or "near" that reads as a well-known place ("Izmir", "Lagos"; not "Mary", a distant town); up to
    three words before a body ("the Konya court", "Sztum Prison", "the Lula village"), or where only
    a place can stand ("lives in Tammi", "the Court of Appeal (hovrätten) of Nedre Norrland", "the
    Government of Bavaria"). A street's name is a place and its street word no one's ("Kennedy Avenue")."""
    out = list(spans)
    for run in _runs(text, spans):
        first, last = spans[run[0]], spans[run[-1]]
        words = text[first.start:last.end].split()
        if len(run) > 1 and countries.is_country_not_a_name(text[first.start:last.end]) and \
                all(spans[i].label in ("PERSON", "GPE", "LOC", "MASK") for i in run):
            # a country read word by word: "deported to Sierra Leone" had become "deported to Maureen Lutz"
            out[run[0]] = Span(first.start, last.end, text[first.start:last.end], "GPE", first.source)
            for i in run[1:]:
                out[i] = None  # type: ignore[call-overload]
            continue
        if last.text in _STREET_WORDS and len(run) > 1:
            out[run[-1]] = None  # type: ignore[call-overload]  # "Avenue" stays as it is
            run = run[:-1]  # the name before it is the street's
            last = spans[run[-1]]
            placed = True
        else:
            placed = len(words) <= 3 and (_BODY_AFTER.match(text, last.end) or
                                          _PLACE_BEFORE.search(text, max(0, first.start - 50), first.start))
        one = len(run) == 1 and " " not in first.text and first.label == "PERSON" and \
            _BEFORE.search(text[max(0, first.start - 12):first.start]) and \
            (lexicons.reads_as_place(first.text) or countries.is_country(first.text))
        # a technique's own mask too: "the Idre Nya Sami village" had become "the Land village"
        if (placed or one) and all(spans[i].label in ("PERSON", "GPE", "MASK") for i in run):
            for i in run:
                out[i] = replace(spans[i], label="GPE")
    _in_lists(text, out, _runs(text, spans))
    return [s for s in out if s is not None]


# Between the items of a list: "Van, Nusaybin and Şırnak", "C and D (formerly E)"; after it, what only people do ("Ankara,
# Mehmet and Ali were arrested": a place, then two men).
_LIST_JOIN = re.compile(r",\s*|\s+and\s+|,\s+and\s+|\s+or\s+|,\s+or\s+|\s+\((?:formerly|now|previously)\s+")
_PEOPLE_AFTER = re.compile(r",?\s+(?:were|was|had|have|has|are|is|said|told|went|did|who|whose|both)\b")


def _in_lists(text: str, spans: list, runs: list[list[int]]) -> None:
    """In place: in a list whose items include a place, the items read as persons are places too,
    unless one is a first name, has a title before it, or people follow the list."""
    groups: list[list[list[int]]] = []
    for run in runs:
        prev = groups[-1][-1] if groups else None
        if prev and all(spans[i] is not None for i in prev + run) and \
                _LIST_JOIN.fullmatch(text, spans[prev[-1]].end, spans[run[0]].start):
            groups[-1].append(run)
        else:
            groups.append([run])
    for group in groups:  # runs join a group only when none of theirs is a dropped street word (None)
        if len(group) < 2:
            continue
        kinds = [{spans[i].label for i in run} for run in group]
        people = [run for run, k in zip(group, kinds) if k == {"PERSON"}]
        if not people or not any(k <= {"GPE", "LOC"} for k in kinds) or \
                _PEOPLE_AFTER.match(text, spans[group[-1][-1]].end):
            continue
        if any(spans[i].text.lower() in lexicons.first_names() for run in people for i in run) or \
                any(_titled(text, spans[run[0]].start) for run in people):
            continue
        for run in people:
            for i in run:
                spans[i] = replace(spans[i], label="GPE")


# A firm named after its partners: "represented by Royds Rdw, solicitors in London", "Glynn, a firm
# of lawyers". Read as a person, it became a person ("represented by Steven Rollins, solicitors").
# "Mr T. Villa, lawyers practising in ...": one of the lawyers, named with a title or an initial.
_ONE_PERSON = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\b|\b[A-Z]\.")
_TITLE_BEFORE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?(?: [A-Z]\.)* $|\b[A-Z]\. $")


def _titled(text: str, start: int) -> bool:
    """A title or an initial right before ``start``: "Mr Ford", "T. Villa" name a person."""
    return bool(_TITLE_BEFORE.search(text, max(0, start - 20), start))
_FIRM_AFTER = re.compile(r",? (?:a firm of |a law firm|solicitors\b|lawyers\b|attorneys\b|advocates\b|LLP\b|& Co\b)")


# What names a body, right before its name: "a company named Lund", "the political party “Frank”".
_BODY_BEFORE = re.compile(r"\b(?:company|firm|association|party|union|organisation|organization|foundation|"
                          r"society|club|bank|newspaper|magazine|group)(?:,? (?:named|called|known as|the))?\s+[“\"]?$")
# "by the GFAM (a mutual-benefit ...)": a few capitals after "the" are a body's initials, no one's name
_INITIALS_AFTER_THE = re.compile(r"\bthe [“\"]?$")


# A company's legal form ends its name: "Robert Bosch GmbH" is a firm, whatever its first words are.
_LEGAL_FORMS = frozenset({"GmbH", "AG", "AB", "Ltd", "Ltd.", "Inc", "Inc.", "SA", "S.A.", "SpA", "S.p.A.", "LLC",
                          "PLC", "plc", "BV", "B.V.", "NV", "N.V.", "Oy", "A/S", "ASA", "SARL", "Sàrl", "d.o.o."})


# What a body calls itself in the languages of the Council of Europe's courts' cases: "Halkın Emek
# Partisi", "Stowarzyszenie Penitencjarne", "Częstochowskie Zakłady Metalowe" were read as persons.
_BODY_WORDS_ABROAD = frozenset("""partisi parti partei partido partito derneği dernegi vakfı vakfi sendikası sendikasi
    stowarzyszenie spółka spolka urząd urzad zakłady zaklady zakład zaklad fundacja związek zwiazek verein gesellschaft stiftung
    société societe association asociación asociacion associazione fondazione fundación fundacion""".split())


def read_as_firms(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with a PERSON span that names a firm or a body labelled ORG, so that a firm stands
    in for it: right before ", solicitors", ", a firm of lawyers", or right after "a company named",
    "the association", or ending in a legal form ("GmbH"); the tagger's words of one name as a whole."""
    out, firms, runs = list(spans), set(), _runs(text, spans)
    for run in runs:
        first, last = spans[run[0]], spans[run[-1]]
        whole = text[first.start:last.end]
        firm = not _ONE_PERSON.search(whole) and (
            (_FIRM_AFTER.match(text, last.end) and not _titled(text, first.start))
            or _BODY_BEFORE.search(text, max(0, first.start - 40), first.start)
            or (len(whole.split()) > 1 and (whole.split()[-1] in _LEGAL_FORMS or (
                whole.split()[-1][:1].isupper() and whole.split()[-1].lower() in lexicons.FIRM_WORDS)))
            or any(w.lower() in _BODY_WORDS_ABROAD for w in whole.split())
            or (re.fullmatch(r"[A-Z]{2,5}", whole) and _INITIALS_AFTER_THE.search(text, max(0, first.start - 6), first.start)))
        if firm:
            firms.add(whole)
    # the body's other mentions are the body's too ("membership of the Dev-Yol", with no cue), and
    # so are those of a body the tagger read as one once ("the Dev-Yol (Revolutionary Way)"), less
    # its gloss; never a mention with a title before it ("Mr Ford" beside "Ford")
    firms |= {s.text.split(" (")[0] for s in spans if s.label == "ORG" and not s.text.isupper()}
    marked = {i for run in runs if text[spans[run[0]].start:spans[run[-1]].end] in firms
              and not _titled(text, spans[run[0]].start) for i in run}
    return [replace(s, label="ORG") if i in marked and s.label == "PERSON" else s for i, s in enumerate(out)]


_NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP"})


def without_common_words(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less a name the tagger read into ordinary lower-case words of a cased text ("a
    claim for compensation" as an organisation, which became "for britain"). A text in lower
    case (a transcript) has its names in lower case too: there every span stays."""
    # a name has a letter: "(TRL)0", a footnote's number, was read as a place and became "(TRL)Palau"
    spans = [s for s in spans if not (s.label in _NAME_LABELS and not any(c.isalpha() for c in s.text))]
    # nor is a letter before a digit: "at L5-S1", a spinal segment, had become "at Paris5-Rome1" (a
    # letter alone may still be a name: "Mr K." read as an organisation)
    spans = [s for s in spans if not (s.label in _NAME_LABELS and len(s.text) == 1 and text[s.end:s.end + 1].isdigit())]
    if text.lower() == text:
        return spans
    return [s for s in spans if not (s.label in _NAME_LABELS and s.text.islower()
                                     and all(lexicons.everyday(w) for w in re.findall(r"[a-z]+", s.text)))]


_ADMIN_BEFORE = re.compile(rf"\b(?i:{'|'.join(sorted(lexicons.ADMIN_AREA_WORDS))}) of $")


def with_admin_areas(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with a place after "the District of", "the municipality of" widened over the area
    word, which a span of its own that held only that word joins: one place with one
    substitute that keeps the word ("the District of Palermo"), as TAB's experts mask it whole."""
    out, joined = list(spans), set()
    for i, s in enumerate(spans):
        m = _ADMIN_BEFORE.search(text, max(0, s.start - 20), s.start) if s.label in ("GPE", "LOC", "ORG", "PERSON") else None
        if m:  # the tagger may read the place after the area word as an organisation or a person: it is a place
            joined |= {j for j, o in enumerate(spans) if j != i and m.start() <= o.start and o.end <= m.end()}
            out[i] = replace(s, start=m.start(), text=text[m.start():s.end], label="GPE" if s.label in ("ORG", "PERSON") else s.label)
        elif s.label == "ORG" and lexicons.admin_of(s.text):
            out[i] = replace(s, label="GPE")  # "the District of Famagusta" as one organisation
    # "London Borough of Islington": the place the area lies in, right before it, is part of its name
    for i, s in enumerate(out):
        before = next((j for j, o in enumerate(out) if j not in joined and o.end + 1 == s.start and o.label in ("GPE", "LOC")
                       and text[o.end] == " "), None) if i not in joined and lexicons.admin_of(s.text) else None
        if before is not None:
            joined.add(before)
            out[i] = replace(s, start=out[before].start, text=text[out[before].start:s.end])
    return [s for j, s in enumerate(out) if j not in joined]


# "Akın and Mr İ" read as one organisation: a title inside a span starts another person
_AND_TITLE = re.compile(r" (?:and|,) (?=(?:Mr|Ms|Mrs|Miss|Dr|Mme|Mlle)\.? [^\W\d_])")
_ENDS_IN_INITIAL = re.compile(r"(?:^|[\s.])[^\W\d_a-zß-ÿ]$")


def read_as_titled_persons(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with lists of titled people read as people. The tagger lost its way in initials
    it does not know ("Mr İ. Akın and Ms N.Ö. Akın, lawyers" gave "Mr İ", "Akın and Ms N.Ö" as an
    organisation, "Akın" as another; they became "Mr P. Blair Group. Delaney Company"). A span
    with "and Mr" inside is split there, and a span right after one that ends in an initial
    (". ") joins it as one person's name."""
    if text.lower() == text:
        return spans
    split: list[Span] = []
    for s in sorted(spans, key=lambda x: x.start):
        cuts = [m for m in _AND_TITLE.finditer(s.text)] if s.label in _NAME_LABELS else []
        at = s.start
        for m in cuts:
            split.append(replace(s, start=at, end=s.start + m.start(), text=text[at:s.start + m.start()], label="PERSON"))
            at = s.start + m.end()
        split.append(replace(s, start=at, text=text[at:s.end], label="PERSON") if cuts else s)
    out: list[Span] = []
    for s in split:
        prev = out[-1] if out else None
        if (prev is not None and prev.label == "PERSON" and s.label in _NAME_LABELS and text[prev.end:s.start] in (". ", ".")
                and _ENDS_IN_INITIAL.search(prev.text)):
            out[-1] = replace(prev, end=s.end, text=text[prev.start:s.end])
        else:
            out.append(s)
    return out


# The word a body's name ends in: two of them joined by "and" are two bodies ("the Ankara Security
# Directorate and Van State Hospital" had become "the Pudong Hospital"), where "the Foreign and
# Commonwealth Office" and "the Ministry of Justice and Home Affairs" are one
_BODY_ENDS = lexicons.INSTITUTION_KINDS | frozenset("""Directorate Office Ministry Commission Committee Agency
    Department Service Authority Board Prefecture Governorship Administration Inspectorate""".split())


def split_joined_bodies(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` with an organisation read over "X Directorate and Y Hospital" split into its two bodies."""
    out = []
    for s in spans:
        parts = s.text.split(" and ") if s.label in ("ORG", "FAC") else [s.text]
        if len(parts) == 2 and all(p.split() and p.split()[-1] in _BODY_ENDS and p[:1].isupper() for p in parts):
            cut = s.start + len(parts[0])
            out += [replace(s, end=cut, text=parts[0]), replace(s, start=cut + 5, text=parts[1])]
        else:
            out.append(s)
    return out


# "Jehovah’s Witnesses": a possessive and a capitalised noun go on with the name
_POSSESSIVE_NAME = re.compile(r"['’]s(?: [A-Z][\w-]+)+")


def with_possessive_names(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` read right around a possessive. The tagger's "’s" is no part of a name ("Mary’s"
    became "Danny", the possessive lost). A name cut at a possessive is widened over what follows
    as a body's (ORG): "Jehovah" of "Jehovah’s Witnesses" was masked and the Witnesses left, so
    the group was still named. What kind of place follows stays, and is no name of its own: "St
    Mary’s Hospital" (read "Mary’s" and "Hospital", two persons) becomes "St Loyd’s Hospital". A
    cased text only: a transcript's capitals say nothing."""
    if text.lower() == text:
        return spans
    spans = [replace(s, end=s.end - 2, text=s.text[:-2]) if s.label in _NAME_LABELS and len(s.text) > 3
             and s.text[-2:] in ("'s", "’s") else s for s in spans]
    spans = [s for s in spans if not (s.text in lexicons.INSTITUTION_KINDS and text[max(0, s.start - 3):s.start] in ("’s ", "'s "))]
    out = []
    for s in spans:
        m = _POSSESSIVE_NAME.match(text, s.end) if s.label in ("PERSON", "ORG", "NORP") else None
        if m and m.group().split()[-1] not in lexicons.INSTITUTION_KINDS and not any(
                o is not s and o.start < m.end() and s.end < o.end for o in spans):
            s = replace(s, end=m.end(), text=text[s.start:m.end()], label="ORG")
        out.append(s)
    return out


def without_months(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less the PERSON spans that are a month beside a day ("Jan 3rd", "3 May"):
    "Jan Kowalski" or "May said" stay names."""
    return [s for s in spans if not (
        s.label == "PERSON" and _MONTH.fullmatch(s.text)
        and (_DAY_AFTER.match(text, s.end) or _DAY_BEFORE.search(text[max(0, s.start - 10):s.start])))]
