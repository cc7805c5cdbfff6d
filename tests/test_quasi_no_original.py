"""No substitute of a quasi-identifier says an original value of its kind in the same text or
recording (pseudonyms/held.py): one keyed offset, shift or factor per document had carried one
value onto another ("a four year old and a seven year old" -> "seven ... ten"; "38, 39 maybe" ->
"37, 38"; "November 2nd ... the 9th" -> "December the ninth ... the fifteenth"). Through the
engine, for text and for speech's transcript, under 20 keys: it must hold for any key."""
from __future__ import annotations

import dataclasses
import hashlib

import pytest

from recover_core import Obfuscator
from recover_core.pseudonyms import Pseudonyms
from recover_core.speech.plan import SPEECH_ENGINE
from recover_core.text.spoken import values

KEYS = [bytes([k + 1]) * 32 for k in range(20)]


def _said(engine_settings, text: str, labels: tuple[str, ...], years: bool = False) -> list[tuple[list[int], list[int]]]:
    """(original values, substitute values) of each replacement of ``labels``, one list per key."""
    out = []
    for key in KEYS:
        r = Obfuscator(engine_settings, key=key).obfuscate(text)
        got = [x for x in r.replacements if x.label in labels]
        assert got, (text, [x.label for x in r.replacements])
        originals = {v for x in got for v in values(x.original, years=years)}
        subs = {v for x in got for v in values(x.substitute, years=years)}
        out.append((originals, subs))
    return out


SPEECH = dataclasses.replace(SPEECH_ENGINE, protect="quasi")


@pytest.fixture(scope="module")
def text_settings():
    return Obfuscator(protect="quasi", key=KEYS[0]).settings


@pytest.mark.parametrize("said, labels, years, originals", [
    ("i've got a four year old and a seven year old", ("AGE",), False, {4, 7}),
    ("i was thirty eight, thirty nine maybe, when she left", ("AGE",), False, {38, 39}),
    ("i was admitted on november the second and discharged on the ninth", ("EVENT_DATE",), True, {2, 9}),
    ("i finished school in ninety eight and college in ninety nine", ("EVENT_DATE",), True, {98, 99}),
    ("the sentence went down from fourteen years to twelve years", ("DURATION",), False, {14, 12}),
])
def test_no_substitute_said_is_an_original_of_the_recording(said, labels, years, originals):
    for got, subs in _said(SPEECH, said, labels, years):
        assert got == originals  # both found, each read
        assert not subs & originals, sorted(subs)  # never a value the recording held


@pytest.mark.parametrize("text, labels, originals", [
    ("Her sons, a 4-year-old and a 7-year-old, were at home.", ("AGE",), {4, 7}),
    ("He was 38 years old and his brother was 39 years old.", ("AGE",), {38, 39}),
    ("The sentence was reduced from 14 years to 12 years on appeal.", ("DURATION",), {14, 12}),
    ("He paid EUR 5,000 in March and EUR 7,000 in May.", ("AMOUNT",), {5000, 7000}),
])
def test_no_substitute_written_is_an_original_of_the_text(text_settings, text, labels, originals):
    for got, subs in _said(text_settings, text, labels):
        assert got == originals
        assert not subs & originals, sorted(subs)


def test_a_shifted_day_of_the_month_lands_on_no_other_original_day(text_settings):
    text = "He was admitted on 2 November 2001 and discharged on 9 November 2001."
    for key in KEYS:
        r = Obfuscator(text_settings, key=key).obfuscate(text)
        days = [values(x.substitute, years=True)[0] for x in r.replacements if x.label == "EVENT_DATE"]
        assert len(days) == 2 and not set(days) & {2, 9}, days


def test_an_age_range_moves_by_more_than_its_width():
    """The offset is one per scope (birth dates move with it); held ages rule out the keyed
    offsets that land one on another, and no original enters the mapping's repr."""
    for key in KEYS:
        p = Pseudonyms(key=key)
        p.hold([("AGE", "30"), ("AGE", "31, 32 maybe"), ("AGE", "33 years old")], "doc")
        p.scope = "doc"
        k = p.age_offset
        assert abs(k) >= 4 and k == p.age_offset  # 30-33: no offset of 1-3 is free; chosen once
        assert "31" not in repr(p)


def test_a_documents_values_are_held_across_its_paragraphs(text_settings):
    """A document's pieces draw in turn under one mapping: a later paragraph's ages are held
    before the first one draws."""
    doc = ("1. The applicant's elder son, a 4-year-old boy, was placed in care on 3 May 2001.\n\n"
           "2. Her younger son, a 7-year-old boy, stayed with his father.")
    for key in KEYS[:8]:
        r = Obfuscator(text_settings, key=key).obfuscate(doc)
        subs = {v for x in r.replacements if x.label == "AGE" for v in values(x.substitute)}
        assert len([x for x in r.replacements if x.label == "AGE"]) == 2 and not subs & {4, 7}, sorted(subs)


def test_a_subjects_ages_move_alike_in_every_release():
    """A subject's texts come in calls over time (and runs resumed from a mapping): every release
    must move its ages by the same offset, a function of the key and the subject alone. Held per
    call, a release with "4 and 7" took another offset than one without them."""
    for i in range(24):  # fixed keys: some draw an offset of 3 first, which says "7" for the 4
        key = hashlib.sha256(f"subject {i}".encode()).digest()  # one key, two runs (two engines)
        first = Obfuscator(protect="quasi", key=key).obfuscate_many(
            ["Her sons are 4 and 7 years old.", "She was 40 years old then."],
            consistent=True, subject="patient 17")[1].text
        later = Obfuscator(protect="quasi", key=key).obfuscate_many(
            ["She was 40 years old then."], consistent=True, subject="patient 17")[0].text
        assert first == later, (first, later)
