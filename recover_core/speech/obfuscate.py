"""Speech in, the same speech with its private words replaced out (preiss2023's pipeline).

1. The recognizer gives words with times and confidences.
2. A masking technique (entityTagger with PERSON by default) finds the private words in the
   transcript; their edges are refined for cutting (``boundaries``).
3. Text's engine chooses a substitute per private word (``Obfuscator.propose`` and ``choose``,
   under the recording's key): preiss2023's procedure is its ``rules="preiss"``.
4. ``substitute`` speaks it with an offline voice in the speaker's register (``voice="clone"``:
   converted toward the speaker's own voice, ``convert``); ``bleep`` and ``silence`` don't.
5. ``splice`` puts it in place, at the recording's own rate.
6. A second recognition pass checks the result: is the substitute heard, is the original
   still heard, and how far is the whole from the intended text (preiss2023's confidence);
   and each insert's speaker similarity to the rest of the recording (``speaker``).

``find`` (steps 1-3) and ``render`` (4-6) are apart, so that a person can edit the
substitutes in between (the Audio tab does). Original words stay in memory: nothing here
writes them anywhere.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from recover_core.asr.audio import SAMPLE_RATE, Audio, resample
from recover_core.filling.base import Fill, Filled, MaskInput
from recover_core.obfuscator import Obfuscator
from recover_core.speech import boundaries, heard, speaker, splice, voices
from recover_core.speech.clone import CLONE_BASES, CLONE_SHORTLIST, SpeakerCache
from recover_core.speech.plan import (DATE_LABELS, NUMBER_LABELS, RESPOKEN, VOICE_CHOICES, Entity, Plan,
                                     Result, SpeechSettings)
from recover_core.pseudonyms import TITLES, Pseudonyms, bare
from recover_core.pseudonyms.key import new_key
from recover_core.text.spans import IDENTIFIER_LABELS, Span

if TYPE_CHECKING:  # torch loads with the recognizer, not on import (the app starts without it)
    from recover_core.asr.alignment import Word
    from recover_core.asr.recognize import Recognizer


def _missed_keys(e: Entity, pseudonyms: Pseudonyms) -> list[str]:
    """The mapping keys behind the substitute words the second pass missed."""
    if e.label in IDENTIFIER_LABELS:  # as Pseudonyms._identifier keys it
        return [e.original.strip().lower()]
    if e.label != "PERSON":
        return [pseudonyms.key_of(e.original, e.label)]
    return [bare(t) for t, sub in zip(e.original.split(), e.substitute.split()) if bare(sub) in e.unheard]


def _respoken(words: list[Word], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(1 or 0, 1 or 0) per (first, last) word range: whether the word just before and the
    word just after are said again with the substitute. Each is a RESPOKEN word with no
    punctuation between it and the name, inside no entity, and taken by one entity only
    ("from Anna to Carl": the "to" goes with Anna)."""
    taken = {i for first, last in spans for i in range(first, last)}

    def plain(i: int) -> bool:  # a RESPOKEN word, no punctuation on it
        return 0 <= i < len(words) and i not in taken and words[i].word.strip().lower() in RESPOKEN

    def joined(w: Word) -> bool:  # no punctuation (a pause) after this word
        return w.word.strip()[-1:].isalnum()

    out = []
    for first, last in spans:
        lead = plain(first - 1)
        trail = plain(last) and joined(words[last - 1])
        taken |= {first - 1} if lead else set()
        taken |= {last} if trail else set()
        out.append((int(lead), int(trail)))
    return out


def _meet_halfway(entities: list[Entity]) -> None:
    """Substitute cuts of neighbouring entities that cross meet halfway: a name's edge snaps
    outward, a respoken word's inward, so "from Anna to Carl" may give Carl a start before
    the end of Anna's "to" (``boundaries.refine_many`` does the same within one list)."""
    for a, b in zip(entities, entities[1:]):
        if a.cut or b.cut:
            met = boundaries.meet_halfway(a.cut_edges("substitute"), b.cut_edges("substitute"))
            if met != (a.cut_edges("substitute"), b.cut_edges("substitute")):
                a.cut, b.cut = met


def _layout(words: list[Word]) -> tuple[str, list[tuple[int, int]]]:
    """The transcript as one text, and each word's character range in it."""
    spans, at = [], 0
    for w in words:
        spans.append((at, at + len(w.word)))
        at += len(w.word) + 1
    return " ".join(w.word for w in words), spans


