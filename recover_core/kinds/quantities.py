"""Quantities that single a case out: a sum with its currency ("EUR 5,000", "1,000 Turkish liras
(TRL)", "five hundred euros") or a share ("30%"), a duration ("14 years", "three years and nine
months"), a count ("seven other persons", "79 packages").

Each is scaled by one keyed factor per unit and document (``Helpers.quantity_scale``) and
rounded to the original's precision, in its layout or words: one quantity one substitute,
order and proportions kept (a sentence reduced from 14 to 12 years stays a reduction).
"""
from __future__ import annotations

import random
import re

from recover_core.kinds.ages import number_word, word_number
from recover_core.kinds.base import QUASI, Helpers, Recognizer
from recover_core.text.shapes import CURRENCY_CODE, CURRENCY_WORD
from recover_core.text.spoken import in_words


_AMOUNT_NUMBER = r"\d{1,3}(?:[ ,.]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SCALE = r"(?: (?:million|billion|thousand))?"
# Numbers in words: "five hundred euros", "seventy-one hearings", "Twenty three".
_ONES = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_NUMBER_WORD = (rf"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ]{_ONES})?|{_ONES}|ten|"
                r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)")
_WORDS_NUMBER = rf"{_NUMBER_WORD}(?: (?:hundred|thousand)(?: and {_NUMBER_WORD})?)?"
# Words that say a sum is rounded belong to it ("approximately EUR 1,800"; TAB leaves only "about").
ROUGHLY = r"(?:(?:approximately|approx\.|around|about|some|nearly|almost|roughly|over|more than|less than) )?"


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
        rf"(?<![\w.,]){ROUGHLY}(?:{CURRENCY_CODE} ?|[€$£] ?)(?:{_AMOUNT_NUMBER}){_SCALE}(?![\w]|[.,]\d)"
        rf"|(?<![\w.,]){ROUGHLY}(?:{_AMOUNT_NUMBER}|(?i:{_WORDS_NUMBER})){_SCALE} (?:(?:[A-Z][A-Za-z]+|GDR) ){{0,2}}"
        rf"{CURRENCY_WORD}(?!\w)"
        rf"|(?<![\w.,]){ROUGHLY}(?:{_AMOUNT_NUMBER}){_SCALE} ?{CURRENCY_CODE}(?!\w)"
        # a share that singles someone out: "a 30% disability", "15 per cent of the shares"
        rf"|(?<![\w.,])\d{{1,3}}(?:[.,]\d{{1,2}})? ?(?:%|per ?cent\b)")

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        end = m.end()
        if not re.search(r"%|cent$", m.group()):
            close = _bracket_after(m.string, end)
            if re.search(rf"\d|{CURRENCY_CODE}", m.string[end:close]):  # "(TRL)", "(approx. EUR 138)", not "(the fine)"
                end = close
        return m.start(), end


TIME_UNIT = r"(?:years?|months?|weeks?|days?|hours?|minutes?)"
_HOW_MANY = rf"(?:\d{{1,3}}(?:[.,]\d)?|{_WORDS_NUMBER})"
_ONE_DURATION = rf"{_HOW_MANY}(?: and a half)? {TIME_UNIT}"


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
_QUALIFIERS = frozenset("other different more further separate additional new similar".split())
_NOT_COUNTED = frozenset("""eyes ears hands arms legs feet knees shoulders sides parties parents ways times words
    things""".split())


class Count(Recognizer):
    label = "COUNT"
    profile = QUASI
    needs = None
    strength = 1
    # "722 other Dev-Yol defendants", "22,000 tablets": a name that says which may stand before
    # the noun (any lower-case word there too cost TAB's token precision 0.002 for 2 mentions)
    pattern = re.compile(rf"(?<![\w.,§/-])(?:\d{{1,3}}(?:,\d{{3}})+|\d{{1,4}}|(?i:{_WORDS_NUMBER}))"
                         rf"(?: (?:{'|'.join(sorted(_QUALIFIERS))}))?"
                         rf"(?P<name> [A-Z][\w\u2010-]+)? [a-z]{{3,}}s(?![\w-])")

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        # the count ends before the name: "Dev-Yol" is the tagger's to mask, and inside a count
        # (whose substitute changes only the number) it would stay as it is
        return m.start(), m.start("name") if m.group("name") else m.end()

    def validate(self, item: str, text: str, start: int) -> bool:
        head, noun = item.split()[0], item.split()[-1]
        if len(item.split()) == 1 or noun in _QUALIFIERS:
            return not _COUNT_NOT_AFTER.search(text[max(0, start - 14):start]) and head not in ("0", "1")
        if head.lower() == "one" or head in ("0", "1") or re.fullmatch(r"(?:1[6-9]|20)\d\d", head):
            return False  # one thing is no count; "1998 elections" is a year
        if noun.endswith(("ss", "us", "is")) or re.fullmatch(TIME_UNIT, noun):
            return False  # "two years" is a duration's
        if noun.lower() in _NOT_COUNTED:
            return False  # "the two eyes", "both parties": what everyone has two of singles no one out
        return not _COUNT_NOT_AFTER.search(text[max(0, start - 14):start])


