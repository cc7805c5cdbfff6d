"""A judgment a lawyer can still read and nobody can undo (issue 83), through the engine.

Sentences written for these tests in the style of ECHR judgments (never TAB's test split)."""
from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest

from recover_core import Obfuscator
from recover_core.data import countries
from recover_core.errors import RecoverError

KEY = b"j" * 32
PUBLIC = ("PROCEDURE\n\n"
          "The case originated in an application against the United Kingdom lodged with the Court on 14 May 1998 "
          "by Mr Cahit Yetkinsekerci. The application was transmitted to the Court on 1 November 1998, when "
          "Protocol No. 11 to the Convention came into force (Article 5 § 2 of Protocol No. 11).\n\n"
          "A. Arrest and detention\n\n"
          "On 3 September 1997 he was arrested under section 1 of the Police and Criminal Evidence Act 1984. "
          "The President of the Chamber decided to apply Rule 41 and Article 27 § 1 of the Convention. "
          "Under Law no. 4928 of 19 July 2003 his sentence was reviewed, as in R v. Lambert [2001] 3 WLR 206 "
          "and under the 1886 and 1898 Acts.\n\n"
          "C. Proceedings on appeal\n\n"
          "On 6 March 2001 the Court of Appeal dismissed Mr Yetkinsekerci’s appeal.")
_DATE = re.compile(r"\b\d{1,2} [A-Z][a-z]+ \d{4}\b")


def _day(text: str):
    return datetime.strptime(text, "%d %B %Y").date()


@pytest.fixture(scope="module")
def quasi() -> Obfuscator:
    return Obfuscator(protect="quasi", key=KEY)


def test_citations_laws_treaty_dates_and_headings_stay(quasi):
    out = quasi.obfuscate(PUBLIC).text
    for kept in ("Protocol No. 11 to the Convention came into force (Article 5 § 2 of Protocol No. 11)",
                 "on 1 November 1998, when", "section 1 of the Police and Criminal Evidence Act 1984",
                 "Rule 41 and Article 27 § 1 of the Convention", "Law no. 4928 of 19 July 2003",
                 "\n\nA. Arrest and detention\n\n", "\n\nC. Proceedings on appeal\n\n",
                 "against the United Kingdom lodged",  # the respondent State is the public party
                 "[2001] 3 WLR 206", "the 1886 and 1898 Acts"):
        assert kept in out
    # the private dates moved, all by one shift: order and intervals hold
    assert "14 May 1998" not in out and "3 September 1997" not in out and "6 March 2001" not in out
    assert "Yetkinsekerci" not in out


def test_the_respondent_state_stays_wherever_the_judgment_names_it(quasi):
    """"1. The applicant's situation in Germany" lost its country to a substitute (a heading no
    longer read right), while the same State stood unmasked as the party in the first paragraph.
    Another place never becomes it; in an ordinary text, a country after "against" is masked."""
    doc = ("PROCEDURE\n\nThe case originated in an application (no. 58453/00) against the Federal Republic of "
           "Germany lodged with the Court by a Polish national, Mr Jan Kowalczyk.\n\n"
           "1. The applicant’s situation in Germany\n\n"
           "The applicant immigrated to Germany in February 1987. He lived in Erlenbach, then in Tarnów.")
    for key in (b"a" * 32, b"b" * 32, b"c" * 32):
        r = Obfuscator(protect="quasi", key=key).obfuscate(doc)
        assert "\n\n1. The applicant’s situation in Germany\n\n" in r.text and "immigrated to Germany" in r.text
        assert "Erlenbach" not in r.text and "Tarnów" not in r.text
        assert not any(x.substitute == "Germany" for x in r.replacements)
    r = quasi.obfuscate("In 1999 he marched against Germany, then moved to Germany.")
    assert "Germany" not in r.text


def test_a_country_becomes_a_country_and_a_body_stays_a_body_of_its_kind(quasi):
    r = quasi.obfuscate("On 3 September 1997 the packages were brought into the United Kingdom. He was held at "
                        "the Ankara Security Directorate, then sued Leeds City Council for GBP 5,000.")
    place = next(x.substitute for x in r.replacements if x.original == "United Kingdom")
    assert countries.is_country(place) and place != "United Kingdom"
    assert (" the " + place in r.text) == (place.lower() in countries.THE_COUNTRIES)  # "into Germany", "into the Netherlands"
    body = next(x.substitute for x in r.replacements if "Ankara" in x.original)
    assert body.endswith(" Security Directorate") and "Ankara" not in r.text
    assert re.search(r"City Council for GBP [\d,]+\.$", r.text) and "Leeds" not in r.text  # "for" stays


