"""Speakers: the null speaker, file-session durations, pyttsx3 on its one worker thread, and
spoken feedback that mutes the listener."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from audio.feedback import SpokenFeedback
from audio.listener import Listener
from audio.settings import TtsSettings
from audio.source import ArraySource
from audio.transcribe import BiasVocabulary, Transcript
from audio.tts import (
    FileSpeaker,
    NullSpeaker,
    Pyttsx3Speaker,
    Speaker,
    espeak_voice,
    make_speaker,
)

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng missing")


class NeverTranscribes:
    """The feedback tests never produce a segment."""

    name = "none"

    async def load(self) -> None:
        return None

    async def transcribe(self, segment: object, bias: BiasVocabulary) -> Transcript:
        raise AssertionError("no segment expected")


async def test_null_speaker_logs_once_and_says_nothing() -> None:
    speaker = NullSpeaker(TtsSettings(engine="null"), reason="no engine here")
    with capture_logs() as logs:
        assert await speaker.speak("Adding bread.") == 0.0
        assert await speaker.speak("Done.") == 0.0
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert len(warnings) == 1 and warnings[0]["reason"] == "no engine here"
    assert speaker.spoken == ["Adding bread.", "Done."]
    assert not speaker.speaking


def test_voices_are_espeak_variants_picked_by_name() -> None:
    speaker: Speaker = NullSpeaker(TtsSettings())
    assert speaker.voices() == ["Alex", "Annie", "Michael", "Linda", "Andy"]
    speaker.set_voice("annie")
    assert isinstance(speaker, NullSpeaker) and speaker.voice_id == "en-us+Annie"
    with pytest.raises(ValueError, match="unknown voice"):
        speaker.set_voice("Hal")
    assert espeak_voice("en-gb", "Andy") == "en-gb+Andy"


@needs_espeak
def test_make_speaker_follows_the_engine_setting() -> None:
    assert isinstance(make_speaker(TtsSettings(engine="null")), NullSpeaker)
    assert isinstance(make_speaker(TtsSettings(engine="file")), FileSpeaker)
    assert isinstance(make_speaker(TtsSettings(engine="pyttsx3")), Pyttsx3Speaker)


@needs_espeak
async def test_file_speaker_duration_is_what_espeak_would_take(tmp_path: Path) -> None:
    speaker = FileSpeaker(TtsSettings(engine="file", voice="Annie", rate=160))
    seconds = await speaker.speak("I don't have avocado.")
    wav = tmp_path / "said.wav"
    subprocess.run(
        ["espeak-ng", "-v", "en-us+Annie", "-s", "160", "-w", str(wav), "I don't have avocado."],
        check=True,
    )
    expected = float(subprocess.run(["soxi", "-D", str(wav)], capture_output=True, text=True,
                                    check=True).stdout)  # fmt: skip
    assert seconds == pytest.approx(expected, abs=0.002)
    assert speaker.spoken == [("I don't have avocado.", seconds)]
    speaker.set_voice("Michael")
    assert await speaker.speak("I don't have avocado.") != seconds  # another voice, another length


@needs_espeak
async def test_pyttsx3_speaks_on_its_worker_thread() -> None:
    speaker = Pyttsx3Speaker(TtsSettings(voice="Linda"))
    await speaker.load()
    task = asyncio.create_task(speaker.speak("Stopping."))
    await asyncio.sleep(0)
    assert speaker.speaking
    seconds = await task
    assert seconds >= 0.0
    assert not speaker.speaking
    # Two at once are spoken one after the other (pyttsx3 is not thread-safe).
    both = await asyncio.gather(speaker.speak("One."), speaker.speak("Two."))
    assert all(s >= 0.0 for s in both)


@needs_espeak
async def test_feedback_mutes_the_listener_for_each_phrase_back_to_back() -> None:
    listener = Listener(ArraySource(np.zeros(16000, dtype=np.int16)), NeverTranscribes())
    speaker = FileSpeaker(TtsSettings(engine="file"))
    feedback = SpokenFeedback(speaker, listener.hold, tail_s=0.3)
    runner = asyncio.create_task(feedback.run())
    try:
        feedback.say("Adding bread.")
        feedback.say("Adding cheese.")
        await asyncio.wait_for(feedback.drain(), 10)
    finally:
        runner.cancel()
    (_, s1, e1), (_, s2, e2) = feedback.spoken
    assert s1 == 0.0 and s2 == pytest.approx(e1)
    assert e2 - s2 == pytest.approx(speaker.duration("Adding cheese."))
    assert listener.muted_until == pytest.approx(e2 + 0.3)


async def test_a_failing_speaker_still_releases_the_listener() -> None:
    class Broken(NullSpeaker):
        async def speak(self, text: str) -> float:
            raise RuntimeError("audio device gone")

    listener = Listener(ArraySource(np.zeros(1600, dtype=np.int16)), NeverTranscribes())
    feedback = SpokenFeedback(Broken(), listener.hold, tail_s=0.2)
    runner = asyncio.create_task(feedback.run())
    try:
        with capture_logs() as logs:
            feedback.say("Hello.")
            await asyncio.wait_for(feedback.drain(), 5)
    finally:
        runner.cancel()
    assert any(e["event"] == "speech failed" for e in logs)
    events = [e async for e in listener.events()]  # does not block on the released hold
    assert events and listener.muted_until == pytest.approx(0.2)
