"""The listener end to end on real audio: the same events at real-time pace and fast, muting
while the daemon speaks, the micro wake-word gate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from audio.feedback import SpokenFeedback
from audio.listener import Heard, Listener, ListenerEvent, Rejected, Tick
from audio.segmenter import Activity, Segment, Segmenter
from audio.settings import AudioSettings, TtsSettings
from audio.source import ArraySource, AudioSource, WavSource
from audio.transcribe import BiasVocabulary, Transcript, TranscriptionError
from audio.tts import FileSpeaker, espeak_voice
from audio.wake import MicroWakeDetector, WakeGate
from audio.whisper import WhisperTranscriber
from rules.normalize import normalize
from tests.audio.clips import Clips, samples_of, write_wav


def summary(event: ListenerEvent) -> tuple[object, ...]:
    if isinstance(event, Heard):
        return ("heard", round(event.t, 4), event.text)
    if isinstance(event, Rejected):
        return ("rejected", round(event.t, 4), event.reason, event.raw)
    if isinstance(event, Activity):
        return ("activity", round(event.t, 4), event.voiced)
    return ("tick", round(event.t, 4))


async def collect(listener: Listener) -> list[ListenerEvent]:
    return [event async for event in listener.events()]


def heard(events: list[ListenerEvent]) -> list[str]:
    return [normalize(e.text) for e in events if isinstance(e, Heard)]


async def test_realtime_and_fast_give_identical_events(
    session: Path, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    def listener(source: AudioSource) -> Listener:
        return Listener(source, whisper, AudioSettings(), bias=sandwich_bias)

    fast = await collect(listener(WavSource(session, realtime=False)))
    loop = asyncio.get_running_loop()
    began = loop.time()
    paced = await collect(listener(WavSource(session, realtime=True)))
    wall = loop.time() - began
    other_blocks = await collect(listener(ArraySource(samples_of(session), block_ms=130)))

    duration = len(samples_of(session)) / 16000
    assert wall >= duration * 0.95  # it really was paced
    assert [summary(e) for e in paced] == [summary(e) for e in fast]
    assert [summary(e) for e in other_blocks] == [summary(e) for e in fast]
    assert heard(fast) == ["computer add bread", "stop"]


async def test_ticks_come_at_least_every_100_ms_of_audio(
    session: Path, whisper: WhisperTranscriber
) -> None:
    events = await collect(Listener(WavSource(session, realtime=False), whisper))
    ticks = [e.t for e in events if isinstance(e, Tick)]
    assert max(np.diff(ticks)) <= 0.1 + 1e-9
    assert ticks[-1] == pytest.approx(len(samples_of(session)) / 16000, abs=0.03)


async def test_heard_carries_segment_and_transcript(
    session: Path, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    events = await collect(
        Listener(WavSource(session, realtime=False), whisper, bias=sandwich_bias)
    )
    first = next(e for e in events if isinstance(e, Heard))
    assert first.t == first.segment.end
    assert first.segment.vad.silero_prob is not None and first.segment.vad.silero_prob > 0.5
    assert first.transcript.raw == first.raw
    assert first.segment.preroll == 4800


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["silence", "white", "pink", "brown"])
@pytest.mark.parametrize("silero_gate", [True, False])
async def test_a_minute_of_silence_or_noise_dispatches_nothing(
    clips: Clips,
    whisper: WhisperTranscriber,
    sandwich_bias: BiasVocabulary,
    kind: str,
    silero_gate: bool,
) -> None:
    # Noise may be cut into segments; every one must be rejected (by Silero, or without it by
    # Whisper's no-speech verdict and the text guards).
    path = clips.silence(60.0) if kind == "silence" else clips.noise(kind, 60.0, volume=0.2)
    settings = AudioSettings(silero_gate=silero_gate)
    events = await collect(
        Listener(WavSource(path, realtime=False), whisper, settings, bias=sandwich_bias)
    )
    assert heard(events) == []
    rejected = [e for e in events if isinstance(e, Rejected)]
    if kind == "silence":
        assert rejected == []
    print(kind, silero_gate, [(e.reason, e.raw) for e in rejected])


def echo_session(clips: Clips, tts: TtsSettings) -> tuple[Path, float]:
    """Operator command, then the daemon's own "Adding bread." starting as the command is
    heard (as a loudspeaker would put it into the microphone), then another command."""
    command = samples_of(clips.concat([clips.silence(0.5), clips.speech("computer add bread")]))
    lead = np.concatenate([command, np.zeros(16000, dtype=np.int16)])
    segmenter = Segmenter(AudioSettings())
    closed = [e for e in segmenter.feed(lead) if isinstance(e, Segment)]
    heard_at = round(closed[0].end * 16000) + 800  # playback starts 50 ms after
    voice = espeak_voice(tts.language, tts.voice)
    echo = samples_of(clips.convert(clips.speech("Adding bread.", voice, tts.rate), 16000, 1))
    after = samples_of(
        clips.concat([clips.silence(0.6), clips.speech("go home"), clips.silence(1)])
    )
    audio = np.concatenate([lead[:heard_at], echo, after])
    return write_wav(clips.root / "echo-session.wav", audio), len(echo) / 16000


@pytest.mark.parametrize("mute", [True, False])
async def test_the_daemons_own_speech_is_not_heard(
    clips: Clips,
    whisper: WhisperTranscriber,
    sandwich_bias: BiasVocabulary,
    mute: bool,
) -> None:
    tts = TtsSettings(engine="file", tail_ms=300)
    path, echo_seconds = echo_session(clips, tts)
    listener = Listener(WavSource(path, realtime=False), whisper, bias=sandwich_bias)
    speaker = FileSpeaker(tts)
    feedback = SpokenFeedback(speaker, listener.hold if mute else None, tts.tail_ms / 1000)
    speaking = asyncio.create_task(feedback.run(), name="feedback")
    events: list[ListenerEvent] = []
    try:
        async for event in listener.events():
            events.append(event)
            if isinstance(event, Heard) and normalize(event.text) == "computer add bread":
                feedback.say("Adding bread.")
    finally:
        speaking.cancel()
    assert speaker.spoken == [("Adding bread.", pytest.approx(echo_seconds, abs=0.01))]
    if mute:
        assert heard(events) == ["computer add bread", "go home"]
        (_, start, end) = feedback.spoken[0]
        assert listener.muted_until == pytest.approx(end + 0.3)
        assert start == pytest.approx(next(e.t for e in events if isinstance(e, Heard)))
    else:
        # The control: the same audio without muting does dispatch the echo.
        assert "adding bread" in heard(events)


async def test_micro_wake_word_gates_transcription(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    path = clips.concat(
        [
            clips.silence(0.5),
            clips.speech("okay nabu, add bread"),
            clips.silence(1.0),
            clips.speech("add cheese"),
            clips.silence(1.0),
        ]
    )
    gate = WakeGate(MicroWakeDetector("okay_nabu"), "computer")
    listener = Listener(
        WavSource(path, realtime=False),
        whisper,
        bias=sandwich_bias,
        wake_gate=gate,
        wake_required=lambda: True,
    )
    events = await collect(listener)
    assert gate.detections == 1
    assert heard(events) == ["computer add bread"]
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["no wake word"]


async def test_micro_wake_phrase_alone_opens_a_query_without_transcription(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    path = clips.concat(
        [
            clips.silence(0.5),
            clips.speech("okay nabu"),
            clips.silence(1.0),
            clips.speech("add cheese"),
            clips.silence(1.0),
        ]
    )
    required = [True]  # the base frame is on top until the wake word opens a query
    gate = WakeGate(MicroWakeDetector("okay_nabu"), "computer")
    listener = Listener(
        WavSource(path, realtime=False),
        whisper,
        bias=sandwich_bias,
        wake_gate=gate,
        wake_required=lambda: required[0],
    )
    events: list[ListenerEvent] = []
    async for event in listener.events():
        events.append(event)
        if isinstance(event, Heard):
            required[0] = False
    first, second = (e for e in events if isinstance(e, Heard))
    assert (first.text, first.raw, first.transcript.seconds) == ("computer", "", 0.0)
    assert normalize(second.text) == "add cheese"


async def test_micro_gate_is_off_when_no_wake_word_is_required(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    path = clips.concat([clips.silence(0.5), clips.speech("add cheese"), clips.silence(1.0)])
    gate = WakeGate(MicroWakeDetector("okay_nabu"), "computer")
    listener = Listener(
        WavSource(path, realtime=False),
        whisper,
        bias=sandwich_bias,
        wake_gate=gate,
        wake_required=lambda: False,
    )
    assert heard(await collect(listener)) == ["add cheese"]


async def test_every_segment_reaches_the_sink(session: Path, whisper: WhisperTranscriber) -> None:
    seen: list[tuple[float, str | None, str | None]] = []
    listener = Listener(
        WavSource(session, realtime=False),
        whisper,
        sink=lambda seg, tr, reason: seen.append((seg.end, tr.raw if tr else None, reason)),
    )
    events = await collect(listener)
    assert [t for t, _, _ in seen] == [e.t for e in events if isinstance(e, Heard | Rejected)]


class FailingTranscriber:
    """Fails the first segment with the engine's error and the second with a crash."""

    name = "failing"

    def __init__(self) -> None:
        self.calls = 0

    async def load(self) -> None:
        return None

    async def transcribe(self, segment: Segment, bias: BiasVocabulary) -> Transcript:
        self.calls += 1
        if self.calls == 1:
            raise TranscriptionError("service unreachable")
        raise RuntimeError("model blew up")


async def test_a_failing_transcriber_rejects_the_segment_and_listening_goes_on(
    session: Path,
) -> None:
    transcriber = FailingTranscriber()
    events = await collect(Listener(WavSource(session, realtime=False), transcriber))
    reasons = [e.reason for e in events if isinstance(e, Rejected)]
    assert reasons == [
        "transcription failed: service unreachable",
        "transcription failed: RuntimeError('model blew up')",
    ]
    assert isinstance(events[-1], Tick)
