"""Quasi-identifiers: facts that single a person out in combination (TAB's QUASI, HIPAA Safe
Harbor's dates and ages). They run only under ``protect="quasi"`` (``Recognizer.profile``):

* EVENT_DATE: a date or time of an event in any of the usual written forms ("29 November
  1996", "November 29, 1996", "in March 1989", "between 1982 and 1984", "12/09/2000",
  "the summer of 1995", "last Tuesday", "at 10.30 a.m.");
* AGE: "47-year-old", "aged 47", "at the age of 47";
* CASE_NUMBER: application, case, file and registration numbers ("no. 36110/97");
* AMOUNT: a sum with its currency ("EUR 5,000", "1,000 Turkish liras (TRL)", "five hundred
  euros"), its conversion in brackets with it, or a share ("30%");
* DURATION: how long a sentence or a stay lasted ("14 years", "three years and nine months");
* COUNT: a count of things that singles a case out ("seven other persons", "79 packages");
* occupations and health conditions said of a person: masking/occupations.py;

Nationalities and groups, organisations and places come from entityTagger, whose types
``protect="quasi"`` widens. Each kind is substituted in its own shape (pseudonyms/quasi.py):
dates by one keyed shift per document, ages within their band, numbers digit for digit.
"""
from __future__ import annotations

import re

from recover_core.data import lexicons
from recover_core.data.lexicons import everyday
from recover_core.masking.recognizers import DateOfBirth, Recognizer, _context_re
from recover_core.text.dates import DAY as _DAY, MONTH, YEAR as _YEAR, said_born
from recover_core.text.shapes import CURRENCY_CODE as _CURRENCY_CODE, CURRENCY_WORD as _CURRENCY_WORD

QUASI = "quasi"

_MONTH = MONTH.replace("may|", "may(?!\\w)|")  # the month, never "maybe"
# "1, 2 and 3 March 1999", "29 November 1996", "the 3rd of May 2001", "3 March" (a year later or never)
_DAY_MONTH = rf"(?:the )?{_DAY}(?:(?:, ?| and | or | to |-|–){_DAY})*(?: of)? {_MONTH}"
_MONTH_DAY = rf"{_MONTH} {_DAY}(?:(?:, ?| and |-|–){_DAY})*"
_NUMERIC = r"\d{1,2}[/.]\d{1,2}[/.](?:\d{4}|\d{2})|\d{4}-\d{1,2}-\d{1,2}"
_SEASON = r"(?:(?:early|late|mid|the (?:spring|summer|autumn|fall|winter|end|beginning|middle) of)[- ]|(?:spring|summer|autumn|fall|winter) )"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_TIME = r"\d{1,2}(?:[.:]\d{2})(?: ?[ap]\.?m\.?)?|\d{1,2} ?[ap]\.m\.|\d{1,2} ?o'clock"




# What follows a house number: one to three capitalised words and a word that can only end a
# street's name (not "Court" nor "Place": "In 1996 the Ankara Court" dates an event).
_HOUSE_NUMBER = re.compile(r" (?:[A-Z][\w'’-]* ){1,3}(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Boulevard|Blvd|"
                           r"Terrace|Crescent|Parkway|Pkwy|Highway|Hwy)\b")


