"""Identifier recall (issue 56): is every letter and digit of a card number, e-mail, phone,
IBAN, IP, URL, handle, ID number, birth date, address, postcode and spoken digit string hidden?

Items are generated at run time from ``--seed``, never taken from a list the code uses:
Faker's providers in several locales (cards, IBANs, phones, addresses, postcodes, e-mails,
IPs, SSNs, passports, birth dates) and digit strings drawn here and spoken as words. Each
item goes into a sentence from a template of its kind (with and without context words), and
every sentence is also given as a caseless transcript line (lower case, no final stop).

Measured, per kind and overall:
  * recall by character coverage: an item counts as hidden when every letter and digit of
    it lies inside a masked span, for entityTagger alone (identifiers=False), the product
    default (entityTagger + identifiers), allowList + identifiers, and Presidio's analyzer
    as the anchor where it imports (it is not a dependency: skipped with a note otherwise);
  * verbatim: items that come out of ``obfuscate`` (the default engine, MLM filler) as they
    went in, on a sample of ``--obfuscate`` sentences;
  * substitutes: every card's substitute passes Luhn with the original's length, grouping
    and first digit; every phone that is valid in its region gets a substitute valid there;
  * false positives: identifier spans on item-free lines with ordinary numbers ("12
    people", "page 117", "7:15", "two kids"), and masked words per 1,000 words with and
    without identifiers;
  * speed: masking lines per second with and without identifiers, side by side.

Run:  python bench/identifier_recall.py --seed 0   (about 3 minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import phonenumbers  # noqa: E402
from faker import Faker  # noqa: E402
from stdnum import luhn  # noqa: E402

from recover_core import Obfuscator  # noqa: E402
from recover_core.data import corpora  # noqa: E402
from recover_core.pseudonyms import Pseudonyms  # noqa: E402
from recover_core.text.spans import Span, words  # noqa: E402

LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "it_IT", "es_ES", "nl_NL")
PHONE_REGION = {"en_US": "US", "en_GB": "GB", "de_DE": "DE", "fr_FR": "FR", "it_IT": "IT", "es_ES": "ES",
                "nl_NL": "NL"}
DIGITS = "zero one two three four five six seven eight nine".split()

TEMPLATES = {
    "CREDIT_CARD": ["My card number is {}.", "Please charge {} for the order.", "Use the Visa {} instead.",
                    "The number on the card is {} and it expires soon."],
    "EMAIL": ["My email is {}.", "Send it to {} by Friday.", "You can write to {} any time.", "{} is my address."],
    "PHONE": ["Call me at {}.", "My phone number is {}.", "You can reach her on {} after six.",
              "Text {} when you arrive."],
    "IBAN": ["My IBAN is {}.", "Please transfer the money to {} today.", "The account {} belongs to my sister."],
    "IP_ADDRESS": ["The server is at {}.", "Requests came from {} all night.", "My IP address is {}."],
    "URL": ["My profile is at {}.", "See {} for the photos.", "He posted it on {} yesterday."],
    "HANDLE": ["Follow me at {} on Instagram.", "My handle is {}.", "Message {} for details."],
    "ID_NUMBER": ["My social security number is {}.", "Her passport number is {}.", "My driver's license number is {}.",
                  "The medical record number is {}.", "His ID number is {}."],
    "DATE_OF_BIRTH": ["I was born on {}.", "Date of birth: {}.", "Her DOB is {}.", "He was born {} in a small town."],
    "ADDRESS": ["I live at {}.", "Send it to {} please.", "We moved to {} last year.", "The office is at {}."],
    "POSTCODE": ["My postcode is {}.", "The zip code is {}.", "It's {} for the postal code."],
    "SPOKEN_DIGITS": ["my pin is {}", "the number is {}", "call me on {}", "it's {} for the code", "{} that's my code",
                      "yeah {} right"],
}
ORDINARY = ["We were {n} people at dinner.", "Turn to page {n}.", "The train leaves at {h}:{m:02d}.",
            "I have two kids and {n} cousins.", "It happened in {y}.", "Chapter {s} is the best one.",
            "The score was {s}-{t} at half time.", "It costs ${n}.{m:02d} a month.", "Room {n} is on the left.",
            "She ran {s} km in {n} minutes.", "Prices rose {s}.{t} percent in {y}.", "one or two of them came",
            "we waited for twenty minutes", "about {n} or {k} of us", "He turned {s}{t} on the {s}th of June.",
            "The 1990s were long ago.", "Version {s}.{t} came out on March {s}, {y}.", "Flight {n} was late by {s} hours.",
            "i think it was nineteen ninety nine", "there were three or four of them"]


def spoken(rng: random.Random, n: int) -> str:
    d = [rng.randrange(10) for _ in range(n)]
    out, i = [], 0
    while i < len(d):
        if i + 1 < len(d) and d[i] == d[i + 1] and rng.random() < 0.5:
            out += ["double", DIGITS[d[i]]]
            i += 2
            continue
        out.append("oh" if d[i] == 0 and rng.random() < 0.5 else DIGITS[d[i]])
        i += 1
    return " ".join(out)


def group_card(num: str, rng: random.Random) -> str:
    sep = rng.choice(["", " ", "-"])
    if not sep:
        return num
    sizes = [4, 6, 5] if len(num) == 15 else [4] * (len(num) // 4) + ([len(num) % 4] if len(num) % 4 else [])
    out, at = [], 0
    for s in sizes:
        out.append(num[at:at + s])
        at += s
    return sep.join(out)


def items(seed: int, n: int) -> list[tuple[str, str, str]]:
    """(kind, item, locale) for ``n`` items of every kind."""
    rng = random.Random(seed)
    fakers = {loc: Faker(loc) for loc in LOCALES}
    for i, f in enumerate(fakers.values()):
        f.seed_instance(seed * 100 + i)
    out = []
    for i in range(n):
        loc = LOCALES[i % len(LOCALES)]
        f, us = fakers[loc], fakers["en_US"]
        card = us.credit_card_number(card_type=rng.choice(["visa16", "mastercard", "amex", "discover", None]))
        out.append(("CREDIT_CARD", group_card(card, rng), "en_US"))
        first, last = us.first_name().lower(), us.last_name().lower()
        out.append(("EMAIL", rng.choice([f.email(), f.free_email(), f"{first}.{last}@{us.domain_name()}",
                                         f"{first}{rng.randint(1, 99)}@{us.free_email_domain()}"]), loc))
        out.append(("PHONE", f.phone_number(), loc))
        ib = f.iban() if loc != "en_US" else fakers["de_DE"].iban()
        out.append(("IBAN", " ".join(ib[j:j + 4] for j in range(0, len(ib), 4)) if rng.random() < 0.5 else ib, loc))
        out.append(("IP_ADDRESS", rng.choice([us.ipv4(), us.ipv4_private(), us.ipv6()]), "en_US"))
        out.append(("URL", rng.choice([us.url() + us.user_name(), f"https://www.linkedin.com/in/{first}-{last}",
                                       f"www.{us.domain_name()}/{us.uri_path()}"]), "en_US"))
        out.append(("HANDLE", "@" + us.user_name(), "en_US"))
        out.append(("ID_NUMBER", rng.choice([us.ssn(), us.passport_number(), fakers["en_GB"].ssn(),
                                             f"{rng.choice('ABCDEFGHJKLMNPRSTWXYZ')}{rng.randint(1000000, 99999999)}",
                                             str(rng.randint(100000, 9999999999))]), "en_US"))
        dob = us.date_of_birth(minimum_age=1, maximum_age=95)
        out.append(("DATE_OF_BIRTH", rng.choice([dob.strftime("%m/%d/%Y"), dob.strftime("%d.%m.%Y"),
                                                 dob.strftime("%B %-d, %Y"), dob.strftime("%-d %B %Y"),
                                                 dob.isoformat()]), "en_US"))
        out.append(("ADDRESS", f.street_address().replace("\n", ", "), loc))
        out.append(("POSTCODE", rng.choice([us.zipcode(), fakers["en_GB"].postcode(), fakers["de_DE"].postcode(),
                                            fakers["fr_FR"].postcode()]), "en_US"))
        out.append(("SPOKEN_DIGITS", spoken(rng, rng.choice([4, 4, 5, 7, 10, 16])), "en_US"))
    return out


def sentences(its, seed: int) -> list[tuple[str, str, str, str, bool]]:
    """(kind, item, locale, sentence, caseless) for each item, cased and caseless."""
    rng = random.Random(seed + 1)
    out = []
    for kind, item, loc in its:
        s = rng.choice(TEMPLATES[kind]).format(item)
        s = s[:1].upper() + s[1:] if kind != "SPOKEN_DIGITS" else s
        out.append((kind, item, loc, s, False))
        out.append((kind, item.lower(), loc, s.lower().rstrip("."), True))
    return out


def ordinary(seed: int, n: int) -> list[str]:
    rng = random.Random(seed + 2)
    return [rng.choice(ORDINARY).format(n=rng.randint(2, 400), h=rng.randint(1, 12), m=rng.randint(0, 59),
                                        y=rng.randint(1900, 2030), s=rng.randint(1, 9), t=rng.randint(0, 9),
                                        k=rng.randint(2, 9)) for _ in range(n)]


def hidden(sentence: str, item: str, spans: list[tuple[int, int]]) -> bool:
    at = sentence.lower().find(item.lower())
    assert at >= 0
    return all(any(a <= at + j < b for a, b in spans) for j, c in enumerate(item) if c.isalnum())


def presidio():
    """Presidio's analyzer with its default recognizers on the same spaCy md as ours (its own
    default wants en_core_web_lg, which no package here ships), or None where it does not import.
    tldextract, which its e-mail and URL recognizers call, is kept to its bundled suffix list: it
    would try to download one at first use."""
    try:
        import tldextract  # noqa: PLC0415  (optional, with presidio)
        from presidio_analyzer import AnalyzerEngine  # noqa: PLC0415  (an optional anchor)
        from presidio_analyzer.nlp_engine import SpacyNlpEngine  # noqa: PLC0415
    except ImportError:
        return None
    from recover_core.models import bundles

    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
    nlp = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": "en_core_web_md"}])
    nlp.nlp = {"en": bundles.load_ner("spacy-md")}
    engine = AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"])
    return lambda t: [(r.start, r.end) for r in engine.analyze(t, language="en")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=35, help="items of each kind")
    ap.add_argument("--obfuscate", type=int, default=120, help="sentences run through obfuscate for verbatim checks")
    ap.add_argument("--missed", type=int, default=2, help="missed sentences to show per kind")
    ap.add_argument("--ordinary", type=int, default=300, help="item-free lines with ordinary numbers")
    ap.add_argument("--news", type=int, default=600, help="news sentences for false positives and speed")
    args = ap.parse_args()

    its = items(args.seed, args.n)
    sents = sentences(its, args.seed)
    texts = [s for _, _, _, s, _ in sents]
    systems = {"entityTagger": Obfuscator(identifiers=False), "default": Obfuscator(),
               "allowList+ids": Obfuscator(technique="allowList")}
    found = {}
    for name, ob in systems.items():
        found[name] = [[(s.start, s.end) for s in spans] for spans in ob.masker.find_many(texts)]
    anchor = presidio()
    if anchor is not None:
        found["presidio"] = [anchor(t) for t in texts]

    rows = defaultdict(lambda: defaultdict(list))
    for i, (kind, item, _, s, caseless) in enumerate(sents):
        for name in found:
            ok = hidden(s, item, found[name][i])
            rows[kind][name].append(ok)
            rows["all"][name].append(ok)
            rows["caseless" if caseless else "cased"][name].append(ok)
    names = list(found)
    print(f"\nitems hidden (every letter and digit masked), seed {args.seed}, {len(sents)} sentences")
    print(f"{'kind':16s}" + "".join(f"{n:>15s}" for n in names))
    for kind in [*TEMPLATES, "cased", "caseless", "all"]:
        print(f"{kind:16s}" + "".join(f"{sum(rows[kind][n]) / len(rows[kind][n]):15.1%}" for n in names))
    if anchor is None:
        print("presidio: presidio-analyzer is not installed here (it is no dependency); its column is skipped")
    missed = defaultdict(list)
    for (k, item, _, s, _), spans in zip(sents, found["default"]):
        if not hidden(s, item, spans):
            missed[k].append(s)
    for k, ss in missed.items():
        for s in ss[: args.missed]:
            print(f"  missed {k}: {s!r}")

    # Verbatim through obfuscate (MLM filler), on a sample.
    rng = random.Random(args.seed + 3)
    sample = rng.sample(range(len(sents)), min(args.obfuscate, len(sents)))
    ob = systems["default"]
    t = time.perf_counter()
    res = ob.obfuscate_many([texts[i] for i in sample])
    kept = [(sents[i][0], r.text) for i, r in zip(sample, res) if sents[i][1].lower() in r.text.lower()]
    verbatim = len(kept)
    for k, text in kept:
        print(f"  verbatim {k}: {text!r}")
    print(f"\nverbatim in obfuscate output: {verbatim} of {len(sample)} items ({time.perf_counter() - t:.0f}s)")

    # Substitutes, straight from the pseudonym rules (no filler involved).
    p = Pseudonyms(args.seed)
    cards = [item for k, item, _ in its if k == "CREDIT_CARD"]
    good = 0
    for c in cards:
        sub = p.other(c, "CREDIT_CARD", [])
        d = re.sub(r"\D", "", sub)
        good += luhn.is_valid(d) and re.sub(r"\d", "9", sub) == re.sub(r"\d", "9", c) and sub[0] == c[0] and sub != c
    print(f"card substitutes passing Luhn with the same length, grouping and first digit: {good}/{len(cards)}")
    valid = ok = 0
    for k, item, loc in its:
        if k != "PHONE":
            continue
        region = PHONE_REGION[loc]
        try:
            n = phonenumbers.parse(item, region)
        except phonenumbers.NumberParseException:
            continue
        if not phonenumbers.is_valid_number(n):
            continue
        valid += 1
        sub = p.other(item, "PHONE", [])
        try:
            m = phonenumbers.parse(sub, region)
            ok += phonenumbers.is_valid_number(m) and phonenumbers.region_code_for_number(m) == \
                phonenumbers.region_code_for_number(n) and sub != item
        except phonenumbers.NumberParseException:
            pass
    print(f"phone substitutes valid in the original's region: {ok}/{valid} (of the originals valid there)")

    # False positives on item-free lines; speed on real news sentences, as today's lines.
    lines = ordinary(args.seed, args.ordinary)
    news = list(corpora.news())[: args.news]
    print(f"\nitem-free lines: {len(lines)} with ordinary numbers ({sum(len(words(t)) for t in lines)} words), "
          f"{len(news)} news sentences ({sum(len(words(t)) for t in news)} words)")
    speeds: dict[str, list[float]] = defaultdict(list)
    for name in ("entityTagger", "default"):
        systems[name].masker.find_many(news[:20])  # warm
    for _ in range(3):  # side by side, alternating, so a busy machine slows both alike
        for name in ("entityTagger", "default"):
            t = time.perf_counter()
            systems[name].masker.find_many(news)
            speeds[name].append(len(news) / (time.perf_counter() - t))
    for name in ("entityTagger", "default", "presidio"):
        if name == "presidio" and anchor is None:
            continue
        for label, texts_ in (("ordinary", lines), ("news", news)):
            if name == "presidio":
                spans = [[Span(a, b, "", "", "presidio") for a, b in anchor(t)] for t in texts_]
            else:
                spans = systems[name].masker.find_many(texts_)
            n_words = sum(len(words(t)) for t in texts_)
            masked = sum(sum(1 for w in words(t) if any(s.start <= w.start < s.end for s in sp))
                         for t, sp in zip(texts_, spans))
            ids = sum(1 for sp in spans for s in sp if s.source == "identifiers")
            print(f"  {name:13s} {label:9s} masked words per 1,000: {1000 * masked / n_words:6.1f}"
                  f"   identifier spans: {ids}")
        if name == "presidio":
            continue
        print(f"  {name:13s} masking news: {max(speeds[name]):.0f} lines/s (best of 3)")
    print(f"  masking speed, default / entityTagger alone: {max(speeds['default']) / max(speeds['entityTagger']):.2f}x")
    flagged = [(t, s.text, s.label) for t, sp in zip(lines + news, systems["default"].masker.find_many(lines + news))
               for s in sp if s.source == "identifiers"]
    for f in flagged[:8]:
        print("  flagged:", f)


if __name__ == "__main__":
    main()
