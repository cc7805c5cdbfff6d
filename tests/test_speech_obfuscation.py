"""Speech obfuscation (preiss2023) on generated speech with known names, real models end to
end: names found and replaced, the second pass no longer hears them, each mode's output,
splice continuity, and the awkward inputs a user sends."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from recover_core.asr import audio
from recover_core.errors import RecoverError
from recover_core.speech import boundaries, splice, voices
from recover_core.speech.obfuscate import SpeechObfuscator
from recover_core.speech.plan import SPEECH_ENGINE, SpeechSettings
from recover_core.pseudonyms import Pseudonyms, genders, roles

KEY = bytes(range(32))  # the rules' draws are keyed (pseudonyms/key.py): one kept key repeats them

SENTENCE = "Yesterday I called Margaret Thompson about the report from the office."


def speak(tmp: Path, text: str, voice: str = "piper-joe", rate: int = 16000, gain: float = 1.0) -> audio.Audio:
    x, r = voices.synthesize(text, voice)
    x = np.clip(audio.resample(x, r, rate) * gain, -1, 1)
    path = tmp / f"{abs(hash((text, voice, rate, gain)))}.wav"
    sf.write(path, x, rate)
    return audio.load(path, keep_native=True)


@pytest.fixture(scope="module")
def obfuscators():
    # The clip's own voice: these tests are about finding, cutting and splicing. Which voice
    # auto picks is voices.choose's test below, and its effect the bench's measure: on one
    # sentence it is noise (flite-rms's "Alice Scott" is heard as "the panelists cut" here).
    # One kept key: which name the rules draw depends on it, and these tests follow one draw.
    sub = SpeechObfuscator(SpeechSettings(mode="substitute", voice="piper-joe"), key=KEY)
    rec = sub.recognizer  # one recognizer for every mode: Whisper loads once
    return {"substitute": sub, "bleep": SpeechObfuscator(SpeechSettings(mode="bleep"), rec),
            "silence": SpeechObfuscator(SpeechSettings(mode="silence"), rec)}


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return speak(tmp_path_factory.mktemp("speech"), SENTENCE)


def heard(result) -> list[str]:
    return [w.word.strip(".,").lower() for w in result.second.words]


def test_names_are_found_replaced_and_no_longer_heard(obfuscators, clip):
    r = obfuscators["substitute"].run(clip)
    assert [e.original for e in r.entities] == ["Margaret Thompson"]
    e = r.entities[0]
    first, last = e.substitute.split()
    assert {first.lower(), last.lower()}.isdisjoint({"margaret", "thompson"})
    assert genders()[first.lower()] == "f"  # Margaret's gender is kept
    assert "margaret" not in heard(r) and "thompson" not in heard(r)
    assert e.original_heard is False and e.click_free
    assert e.edges == "aligned" and 0.5 < e.start < e.end < clip.seconds
    assert r.rate == 16000 and r.intended == SENTENCE.replace("Margaret Thompson", e.substitute)
    assert r.confidence > 0.8
    # Whisper may mishear a stock voice's name ("Alice Scott" as "Alice Caw"): then it must say so.
    assert e.substitute_heard is not None
    assert r.needs_review == (not e.substitute_heard), r.reasons
    assert e.substitute_heard or "entity 1: the substitute is not heard" in r.reasons
    public = str(r.public())
    assert "Margaret" not in public and "Thompson" not in public  # originals only when asked
    assert "Margaret Thompson" in str(r.public(keep_originals=True))


def test_each_mode_changes_the_span_and_nothing_else(obfuscators, clip):
    f = int(splice.FADE_S * 16000)
    for mode in ("substitute", "bleep", "silence"):
        r = obfuscators[mode].run(clip)
        e = r.entities[0]
        a, b = int(e.out_start * 16000), int(e.out_end * 16000)
        start = int(e.start * 16000)
        x = clip.native
        assert np.array_equal(r.samples[:a], x[:a]), mode  # before the seam: untouched
        tail = len(x) - int(e.end * 16000) - f
        assert np.allclose(r.samples[-tail:], x[-tail:]), mode  # after it: untouched
        span = r.samples[a + f:b - f]
        if mode == "silence":
            assert np.abs(span).max() == 0
        elif mode == "bleep":
            spectrum = np.abs(np.fft.rfft(span))
            assert abs(np.argmax(spectrum) * 16000 / len(span) - 1000) < 20
            level = splice.active_rms(x[start:int(e.end * 16000)], 16000)
            assert abs(20 * np.log10(np.sqrt(np.mean(span ** 2)) / level)) < 1.5  # the original's loudness
        else:
            assert 0.5 < splice.active_rms(span, 16000) / splice.context_rms(x, 16000, start, int(e.end * 16000)) < 2
        assert "margaret" not in heard(r) and "thompson" not in heard(r), mode


@pytest.mark.parametrize("text, spans, want", [
    ("send the report to Danielle before noon", [(4, 5)], [(1, 0)]),
    ("meet Ross Johnston at the station", [(1, 3)], [(0, 1)]),
    ("meet Ross Johnston, at the station", [(1, 3)], [(0, 0)]),  # a comma: a pause, a clean cut
    ("from Laura Duncan to Carl Jones", [(1, 3), (4, 6)], [(0, 1), (0, 0)]),  # "to" goes once
    ("the car with Carl and Anna", [(3, 4), (5, 6)], [(0, 0), (0, 0)]),  # "with", "and" glide: not said again
    ("ask Dr. Nelson to send", [(2, 3)], [(0, 1)]),  # a title is no RESPOKEN word
    ("to Anna", [(1, 2)], [(1, 0)]),
    ("Anna", [(0, 1)], [(0, 0)]),
])
def test_a_short_word_spoken_with_a_name_is_said_again_with_its_substitute(text, spans, want):
    from recover_core.asr.alignment import Word
    from recover_core.speech.obfuscate import _respoken

    words = [Word(w, i * 0.3, i * 0.3 + 0.3, 0.9) for i, w in enumerate(text.split())]
    assert _respoken(words, spans) == want


def test_crossing_cuts_of_neighbouring_names_meet_halfway():
    from recover_core.speech.obfuscate import _meet_halfway
    from recover_core.speech.plan import Entity

    anna = Entity(1, 2, "PERSON", "Anna", "Mary", 0.30, 0.60, "aligned", 0.9, trail="to", cut=(0.30, 0.75))
    carl = Entity(3, 4, "PERSON", "Carl", "John", 0.70, 1.00, "aligned", 0.9)  # its outward snap crossed "to"
    _meet_halfway([anna, carl])
    assert anna.cut == (0.30, 0.725) and carl.cut == (0.725, 1.00)
    assert carl.cut_edges("bleep") == (0.70, 1.00)  # a bleep still covers the name alone
    apart = [Entity(1, 2, "PERSON", "Anna", "Mary", 0.3, 0.6, "aligned", 0.9),
             Entity(3, 4, "PERSON", "Carl", "John", 0.5, 1.0, "aligned", 0.9)]
    _meet_halfway(apart)  # no respoken word: refine_many's own halfway rule, untouched here
    assert [e.cut for e in apart] == [None, None]


def test_the_word_before_a_name_is_heard_after_the_splice(obfuscators, tmp_path):
    """"to" spoken into "Danielle" has no quiet edge: cut with the name, it was lost in the
    second pass ("send the report Sarah"); said again with the substitute, it is heard."""
    x = speak(tmp_path, "Please send the report to Danielle before noon.")
    r = obfuscators["substitute"].run(x)
    e = r.entities[0]
    assert (e.original, e.lead, e.trail) == ("Danielle", "to", "")
    assert e.cut[0] < e.start and e.cut[1] == e.end
    assert e.spoken() == f"to {e.substitute}"
    assert r.intended == f"Please send the report to {e.substitute} before noon."
    assert "report to" in " ".join(heard(r)) and "danielle" not in heard(r)
    assert e.public()["respoken"] == ["to"]
    bleep = obfuscators["bleep"].run(x).entities[0]  # a bleep covers the name alone
    assert bleep.cut_edges("bleep") == (bleep.start, bleep.end)
    plain = SpeechObfuscator(SpeechSettings(mode="substitute", voice="piper-joe", respeak=False),
                             obfuscators["substitute"].recognizer).run(x).entities[0]
    assert (plain.lead, plain.cut) == ("", None)


def test_splices_are_click_free_and_a_hard_cut_is_caught():
    t = np.arange(16000) / 16000
    x = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    hard = np.concatenate([x[:8000], x[8018:]])  # a quarter period dropped: the waveform jumps
    assert splice.click_ratio(hard, 16000, 8000) > 10
    soft, placed = splice.replace(x, 16000, [splice.Cut(8000, 8400, x[8018:8418])])
    (a, b), = placed
    assert splice.click_ratio(soft, 16000, a + 40) < splice.CLICK_RATIO
    assert splice.click_ratio(soft, 16000, b - 40) < splice.CLICK_RATIO
    assert np.abs(np.diff(soft)).max() < 0.05  # no sample-to-sample jump anywhere


def test_a_seam_that_clicks_is_spliced_again_with_a_longer_crossfade():
    """4 of the speech bench's 392 seams measured as clicks at 5 ms and not at 10 or 20:
    the splice tries the crossfades in turn and keeps the first with every seam click-free."""
    t = np.arange(16000) / 16000
    x = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    cuts = [splice.Cut(8000, 8400, x[8018:8418])]  # the insert starts a quarter period off
    hard, placed = splice.replace(x, 16000, cuts, 1 / 16000)  # a one-sample "crossfade" is a hard cut
    assert max(splice.seam_clicks(hard, 16000, placed, 1 / 16000)[0]) > 2 * splice.CLICK_RATIO
    y, placed, clicks = splice.replace_click_free(x, 16000, cuts, fades=(1 / 16000, 0.005, 0.02))
    assert max(clicks[0]) <= splice.CLICK_RATIO
    assert np.array_equal(y, splice.replace(x, 16000, cuts, 0.005)[0])  # the first that passes, not a later one
    # where none passes, the mildest is kept
    _, _, clicks = splice.replace_click_free(x, 16000, cuts, fades=(2 / 16000, 1 / 16000))
    assert max(clicks[0]) > splice.CLICK_RATIO
    worst = []
    for fade in (1 / 16000, 2 / 16000):
        out, placed = splice.replace(x, 16000, cuts, fade)
        worst.append(max(splice.seam_clicks(out, 16000, placed, fade)[0]))
    assert max(clicks[0]) == min(worst)


def test_names_back_to_back_share_one_seam():
    """Two cuts that touch are crossfaded insert to insert, with no sliver of the original
    (the second name's first milliseconds) between them."""
    t = np.arange(16000) / 16000
    x = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    ins1, ins2 = x[100:3300].copy(), x[5000:8000].copy()
    y, placed = splice.replace(x, 16000, [splice.Cut(4000, 6000, ins1), splice.Cut(6000, 8000, ins2)])
    (a1, b1), (a2, b2) = placed
    f = int(splice.FADE_S * 16000)
    assert b1 == a2  # one shared seam
    # x[:4000] and x[8000:] stay, the two inserts come in, and each of the three seams overlaps f samples
    assert len(y) == 4000 + len(ins1) + len(ins2) + (16000 - 8000) - 3 * f
    assert np.abs(np.diff(y)).max() < 0.05
    assert all(splice.click_ratio(y, 16000, at) < splice.CLICK_RATIO for at in (a1 + 40, b1 - 40, a2 + 40, b2 - 40))


def test_cut_points_follow_the_words_not_the_recognizers_coarse_times(obfuscators, tmp_path):
    """A name spoken apart and joined to its context: its true edges are known."""
    rec = obfuscators["substitute"].recognizer
    parts = [splice.trim(audio.resample(*voices.synthesize(t, "flite-slt"), 16000), 16000, pad_s=0.0)
             for t in ("I talked to", "Margaret Thompson", "about the new job")]
    gap = np.zeros(320, np.float32)
    x = np.concatenate([parts[0], gap, parts[1], gap, parts[2]]).astype(np.float32)
    truth = ((len(parts[0]) + 320) / 16000, (len(parts[0]) + 320 + len(parts[1])) / 16000)
    words = rec.transcribe([audio.Audio(x, 16000, 1)])[0].words
    at = [w.word.strip(".,") for w in words].index("Margaret")
    e = boundaries.refine(x, words, at, at + 2)
    assert e.method == "aligned"
    assert abs(e.start - truth[0]) < 0.04 and abs(e.end - truth[1]) < 0.04


def test_speech_without_names_comes_back_unchanged(obfuscators, tmp_path):
    c = speak(tmp_path, "The weather was cold and the trains were late again.", "flite-rms")
    r = obfuscators["substitute"].run(c)
    assert r.entities == [] and np.array_equal(r.samples, c.native) and not r.needs_review


def test_telephone_audio_at_8khz_stays_8khz(obfuscators, tmp_path):
    c = speak(tmp_path, SENTENCE, "flite-slt", rate=8000)
    assert c.source_rate == 8000
    r = obfuscators["substitute"].run(c)
    assert r.rate == 8000 and abs(len(r.samples) / 8000 - c.seconds) < 1.0
    assert [e.original for e in r.entities] == ["Margaret Thompson"]
    assert "margaret" not in heard(r) and "thompson" not in heard(r)


@pytest.mark.parametrize("text, names", [
    # names at the very start and end of the file
    ("Margaret called about the report, and then she thanked Robert", ["Margaret", "Robert"]),
    ("We invited Margaret, Susan, Robert and Kevin to the dinner.", ["Margaret", "Susan", "Robert", "Kevin"]),
    # a very long name: Whisper writes its end as other words ("Wolfish Ledgerstein-Hossing")
    ("Please welcome Maximiliano Bartholomew Wolfeschlegelsteinhausen to the stage.", None),
])
def test_awkward_positions_and_lengths(obfuscators, tmp_path, text, names):
    c = speak(tmp_path, text)
    r = obfuscators["substitute"].run(c)
    assert r.entities, "no name found"
    if names:  # every name found, replaced, and not heard again, the first and last too
        assert [e.original for e in r.entities] == names
        assert not {n.lower() for n in names} & set(heard(r)), r.second.text
    if text.startswith("Margaret called"):
        first, last = r.entities[0], r.entities[-1]
        assert first.start < 0.05 and last.end > c.seconds - 0.3  # the cuts reach the file's edges
    ends = [(e.out_start, e.out_end) for e in r.entities]
    assert all(0 <= a < b <= len(r.samples) / r.rate + 1e-3 for a, b in ends)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(ends, ends[1:]))  # replacements never overlap
    assert len({e.substitute for e in r.entities}) == len(r.entities)  # two names never share a substitute
    assert r.second is not None and np.isfinite(r.samples).all()


