"""Wake word: fuzzy matching (engine stt), the microWakeWord detector and the gate (engine
micro)."""

from __future__ import annotations

import numpy as np
import pytest
from voiced.audio.convert import Pcm
from voiced.audio.segmenter import Segment, VadStats
from voiced.audio.settings import WakeSettings
from voiced.audio.wake import MicroWakeDetector, WakeGate, make_wake_gate, matches_wake_word

from tests.audio.clips import Clips, samples_of


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("Computer, add bread.", "add bread"),
        ("computer add bread", "add bread"),
        ("Computers, add bread", "add bread"),
        ("Compute her, go home.", "go home"),
        ("Come pewter stop", "stop"),
        ("computer", ""),
    ],
)
def test_wake_word_and_near_misses_match(text: str, rest: str) -> None:
    found = matches_wake_word(text, "computer", ["compute her", "come pewter"])
    assert found is not None and found.rest == rest


@pytest.mark.parametrize(
    "text", ["add bread", "come here add bread", "put cheese on the computer", "", "Okay."]
)
def test_other_text_does_not_match(text: str) -> None:
    assert matches_wake_word(text, "computer", ["compute her"]) is None


def test_multi_word_phrases_match_as_written() -> None:
    found = matches_wake_word("Okay, Nabu, add bread.", "okay nabu")
    assert found is not None and (found.heard, found.rest, found.score) == (
        "okay nabu", "add bread", 100.0,
    )  # fmt: skip
    assert matches_wake_word("OK Nabu add bread", "okay nabu") is not None


def test_micro_detector_fires_once_on_the_phrase(clips: Clips) -> None:
    audio = samples_of(clips.concat([clips.silence(0.5), clips.speech("okay nabu"),
                                     clips.silence(1.0)]))  # fmt: skip
    detector = MicroWakeDetector("okay_nabu")
    fired = [i + o for i in range(0, len(audio), 480) for o in detector.process(audio[i : i + 480])]
    assert len(fired) == 1
    assert 0.9 < fired[0] / 16000 < 1.8  # just after the phrase ends
    assert detector.phrase == "okay nabu"


@pytest.mark.parametrize("color", ["white", "pink", "brown"])
def test_micro_detector_stays_quiet_on_noise(clips: Clips, color: str) -> None:
    audio = samples_of(clips.noise(color, 20.0))
    detector = MicroWakeDetector("okay_nabu")
    assert detector.process(audio) == []


@pytest.mark.parametrize("model", ["okay_nabu", "hey_jarvis", "alexa", "hey_mycroft"])
def test_every_shipped_model_loads(model: str) -> None:
    assert MicroWakeDetector(model).process(np.zeros(1600, dtype=np.int16)) == []


class FakeDetector:
    """Fires at the sample offsets it is told to."""

    phrase = "okay nabu"

    def __init__(self, at: list[int]) -> None:
        self.at = at
        self.position = 0

    def process(self, samples: Pcm) -> list[int]:
        start, self.position = self.position, self.position + len(samples)
        return [a - start for a in self.at if start <= a < self.position]


def segment(start: float, speech_end: float, end: float) -> Segment:
    samples = np.arange(round((end - start + 0.3) * 16000), dtype=np.int16)
    return Segment(samples, 4800, start, end, VadStats(10, 10, start, speech_end, 100.0))


def test_gate_opens_the_segment_in_progress_and_only_that_one() -> None:
    gate = WakeGate(FakeDetector([16000 * 2]), "computer")
    gate.feed(np.zeros(16000 * 3, dtype=np.int16), 0, listening=True)
    assert gate.admit(segment(0.5, 1.5, 1.8)) is None  # ended before the detection
    assert gate.admit(segment(1.0, 3.0, 3.3)) == 2.0
    assert gate.admit(segment(3.5, 4.0, 4.3)) is None  # used up


def test_gate_detection_expires_after_the_window() -> None:
    gate = WakeGate(FakeDetector([16000]), "computer", window_s=1.0)
    gate.feed(np.zeros(16000 * 2, dtype=np.int16), 0, listening=True)
    assert gate.admit(segment(2.5, 3.0, 3.3)) is None
    assert gate.admit(segment(1.5, 2.0, 2.3)) is None


def test_detections_while_no_wake_word_is_needed_do_not_arm() -> None:
    gate = WakeGate(FakeDetector([8000]), "computer")
    gate.feed(np.zeros(16000, dtype=np.int16), 0, listening=False)
    assert gate.detections == 1
    assert gate.admit(segment(0.2, 0.8, 1.0)) is None


def test_the_wake_phrase_is_cut_off_before_transcription() -> None:
    gate = WakeGate(FakeDetector([]), "computer", trim_s=0.1)
    whole = segment(1.0, 3.0, 3.3)
    rest = gate.after_wake_phrase(whole, detected_at=2.0, min_speech_s=0.15)
    assert rest is not None and rest.start == pytest.approx(1.9) and rest.preroll == 0
    cut = round(1.9 * 16000) - whole.first_sample
    np.testing.assert_array_equal(rest.samples, whole.samples[cut:])
    assert gate.after_wake_phrase(whole, detected_at=2.95, min_speech_s=0.15) is None
    assert gate.after_wake_phrase(whole, detected_at=0.9, min_speech_s=0.15) is whole


@pytest.mark.parametrize(
    ("text", "delivered"),
    [
        ("add bread", "computer add bread"),
        ("Okay, Nabu, add bread.", "computer add bread"),
        ("", "computer"),
    ],
)
def test_delivered_text_starts_with_the_routers_wake_word(text: str, delivered: str) -> None:
    assert WakeGate(FakeDetector([]), "computer").deliver(text) == delivered


def test_engine_stt_has_no_gate() -> None:
    assert make_wake_gate(WakeSettings(engine="stt"), "computer") is None
    gate = make_wake_gate(WakeSettings(engine="micro", model="hey_jarvis"), "computer")
    assert gate is not None and gate.detector.phrase == "hey jarvis"


def test_engine_keyword_gates_on_hits_from_outside() -> None:
    """The keyword models run for the wake and stop words at once (voiced.audio.keywords); the
    gate has no detector of its own and is armed by their wake hits."""
    gate = make_wake_gate(WakeSettings(engine="keyword"), "computer", "computer")
    assert gate is not None and gate.detector is None and gate.phrase == "computer"
    assert not gate.text_too
    gate.feed(np.zeros(16000, dtype=np.int16), 0, listening=True)  # nothing to run
    gate.arm(2.0, listening=True, score=0.93)
    assert gate.admit(segment(1.0, 3.0, 3.3)) == 2.0
    assert gate.admit(segment(3.5, 4.0, 4.3)) is None
    either = make_wake_gate(WakeSettings(engine="keyword", transcribe_all=True), "computer")
    assert either is not None and either.text_too