class EventDate(Recognizer):
    """A date or time of an event. A bare year counts (ECHR judgments and clinical notes date
    events by it); a year inside a number ("36110/97", "1996-123") does not."""

    label = "EVENT_DATE"
    profile = QUASI
    needs = None  # "last Tuesday", "in March" hold no digit
    strength = 3  # wins over a guess of another kind on the same digits ("1996 the X Court" as an address)
    pattern = re.compile(
        rf"(?<![\w/.-])(?:{_SEASON})?(?:"
        rf"{_DAY_MONTH}(?:,? {_YEAR})?"
        rf"|{_MONTH_DAY},? {_YEAR}"
        rf"|{_MONTH_DAY}(?=[\s,.;:)])"
        rf"|{_MONTH},? {_YEAR}"
        rf"|{_NUMERIC}"
        rf"|{_YEAR}s?(?:(?: ?[-–/] ?| and | to )(?:{_YEAR}|\d\d)(?!\d))?"
        rf"|(?:last|next|this|on|that|every) {_WEEKDAY}|{_WEEKDAY},? (?={_DAY} )"
        rf"|(?:in|since|until|till|by|from|of|during|before|after|early|late|mid-?) {_MONTH}(?!,? ?\d)(?=[\s,.;:)]|$)"
        rf"|(?:at|around|about|from|until|till|by|before|after) (?:{_TIME})"
        rf")(?![\w/]|[.-]\d|:[0-9a-f])", re.I)  # not the first group of an IPv6 address ("2001:db8::")

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # The preposition of "in March" or "at 10.30" tells a month or a time from a word or a
        # number, and stays: TAB and a reader leave "in" and "at" as they are.
        a, b = m.start(), m.end()
        head = re.match(r"(?i)(?:in|since|until|till|by|from|of|during|before|after|at|around|about|on|that) ", m.group())
        if head:
            a += len(head.group())
        return a, b

    def validate(self, item: str, text: str, start: int) -> bool:
        if said_born(text, start) and DateOfBirth.pattern.fullmatch(item):
            return False  # a whole birth date: DATE_OF_BIRTH's, moved with the document's ages
        if re.match(_YEAR, item) and re.search(r"(?i)\bborn in $", text[max(0, start - 8):start]):
            return False  # a birth year: BirthYear's
        low = item.lower()
        if re.fullmatch(rf"{_YEAR}", item) and re.match(r"\s*(?:%|per|percent|euros?|dollars?|pounds?|km|kg|people|persons|cases)\b", text[start + len(item):start + len(item) + 12], re.I):
            return False  # "2000 euros", "1800 km": an amount or a count, not a year
        if re.fullmatch(_YEAR, item) and _HOUSE_NUMBER.match(text, start + len(item)):
            return False  # "1600 Pennsylvania Avenue": a house number, the address's
        if low.startswith("may ") and not re.search(r"\d", item):
            return False  # "may ..." without a day or year is the verb
        # A month name on its own must be capitalised in cased text ("March" the month, "march" the verb)
        bare_month = re.fullmatch(_MONTH, item, re.I)
        return not bare_month or item[:1].isupper()


class Age(Recognizer):
    label = "AGE"
    profile = QUASI
    strength = 2
    pattern = re.compile(
        r"(?<![\w-])(?:\d{1,3}|[a-z]+(?:-[a-z]+)?)[- ]years?[- ]old(?![\w-])"
        r"|(?<!\w)(?:aged|age|at the age of|age of)(?: about)? \d{1,3}(?!\d)"
        # "Grace Okafor, 47, flew": a number set off by commas right after a capitalised name
        r"|(?<=[a-z], )\d{1,2}(?=,)"
        # "49 years of age", "His age is 49", "He was 17 at the time"
        r"|(?<![\w-])\d{1,3}(?= years? of age\b)|(?:(?<=\bage is )|(?<=\bage was ))\d{1,3}(?!\d)"
        r"|(?:(?<=\bwas )|(?<=\bis )|(?<=\bwere ))\d{1,2}(?= (?:at the time|when)\b)", re.I)
    _NUMBER_WORD = re.compile(r"(?i)(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                              r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
                              r"sixty|seventy|eighty|ninety)(?:-(?:one|two|three|four|five|six|seven|eight|nine))?")

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # "aged 47": the age only; "the age of" stays, as TAB's experts leave it.
        g = m.group()
        digits = re.search(r"\d{1,3}", g)
        if not g[:1].isdigit() and digits and not re.search(r"years?[- ]old", g, re.I):
            return m.start() + digits.start(), m.start() + digits.end()
        return m.start(), m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        head = re.split(r"[- ]", item)[0]
        return head.isdigit() or bool(self._NUMBER_WORD.fullmatch(item.rsplit("-year", 1)[0].rsplit(" year", 1)[0]))