def test_music_clipping_and_silence(obfuscators, tmp_path):
    t = np.arange(3 * 16000) / 16000
    chord = sum(0.2 * np.sin(2 * np.pi * f * t) for f in (262, 330, 392)) * (1 + np.sin(2 * np.pi * 2 * t)) / 2
    path = tmp_path / "music.wav"
    sf.write(path, chord.astype(np.float32), 16000)
    r = obfuscators["substitute"].run(audio.load(path, keep_native=True))
    assert all(e.label == "PERSON" for e in r.entities)  # no crash; whatever it heard was handled
    loud = speak(tmp_path, SENTENCE, gain=8.0)  # clipped speech
    r = obfuscators["substitute"].run(loud)
    assert np.abs(r.samples).max() <= 1.0 and "margaret" not in heard(r)
    sf.write(tmp_path / "quiet.wav", np.zeros(16000, np.float32), 16000)
    with pytest.raises(RecoverError, match="silent"):
        audio.load(tmp_path / "quiet.wav", keep_native=True)


def test_pseudonyms_are_consistent_distinct_and_keep_gender_and_titles():
    p = Pseudonyms(seed=3, choice="rank")
    p.reserve(["Margaret", "Thompson", "John", "Susan", "Patel"])
    a = p.person(["Margaret", "Thompson"], ["Susan", "Mary", "Smith"])
    assert a[0] not in ("Susan", "Margaret") and genders()[a[0].lower()] == "f"  # Susan is an original
    assert p.person(["Margaret"], []) == [a[0]]  # the same original, the same substitute
    assert p.person(["Thompson"], [])[0] == a[1]
    john = p.person(["John"], ["Mary", "Robert", "James"])
    assert john == ["Robert"] and genders()["robert"] == "m"  # Mary is skipped: wrong gender
    assert roles(["Patel"], title_before=True) == ["last"] and roles(["Dr.", "Patel"], False) == ["title", "last"]
    dr = p.person(["Dr.", "Patel"], [])
    assert dr[0] == "Dr." and dr[1].lower() not in {"patel", a[1].lower()}
    subs = [p.person([n], [])[0] for n in ("Alice", "Brenda", "Carol", "Diane", "Ellen")]
    assert len(set(subs + [a[0], john[0]])) == 7  # distinct originals never share a substitute
    other = p.other("Denver", "GPE", ["Denver", "Boston"])
    assert other == "Boston" and p.other("Denver", "GPE", ["Austin"]) == "Boston"


