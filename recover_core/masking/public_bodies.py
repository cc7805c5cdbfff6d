"""What identifies no one stays: a state as a party, a court, a ministry, the Government.

TAB's legal experts leave "the Government", "the Court of Cassation", "the Republic of
Turkey" unmasked (NO_MASK): they name public bodies, not the person, and masking them costs
a reader the document's sense ("lodged with the Congress") for no privacy. A tagged
organisation or place is such a body when every word of it is an institution word, a
function word or a country's name; one word of anything else ("Uppsala District Court",
"Istanbul State Security Court") ties it to a place, and it is masked.
"""
from __future__ import annotations

import functools
import re
from difflib import SequenceMatcher

from recover_core.data import countries, lexicons
from recover_core.data.lexicons import BODY_KIND_WORDS, INSTITUTION_WORDS
from dataclasses import replace

from recover_core.text.spans import Span, merge

FUNCTION_WORDS = frozenset("the of for and on in de".split())
# Only these labels name bodies; a person is never one.
LABELS = frozenset({"ORG", "GPE", "NORP", "LOC", "FAC"})


@functools.lru_cache(maxsize=1)
def _country_words() -> frozenset[str]:
    return frozenset(w.lower() for c in lexicons.geonames().countries for w in re.findall(r"[\w’'-]+", c))


def _is_country(text: str) -> bool:
    # A state by its formal name ("the Republic of Turkey") is the State as a public body; its plain
    # name ("Turkey", "the United States") is a place.
    return countries.country_name(text, formal=False) is not None


# The respondent State of a judgment, named as the party an application is against ("The case
# originated in an application (no. 58453/00) against the Federal Republic of Germany", "CASE OF
# X v. GERMANY"): public, so every mention of it in the document stays ("1. The applicant's
# situation in Germany"), as TAB's experts leave every one. Only these party phrases name it: a
# protest "against Iran" in an ordinary text keeps nothing.
_RUN = r"[A-Z][\w’'-]*(?: (?:of|and|the|[A-Z][\w’'-]*))*"
_RESPONDENT = re.compile(rf"\bapplications?\b[^\n]{{0,80}}?\bagainst (?:the )?({_RUN})|\bv\. (?:the )?({_RUN})")


def respondent_states(texts: list[str]) -> set[str]:
    """The countries (``countries.country_name``, lower case) that ``texts`` name as the party
    an application is against."""
    out = set()
    for text in texts:
        for m in _RESPONDENT.finditer(text):
            words = (m.group(1) or m.group(2)).split()
            for n in range(len(words), 0, -1):  # "the Federal Republic of Germany lodged" -> its longest country
                name = countries.country_name(" ".join(words[:n]).title() if words[0].isupper() else " ".join(words[:n]))
                if name:
                    out.add(name)
                    break
    return out


def without_states(spans: list[Span], states: set[str], text: str) -> list[Span]:
    """The spans (sorted) less every mention of one of ``states`` (``respondent_states``), but for
    one that ends a masked place's address ("Großbottwar, Germany": the experts mask it whole)."""
    if not states:
        return spans
    out: list[Span] = []
    for s in spans:
        if s.label in LABELS and countries.country_name(re.sub(r"['’]s?$", "", s.text)) in states and not (
                out and out[-1].label in LABELS and text[out[-1].end:s.start] == ", "):
            continue
        if s.label in LABELS | {"PERSON"} and _misspelt_state(s.text, states):
            continue  # "the judge elected in respect of Tukey": the State, misspelt (the tagger read a person)
        out.append(s)
    return out


def _misspelt_state(word: str, states: set[str]) -> bool:
    """One word a letter away from a respondent State's name ("Tukey" for Turkey)."""
    low = word.lower()
    if countries.country_name(word) or low in lexicons.nationalities():
        return False  # a country or a people of its own ("Poland", "German"), not a slip
    return len(low) >= 5 and word[:1].isupper() and " " not in low and any(
        st[:1] == low[:1] and abs(len(st) - len(low)) <= 1 and SequenceMatcher(None, low, st).ratio() >= 0.85
        for st in states)


# The State as the author of its law: "under United Kingdom law", "the Turkey authorities".
_STATE_AFTER = re.compile(r"['’]?s?[’']? (?:law|laws|legislation|authorities|government|ministers?|parliament)\b")