class BirthYear(Recognizer):
    """A birth year said alone ("born in 1951"): it moves with the document's birth dates and
    ages (pseudonyms/identifiers.date_of_birth), not with its events, or event year minus birth
    year would give the true age."""

    label = "DATE_OF_BIRTH"
    profile = QUASI
    strength = 4  # over EVENT_DATE on the same year
    # "born in 1932 and 1934": each year a birth year
    pattern = re.compile(rf"(?:(?<=\bborn in )|(?<=\bborn in \d{{4}} and )|(?<=\bborn in \d{{4}}, )){_YEAR}(?![\d/-])",
                         re.I)


class CaseNumber(Recognizer):
    """An application, case, file or registration number: digits with a slash ("36110/97"),
    or any digit-bearing code right after "no.", "file", "case", "reference" ..."""

    label = "CASE_NUMBER"
    profile = QUASI
    # Found by context, as an ID number is: of the two on the same digits the longer wins
    # ("phone number is 001-793-466-0772x603" is no case number "001-793-466"); on the same
    # extent the registry's order names it a case number.
    strength = 1
    pattern = re.compile(r"(?<![\w/.-])(?:[A-Z]{1,4}[ .-]?)?\d{1,7}/\d{1,4}(?:[-/]\d{1,4})?(?![\w/]|[.-]\d)"
                         # not one group of a spaced number ("NI number ZZ 62 02 78 T"): ID_NUMBER's whole
                         r"|(?<![\w/.-])(?<![A-Z] )[A-Z0-9][A-Z0-9./-]{0,20}\d[A-Z0-9./-]{0,20}(?<![.-])(?![\w/]| \d)")
    context = _context_re(r"no\.|nos\.|nr\.|number|numbers|file|case|cases|reference|ref\.|registration|"
                          r"register|application|applications|docket|complaint|decision|judgment")

    def validate(self, item: str, text: str, start: int) -> bool:
        if re.search(r"(?<!\d)\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})$", item):
            return False  # "DOB 02/11/1961": a date, for the date recognizers
        if "/" in item and re.fullmatch(r"(?:[A-Z]{1,4}[ .-]?)?\d{1,7}/\d{1,4}(?:[-/]\d{1,4})?", item):
            return not re.fullmatch(r"\d{1,2}/\d{1,2}", item)  # "3/4": a fraction, not a file
        # Otherwise only right after a word that names a number ("no. 2003-12", "file K-12")
        return self.in_context(text, start, window=16) and sum(c.isdigit() for c in item) >= 2


class ApplicationNumber(CaseNumber):
    """A case or application number named as one ("application no. 29537/95", "(no. 36110/97)",
    "case no. K-12/98"): it points to one case, and so to its parties, on its own (TAB marks it
    a direct identifier), so every profile masks it."""

    profile = "direct"

    def validate(self, item: str, text: str, start: int) -> bool:
        return self.in_context(text, start, window=24) and super().validate(item, text, start)


_AMOUNT_NUMBER = r"\d{1,3}(?:[ ,.]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SCALE = r"(?: (?:million|billion|thousand))?"
# Numbers in words: "five hundred euros", "seventy-one hearings", "Twenty three".
_UNIT_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_NUMBER_WORD = (rf"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ]{_UNIT_WORD})?|{_UNIT_WORD}|ten|"
                r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)")
_WORDS_NUMBER = rf"{_NUMBER_WORD}(?: (?:hundred|thousand)(?: and {_NUMBER_WORD})?)?"
# Words that say a sum is rounded belong to it ("approximately EUR 1,800"; TAB leaves only "about").
_ROUGHLY = r"(?:(?:approximately|approx\.|around|about|some|nearly|almost|roughly|over|more than|less than) )?"