def test_the_words_around_a_name_say_its_kind(quasi):
    """Read word by word, a town or a firm came out as a person ("the Court of Appeal of Cynthia
    Kiser", "held by the company Allen Margaret Nelson", "Maddox Prison"): the words around say which."""
    from recover_core.pseudonyms import place_kind

    r = quasi.obfuscate("They appealed to the Court of Appeal (hovrätten) of Nedre Norrland. The Government of Bavaria "
                        "agreed. The shares were held by the company Robert Bosch GmbH. He was detained in Wronki "
                        "Prison, on the main street named Kennedy Avenue.")
    by = {x.original: x for x in r.replacements}
    assert {by["Nedre Norrland"].label, by["Bavaria"].label} == {"GPE"} and by["Robert Bosch GmbH"].label == "ORG"
    town, kind = by["Wronki Prison"].substitute.rsplit(" ", 1)
    assert kind == "Prison" and place_kind(town) == "city"
    assert by["Kennedy"].label == "GPE" and r.text.endswith(" Avenue.")  # the street word stays
    # a footnote's number is no place ("(TRL)0" became "(TRL)Palau")
    assert quasi.obfuscate("He claimed 30,000,000,000 Turkish liras (TRL)0. He lost.").text.endswith("(TRL)0. He lost.")


def test_a_list_with_a_place_in_it_is_a_list_of_places(quasi):
    """The tagger read "Nusaybin" and "Şırnak" as people ("in Lahore, Richard and Susan"); a list
    that holds a place is read as places, unless people follow it or its names are first names."""
    found = {s.text: s.label for s in quasi.find(
        "He was killed by members of the security forces in Van, Nusaybin and Şırnak. The four villages "
        "(samebyar): Handölsdalen, Mittådalen and Tåssåsen sued. In Ankara, Mehmet and Ali were arrested.")}
    assert {found[w] for w in ("Van", "Nusaybin", "Şırnak", "Handölsdalen", "Mittådalen", "Tåssåsen")} == {"GPE"}
    assert found["Mehmet"] == found["Ali"] == "PERSON", found


def test_a_body_never_becomes_a_legal_form_alone(quasi):
    out = quasi.obfuscate("He was a member of an illegal armed organisation, the Dev-Yol (Revolutionary Way).").text
    assert "Dev-Yol" not in out and not re.search(r"\bthe (?:Inc|Ltd|Ex|Un)\b", out), out  # was "the Inc."
    # its later mentions, read as a person's name with no cue, are the body's too ("membership of the Janet")
    found = quasi.find("He joined an illegal armed organisation, the Dev-Yol (Revolutionary Way). He was accused of "
                       "membership of the Dev-Yol, whose object was to undermine the order. Mr Ford testified.")
    assert [s.label for s in found if "Dev-Yol" in s.text] == ["ORG", "ORG"] and found[-1].label == "PERSON", found


def test_a_possessive_keeps_its_form(quasi):
    r = Obfuscator(key=KEY).obfuscate("Mr Peters' brother was there.")
    assert "Peters" not in r.text
    assert re.fullmatch(r"Mr [A-Z][\w-]+(?:s'|'s) brother was there\.", r.text)


def test_documents_of_a_consistent_run_do_not_share_a_date_shift():
    """Under "shift" (exact intervals, one offset per document); the default adds a warp per document too."""
    doc = "THE FACTS\n\nOn 3 March 1999 Mr Tom Baker was arrested in Leeds. He was released on 9 April 1999."
    other = "THE FACTS\n\nOn 5 June 2001 Ms Ann Smith was arrested in Bristol. She was released on 9 July 2001."
    ob = Obfuscator(protect="quasi", key=KEY, dates="shift")
    a, b = ob.obfuscate_many([doc, other], consistent=True)
    shift = lambda orig, out: [(_day(y) - _day(x)).days for x, y in zip(_DATE.findall(orig), _DATE.findall(out))]  # noqa: E731
    sa, sb = shift(doc, a.text), shift(other, b.text)
    assert len(set(sa)) == 1 and len(set(sb)) == 1  # one shift per document: intervals hold
    assert sa[0] != sb[0]  # one known date of one document undoes nothing of the other
    # a named subject shares one shift across its documents
    a, b = Obfuscator(protect="quasi", key=KEY, dates="shift").obfuscate_many([doc, other], consistent=True,
                                                                            subject="patient 17")
    assert shift(doc, a.text)[0] == shift(other, b.text)[0]
    with pytest.raises(RecoverError, match="subject"):
        ob.obfuscate_many([doc], consistent=True, subject="  ")


