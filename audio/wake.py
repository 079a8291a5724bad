"""Wake word: fuzzy matching of transcripts ("stt"), a microWakeWord detector ("micro"), or a
trained keyword model ("keyword", heard in `voiced.audio.keywords`).

With engine "stt" nothing is gated: every segment is transcribed and the text router's base
frame matches the wake word (`matches_wake_word` is the same test, for reuse). With engines
"micro" and "keyword", while the base frame is on top in wake mode, only a segment that a
detection opened is transcribed, and it is delivered with the router's wake word in front so
the base frame opens a query as if the wake word had been said.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import structlog
from voiced.audio.convert import Pcm
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SAMPLE_RATE, WakeSettings
from voiced.rules.normalize import PREFIX_THRESHOLD, fuzzy_prefix, words

log = structlog.get_logger(__name__)

TRIM_S = 0.1
"""How far before a detection a segment is cut (see `WakeGate.after_wake_phrase`)."""
DETECTED_PHRASE_THRESHOLD = 75.0
"""rapidfuzz ratio at which the start of a transcript is taken for the phrase the detector
already heard (and dropped). Looser than `PREFIX_THRESHOLD`: the detector has decided that the
phrase was said; this only decides whether Whisper's version of it is cut from the text."""


@dataclass(frozen=True)
class WakeMatch:
    """Where the wake word was found at the start of a transcript."""

    heard: str
    """The words taken for the wake word (normalised), e.g. "compute her"."""
    rest: str
    """The transcript after those words, as written (punctuation at the joint trimmed)."""
    score: float
    """rapidfuzz ratio 0..100 (100 = exact)."""


def _words(text: str) -> list[str]:
    """Words as `_after_words` counts them in the raw text: letters and digits only."""
    return words(text, apostrophes="split", decimals=False)


def matches_wake_word(
    text: str, word: str, variants: Sequence[str] = (), threshold: float = PREFIX_THRESHOLD
) -> WakeMatch | None:
    """Does `text` start with `word` (or a variant, or a near miss such as "computers")?

    The router's fuzzy prefix test (`voiced.rules.normalize.fuzzy_prefix`), so "compute her" and
    "Okay, Nabu" both match."""
    tokens = _words(text)
    forms = (" ".join(_words(form)) for form in (word, *variants))
    hit = fuzzy_prefix(tokens, forms, threshold)
    if hit is None:
        return None
    return WakeMatch(" ".join(tokens[: hit.size]), _after_words(text, hit.size), hit.score)


def _after_words(text: str, n: int) -> str:
    """`text` with its first n words removed, keeping the rest as written."""
    found = list(re.finditer(r"[A-Za-z0-9]+", text))
    if n >= len(found):
        return ""
    return text[found[n].start() :].strip(" ,.!?;:")


class WakeDetector(Protocol):
    """A streaming detector fed 16 kHz int16 audio."""

    phrase: str
    """The phrase it listens for, e.g. "okay nabu"."""

    def process(self, samples: Pcm) -> list[int]:
        """Offsets (in `samples`) where the detector fired; usually empty."""
        ...


class MicroWakeDetector:
    """pymicro-wakeword with one of its shipped models (okay_nabu, hey_jarvis, alexa,
    hey_mycroft), fed 10 ms frames. Edge-triggered with a refractory period, because the
    model's averaged probability stays above the cutoff for several frames after a detection."""

    FRAME = 160
    """10 ms at 16 kHz: what the feature frontend consumes per step."""

    def __init__(self, model: str = "okay_nabu", refractory_s: float = 1.5) -> None:
        # Its TFLite runtime loads only for the `micro` engine.
        from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model

        self._model = MicroWakeWord.from_builtin(Model(model))
        self._features = MicroWakeWordFeatures()
        self.phrase = self._model.wake_word.lower()
        self._refractory = int(refractory_s * SAMPLE_RATE)
        self._pending = np.zeros(0, dtype=np.int16)
        self._position = 0
        self._last_fire = -self._refractory
        self._above = False

    def process(self, samples: Pcm) -> list[int]:
        data = np.concatenate([self._pending, samples]) if len(self._pending) else samples
        base = self._position - len(self._pending)
        fired: list[int] = []
        usable = len(data) - len(data) % self.FRAME
        for offset in range(0, usable, self.FRAME):
            frame = data[offset : offset + self.FRAME]
            for features in self._features.process_streaming(frame.tobytes()):
                prob = self._model.process_streaming_prob(features) or 0.0
                above = prob > self._model.probability_cutoff
                at = base + offset + self.FRAME
                if above and not self._above and at - self._last_fire >= self._refractory:
                    self._last_fire = at
                    fired.append(at - self._position)
                self._above = above
        self._pending = data[usable:].copy()
        self._position += len(samples)
        return fired


