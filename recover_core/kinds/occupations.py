"""Occupations and health conditions said of a person: quasi-identifiers (TAB's DEM).

"The applicant, who is a university professor", "worked as a ballet dancer", "diagnosed with
paranoid schizophrenia": with a town and a year of birth, a profession or an illness narrows a
person down to a few. They are found by the words that say them of someone (a copula or "as"
right before, "diagnosed with"), never from a list of the phrases themselves: what follows
the cue is taken up to the first function word or punctuation, and an occupation must end in
a noun that names a person's work (Faker's job titles' head nouns, or a word shaped like one:
"-er", "-ist", "-ian", "-man").
"""
from __future__ import annotations

import functools
import random
import re

from typing import Iterator

from recover_core.data import lexicons
from recover_core.kinds.base import QUASI, SOURCE, Helpers, Recognizer
from recover_core.text.spans import Span

# Words that end the phrase after a cue: it is the occupation, not where or for whom.
_STOP = frozenset("""a an the of at in on for with and or but who which that whose by from to as since until
    when where while he she they his her their its it was is were be been had has have did does not also
    then there this these those later previously formerly currently under over after before other rather
    whether either neither together ever never""".split())
# Heads that follow the cues but name no work ("was a member of", "was a minor").
_NOT_WORK = frozenset("""member minor party holder resident citizen national victim person man woman child
    number subject result matter order letter paper chapter corner border cover power water center centre
    user reader viewer owner-occupier customer consumer other another user""".split())
# Person nouns that no suffix rule reads as one, and that Faker's list lacks.
_WORK_WORDS = frozenset("""student conscript soldier judge pensioner farmer shepherd driver electrician mechanic
    labourer laborer servant guard watchman imam priest nurse doctor policeman journalist businessman
    shopkeeper tradesman advocate principal captain sergeant corporal lieutenant colonel major general
    officer clerk cook chef baker butcher tailor miner builder plumber carpenter painter dancer singer
    actor musician athlete footballer cleaner caretaker janitor porter waiter waitress housewife mayor
    headman muhtar notary bailiff prosecutor lawyer solicitor barrister pharmacist dentist surgeon
    midwife veterinarian vet trainee apprentice intern volunteer executive manager director president
    chairman editor publisher owner entrepreneur trader merchant dealer broker agent assistant servant attendant
    accountant consultant student president""".split())
_PERSON_SUFFIX = re.compile(r"[a-z]{3,}(?:er|or|ist|ian|man|woman|eer|ier)$")


@functools.lru_cache(maxsize=1)
def _job_heads() -> frozenset[str]:
    """The last word of each of Faker's job titles ("Teacher, primary school" -> teacher)."""
    try:
        from faker.providers.job.en_US import Provider
    except ImportError:  # Faker is a dependency; without it the suffix rule and the word list decide
        return frozenset()
    heads = set()
    for job in Provider.jobs:
        words = re.findall(r"[a-z-]+", job.split(",")[0].lower())
        if words:
            heads.add(words[-1])
    return frozenset(heads) - _NOT_WORK


def is_work_noun(word: str) -> bool:
    """Whether ``word`` (lower case) names a person's work: "teacher", "electrician", "conscript"."""
    w = word.lower().strip(_HYPHENS)
    if w in _NOT_WORK or len(w) < 3 or w in lexicons.nationalities():  # "an Italian court": no job
        return False
    if w.endswith("s") and w[:-1] in _WORK_WORDS | _job_heads():
        w = w[:-1]  # "ballet dancers"
    return w in _WORK_WORDS or w in _job_heads() or bool(_PERSON_SUFFIX.fullmatch(w))


# a hyphen as typed, and U+2010 where the normalisation (NFKC) made one of U+2011 ("non‑commissioned")
_HYPHENS = "\u2010\u2011-"
_PHRASE = r"((?:[A-Za-z][\w\u2010\u2011-]*)(?: [a-z][\w\u2010\u2011-]*){0,4})"
_CUES = re.compile(
    r"(?i:\b(?:work(?:s|ed|ing)?|employed|emplo(?:yment)?|serv(?:es|ed|ing)|job|post|position|career|trained|"
    r"qualified|practi[sc](?:e|es|ed|ing)|engaged|hired|appointed|recruited|promoted|retired|dismissed|"
    r"reinstated|enrolled|registered|licen[cs]e|licen[cs]ed) as (?:a |an |the )?"
    # "worked for 15 years as a dancer", "his contract as a research assistant", "the post of
    # primary school teacher", "with an eye to becoming a journalist"
    # (never an office named in capitals: "the post of President of the Chamber")
    r"|\byears? as (?:a |an )(?=(?-i:[a-z]))|\b(?:contract|post|position|job|employment) (?:as|of) (?:a |an )?(?=(?-i:[a-z]))"
    r"|\bbecoming (?:a |an )(?=(?-i:[a-z]))"
    r"|\b(?:who|he|she|applicant|applicants|claimant|plaintiff|and) "
    r"(?:is|was|were|are|had been|has been|became|become) (?:a |an )"
    # "the applicant, a lorry driver,": a party in apposition (not "Mr X, a lawyer practising in", the counsel)
    r"|\b(?:applicant|claimant|plaintiff|defendant|accused|complainant|deceased|appellant|patient|victim)s?, "
    r"(?:who (?:is|was) )?(?:a |an )"
    r"|\bwas (?:a |an ))" + _PHRASE)