def test_the_year_policy_keeps_only_years():
    out = Obfuscator(protect="quasi", dates="year", key=KEY).obfuscate(
        "On 3 March 1999 he was arrested; on 12/09/2000 he was released, last Tuesday he called.").text
    assert out.startswith("In 1999 he was arrested; in 2000 he was released, that day he called.")
    born = Obfuscator(protect="quasi", dates="year", key=KEY).obfuscate("Mr Tom Baker was born on 3 March 1960.").text
    assert re.fullmatch(r"Mr [A-Z]\w+ [A-Z]\w+ was born in \d{4}\.", born), born  # not "born on 1962"
    with pytest.raises(RecoverError, match="date policy"):
        Obfuscator(protect="quasi", dates="month")


def _numbers(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\d|\d", text)]


def test_quantities_keep_their_relations(quasi):
    text = ("He was sentenced to 14 years' imprisonment, reduced on appeal to 12 years. The 12 year sentence ran. "
            "He claimed GBP 5,000 and was awarded GBP 3,000.")
    out = quasi.obfuscate(text).text
    first, second, third, claimed, awarded = _numbers(out)
    assert first > second == third  # one quantity one substitute; a reduction stays a reduction
    assert 5 <= second <= 25 and claimed > awarded and claimed % 1000 == 0  # plausible, in the original's precision
    assert (first, second, claimed, awarded) != (14, 12, 5000, 3000)
    assert "GBP" in out and "years' imprisonment" in out


def test_stated_ages_agree_with_the_dates_shown_and_hide_the_true_age():
    text = ("THE FACTS\n\nMr Tom Baker was born on 3 March 1960. On 2 October 2000, at the age of 40, he was arrested. "
            "He was 40 at the time.")
    offsets = set()
    for k in range(6):
        out = Obfuscator(protect="quasi", key=bytes([k]) * 32).obfuscate(text).text
        born, event = (_day(d) for d in _DATE.findall(out))
        stated = {int(n) for n in re.findall(r"\bage of (\d+)|\bwas (\d+) at", out) for n in n if n}
        shown = event.year - born.year - ((event.month, event.day) < (born.month, born.day))
        assert stated == {shown}, out  # no stated age contradicts the dates
        offsets.add(shown - 40)
    assert 0 not in offsets and len(offsets) > 1  # the true age is not what the output says


def test_joined_applications_keep_their_order_and_a_plausible_year(quasi):
    out = quasi.obfuscate("The case originated in two applications (nos. 26480/95 and 26481/95) lodged on "
                          "3 March 1995, joined to application no. 31831/96.").text
    (a, ya), (b, yb), (c, yc) = [(int(n), int(y)) for n, y in re.findall(r"\b(\d{4,7})/(\d\d)\b", out)]
    assert a + 1 == b < c and ya == yb <= yc  # order and distance kept, the years in step
    assert "26480" not in out and "31831" not in out
    lodged = _day(_DATE.search(out).group())
    assert abs(lodged.year % 100 - ya) <= 1  # the year of lodging moved with the dates


def test_a_two_word_nationality_and_an_unknown_town_keep_their_kind(quasi):
    """Review of TAB dev: "a Sierra Leonean national" lost only its second word ("Sierra" was read
    as a person), "lives in Erlenbach", a town no gazetteer names, became an everyday word, and
    "the Acting President of the Chamber" lost "Acting"."""
    from recover_core.pseudonyms import place_kind

    r = quasi.obfuscate("The applicant, a Sierra Leonean national, lives in Erlenbach. The Acting President "
                        "of the Chamber decided under Rule 54 of the Rules of Court.")
    by = {x.original: x for x in r.replacements}
    assert by["Sierra Leonean national"].label == "NATIONALITY" and "Sierra" not in r.text and "Leone" not in r.text
    assert re.search(r"\ba [A-Z][a-z]+ national\b", r.text)
    assert place_kind(by["Erlenbach"].substitute) == "city"
    # a land within a country is no town: "serving a sentence in England" had become "in Baltimore"
    england = quasi.obfuscate("He served his sentence in England.")
    assert place_kind(england.replacements[0].substitute) == "country", england.text
    assert r.text.endswith("The Acting President of the Chamber decided under Rule 54 of the Rules of Court.")


def test_a_rare_clinical_word_is_masked_with_what_says_which(quasi):
    """A medical report in a judgment: "degenerative discopathy", "cervico‑brachial neuralgia",
    "diamorphine" stayed verbatim (issue 83); everyday words of the same shape ("diagnosis",
    "sympathy", "diplomas") and a spinal segment's letters ("L5-S1" had become "Paris5-Rome1") are
    no health condition and no place."""
    text = ("The report found degenerative discopathy at L5-S1 and calcifying periarthritis; he also had "
            "cervico‑brachial neuralgia and was given diamorphine. The diagnosis won sympathy; he held two diplomas.")
    r = quasi.obfuscate(text)
    health = {x.original for x in r.replacements if x.label == "HEALTH"}
    assert health == {"degenerative discopathy", "calcifying periarthritis", "cervico‐brachial neuralgia",
                      "diamorphine"}, health
    assert r.masked.startswith("The report found [MASK] at L5-S1 and [MASK]; he also had [MASK] and was given [MASK].")
    assert all(w in r.text for w in ("The diagnosis won sympathy", "diplomas"))
    assert not any(w in r.text for w in ("discopathy", "periarthritis", "neuralgia", "diamorphine"))
    from recover_core.kinds.occupations import DRUGS  # a drug stays a drug ("a controlled drug (anaemia)")
    assert next(x.substitute for x in r.replacements if x.original == "diamorphine") in DRUGS


def test_a_job_or_an_injury_said_once_is_masked_wherever_it_recurs(quasi):
    """TAB train: "who is a retired non-commissioned officer" was masked, "admitted as a retired
    non‑commissioned officer" (U+2011) later in the judgment was not; nor was "fracture of the left
    kneecap" in a medical report. A one-word job ("a lawyer") is not chased through the document."""
    r = quasi.obfuscate_document(
        "The applicant, who is a retired non-commissioned officer, was born in 1959. He had a fracture of the "
        "left kneecap. He was not admitted as a retired non\u2011commissioned officer. Mr Demir, a lawyer "
        "practising in Ankara, represented him; the applicant, a lawyer, had asked him.")
    assert "commissioned" not in r.text and "kneecap" not in r.text
    assert r.text.count("a lawyer") == 1, r.text


def test_a_clinical_finding_goes_with_its_measure_and_its_gloss(quasi):
    """Issue 83 ("myopia details" stayed verbatim): a reading and its explanation in brackets say
    as much as the word, and two clinical words in a row are one condition with one substitute."""
    r = quasi.obfuscate("His medical report stated that he had ‑ 6, 25 of myopia (nearsightedness) and – 6,75 of "
                        "anisometropia amblyopia (difference in refractive error between the two eyes) on his left eye.")
    assert r.masked == "His medical report stated that he had [MASK] and [MASK] on his left eye.", r.masked
    assert not any(w in r.text for w in ("6, 25", "6,75", "sighted", "refractive"))


def test_a_name_cut_at_a_possessive_is_widened_over_it():
    """TAB train: the tagger masked "Jehovah" of "Jehovah’s Witnesses" as a person's and left the
    Witnesses, so the group was still named. A lower-case transcript's capitals say nothing."""
    from recover_core.masking.misread import with_possessive_names
    from recover_core.text.spans import Span

    text = "The applicant joined Jehovah’s Witnesses in 1990."
    (s,) = with_possessive_names(text, [Span(21, 28, "Jehovah", "PERSON", "entityTagger")])
    assert (s.text, s.label) == ("Jehovah’s Witnesses", "ORG")
    low = text.lower()
    assert with_possessive_names(low, [Span(21, 28, "jehovah", "PERSON", "x")])[0].text == "jehovah"


def test_an_administrative_area_is_one_place_that_keeps_its_word(quasi):
    """TAB dev: "the District of Famagusta" became "the Kampala of Palermo" ("District" alone was
    read as a place); the experts mask the area whole, and its place alone elsewhere too."""
    r = quasi.obfuscate_document("He lived in a village in the District of Famagusta. Later Famagusta was shelled.")
    by = {x.original: x for x in r.replacements}
    assert by["District of Famagusta"].substitute.startswith("District of ")
    town = by["District of Famagusta"].substitute.removeprefix("District of ")
    assert r.text == f"He lived in a village in the District of {town}. Later {town} was shelled.", r.text


def test_titled_people_with_initials_the_tagger_does_not_know_stay_people(quasi):
    """TAB train: "Mr İ. Akın and Ms N.Ö. Akın, lawyers" became "Mr P. Blair Group. Delaney
    Company, lawyers": the tagger read "Akın and Ms N.Ö" as an organisation."""
    r = quasi.obfuscate("The applicant was represented by Mr İ. Akın and Ms N.Ö. Akın, lawyers practising in Izmir.")
    assert {x.label for x in r.replacements if x.label != "GPE"} == {"PERSON"}, r.replacements
    assert re.fullmatch(r"The applicant was represented by Mr [A-Z]\. [A-Z][a-z]+ and Ms [A-Z]\. [A-Z][a-z]+, "
                        r"lawyers practising in [A-Z][\w ]+\.", r.text), r.text


def test_a_hospital_named_after_a_saint_stays_a_hospital(quasi):
    """Issue 83: "St. Mary's Hospital" became "St. Mejia Company", later "St Danny Hospital" (the
    tagger's "Mary’s" lost its possessive) or "St [MASK] [MASK]" ("Hospital" read as a name)."""
    r = quasi.obfuscate("She was treated at St Mary’s Hospital in London.")
    assert re.fullmatch(r"She was treated at St [A-Z][a-z]+’s Hospital in [A-Z][\w ]+\.", r.text), r.text


def test_two_bodies_joined_by_and_stay_two(quasi):
    """Issue 83's "Ankara Security Directorate" and "Van State Hospital", named in one sentence,
    became one "Pudong Hospital"; "the Foreign and Commonwealth Office" is still one office."""
    r = quasi.obfuscate("The Ankara Security Directorate and Van State Hospital refused.")
    assert re.fullmatch(r"The [A-Z]\w+ Security Directorate and [A-Z]\w+ State Hospital refused\.", r.text), r.text
    assert quasi.obfuscate("The Foreign and Commonwealth Office agreed.").text == "The Foreign and Commonwealth Office agreed."


def test_a_place_in_capitals_is_a_code_or_its_country(quasi):
    """Issue 83: "Flight BA12 LHR" became "Eagle", then "Flight PO35 HALIFAX"; "the USA" became
    "the PENNSYLVANIA". An airport's code gets a code; a country's abbreviation is its country."""
    flight = quasi.obfuscate("He boarded Flight BA12 LHR to Ankara.")
    assert re.fullmatch(r"He boarded Flight [A-Z]{2}\d{2} [A-Z]{3} to [A-Z][\w ]+\.", flight.text), flight.text
    usa = quasi.obfuscate_document("He moved to the USA in 1990. Later he left the United States.")
    sub = next(x.substitute for x in usa.replacements if x.original == "USA")
    assert sub != sub.upper(), usa.text
    assert sub in usa.text.split("Later")[1], usa.text  # one country, one substitute


def test_words_of_a_clinical_shape_that_name_no_illness_stay():
    """Run over Wikipedia, fortunes and news text, the clinical rule's false finds were words like
    these: a biography's "metamorphosis", "academia", "nostalgia", "sympathy", "utopia"."""
    from recover_core.masking import identifiers

    text = ("After his metamorphosis from academia to politics, nostalgia and sympathy for a lost utopia "
            "marked his speeches; the aroma of apathy filled the hall.")
    assert [s for s in identifiers.find(text, protect="quasi") if s.label == "HEALTH"] == []


def test_an_area_read_as_an_organisation_is_a_place_and_its_word_keeps_its_case(quasi):
    """Issue 83: "the District of Famagusta" alone in a sentence was tagged an organisation and
    became "the Fbi"; "the municipality of Kiruna" became "the Municipality of ..."."""
    r = quasi.obfuscate_document("The house stood in the District of Famagusta. He lived in the municipality of Kiruna.")
    by = {x.original: x for x in r.replacements}
    assert by["District of Famagusta"].label in ("GPE", "LOC") and by["District of Famagusta"].substitute.startswith("District of ")
    assert re.search(r"in the municipality of [A-Z]", r.text), r.text
    assert "Famagusta" not in r.text and "Kiruna" not in r.text


def test_the_dates_of_a_list_move_together_in_the_lists_year():
    """TAB dev: "heard on 28 April and 4 May 1993" became "on 17 June and 15 March 1990": the
    first date, with no year of its own, was moved as a date of another year. A list is one
    span, read in its year; a date that moves into another year says so."""
    for key in (b"k" * 32, b"j" * 32, b"a" * 32, b"b" * 32):
        ob = Obfuscator(protect="quasi", key=key)
        out = ob.obfuscate_document("It was heard on 28 April and 4 May 1993. They wrote in May and August 2001.").text
        m = re.fullmatch(r"It was heard on (\d+) (\w+)( \d{4})? and (\d+) (\w+) (\d{4})\. "
                         r"They wrote in (\w+)( \d{4})? and (\w+) (\d{4})\.", out)
        assert m, out
        first = datetime.strptime(f"{m[1]} {m[2]} {(m[3] or m[6]).strip()}", "%d %B %Y")
        second = datetime.strptime(f"{m[4]} {m[5]} {m[6]}", "%d %B %Y")
        assert timedelta(0) < second - first < timedelta(days=60), out
        may = datetime.strptime(f"{m[7]} {(m[8] or m[10]).strip()}", "%B %Y")
        august = datetime.strptime(f"{m[9]} {m[10]}", "%B %Y")
        assert may < august, out


def test_a_firm_of_solicitors_and_a_london_borough_keep_their_kind(quasi):
    """TAB dev: "represented by Pedro Emmanuel Solicitors" became a person's name, and "with the
    London Borough of Islington (“the Council”)" became "with the Glasgow (“the Council”)"."""
    r = quasi.obfuscate_document("She was represented by Pedro Emmanuel Solicitors, lawyers practising in London. "
                                 "She worked for the London Borough of Islington (“the Council”).")
    labels = {x.original: x.label for x in r.replacements}
    assert labels["Pedro Emmanuel Solicitors"] == "ORG", labels
    assert re.search(r"for the [A-Z][\w ]* Borough of [A-Z]\w+ \(“the Council”\)", r.text), r.text
    assert "Islington" not in r.text and "Emmanuel" not in r.text


def test_a_body_keeps_one_substitute_with_or_without_its_gloss_and_a_court_is_no_law(quasi):
    """TAB dev: "the Dev-Yol (Revolutionary Way)" became "the Fbi" and "the Dev-Yol" a person's
    name; "the Ankara Martial Law Court" lost "Court" to "Institute" ("Martial Law" was read as
    a law's name), while the experts leave every martial law court as it is."""
    text = ("Police arrested him on suspicion of membership of an illegal armed organisation, the Dev-Yol "
            "(Revolutionary Way). The Ankara Martial Law Court ordered his detention. He was accused of "
            "membership of the illegal organisation, the Dev-Yol. The Diyarbakır State Security Court convicted him.")
    r = quasi.obfuscate_document(text)
    subs = {x.original: x.substitute for x in r.replacements}
    assert "Dev-Yol" not in r.text and "Diyarbakır" not in r.text, r.text
    assert subs["Dev-Yol"] == subs["Dev-Yol (Revolutionary Way)"], subs
    assert not re.fullmatch(r"[A-Z][a-z]{1,2}", subs["Dev-Yol"]), subs  # never "Fbi"
    assert "The Ankara Martial Law Court ordered" in r.text, r.text
    assert re.search(r"The [A-Z][\w ]+ State Security Court convicted", r.text), r.text


def test_the_respondent_state_misspelt_stays_the_state(quasi):
    """TAB dev 001-59864 writes "the judge elected in respect of Tukey"; the tagger read a person,
    who became "Vicente"."""
    r = quasi.obfuscate_document("The case originated in an application against the Republic of Turkey. "
                                 "Mr Rıza Türmen, the judge elected in respect of Tukey, withdrew.")
    assert "in respect of Tukey, withdrew" in r.text and "Türmen" not in r.text, r.text