def as_places(spans: list[Span], text: str) -> list[Span]:
    """Each country a tagger read as an organisation ("the United Kingdom" as ORG) a place, so it
    is replaced by a country; the respondent State (``respondent_states``) and the State as the
    author of its law dropped (they stay)."""
    out, states = [], None
    for s in spans:
        if s.label == "PERSON" and countries.is_country_not_a_name(s.text):
            s = replace(s, label="GPE")  # "deported to Sierra Leone" read as a person became "deported to Maureen Lutz"
        if s.label in LABELS and s.label != "NORP":
            a, b = _whole_bounds(text, s)  # "Northern Ireland" of "the United Kingdom of Great Britain and Northern Ireland"
            if countries.is_country(text[a:b]):
                states = respondent_states([text]) if states is None else states
                if _STATE_AFTER.match(text, b) or countries.country_name(text[a:b]) in states:
                    continue
            if countries.is_country(s.text) and s.label != "GPE":
                s = replace(s, label="GPE")
        out.append(s)
    return out


# A national body named by what it does ("the General Directorate of National Roads and Highways",
# "the Department of Lands and Surveys"): its head word, then "of", and no place in its name.
_NATIONAL_HEADS = frozenset("""office department directorate general ministry agency board authority commission
    inspectorate institute bureau division service administration""".split())


def _national_body(words: list[str]) -> bool:
    words = [w for w in words if w != "the"]
    if len(words) < 3 or words[0] not in _NATIONAL_HEADS or "of" not in words[:3]:
        return False
    return not any(w in lexicons.place_names() for w in words)


def is_public_body(text: str) -> bool:
    """Whether ``text`` names a public body or a state as a whole: at least one institution
    word, and nothing but institution words, function words and country names; or a national
    body named by what it does, with no place in its name."""
    words = [w.lower().rstrip("’'s") if w.lower().endswith(("’s", "'s")) else w.lower()
             for w in re.findall(r"[\w’'-]+", text)]
    if _national_body(words):
        return True
    if re.search(r"\bmartial law courts?\b", " ".join(words)):
        return True  # a military court for a whole martial-law region ("the Ankara Martial Law Court"): TAB's experts leave all 8
    if not any(w in INSTITUTION_WORDS for w in words) or _is_country(text):
        return False  # "United States" is a country, not a body: masked as a place
    countries = _country_words()
    # "the Turkish Government": a state's own adjective names the state, as its name does
    return all(w in INSTITUTION_WORDS or w in BODY_KIND_WORDS or w in FUNCTION_WORDS or w in countries
               or w in lexicons.nationalities() for w in words)


def without_public_bodies(spans: list[Span], text: str) -> list[Span]:
    """The spans less the public bodies, judged on the whole name the span belongs to: the
    tagger may give "Court of Cassation" as one span or as "Court" and "Cassation"."""
    out = []
    for s in spans:
        if s.label in LABELS and is_public_body(_whole_name(text, s)):
            continue
        if s.label in LABELS | {"PERSON"} and _gloss_of_public_body(text, s):
            continue
        out.append(s)
    return out


_GLOSS_OPEN = re.compile(r"((?:[A-Z][\w’'-]* (?:of (?:the )?)?)*[A-Z][\w’'-]*) \([^()]{0,40}$")


def _gloss_of_public_body(text: str, s: Span) -> bool:
    """A public body's name in its own language, in brackets right after it: "the Supreme Court
    (Högsta domstolen)", "the Court of Appeal (Svea hovrätt)"."""
    m = _GLOSS_OPEN.search(text, max(0, s.start - 120), s.start)
    return bool(m) and text.find(")", s.end, s.end + 40) >= 0 and is_public_body(m.group(1))


_TOKEN = re.compile(r"[\w’'/-]+|[^\w\s]")
_CONNECTIVES = frozenset({"of", "for", "de", "du", "la", "and"})  # inside a name: "Court of Appeal"
_EDGE_WORDS = frozenset({"the", "a", "an", "The", "A", "An"})
# A name's own-language form right after it: "Warsaw District Court (Sąd Rejonowy)".
_GLOSS = re.compile(r" \((?:[^\W\d_][\w’'-]*)(?: [\w’'-]+){0,4}\)")


# What a name of the form "X of Y" starts with: "Court of Appeal", "Ministry of the Interior", "University of Oxford".
_BODY_HEADS = INSTITUTION_WORDS | BODY_KIND_WORDS | frozenset(w.lower() for w in lexicons.INSTITUTION_KINDS)


def _name_word(tok: str) -> bool:
    return tok[:1].isupper() and tok[:1].isalpha()