class Occupation(Recognizer):
    """What a person does for a living, where the text says it of them."""

    label = "OCCUPATION"
    profile = QUASI
    needs = None
    strength = 1

    def find(self, text: str) -> Iterator[Span]:
        for m in _CUES.finditer(text):
            keep = _up_to_stop(m.group(1))
            # the phrase ends at its last work noun: "primary school teacher in Izmir" -> "primary school teacher"
            while keep and not is_work_noun(keep[-1]):
                keep.pop()
            if keep:
                yield _span(text, m.start(1), keep, self.label)


def _up_to_stop(phrase: str) -> list[str]:
    """The phrase's words before the first stop word or punctuated word."""
    keep = []
    for w in phrase.split(" "):
        if w.lower() in _STOP or not re.fullmatch(r"[\w\u2010\u2011-]+", w):
            break
        keep.append(w)
    return keep


def _span(text: str, a: int, words: list[str], label: str) -> Span:
    b = a + len(" ".join(words))
    return Span(a, b, text[a:b], label, SOURCE)


# "diagnosed with paranoid schizophrenia", "suffering from a psychotic illness"
_HEALTH = re.compile(r"(?i:\b(?:diagnosed with|suffer(?:s|ed|ing)? from|diagnosis of) (?:a |an |the )?)"
                     r"((?:[a-z][\w\u2010\u2011-]*)(?: [a-z][\w\u2010\u2011-]*){0,3})")


class Condition(Recognizer):
    """A person's illness or disability, where the text says they have it."""

    label = "HEALTH"
    profile = QUASI
    needs = None
    strength = 1

    def find(self, text: str) -> Iterator[Span]:
        for m in _HEALTH.finditer(text):
            keep = _up_to_stop(m.group(1))
            if keep:
                yield _span(text, m.start(1), keep, self.label)


# A clinical word says what it is by its ending: Greek and Latin for a disease or disorder
# ("arthrosis", "discopathy", "neuralgia", "myopia"), and the international nonproprietary name
# stems of drugs ("diamorphine", "diazepam"). Whether it singles someone out is how rare it is:
# "arthrosis" and "sciatica" are, "diagnosis", "sympathy" and "heroin" are everyday words.
_DRUG_STEMS = r"morphine|codone|adone|azepam|azolam|barbital|cillin|mycin|cycline|prazole|oxetine"
_CLINICAL = re.compile(r"\b[a-z][a-z\u2010\u2011-]*(?:osis|itis|pathy|algia|plegia|phrenia|aemia|emia|oma|opia|iasis|ectomy"
                       rf"|otomy|orrhage|sclerosis|{_DRUG_STEMS})(?:s|es)?\b")
# "degenerative discopathy", "calcifying periarthritis", "cervico‑brachial neuralgia": the
# words before that say which, by an adjective's ending
_CLINICAL_MODIFIER = re.compile(r"(?:\b[a-z][a-z\u2010\u2011-]*(?:al|ic|ive|ing|ous|ary|ar|oid|ile) ){1,2}$")
# An injury named with the body part ("fracture of the left kneecap", "fractures of the 4th
# sacral vertebra"): the part says whose injury it is as the diagnosis does
_INJURY = re.compile(r"\b(?:fracture|dislocation|amputation)s? of (?:the |his |her |a |an )?"
                     r"((?:[a-z0-9][\w\u2010\u2011-]*)(?: [a-z][\w\u2010\u2011-]*){0,3})")
_CLINICAL_MEASURE = re.compile(r"(?:[+\u2010\u2011\u2013\u2212-] ?)?\d+(?:[.,] ?\d+)?(?: ?%| degrees?)? of $")
_GLOSS = re.compile(r" \([a-z][^()]{0,120}\)")
# Words of a clinical shape that name no one's health (read off news, fortunes and Wikipedia text,
# where they were the rule's only false finds): biology, learning, feelings, smells, splits
_NOT_CLINICAL = frozenset("""metamorphosis meiosis mitosis osmosis symbiosis gnosis prognosis diagnosis overdiagnosis
    apotheosis hypnosis phagocytosis academia alchemia chemia dichotomy autotomy apathy antipathy sympathy empathy
    telepathy nostalgia aroma diploma utopia dystopia apoptosis zootomy""".split())
# wordfreq ranks past which a word is rare: "schizophrenia" (13,805th) is, "diploma" (10,194th) is not
RARE_RANK = 12_000