def test_a_shared_mapping_keeps_a_batch_consistent():
    shared = Pseudonyms(seed=0, choice="rank")
    one = shared.person(["Kevin"], ["Brian"])
    assert shared.person(["Kevin"], ["Gary"]) == one  # a second file: same substitute
    assert Pseudonyms(seed=0, choice="rank").person(["Kevin"], ["Brian"]) == one  # deterministic for a seed


def with_candidates(ob: SpeechObfuscator, words: list[str], **settings) -> SpeechObfuscator:
    """The same models, with the filler's candidates fixed (which names the rules may choose)."""
    from recover_core.filling.base import Candidate

    fixed = SpeechObfuscator(dataclasses.replace(ob.settings, **settings), ob.recognizer, key=KEY)
    real = fixed.propose

    def propose(text, private):
        filled = real(text, private)
        return dataclasses.replace(filled, fills=[
            dataclasses.replace(f, word=words[0], candidates=[Candidate(w, 1.0) for w in words]) for f in filled.fills])
    fixed.propose = propose
    return fixed


def test_an_unheard_substitute_is_rendered_again_with_the_next_choice(obfuscators, clip):
    # In this sentence piper-joe's "Meyer" is written "Mayor" and its "Schultz" "Schulz"; "Davis" is
    # heard. None is a woman's first name: Margaret's substitute is drawn (Barbara, for seed 0).
    ob = obfuscators["substitute"]
    # The first name is kept as the old seed-0 draw gave it: which name a key draws, and whether
    # the recognizer hears it, is not what this test is about.
    r = with_candidates(ob, ["Meyer", "Davis", "Johnston"]).run(clip, Pseudonyms(0, {"margaret": "barbara"}, "rank",
                                                                              key=KEY))
    e = r.entities[0]
    assert e.heard_first is False and r.retries == 1
    assert e.substitute.split()[1] == "Davis" and e.substitute_heard, (e.substitute, r.second.text)
    assert "meyer" not in heard(r) and not e.original_heard
    assert not any("substitute is not heard" in x for x in r.reasons)
    assert r.public()["entities"][0]["substitute_heard_first_try"] is False and "retry" in r.seconds

    # A retry that does no better is dropped: the first choice, and its mapping, stand.
    pseudonyms = Pseudonyms(0, {"margaret": "barbara"}, choice="rank", key=KEY)
    r = with_candidates(ob, ["Meyer", "Schultz"]).run(clip, pseudonyms)
    assert r.retries == 1 and r.entities[0].substitute.split()[1] == "Meyer", r.second.text
    assert pseudonyms.mapping["thompson"] == "meyer" and "schultz" in pseudonyms.used  # never offered again
    assert "entity 1: the substitute is not heard" in r.reasons