def _without_title(sp: Span) -> Span:
    """The name without the title the masker gives it ("Mr. John Dashwood": TAB's experts mark
    the title with the name, masking/document.py). In speech a title is said, not private: cut
    out and spoken again in another voice, it would only add a seam, so the entity starts at
    the name, and the title stays in the speaker's own voice."""
    head, _, rest = sp.text.partition(" ")
    if sp.label != "PERSON" or not rest.strip() or bare(head) not in TITLES:
        return sp
    skip = len(sp.text) - len(rest.lstrip())
    return replace(sp, start=sp.start + skip, text=sp.text[skip:])


class SpeechObfuscator:
    """Models are built on first use and kept: one per process serves every file."""

    def __init__(self, settings: SpeechSettings = SpeechSettings(), recognizer: "Recognizer | None" = None,
                 key: bytes | str | None = None):
        if recognizer is None:
            from recover_core.asr.recognize import Recognizer

            recognizer = Recognizer()
        self.settings = s = settings.check()
        self.recognizer = recognizer
        # Text's engine finds the spans, proposes the candidates and chooses the substitutes,
        # so whatever protects text protects audio: one seeding rule, the same rules
        # (consistent, free, same type and gender, never an original nor a sound-alike) and
        # the same filtered candidate lists. preiss2023's choice is the engine's "preiss"
        # rules (plan.SPEECH_ENGINE); "ours" with "prior" is text's default, with its NER type check.
        self._fresh = key is None  # no key kept: each recording draws under a key of its own
        self.engine = Obfuscator(s.engine, key=key)  # text's secret key draws speech's substitutes too

    @property
    def masker(self):
        return self.engine.masker

    def new_mapping(self) -> Pseudonyms:
        """An empty mapping under these settings' rules and the engine's key (a fresh one per
        recording unless the caller keeps one): what ``find`` uses when given none."""
        return self.engine.new_mapping(new_key() if self._fresh else None)

    def find(self, clip: Audio, pseudonyms: Pseudonyms | None = None) -> Plan:
        """Steps 1-3: transcript, private words with cut points, and a substitute for each."""
        transcript = self.recognizer.transcribe([clip], finish=True)[0]
        words = transcript.words
        if not words:
            return Plan(transcript, [])
        text, where = _layout(words)
        groups = self._groups(text, where)
        if not groups:
            return Plan(transcript, [])
        private = [Span(s, e, text[s:e], label) for s, e, _, _, label in groups]
        pseudonyms = pseudonyms or self.new_mapping()
        before = set(pseudonyms.mapping)
        proposal = self.propose(text, private)
        chosen = self.engine.choose(proposal, (text, private), pseudonyms)
        # The plan keeps the proposal for a retry, with the candidate lists as the engine
        # filtered them: no original, and no word that sounds like one, is kept there either.
        proposal = replace(proposal, fills=[replace(f, candidates=list(r.candidates))
                                            for f, r in zip(proposal.fills, chosen.replacements)])
        spans = [(first, last) for _, _, first, last, _ in groups]
        carried = _respoken(words, spans) if self.settings.respeak and self.settings.mode == "substitute" else None
        whole = boundaries.align_transcript(clip.samples, words)
        # A number in figures does not say how it was said ("2010": "twenty ten" or "two
        # thousand and ten"); the audio does. The substitute is said the same way, and the
        # cut follows the words said, not the figures' default reading.
        said = {(first, last): r for (_, _, first, last, _), rep in zip(groups, chosen.replacements)
                if rep.label in NUMBER_LABELS and any(c.isdigit() for w in words[first:last] for c in w.word)
                and (r := boundaries.said_in(clip.samples, words, first, last, date=rep.label in DATE_LABELS,
                                             whole=whole))}
        if said:
            whole = boundaries.align_transcript(clip.samples, words, {k: v.split() for k, v in said.items()}) or whole
        cuts = boundaries.refine_many(clip.samples, words, spans, whole=whole)
        wider = (boundaries.refine_many(clip.samples, words, [(f - a, l + b) for (f, l), (a, b) in zip(spans, carried)],
                                        whole=whole, outward=False) if carried and any(map(any, carried)) else None)
        entities = []
        for i, ((s, e, first, last, label), original, rep, edges) in enumerate(zip(groups, private,
                                                                                  chosen.replacements, cuts)):
            last_word_end = where[last - 1][1]
            suffix = text[e:last_word_end] if e < last_word_end and text[e:last_word_end][:1] in "'’" else ""
            entity = Entity(first, last, rep.label, original.text, rep.substitute, edges.start, edges.end,
                            edges.method, min(w.probability for w in words[first:last]), suffix,
                            candidates=[c.word for c in rep.candidates])
            entity.said = said.get((first, last), "")
            if wider and any(carried[i]):
                lead, trail = carried[i]
                entity.lead = bare(words[first - 1].word) if lead else ""
                entity.trail = bare(words[last].word) if trail else ""
                # the name's own edge keeps its outward snap; a respoken word's snaps inward
                entity.cut = (wider[i].start if lead else edges.start, wider[i].end if trail else edges.end)
            entities.append(entity)
        _meet_halfway(entities)
        return Plan(transcript, entities, pseudonyms, frozenset(set(pseudonyms.mapping) - before), proposal,
                    tuple(private))

    def _groups(self, text: str, where: list[tuple[int, int]]) -> list[tuple[int, int, int, int, str]]:
        """(char start, char end, first word, last word, label) per entity: the masker's spans,
        joined when only spaces lie between them (one name, one substitute)."""
        spans = [_without_title(sp) for sp in self.masker.find(text)]
        if self.settings.name_cues and "PERSON" in (self.settings.engine.types or ()):
            from recover_core.speech import cues

            spans = cues.find(text, spans)
        out: list[list] = []
        for sp in spans:
            first = next(i for i, (a, b) in enumerate(where) if b > sp.start)
            last = next((i for i, (a, b) in enumerate(where) if a >= sp.end), len(where))
            # An identifier is its own entity (a phone number after a name keeps its shape),
            # unless the recognizer cut inside a word the other span holds.
            apart = not {sp.label, out[-1][4]} & set(IDENTIFIER_LABELS) if out else True
            if out and ((apart and not text[out[-1][1]:sp.start].strip()) or first < out[-1][3]):
                g = out[-1]
                g[1], g[3] = max(g[1], sp.end), max(g[3], last)
                if g[4] in IDENTIFIER_LABELS or sp.label in IDENTIFIER_LABELS:
                    g[4] = g[4] if g[4] in IDENTIFIER_LABELS else sp.label
                elif g[4] != sp.label and "PERSON" in (g[4], sp.label):
                    g[4] = "PERSON"
                continue
            out.append([sp.start, sp.end, first, last, sp.label])
        return [tuple(g) for g in out]  # type: ignore[misc]

    def propose(self, text: str, private: list[Span]) -> Filled:
        """The engine's fills for the transcript with each private span masked: one fill per
        span (the filler never sees an original; Top-K draws under the engine's seeding)."""
        markers, masked, at = [], [], 0
        for sp in private:
            masked.append(text[at:sp.start])
            pos = sum(len(x) for x in masked)
            marker = f"[{sp.label}]"
            markers.append(Span(pos, pos + len(marker), marker, sp.label))
            masked.append(marker)
            at = sp.end
        masked.append(text[at:])
        masked_text = "".join(masked)
        filled = self.engine.propose([MaskInput(masked_text, markers)])[0]
        # A filler stops at its model's length (512 tokens): the spans past it still need a
        # substitute, since a span left alone is the original spoken. They get no candidates,
        # so the rules draw one.
        shift = len(filled.text) - len(masked_text)
        rest = [Fill(m.start + shift, m.end + shift, m.label, "", [], fallback=True)
                for m in markers[len(filled.fills):]]
        return replace(filled, fills=filled.fills + rest) if rest else filled

    def render(self, clip: Audio, plan: Plan) -> Result:
        """Steps 4-7 for a plan whose substitutes may have been edited; then, where the
        second pass missed a substitute the rules chose, again with their next choice."""
        made: dict = {}  # inserts by (text, voice, span): an unchanged entity is not synthesized again
        spk = SpeakerCache(clip, plan, self.settings)
        result = self._render_once(clip, plan, made, spk)
        for e in plan.entities:
            e.heard_first = e.substitute_heard
        t0 = time.perf_counter()
        for _ in range(self.settings.retries):
            misses = heard.misses(result)  # now: the next render changes these entities in place
            kept = [dataclasses.replace(e) for e in plan.entities]
            undo = self._renew(plan)
            if undo is None:
                break
            again = self._render_once(clip, plan, made, spk)
            result.retries += 1
            if heard.misses(again) >= misses:  # no better: the first choice stands
                plan.pseudonyms.restore(undo)  # type: ignore[union-attr]
                plan.entities[:] = kept
                break
            again.retries, again.seconds = result.retries, result.seconds
            result = again
        if result.retries:
            result.seconds["retry"] = time.perf_counter() - t0
        self._review(result)
        return result

    def _render_once(self, clip: Audio, plan: Plan, made: dict, spk: SpeakerCache) -> Result:
        s = self.settings
        t0 = time.perf_counter()
        x = clip.native if clip.native is not None else clip.samples
        rate = clip.source_rate if clip.native is not None else SAMPLE_RATE
        words = plan.transcript.words
        if not plan.entities:
            return Result(plan, x.copy(), rate, s.mode, None, None, " ".join(w.word for w in words),
                          reasons=[], seconds={"render": time.perf_counter() - t0})
        f0 = voice = None
        if s.mode == "substitute":
            f0 = voices.median_f0(clip.samples, SAMPLE_RATE)
            voice = voices.choose(f0, exclude=s.exclude_voices) if s.voice in VOICE_CHOICES else s.voice
            if s.voice == "clone":
                bases = [v for v in voices.available() if v in CLONE_BASES and v not in s.exclude_voices]
                # knn-cmn judges each base by its converted inserts; the others by the stock
                # voice alone (judged converted, world's base was better on the bench's 16
                # utterances but worse on the real LibriVox sentence: docs/speech_obfuscation.md)
                if s.conversion == "knn-cmn":
                    voice = self._clone_base(x, rate, plan, made, spk, bases) or voice
                else:
                    voice = spk.base_voice(bases) or voice
        cuts = []
        for e in plan.entities:
            a, b = e.cut_edges(s.mode)
            key = (e.spoken(), voice, a, b)
            if key not in made:
                made[key] = self._insert(e, x, rate, voice, spk)
            cuts.append(splice.Cut(int(a * rate), int(b * rate), made[key]))
        out, placed, clicks = splice.replace_click_free(x, rate, cuts)
        for e, (a, b), c in zip(plan.entities, placed, clicks):
            e.out_start, e.out_end = a / rate, b / rate
            e.clicks = c
            e.click_free = max(e.clicks) <= splice.CLICK_RATIO
            e.similarity = spk.similarity(out[a:b], rate) if s.mode == "substitute" else None
        result = Result(plan, out, rate, s.mode, voice, f0, self._intended(words, plan.entities),
                        conversion=s.conversion if s.voice == "clone" and s.mode == "substitute" else None)
        result.seconds["render"] = time.perf_counter() - t0
        if s.second_pass:
            t1 = time.perf_counter()
            self._second_pass(result)
            result.seconds["second_pass"] = time.perf_counter() - t1
        return result

    def _clone_base(self, x: np.ndarray, rate: int, plan: Plan, made: dict, spk: SpeakerCache,
                    bases: list[str]) -> str | None:
        """The stock voice whose converted inserts sound most like the speaker, by the speaker
        encoder against half the speaker's other speech (``choice_halves``): each of the
        ``CLONE_SHORTLIST`` bases nearest the speaker says every substitute, converted, and the
        highest mean similarity wins. Judging the
        converted insert, not the stock voice, matters: what conversion keeps of a base differs
        by base and speaker, and the base nearest the speaker before conversion was not the
        nearest after it (measured: docs/speech_obfuscation.md). Chosen once per recording,
        kept for retries; None without the encoder."""
        if spk.base is not None:
            return spk.base
        reference = spk.choice_reference() if bases else None
        if reference is None:
            return None
        # Only the bases nearest the speaker before conversion are converted and judged: of four,
        # two cost 0.006 of similarity and cut the render's time by a tenth (docs/speech_obfuscation.md)
        bases = speaker.ranked(reference, bases)[:CLONE_SHORTLIST] or bases
        scores = {}
        for v in bases:
            sims = []
            for e in plan.entities:
                a, b = e.cut_edges(self.settings.mode)
                key = (e.spoken(), v, a, b)
                if key not in made:  # the chosen base's inserts are not made again
                    made[key] = self._insert(e, x, rate, v, spk)
                sims.append(speaker.similarity(speaker.embed(made[key], rate), reference))
            sims = [sim for sim in sims if sim is not None]
            if sims:
                scores[v] = float(np.mean(sims))
        spk.base = max(scores, key=scores.__getitem__) if scores else None
        return spk.base

    def _renew(self, plan: Plan) -> dict[str, str] | None:
        """The rules' next choice for each substitute word the second pass missed; the old
        words stay used, so no retry picks them again. None when there is nothing to renew:
        a person's edit, a substitute kept from an earlier file or mapping, bleep or silence."""
        p = plan.pseudonyms
        if self.settings.mode != "substitute" or p is None:
            return None
        keys = {k for e in plan.entities if e.substitute_heard is False and e.chosen
                for k in _missed_keys(e, p) if k in plan.renewable}
        if not keys:
            return None
        undo = p.forget(keys)
        text = _layout(plan.transcript.words)[0]  # the transcript as ``find`` laid it out
        again = self.engine.choose(plan.proposal, (text, list(plan.spans)), p)  # type: ignore[arg-type]
        for e, r in zip(plan.entities, again.replacements):
            if e.chosen:
                e.substitute = r.substitute
        return undo

    def run(self, clip: Audio, pseudonyms: Pseudonyms | None = None) -> Result:
        t0 = time.perf_counter()
        plan = self.find(clip, pseudonyms)
        found = time.perf_counter() - t0
        result = self.render(clip, plan)
        result.seconds["find"] = found
        return result

    def _insert(self, e: Entity, x: np.ndarray, rate: int, voice: str | None,
                spk: SpeakerCache | None = None) -> np.ndarray:
        start, end = e.cut_edges(self.settings.mode)
        s, t = int(start * rate), int(end * rate)
        if self.settings.mode == "silence":
            return np.zeros(t - s, np.float32)
        if self.settings.mode == "bleep":
            return splice.bleep(t - s, rate, splice.active_rms(x[s:t], rate))
        text = e.spoken()
        audio, r = voices.synthesize(text, voice)
        audio = splice.trim(audio, r, pad_s=0.02)
        target, natural = end - start, len(audio) / r
        ratio = float(np.clip(target / max(natural, 1e-3), *splice.STRETCH_LIMITS))
        if e.label in NUMBER_LABELS:
            # A number's substitute often has fewer words than the original ("seventy" for
            # "seventy two"): slowed to the original's length, flite's "seventy" was heard as
            # "17". It may be quicker, never slower, than the voice says it.
            ratio = min(ratio, 1.0)
        if abs(ratio - 1.0) > 0.05:
            audio, r = voices.synthesize(text, voice, ratio)
            audio = splice.trim(audio, r, pad_s=0.02)
        if self.settings.voice == "clone" and spk is not None:
            audio = spk.converted(audio, r, voice, start, end)
        ins = resample(audio, r, rate)
        return splice.scaled(ins, rate, splice.context_rms(x, rate, s, t))

    def _intended(self, words: list[Word], entities: list[Entity]) -> str:
        """What the output should say: a substitute is spoken, a bleep or silence is not."""
        out, at = [], 0
        for e in entities:
            out += [w.word for w in words[at:e.first]]
            if self.settings.mode == "substitute":
                out.append(e.substitute + e.suffix)
            at = e.last
        return " ".join(out + [w.word for w in words[at:]])

    def _second_pass(self, r: Result) -> None:
        from recover_core.asr import wer

        clip = Audio(resample(r.samples, r.rate, SAMPLE_RATE), r.rate, 1)
        r.second = self.recognizer.transcribe([clip], finish=True)[0]
        for e in r.entities:
            heard.judge(e, r.second.words, e.out_start, e.out_end, r.mode == "substitute")
        intended, hyp = wer.normalize(r.intended), wer.normalize(r.second.text)
        if not intended:
            r.wer = r.cer = 0.0 if not hyp else 1.0
        else:
            sc = wer.score([r.intended], [r.second.text])
            r.wer, r.cer = sc.wer / 100, sc.cer / 100
        r.confidence = max(0.0, 1.0 - r.wer)

    def _review(self, r: Result) -> None:
        s = self.settings
        for i, e in enumerate(r.entities, 1):
            if e.original_heard:
                r.reasons.append(f"entity {i}: the original is still heard")
            if e.substitute_heard is False:
                r.reasons.append(f"entity {i}: the substitute is not heard")
            if e.probability < s.unsure_below:
                r.reasons.append(f"entity {i}: the recognizer was unsure of these words (p={e.probability:.2f})")
            if not e.click_free:
                r.reasons.append(f"entity {i}: a seam may click")
        if r.confidence is not None and r.confidence < s.review_below:
            r.reasons.append(f"confidence {r.confidence:.2f} is under {s.review_below:.2f}")
        r.needs_review = bool(r.reasons)