# --- quantities that keep their relations -------------------------------------------------
# A sum, a duration or a count is scaled by one keyed factor per unit and document
# (``Helpers.quantity_scale``), then rounded to the original's precision: one quantity has one
# substitute, "reduced from 14 to 12 years" stays a reduction, a prison term stays a prison term
# in size, and sums in one currency keep their proportions. Redrawn digit for digit ("14 years"
# -> "83 years", "12 years" -> "11 years") they kept none of that.
_GROUPED = re.compile(r"(\d{1,3})((?:([ ,.])\d{3})(?:\3\d{3})*)(?:([.,])(\d{1,2}))?$")
_PLAIN = re.compile(r"(\d+)(?:([.,])(\d{1,2}))?$")
_CURRENCY = re.compile(rf"[€$£]|\b{CURRENCY_CODE}\b|\b{CURRENCY_WORD}")
_UNIT_NAME = re.compile(r"(?i)\b(year|month|week|day|hour|minute)s?\b|%|per ?cent")


def quantity_unit(original: str) -> str:
    """What ``original`` counts, so that quantities of one unit share one factor: a currency, a
    time unit, a share, or the noun counted ("packages")."""
    cur = _CURRENCY.search(original)
    if cur and not _UNIT_NAME.search(original):
        return "money:" + cur.group().lower().rstrip("s")
    unit = _UNIT_NAME.search(original)
    if unit:
        return "time:" + (unit.group(1) or "%").lower()
    return "count:" + original.split()[-1].lower().rstrip("s")


def _scaled(value: float, factor: float, decimals: int) -> float:
    """``value`` times ``factor``, rounded to the original's significant figures (5,000 -> 7,000;
    7,630,000 -> 6,100,000; 14 -> 19), never equal to it, never below 1, nor below 2 where it was
    2 or more ("two applications" never becomes "one applications")."""
    low = 2 if value >= 2 else 1
    if decimals:
        new = round(value * factor, decimals)
        return new if new != value else round(value + 10 ** -decimals * (1 if factor > 1 else -1), decimals)
    whole = int(round(value))
    digits = str(whole).rstrip("0") or "0"
    place = 10 ** (len(str(whole)) - len(digits))  # 5,000: 1,000; 14: 1
    new = max(low, int(round(value * factor / place)) * place)
    if new == whole:
        new = max(low, whole + place * (1 if factor > 1 else -1))
    return float(new if new != whole else whole + place)


def _number_scaled(text: str, factor: float) -> str:
    """A number as written ("5,000", "7.630.000", "2.5", "14") scaled, in the same layout."""
    g = _GROUPED.match(text)
    if g and (len(text) > 4 or g.group(3) != "."):
        sep, dec_sep, dec = g.group(3), g.group(4), g.group(5) or ""
        value = float(text.replace(sep, "").replace(dec_sep or "#", "."))
        new = _scaled(value, factor, len(dec))
        whole, _, frac = f"{new:.{len(dec)}f}".partition(".")
        grouped = f"{int(whole):,}".replace(",", sep)
        return grouped + (dec_sep + frac if dec else "")
    p = _PLAIN.match(text)
    if not p:
        raise ValueError("no number")
    dec = p.group(3) or ""
    new = _scaled(float(p.group(1) + ("." + dec if dec else "")), factor, len(dec))
    out = f"{new:.{len(dec)}f}"
    return out.replace(".", p.group(2)) if dec else out


_NUMBER_WORDS = re.compile(r"(?i)\b(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|"
                           r"four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                           r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)\b")


def quantity(original: str, rng: random.Random, helpers: Helpers) -> str:
    """A sum, duration or count scaled by its unit's factor in this document, in its own words:
    figures stay figures in their layout, number words stay words; a share stays under 100%."""
    factor = helpers.quantity_scale(quantity_unit(original))
    small = re.fullmatch(r"(?i)(\d+) (pounds|dollars|euros|quid|bucks) (and )?(\d\d)( (?:pence|p|cents?))?", original)
    if small:  # "9 pounds 90": one sum, its pence scaled with it
        whole, cents = divmod(round(_scaled(int(small[1]) + int(small[4]) / 100, factor, 2) * 100), 100)
        return f"{whole} {small[2]}" + (f" {small[3] or ''}{cents:02d}{small[5] or ''}" if cents else "")
    nums = list(re.finditer(r"\d[\d ,.]*\d|\d", original))
    if not nums:
        def one(m: re.Match[str]) -> str:
            n = word_number(m.group().replace(" ", "-").lower())
            if n is None:
                return m.group()
            new = int(_scaled(float(n), factor, 0))
            word = number_word(new) if new < 100 else str(new)
            return word.capitalize() if m.group()[:1].isupper() else word
        out = _NUMBER_WORDS.sub(one, original)
        if out == original:
            raise ValueError("no number")
        return out
    out, at = [], 0
    share = bool(re.search(r"%|per ?cent", original, re.I))
    for m in nums:
        new = _number_scaled(m.group(), factor)
        if share and float(re.sub(r"[^\d.]", "", new.replace(",", ".")) or 0) >= 100:
            new = _number_scaled(m.group(), 1 / factor) if factor > 1 else new  # a share stays a share
        out += [original[at:m.start()], new]
        at = m.end()
    return "".join(out) + original[at:]


OPERATORS = {"AMOUNT": in_words(quantity), "DURATION": in_words(quantity), "COUNT": in_words(quantity)}