def test_no_retry_replaces_a_persons_edit_an_earlier_files_choice_or_a_bleep(obfuscators, clip):
    ob = with_candidates(obfuscators["substitute"], ["Meyer", "Davis"])
    assert ob.run(clip, Pseudonyms(0, {"thompson": "meyer", "margaret": "barbara"}, "rank", key=KEY)).retries == 0  # a batch stays consistent
    assert with_candidates(ob, ["Meyer", "Davis"], retries=0).run(clip).retries == 0
    plan = ob.find(clip, Pseudonyms(0, {"margaret": "barbara"}, "rank", key=KEY))
    plan.entities[0].chosen = False  # what the Audio tab sets for an edited substitute
    r = ob.render(clip, plan)
    assert r.retries == 0 and r.entities[0].substitute.endswith("Meyer")
    assert obfuscators["bleep"].run(clip).retries == 0


def test_bad_settings_get_a_message():
    with pytest.raises(RecoverError, match="mode"):
        SpeechSettings(mode="whistle").check()
    with pytest.raises(RecoverError, match="voice"):
        SpeechSettings(voice="darth").check()
    with pytest.raises(RecoverError, match="voice"):
        SpeechSettings(exclude_voices=("darth",)).check()
    with pytest.raises(RecoverError, match="Retries"):
        SpeechSettings(retries=9).check()
    with pytest.raises(RecoverError, match="sampling"):
        SpeechSettings(dataclasses.replace(SPEECH_ENGINE, method="topk", sampling="greedy")).check()
    with pytest.raises(RecoverError, match="method"):
        SpeechSettings(dataclasses.replace(SPEECH_ENGINE, method="top3")).check()