def _bracket_after(text: str, end: int, limit: int = 90) -> int:
    """Where a round bracket right after ``end`` closes, nested ones included ("(SEK;
    approximately 27,000 euros (EUR))"), or ``end`` when none opens there or it does not close
    soon. Square brackets are not taken: a conversion in them ("[approx. EUR 138]") is found as a
    sum of its own, and a span reaching into a tag ("[AEDT]", spans.TAG_RE) would be dropped whole."""
    at = end + (text[end:end + 1] == " ")
    if at >= len(text) or text[at] != "(":
        return end
    depth = 0
    for i in range(at, min(len(text), at + limit)):
        depth += text[i] == "("
        depth -= text[i] == ")"
        if "[" in text[i] or "]" in text[i]:
            return end
        if depth == 0:
            return i + 1
    return end


class Amount(Recognizer):
    """A sum with its currency, in figures or words ("1,500 Austrian schillings", "ATS 10,000",
    "five hundred euros"), with the words that round it and the conversion or code in brackets
    right after it ("7,630,000 Turkish Liras (TRL)", "TRY 2,384 (approximately EUR 1,300)"): one sum."""

    label = "AMOUNT"
    profile = QUASI
    needs = None  # "five hundred euros" holds no digit
    strength = 2
    pattern = re.compile(
        rf"(?<![\w.,]){_ROUGHLY}(?:{_CURRENCY_CODE} ?|[€$£] ?)(?:{_AMOUNT_NUMBER}){_SCALE}(?![\w]|[.,]\d)"
        rf"|(?<![\w.,]){_ROUGHLY}(?:{_AMOUNT_NUMBER}|(?i:{_WORDS_NUMBER})){_SCALE} (?:(?:[A-Z][A-Za-z]+|GDR) ){{0,2}}"
        rf"{_CURRENCY_WORD}(?!\w)"
        rf"|(?<![\w.,]){_ROUGHLY}(?:{_AMOUNT_NUMBER}){_SCALE} ?{_CURRENCY_CODE}(?!\w)"
        # a share that singles someone out: "a 30% disability", "15 per cent of the shares"
        rf"|(?<![\w.,])\d{{1,3}}(?:[.,]\d{{1,2}})? ?(?:%|per ?cent\b)")

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        end = m.end()
        if not re.search(r"%|cent$", m.group()):
            close = _bracket_after(m.string, end)
            if re.search(rf"\d|{_CURRENCY_CODE}", m.string[end:close]):  # "(TRL)", "(approx. EUR 138)", not "(the fine)"
                end = close
        return m.start(), end


_TIME_UNIT = r"(?:years?|months?|weeks?|days?|hours?|minutes?)"
_HOW_MANY = rf"(?:\d{{1,3}}(?:[.,]\d)?|{_WORDS_NUMBER})"
_ONE_DURATION = rf"{_HOW_MANY}(?: and a half)? {_TIME_UNIT}"


class Duration(Recognizer):
    """How long something lasted or was imposed: "sentenced to 14 years", "for 18 months",
    "three years and nine months", "two and a half years", "a two-year contract"."""

    label = "DURATION"
    profile = QUASI
    needs = None  # "three years" holds no digit
    strength = 2
    pattern = re.compile(rf"(?<![\w.,-])(?:{_ONE_DURATION}(?:(?:,| and) {_ONE_DURATION}){{0,2}}(?:['’](?!\w))?"
                         rf"|{_HOW_MANY}-(?:year|month|week|day|hour)(?!-old))(?![\w-])", re.I)

    def validate(self, item: str, text: str, start: int) -> bool:
        # "14 years" of a sentence or a stay; not "18 years old" (an age) nor "years of age"
        return not re.match(r"[- ](?:old|of age)\b", text[start + len(item):start + len(item) + 8], re.I)