def _whole_bounds(text: str, span: Span) -> tuple[int, int]:
    """Where the run of capitalised words (with "of", "for", "of the" inside it) that holds the
    span starts and ends: "the İzmir Public Prosecutor" -> "İzmir Public Prosecutor". "and"
    joins two names only where both sides go on capitalised ("Ministry of Labour and Social
    Policy"), never "the Prosecutor and the Court"."""
    lo, hi = max(0, span.start - 120), min(len(text), span.end + 120)
    toks = [(m.start() + lo, m.end() + lo, m.group()) for m in _TOKEN.finditer(text[lo:hi])]
    inside = [i for i, (a, b, _) in enumerate(toks) if a < span.end and span.start < b]
    if not inside:
        return span.start, span.end

    def joins(i: int, j: int) -> bool:  # tokens i and j (= i + 1) are one space apart, j part of a name
        if text[toks[i][1]:toks[j][0]] != " ":
            return False
        word = toks[j][2]
        if _name_word(word):
            return True
        if word == "the":  # "Court of the First Instance"
            return toks[i][2] == "of" if j > i else j + 1 < len(toks) and toks[j - 1][2] == "of"
        return word in _CONNECTIVES

    first, last = inside[0], inside[-1]
    while first > 0 and joins(first - 1, first) and (_name_word(toks[first - 1][2]) or toks[first - 1][2] in _CONNECTIVES
                                                   or toks[first - 1][2] == "the"):
        if toks[first - 1][2] == "of" and first > 1 and toks[first - 2][2].lower() not in _BODY_HEADS:
            break  # "Mr C. Whomersley of the Foreign ... Office": a person's name is no body's head
        first -= 1
    while last + 1 < len(toks) and joins(last, last + 1):
        last += 1
    # Trim what cannot end a name: connectives, "the", and a sentence's capitalised "The".
    while first < last and (not _name_word(toks[first][2]) or toks[first][2] in _EDGE_WORDS):
        first += 1
    while last > first and not _name_word(toks[last][2]):
        last -= 1
    return min(toks[first][0], span.start), max(toks[last][1], span.end)


def _whole_name(text: str, span: Span) -> str:
    a, b = _whole_bounds(text, span)
    return text[a:b]


def whole_bodies(spans: list[Span], text: str) -> list[Span]:
    """Each organisation or facility widened to its whole name ("İzmir Public Prosecutor",
    "Warsaw District Court (Sąd Rejonowy)"), where the tagger masked a word of it: a court or
    an office tied to a place points to the person as a whole, and a name half masked
    ("[ORG] Public Prosecutor") still reads. Public bodies are gone before this."""
    out = []
    for s in spans:
        if s.label in ("ORG", "FAC"):
            a, b = _whole_bounds(text, s)
            gloss = _GLOSS.match(text, b)
            b = gloss.end() if gloss else b
            if len(text[a:b].split()) <= 10 and (a, b) != (s.start, s.end):
                s = replace(s, start=a, end=b, text=text[a:b])
        elif s.label in ("GPE", "LOC"):
            s = _placed_body(text, s)
        out.append(s)
    return merge(out)


# What a body is, written after a place's name, even in lower case ("the Beyoğlu court", "the
# Edirne F-type prison"): the place ties the body, and the body the place, to the person.
_BODY_NOUNS = INSTITUTION_WORDS | frozenset("""prison prisons centre center hospital clinic school university
    police prosecutor prosecutors court office municipality governorship governor mayor cemetery staff station
    detention remand commission labour""".split())
_LOWER_NOUNS = r"(?:court|prosecutor|prison|police|hospital|cemetery|municipality|council|office|station|centre|center)s?"
_LOWER_BODY = re.compile(rf"(?: (?:[a-z]+[- ])?(?:F-type |municipal |district |public |remand |detention |police )?"
                         rf"{_LOWER_NOUNS})(?![\w-])")


def _placed_body(text: str, s: Span) -> Span:
    """A place span that starts the name of a body ("Dornbirn District Administrative Authority",
    "Tekirdağ F-Type Prison", "the Beyoğlu court") widened to that whole name, as an ORG."""
    a, b = _whole_bounds(text, s)
    if a < s.start:
        return s  # the place is not where the name starts ("the Court of Appeal in Ankara" stays a place)
    words = [w.lower() for w in re.findall(r"[\w’'-]+", text[s.end:b])]
    if not any(w in _BODY_NOUNS for w in words):
        b = s.end
        low = _LOWER_BODY.match(text, b)
        if low is None or not re.search(rf"{_LOWER_NOUNS}$", low.group()):
            return s
        b = low.end()
    if b <= s.end or len(text[a:b].split()) > 10:
        return s
    return replace(s, start=a, end=b, text=text[a:b], label="ORG")