def test_speech_chooses_through_the_engine_under_the_recordings_key(obfuscators, clip):
    """One engine: speech's settings become the engine's (preiss2023's choice is its
    rules="preiss"; Top-K draws as text's does), the substitutes are what the engine's
    ``choose`` gives for the plan's proposal under the same key, and no original, nor a
    word that sounds like one, is left in the plan's candidate lists, its reprs or reports."""
    import json

    from recover_core.pseudonyms import sound

    ob = obfuscators["substitute"]
    s = ob.engine.settings
    assert (s.rules, s.chooses, s.method, s.k) == ("preiss", "rank", "top1", 50)
    assert ob.engine.type_check is None  # preiss2023: the name lists judge a candidate, not a tagger
    prior = dataclasses.replace(SPEECH_ENGINE, method="topk", sampling="weighted", rules="ours", choice="prior")
    topk = SpeechObfuscator(SpeechSettings(prior), ob.recognizer)
    assert (topk.engine.settings.method, topk.engine.settings.sampling, topk.engine.settings.rules,
            topk.engine.settings.chooses) == ("topk", "weighted", "ours", "prior")

    plan = ob.find(clip)
    again = ob.engine.choose(plan.proposal, (" ".join(w.word for w in plan.transcript.words), list(plan.spans)),
                             ob.engine.new_mapping())  # the engine's own mapping: the same kept key
    assert [e.substitute for e in plan.entities] == [r.substitute for r in again.replacements]
    assert plan.entities[0].candidates, "the filler's list, filtered"
    originals = {"margaret", "thompson"}
    listed = [c.lower() for e in plan.entities for c in e.candidates] + \
        [c.word.lower() for f in plan.proposal.fills for c in f.candidates]
    assert originals.isdisjoint(listed) and {sound(o) for o in originals}.isdisjoint(map(sound, listed))
    r = ob.render(clip, plan)
    shown = " ".join([repr(plan), repr(plan.entities), repr(r.entities), json.dumps(r.public())]).lower()
    assert not any(o in shown for o in originals), shown