# A count of things that singles a case out: "seven other persons", "79 packages", "fifty-five
# hearings". Not the law's numbers ("Article 6", "§ 3"), nor a year before a noun.
_COUNT_NOT_AFTER = re.compile(r"(?i)(?:article|articles|§|§§|paragraph|paragraphs|section|sections|rule|rules|"
                              r"protocol|no\.|nos\.|no|number|chapter|part|point|item|law|act|decree|page|pages|p\.|pp\.)\s*$")


_NOT_COUNTED = frozenset("""eyes ears hands arms legs feet knees shoulders sides parties parents ways times words
    things""".split())


class Count(Recognizer):
    label = "COUNT"
    profile = QUASI
    needs = None
    strength = 1
    pattern = re.compile(rf"(?<![\w.,§/-])(?:\d{{1,4}}|(?i:{_WORDS_NUMBER}))"
                         rf"(?: (?:other|different|more|further|separate|additional|new|similar))? [a-z]{{3,}}s(?![\w-])")

    def validate(self, item: str, text: str, start: int) -> bool:
        head, noun = item.split()[0], item.split()[-1]
        if head.lower() == "one" or head in ("0", "1") or re.fullmatch(r"(?:1[6-9]|20)\d\d", head):
            return False  # one thing is no count; "1998 elections" is a year
        if noun.endswith(("ss", "us", "is")) or re.fullmatch(_TIME_UNIT, noun):
            return False  # "two years" is a duration's
        if noun.lower() in _NOT_COUNTED:
            return False  # "the two eyes", "both parties": what everyone has two of singles no one out
        return not _COUNT_NOT_AFTER.search(text[max(0, start - 14):start])


# Words that tie a nationality or group to a person: "a Nigerian woman", "of Kurdish origin",
# "a Turkish national". A group word alone ("Turkish law", "the Russian Government") is left
# to entityTagger, which reads its context.
_PERSON_AFTER = (r"(?:national|nationals|citizen|citizens|woman|women|man|men|girl|boy|person|people|origin|"
                 r"descent|ethnicity|background|family|families|community|applicant|applicants|mother|father|"
                 r"wife|husband|son|daughter|nurse|doctor|student|worker|workers|refugee|refugees|minority|"
                 r"nationality|passport|extraction)")


class Nationality(Recognizer):
    label = "NATIONALITY"
    profile = QUASI
    needs = None
    strength = 1
    # "a Turkish national": the word after it is part of the mention (it says what the group word is)
    pattern = re.compile(rf"(?<![\w-])(?:[A-Z][a-z]+(?:-[A-Z][a-z]+)?)(?= (?:{_PERSON_AFTER})\b)(?: (?:nationals?|citizens?)\b)?"
                         rf"|(?<=\bof )[A-Z][a-z]+(?= (?:origin|descent|nationality|extraction)\b)"
                         rf"|(?:(?<=\bis )|(?<=\bwas )|(?<=\bare )|(?<=\bwere ))[A-Z][a-z]+(?=[.,;])")

    def validate(self, item: str, text: str, start: int) -> bool:
        return is_group_word(item.split()[0])


def is_group_word(word: str) -> bool:
    """A demonym or group adjective: on the group list, or shaped like one ("Moldovan",
    "Azerbaijani", "Kurdish"): a capitalised word ending as demonyms do, that is no everyday word."""
    low = word.lower()
    if low in _group_words():
        return True
    return bool(re.fullmatch(r"[a-z]{3,}(?:an|ian|ean|ese|ish|i|ic|ch)", low)) and not _is_everyday(low)


def _group_words() -> frozenset[str]:
    return lexicons.nationalities()


def _is_everyday(low: str) -> bool:
    return everyday(low)


RECOGNIZERS: tuple[Recognizer, ...] = (BirthYear(), EventDate(), Age(), ApplicationNumber(), CaseNumber(), Amount(), Duration(),
                                       Count(), Nationality())