def is_rare(word: str) -> bool:
    """Whether ``word`` (lower case), and the singular it is a plural of, are rare in English."""
    ranks = lexicons.word_ranks()
    forms = {word, word[:-1] if word.endswith("s") else word, word[:-2] if word.endswith("es") else word}
    return all(ranks.get(f, lexicons.MAX_RANKED) > RARE_RANK for f in forms)


class ClinicalTerm(Recognizer):
    """A rare clinical word with the adjectives before it, or an injury with the body part,
    wherever it stands: an illness or a drug named this precisely narrows a person down as an
    occupation does."""

    label = "HEALTH"
    profile = QUASI
    needs = None
    strength = 1

    def find(self, text: str) -> Iterator[Span]:
        found: list[tuple[int, int]] = []
        for m in _CLINICAL.finditer(text):
            low = m.group().lower()
            if not is_rare(low) or low in _NOT_CLINICAL or low.removesuffix("s") in _NOT_CLINICAL:
                continue
            if found and text[found[-1][1]:m.start()] == " ":  # "anisometropia amblyopia": one condition
                found[-1] = (found[-1][0], m.end())
                continue
            before = _CLINICAL_MODIFIER.search(text, max(0, m.start() - 40), m.start())
            # a verb before is no modifier ("showing arthrosis"): an "-ing" word counts where it is rare
            a = before.start() if before and all(w not in _STOP and (not w.endswith("ing") or is_rare(w))
                                                 for w in before.group().split()) else m.start()
            found.append((a, m.end()))
        for a, b in found:
            # its measure and its gloss go with it: "‑ 6, 25 of myopia (nearsightedness)"
            measure = _CLINICAL_MEASURE.search(text, max(0, a - 20), a)
            gloss = _GLOSS.match(text, b)
            a, b = measure.start() if measure else a, gloss.end() if gloss else b
            yield Span(a, b, text[a:b], self.label, SOURCE)
        for m in _INJURY.finditer(text):
            keep = _up_to_stop(m.group(1))
            if keep:
                yield _span(text, m.start(), text[m.start():m.start(1)].split() + keep, self.label)


@functools.lru_cache(maxsize=1)
def _jobs() -> tuple[str, ...]:
    """Faker's job titles of one to three words, in lower case ("ballet dancer" -> "dentist")."""
    from faker.providers.job.en_US import Provider
    return tuple(sorted({j.lower() for j in Provider.jobs if "," not in j and "/" not in j and len(j.split()) <= 3}))


def occupation(original: str, rng: random.Random, helpers: Helpers) -> str:
    """Another occupation, plural for a plural ("ballet dancers" -> "dentists")."""
    word = rng.choice([j for j in _jobs() if j != original.lower()])  # any first sound, as nationality()
    plural = original.endswith("s") and not original.endswith("ss")
    word = word + ("es" if word.endswith(("s", "sh", "ch")) else "s") if plural else word
    # capitals where the original is a title ("Chief Executive"), not where its first word is a
    # nationality ("American lawyer" -> "tax adviser", not "Tax adviser")
    titled = all(w[:1].isupper() for w in original.split())
    return " ".join(w.capitalize() for w in word.split()) if titled else word


# Conditions common enough to single no one out: what a health condition becomes.
# Bare nouns: the original's article, if any, stays before the span ("with a [psychotic illness]").
CONDITIONS = ("asthma", "diabetes", "epilepsy", "heart disease", "chronic back pain", "hearing loss", "arthritis",
              "migraine", "thyroid disease", "anaemia")


# A drug's stand-in is of its class, which its INN stem says: "a controlled drug (diamorphine)"
# stays a controlled opioid, never "paracetamol"; an antibiotic stays an antibiotic.
DRUG_CLASSES = (
    ("morphine|codone|adone", ("codeine", "morphine", "methadone", "oxycodone", "hydromorphone")),
    ("azepam|azolam|barbital", ("diazepam", "lorazepam", "temazepam", "alprazolam", "phenobarbital")),
    ("cillin|mycin|cycline", ("amoxicillin", "erythromycin", "doxycycline", "penicillin", "azithromycin")),
    ("prazole", ("omeprazole", "lansoprazole", "pantoprazole", "esomeprazole")),
    ("oxetine", ("fluoxetine", "paroxetine", "sertraline", "citalopram")),
)
DRUGS = tuple(d for _, pool in DRUG_CLASSES for d in pool)


def health(original: str, rng: random.Random, helpers: Helpers) -> str:
    low = original.lower()
    # every stem of _DRUG_STEMS has its class (tests/test_quasi.py), so what none names is a condition
    pool = next((p for stems, p in DRUG_CLASSES if re.search(rf"(?:{stems})(?:s|es)?\b", low)), CONDITIONS)
    return rng.choice([c for c in pool if c != low])


OPERATORS = {"OCCUPATION": occupation, "HEALTH": health}