def test_spans_past_the_fillers_reach_still_get_a_substitute():
    """A filler reads 512 tokens: a name after them has no fill, and would be spoken as it is.
    It gets a drawn substitute instead."""
    from recover_core.text.spans import Span

    ob = SpeechObfuscator(SpeechSettings(), recognizer=object(), key=KEY)  # no recognizer is needed here
    text = "the meeting went on " * 160 + "and then Margaret called"
    at = text.index("Margaret")
    private = [Span(at, at + len("Margaret"), "Margaret", "PERSON")]
    proposal = ob.propose(text, private)
    assert len(proposal.fills) == 1 and proposal.fills[0].fallback and not proposal.fills[0].candidates
    chosen = ob.engine.choose(proposal, (text, private), ob.new_mapping())
    sub = chosen.replacements[0].substitute
    assert sub and sub.lower() != "margaret" and genders().get(sub.lower()) == "f", sub


def test_review_flags_unsure_words_and_low_confidence(obfuscators, clip):
    """needs_review also when the recognizer was unsure of a found name's words, or the
    second pass's confidence is under the threshold: each says why."""
    r = obfuscators["substitute"].run(clip)
    strict = SpeechObfuscator(SpeechSettings(voice="piper-joe", unsure_below=1.01, review_below=1.0),
                              obfuscators["substitute"].recognizer)
    r.reasons, r.confidence = [], 0.75
    strict._review(r)
    assert r.needs_review
    assert any("unsure of these words" in x for x in r.reasons) and "confidence 0.75 is under 1.00" in r.reasons