class WakeGate:
    """Decides which segments are transcribed while the wake word is required (engines micro
    and keyword).

    A detection at time t opens the segment in progress at t, or the first one starting within
    `window_s` after it. Each detection opens one segment. The micro detector is run here
    (`feed`); the keyword models are run for the wake and stop words at once
    (`voiced.audio.keywords`), and their wake hits arrive through `arm`."""

    def __init__(
        self,
        detector: WakeDetector | None,
        wake_word: str,
        window_s: float = 3.0,
        trim_s: float | None = TRIM_S,
        phrase: str | None = None,
        text_too: bool = False,
    ) -> None:
        self.detector = detector
        self.text_too = text_too
        """A segment no detection opened is transcribed all the same, and the text router
        looks for the wake word in it (engine "keyword" with `transcribe_all`)."""
        self.wake_word = wake_word
        self.window_s = window_s
        self.trim_s = trim_s
        self.phrase = phrase or (detector.phrase if detector is not None else wake_word)
        """The phrase the detector listens for (dropped from the transcript)."""
        self._armed_at: float | None = None
        self.detections = 0
        """Detections so far (for logs and tests)."""

    def feed(self, samples: Pcm, first_sample: int, listening: bool) -> None:
        """Run the detector (if the gate has one) over samples starting at `first_sample` on
        the audio clock."""
        if self.detector is None:
            return
        for offset in self.detector.process(samples):
            self.arm((first_sample + offset) / SAMPLE_RATE, listening)

    def arm(self, t: float, listening: bool, score: float | None = None) -> None:
        """The wake phrase was heard at `t`. Ignored while `listening` is False (no wake word
        needed)."""
        self.detections += 1
        log.info("wake word detected", phrase=self.phrase, t=t, armed=listening, score=score)
        if listening:
            self._armed_at = t

    def admit(self, segment: Segment) -> float | None:
        """The time of the detection that opens this segment, or None (a detection opens one
        segment only)."""
        armed = self._armed_at
        if armed is None:
            return None
        if segment.start > armed + self.window_s:
            self._armed_at = None
            return None
        if segment.end < armed:
            return None
        self._armed_at = None
        return armed

    def after_wake_phrase(
        self, segment: Segment, detected_at: float, min_speech_s: float
    ) -> Segment | None:
        """The part of `segment` after the wake phrase, or None if the phrase was all of it.

        Whisper hears "okay nabu" badly ("Okay, I'll move", "Go can I move") and the bad words
        spill into the command, so the phrase is cut off before transcription. The detector
        fires about 0.1 s after the phrase ends; `trim_s` before that keeps the next word.
        With `trim_s` None nothing is cut: Whisper hears the phrase itself and `deliver` drops
        it (a keyword model fires anywhere from before the end of the word to 0.15 s after
        it, so no cut keeps all of the next word and none of the phrase)."""
        if self.trim_s is None:
            return segment
        cut_t = detected_at - self.trim_s
        if cut_t <= segment.start:
            return segment  # the phrase was in an earlier segment
        if segment.vad.speech_end - cut_t < min_speech_s:
            return None
        cut = round(cut_t * SAMPLE_RATE) - segment.first_sample
        return replace(segment, samples=segment.samples[cut:], preroll=0, start=cut_t)

    def deliver(self, text: str) -> str:
        """The text as the router should see it: the router's wake word, then the command (the
        phrase is dropped if it is still there)."""
        found = matches_wake_word(text, self.phrase, threshold=DETECTED_PHRASE_THRESHOLD)
        rest = found.rest if found else text.strip()
        return f"{self.wake_word} {rest}".strip()


KEYWORD_TRIM_S = None
"""The keyword engine does not cut the wake word off (see `WakeGate.after_wake_phrase`): on
"computer add bread" said in one breath, a cut 0.05 s before the firing left "...ter add
bread", heard as "not bad"."""


def make_wake_gate(
    settings: WakeSettings, wake_word: str, phrase: str | None = None
) -> WakeGate | None:
    """The gate for engines "micro" and "keyword" (`phrase`: the keyword model's); None for
    engine "stt" (nothing is gated)."""
    if settings.engine == "micro":
        return WakeGate(MicroWakeDetector(settings.model), wake_word, settings.window_s)
    if settings.engine == "keyword":
        return WakeGate(None, wake_word, settings.window_s, KEYWORD_TRIM_S, phrase or wake_word,
                        text_too=settings.transcribe_all)  # fmt: skip
    return None
