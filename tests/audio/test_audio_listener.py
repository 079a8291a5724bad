"""The listener end to end on real audio: the same events at real-time pace and fast, hearing
past the daemon's own voice, the micro wake-word gate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from voiced.audio.aec import WebRtcEchoCanceller
from voiced.audio.convert import read_audio
from voiced.audio.duplex import Duplex
from voiced.audio.feedback import SpokenFeedback
from voiced.audio.listener import BargeIn, Heard, Listener, ListenerEvent, Rejected, Tick
from voiced.audio.playback import Playback
from voiced.audio.room import RoomEcho, RoomSettings
from voiced.audio.segmenter import Activity, Segment, Segmenter
from voiced.audio.settings import AudioSettings, TtsSettings
from voiced.audio.source import ArraySource, AudioSource, WavSource
from voiced.audio.transcribe import BiasVocabulary, Transcript, TranscriptionError
from voiced.audio.tts import EspeakSpeaker
from voiced.audio.wake import MicroWakeDetector, WakeGate
from voiced.audio.whisper import WhisperTranscriber
from voiced.rules.normalize import normalize

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


REPLY = "Adding bread. I have bread, meat and cheese."
ROOM = RoomSettings(gain_db=0.0)
"""The reply reaches the microphone as loud as the operator's voice."""


def command_then_command(clips: Clips) -> Path:
    """ "computer add bread", a pause the daemon's reply fills, then "go home"."""
    parts = [clips.silence(0.5), clips.speech("computer add bread"), clips.silence(3.0),
             clips.speech("go home"), clips.silence(1.0)]  # fmt: skip
    return clips.concat(parts)


def with_echo(clips: Clips, path: Path, reply: np.ndarray) -> Path:
    """The session as the microphone hears it when the reply starts where the daemon starts it
    (the end of the first segment), through the same room: the control's input."""
    audio = read_audio(path)
    first = next(e for e in Segmenter(AudioSettings()).feed(audio) if isinstance(e, Segment))
    at = round(first.end * 16000)
    reference = np.zeros(len(audio), dtype=np.int16)
    reference[at : at + len(reply)] = reply[: len(audio) - at]
    room, frame = RoomEcho(ROOM), 480
    mixed = [room.mix(audio[i : i + frame], reference[i : i + frame])
             for i in range(0, len(audio), frame)]  # fmt: skip
    return write_wav(clips.root / "echoed.wav", np.concatenate(mixed))


async def test_the_daemons_own_speech_is_not_heard(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    """Its reply reaches the input through the room at the operator's level while it keeps
    listening; the echo canceller and the own-voice check keep it from being heard."""
    playback = Playback()
    duplex = Duplex(playback, 0.3, RoomEcho(ROOM), WebRtcEchoCanceller())
    listener = Listener(WavSource(command_then_command(clips), realtime=False), whisper,
                        bias=sandwich_bias, duplex=duplex)  # fmt: skip
    feedback = SpokenFeedback(EspeakSpeaker(TtsSettings(), audible=False), playback, listener.hold)
    speaking = asyncio.create_task(feedback.run(), name="feedback")
    events: list[ListenerEvent] = []
    try:
        async for event in listener.events():
            events.append(event)
            if isinstance(event, Heard) and normalize(event.text) == "computer add bread":
                feedback.say(REPLY)
    finally:
        speaking.cancel()
    (_, start, _end) = feedback.spoken[0]
    assert start == pytest.approx(next(e.t for e in events if isinstance(e, Heard)))
    assert heard(events) == ["computer add bread", "go home"]
    assert not [e for e in events if isinstance(e, BargeIn)], "no barge-in by its own voice"


async def test_the_control_without_defences_hears_the_echo(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    reply = EspeakSpeaker(TtsSettings(), audible=False).synthesize(REPLY)
    path = with_echo(clips, command_then_command(clips), reply)
    events = await collect(Listener(WavSource(path, realtime=False), whisper,
                                    bias=sandwich_bias))  # fmt: skip
    assert any("bread" in text for text in heard(events)[1:]), heard(events)


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

    async def transcribe(
        self, segment: Segment, bias: BiasVocabulary, choose: object = None
    ) -> Transcript:
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


async def test_a_stretch_heard_in_pieces_is_heard_again_whole(
    clips: Clips, whisper: WhisperTranscriber, sandwich_bias: BiasVocabulary
) -> None:
    """Two phrases a second apart are two segments; heard again from the first word to the
    last, they are one transcript holding both (`Listener.rehear`)."""
    path = clips.concat([
        clips.silence(0.5), clips.speech("computer, put the cheese"), clips.silence(1.0),
        clips.speech("on the left"), clips.silence(1.0),
    ])  # fmt: skip
    listener = Listener(WavSource(path, realtime=False), whisper, bias=sandwich_bias)
    said = [e for e in await collect(listener) if isinstance(e, Heard)]
    assert len(said) == 2, [e.text for e in said]
    first, last = said
    again = await listener.rehear(first.segment.start, last.segment.vad.speech_end)
    assert again is not None
    assert normalize(again.text) == "computer put the cheese on the left", again.text
    assert await listener.rehear(0.0, 10.5) is None  # the input would wait too long for it