def test_a_substitute_is_stretched_toward_the_span_within_limits(obfuscators):
    """The inserted audio moves toward the original span's length, by at most 1.25x / 0.8x."""
    from recover_core.speech.plan import Entity

    rate = 16000
    x = (np.random.default_rng(0).standard_normal(4 * rate) * 0.05).astype(np.float32)
    y, r = voices.synthesize("Mary", "piper-joe")
    natural = len(splice.trim(y, r, pad_s=0.02)) / r
    got = {}
    for span in (natural, 3.0, 0.05):
        e = Entity(0, 1, "PERSON", "Jane", "Mary", 0.5, 0.5 + span, "aligned", 1.0)
        got[span] = len(obfuscators["substitute"]._insert(e, x, rate, "piper-joe")) / rate
    assert got[natural] == pytest.approx(natural, rel=0.05)
    lo, hi = splice.STRETCH_LIMITS
    assert got[3.0] == pytest.approx(natural * hi, rel=0.12) and got[0.05] == pytest.approx(natural * lo, rel=0.12)


def test_median_pitch_of_real_voices_and_a_tone():
    """The pitch that auto matches: a 150 Hz harmonic tone reads 150 Hz; the female flite
    voice is well above the male one; a clip too short to tell has none."""
    rate = 16000
    t = np.arange(rate) / rate
    tone = sum(np.sin(2 * np.pi * 150 * h * t) / h for h in (1, 2, 3)).astype(np.float32) * 0.3
    assert voices.median_f0(tone, rate) == pytest.approx(150, rel=0.05)
    f0 = {v: voices.median_f0(*voices.synthesize("The report arrived this morning from the office.", v))
          for v in ("flite-slt", "flite-rms")}
    assert all(60 <= f <= 400 for f in f0.values()) and f0["flite-slt"] > 1.3 * f0["flite-rms"], f0
    assert voices.median_f0(tone[: rate // 10], rate) is None


def test_auto_picks_the_clearest_voice_in_the_speakers_register(monkeypatch):
    pitch = {"piper-joe": 94.0, "espeak-ng-us": 100.0, "flite-rms": 105.0, "espeak-ng-us-f": 154.0, "flite-slt": 162.0}
    monkeypatch.setattr(voices, "voice_f0", pitch.get)
    everyone = list(pitch)
    assert voices.choose(100.0, everyone) == "flite-rms"  # espeak is nearer in pitch, rms is heard better
    assert voices.choose(100.0, ["espeak-ng-us", "piper-joe"]) == "piper-joe"
    assert voices.choose(210.0, everyone) == "flite-slt"
    assert voices.choose(150.0, ["piper-joe", "espeak-ng-us-f"]) == "espeak-ng-us-f"  # a register before clarity
    assert voices.choose(300.0, ["piper-joe", "flite-rms"]) == "flite-rms"  # none in register: the nearest
    assert voices.choose(None, ["espeak-ng-us", "flite-slt"]) == "flite-slt"  # no pitch: the clearest


def test_auto_never_picks_an_excluded_voice(obfuscators, clip):
    auto = dataclasses.replace(obfuscators["substitute"].settings, voice="auto")
    sub = SpeechObfuscator(auto, obfuscators["substitute"].recognizer)
    plan = sub.find(clip)
    chosen = sub.render(clip, plan).voice
    other = SpeechObfuscator(dataclasses.replace(auto, exclude_voices=(chosen,)), sub.recognizer)
    assert other.render(clip, plan).voice not in (None, chosen)
    everyone = SpeechObfuscator(dataclasses.replace(auto, exclude_voices=tuple(voices.VOICES)), sub.recognizer)
    with pytest.raises(RecoverError, match="excluded"):
        everyone.render(clip, plan)


@pytest.mark.parametrize("text, names", [
    ("My neighbor Victor fixed the old car with carl and rose.", {"victor", "carl", "rose"}),  # coordination
    ("Please ask doctor kim to send it.", {"kim"}),  # after a title
    ("Prices rose and fell in the market.", set()),  # a name-list word that is not a name here
    ("The report said sales were up in May.", set()),
])
def test_name_cues_add_missed_names_from_context(text, names):
    from recover_core.masking import build
    from recover_core.speech import cues

    found = cues.find(text, build("entityTagger", types=["PERSON"]).find(text))
    assert {s.text.lower() for s in found} == names


def test_a_transcript_that_ends_early_is_finished(obfuscators, tmp_path):
    """Whisper may end a transcript while speech is still to come; ``finish`` decodes the
    loud audio after the last word and appends it (both passes of the pipeline use it)."""
    rec = obfuscators["substitute"].recognizer
    a = speak(tmp_path, "The weather was cold.", "flite-rms").samples
    b = speak(tmp_path, "Trains were late again this morning.", "flite-slt").samples
    both = audio.Audio(np.concatenate([a, b]).astype(np.float32), 16000, 1)
    early = rec.transcribe([audio.Audio(a, 16000, 1)])[0]  # what an early end of text leaves
    done = rec.finish(both, early)
    assert done.text.startswith(early.text) and "late" in done.text.lower()
    assert done.words[-1].end > len(a) / 16000 and [w.start for w in done.words] == sorted(w.start for w in done.words)
    assert rec.finish(audio.Audio(a, 16000, 1), early).text == early.text  # nothing left: unchanged


@pytest.mark.parametrize("transcript", [
    "Yesterday I called Margaret about the report from Denver.",  # Whisper: cased
    "yesterday i called margaret about the report from denver",  # a normalised or caseless recognizer
])
def test_transcripts_with_or_without_case_find_the_same_names(transcript):
    from recover_core.asr.alignment import Word
    from recover_core.speech.obfuscate import _layout

    words = [Word(w, 0.1 * i, 0.1 * i + 0.1, 0.9) for i, w in enumerate(transcript.split())]
    text, where = _layout(words)
    places = dataclasses.replace(SPEECH_ENGINE, types=("PERSON", "GPE"))
    obf = SpeechObfuscator(SpeechSettings(places), recognizer=object())
    assert obf.masker.path(text) == ("cased" if transcript[0].isupper() else "caseless")
    found = {text[s:e].lower() for s, e, *_ in obf._groups(text, where)}
    assert found == {"margaret", "denver"}


@pytest.mark.parametrize("transcript, label, original", [
    ("my pin is four four two one and my name is Margaret", "SPOKEN_DIGITS", "four four two one"),
    ("the zip is nine oh two one oh", "SPOKEN_DIGITS", "nine oh two one oh"),
    ("card double four seven one two", "SPOKEN_DIGITS", "double four seven one two"),
    ("Call Anna at 555-0123.", "PHONE", "555-0123"),
])
def test_spoken_identifiers_get_a_substitute_of_their_shape(transcript, label, original):
    """Issue 56: a spoken digit string (or the numerals a recognizer writes for one) is an
    entity of its own, next to a name too, replaced by other digits as a name is by another name."""
    from recover_core.asr.alignment import Word
    from recover_core.speech.heard import digits as _digits
    from recover_core.speech.obfuscate import _layout
    from recover_core.text.spans import Span

    ob = SpeechObfuscator(SpeechSettings(), recognizer=object(), key=KEY)
    text, where = _layout([Word(w, 0.0, 0.0, 1.0) for w in transcript.split()])
    groups = ob._groups(text, where)
    private = [Span(a, b, text[a:b], lab) for a, b, _, _, lab in groups]
    chosen = ob.engine.choose(ob.propose(text, private), (text, private), ob.new_mapping())
    got = {r.label: r for r in chosen.replacements}
    assert got[label].original == original
    sub = got[label].substitute
    assert len(_digits(sub.split())) == len(_digits(original.split())) and _digits(sub.split()) != _digits(original.split())
    assert len(sub.split()) == len(original.split())
    assert "double" in sub.split() or "double" not in original  # "double four": two digits, said so again
    plain = SpeechObfuscator(SpeechSettings(dataclasses.replace(SPEECH_ENGINE, identifiers=False)),
                             recognizer=object())
    assert label not in {g[4] for g in plain._groups(text, where)}
    assert _digits("five five five one two".split()) == _digits(["555-12"]) == "55512" and _digits(["double", "four"]) == "44"


def test_a_spoken_pin_is_no_longer_heard(obfuscators, tmp_path):
    clip = speak(tmp_path, "My pin is four four two one, and the meeting is on Friday.")
    for mode in ("substitute", "bleep"):
        r = obfuscators[mode].run(clip)
        ids = [e for e in r.entities if e.label != "PERSON"]
        assert ids, [(e.label, e.substitute) for e in r.entities]
        from recover_core.speech.heard import digits as _digits

        assert "4421" not in _digits([w.word for w in r.second.words]), (mode, r.second.text)
        assert all(e.original_heard is False for e in ids), mode
