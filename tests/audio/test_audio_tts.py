"""Speakers (null, espeak-ng to 16 kHz samples) and spoken feedback on the playback timeline:
phrases placed where they were decided, back to back, and cut off by an interrupt."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs
from voiced.audio.convert import Pcm, read_audio
from voiced.audio.feedback import SpokenFeedback
from voiced.audio.listener import Listener
from voiced.audio.playback import Playback
from voiced.audio.settings import TtsSettings
from voiced.audio.source import ArraySource
from voiced.audio.transcribe import BiasVocabulary, Transcript
from voiced.audio.tts import EspeakSpeaker, NullSpeaker, Speaker, espeak_voice, make_speaker

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng missing")


class NeverTranscribes:
    """The feedback tests never produce a segment."""

    name = "none"

    async def load(self) -> None:
        return None

    async def transcribe(
        self, segment: object, bias: BiasVocabulary, choose: object = None
    ) -> Transcript:
        raise AssertionError("no segment expected")


class Tones(NullSpeaker):
    """A speaker whose phrases are one second of a constant per phrase (no espeak needed)."""

    audible = False

    def synthesize(self, text: str) -> Pcm:
        return np.full(16000, len(text), dtype=np.int16)


def test_null_speaker_logs_once_and_says_nothing() -> None:
    speaker = NullSpeaker(TtsSettings(engine="null"), reason="no engine here")
    with capture_logs() as logs:
        assert len(speaker.synthesize("Adding bread.")) == 0
        assert len(speaker.synthesize("Done.")) == 0
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert len(warnings) == 1 and warnings[0]["reason"] == "no engine here"
    assert not speaker.audible


def test_voices_are_espeak_variants_picked_by_name() -> None:
    speaker: Speaker = NullSpeaker(TtsSettings())
    assert speaker.voices() == ["Alex", "Annie", "Michael", "Linda", "Andy"]
    speaker.set_voice("annie")
    assert isinstance(speaker, NullSpeaker) and speaker.voice_id == "en-us+Annie"
    with pytest.raises(ValueError, match="unknown voice"):
        speaker.set_voice("Hal")
    assert espeak_voice("en-gb", "Andy") == "en-gb+Andy"


@needs_espeak
def test_make_speaker_follows_the_engine_and_whether_anything_is_played() -> None:
    assert isinstance(make_speaker(TtsSettings(engine="null")), NullSpeaker)
    for engine in ("espeak", "pyttsx3"):  # pyttsx3 is the older name
        speaker = make_speaker(TtsSettings(engine=engine))
        assert isinstance(speaker, EspeakSpeaker) and speaker.audible
    assert not make_speaker(TtsSettings(engine="file")).audible
    assert not make_speaker(TtsSettings(), audible=False).audible  # a file session


@needs_espeak
def test_espeak_speaker_gives_what_espeak_says_at_16k(tmp_path: Path) -> None:
    speaker = EspeakSpeaker(TtsSettings(voice="Annie", rate=160))
    pcm = speaker.synthesize("I don't have avocado.")
    wav = tmp_path / "said.wav"
    subprocess.run(
        ["espeak-ng", "-v", "en-us+Annie", "-s", "160", "-w", str(wav), "I don't have avocado."],
        check=True,
    )
    reference = read_audio(wav)
    assert pcm.dtype == np.int16 and abs(len(pcm) - len(reference)) <= 16
    n = min(len(pcm), len(reference))
    assert np.corrcoef(pcm[:n].astype(float), reference[:n].astype(float))[0, 1] > 0.99
    assert speaker.synthesize("I don't have avocado.") is pcm  # cached
    speaker.set_voice("Michael")
    assert len(speaker.synthesize("I don't have avocado.")) != len(pcm)


async def test_phrases_go_on_the_timeline_back_to_back_from_where_they_were_decided() -> None:
    listener = Listener(ArraySource(np.zeros(16000, dtype=np.int16)), NeverTranscribes())
    playback = Playback()
    feedback = SpokenFeedback(Tones(), playback, listener.hold)
    runner = asyncio.create_task(feedback.run())
    try:
        feedback.say("Adding bread.")
        feedback.say("Done.")
        await asyncio.wait_for(feedback.drain(), 10)
    finally:
        runner.cancel()
    assert feedback.spoken == [("Adding bread.", 0.0, 1.0), ("Done.", 1.0, 2.0)]
    assert playback.render(15990, 20).tolist() == [13] * 10 + [5] * 10
    assert playback.playing(32000) is None


async def test_interrupt_cuts_the_phrase_playing_and_drops_what_is_queued() -> None:
    playback = Playback()
    feedback = SpokenFeedback(Tones(), playback, None, position=lambda: 0)
    runner = asyncio.create_task(feedback.run())
    try:
        feedback.say("Always listen mode.")
        await asyncio.wait_for(feedback.drain(), 10)
        feedback.say("I will act on everything I hear.")
        await asyncio.wait_for(feedback.drain(), 10)
        cut = feedback.interrupt(8000, "barge-in")
        feedback.say("Stopped.")
        await asyncio.wait_for(feedback.drain(), 10)
    finally:
        runner.cancel()
    assert cut == ["Always listen mode.", "I will act on everything I hear."]
    phrases = playback.during(0, 10**9)
    assert [(p.text, p.start, p.end) for p in phrases] == [
        ("Always listen mode.", 0, 8000),
        ("Stopped.", 8000, 24000),
    ]


async def test_a_failing_speaker_still_releases_the_listener() -> None:
    class Broken(NullSpeaker):
        def synthesize(self, text: str) -> Pcm:
            raise RuntimeError("espeak-ng gone")

    listener = Listener(ArraySource(np.zeros(1600, dtype=np.int16)), NeverTranscribes())
    feedback = SpokenFeedback(Broken(), Playback(), listener.hold)
    runner = asyncio.create_task(feedback.run())
    try:
        with capture_logs() as logs:
            feedback.say("Hello.")
            await asyncio.wait_for(feedback.drain(), 5)
    finally:
        runner.cancel()
    assert any(e["event"] == "speech failed" for e in logs)
    events = [e async for e in listener.events()]  # does not block on the released hold
    assert events and feedback.spoken == []
