"""`[stt] engine = "wyoming"` against the real wyoming-faster-whisper (the bundled tiny.en on a
free port): it hears what the local model hears; when the server goes away the local model takes
over, said once, and the server is used again once it is back."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import structlog
from voiced.audio.engines import whole_file_segment
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SttSettings
from voiced.audio.transcribe import NO_BIAS, BiasVocabulary, Choice, Chooser, Transcript
from voiced.audio.whisper import WhisperTranscriber
from voiced.audio.wyomingstt import ServerSwitch, WyomingTranscriber
from wyoming.asr import Transcribe
from wyoming.asr import Transcript as WyomingTranscript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.info import Info

from tests.audio.clips import Clips
from tests.wyomingservers import SpeechServer, free_port

pytestmark = pytest.mark.slow


class LocalModel:
    """A stand-in for the local model that says which segments it was given."""

    name = "local"

    def __init__(self) -> None:
        self.loaded = False
        self.segments: list[Segment] = []

    async def load(self) -> None:
        self.loaded = True

    async def transcribe(
        self, segment: Segment, bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Transcript:
        self.segments.append(segment)
        return Transcript("local words", "local words", 0.0, 0.0, None, 0.0)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SpeechServer]:
    running = SpeechServer(tmp_path_factory.mktemp("wyoming-data"))
    running.start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def command(clips: Clips) -> Segment:
    # At espeak's 160 words a minute tiny.en reads this at -1.13 nats a token, under
    # faster-whisper's -1.0 threshold, so the server (which keeps the default temperature
    # fallback) samples its answer and once heard "computer dope home". At 145 it reads -0.64
    # and stays greedy, so the server's answer is the same every time.
    return whole_file_segment(clips.speech("computer, go home", rate=145))


def settings(uri: str, timeout_s: float = 10.0, retry_s: float = 30.0) -> SttSettings:
    return SttSettings(engine="wyoming", uri=uri, timeout_s=timeout_s, retry_s=retry_s)


async def test_the_server_hears_what_the_local_model_hears(
    server: SpeechServer, command: Segment, whisper: WhisperTranscriber
) -> None:
    local = LocalModel()
    switches: list[ServerSwitch] = []
    remote = WyomingTranscriber(settings(server.uri), local, switches.append)
    await remote.load()
    heard = await remote.transcribe(command, NO_BIAS)
    here = await whisper.transcribe(command, NO_BIAS)
    assert words(heard.text) == words(here.text) == "computer go home"
    assert heard.accepted
    assert local.loaded and not local.segments and not switches


async def test_each_segment_carries_the_vocabulary_and_the_grammar_chooses_from_the_text(
    command: Segment, sandwich_bias: BiasVocabulary
) -> None:
    # A recording peer: what the protocol carries, byte for byte, and the answer it gives.
    received: list[Event] = []

    async def peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (event := await async_read_event(reader)) is not None:
            received.append(event)
            if AudioStop.is_type(event.type):
                await async_write_event(WyomingTranscript("computer art bread").event(), writer)
                break
        writer.close()

    seen: list[list[str]] = []

    def choose(hypotheses: Sequence[str]) -> Choice | None:
        seen.append(list(hypotheses))
        return Choice(0, "computer add bread")

    port = free_port()
    async with await asyncio.start_server(peer, "127.0.0.1", port):
        remote = WyomingTranscriber(settings(f"tcp://127.0.0.1:{port}"), LocalModel())
        heard = await remote.transcribe(command, sandwich_bias, choose)
    ask = Transcribe.from_event(received[0])
    assert ask.language == "en"
    assert ask.transcript_names == list(sandwich_bias.words)
    assert ask.transcript_terms == list(sandwich_bias.phrases)
    start = AudioStart.from_event(received[1])
    assert (start.rate, start.width, start.channels) == (16000, 2, 1)
    audio = b"".join(AudioChunk.from_event(e).audio for e in received[2:-1])
    assert audio == command.samples.astype("<i2").tobytes()
    assert seen == [["computer art bread"]]
    assert (heard.text, heard.raw, heard.repaired) == (
        "computer add bread",
        "computer art bread",
        True,
    )


async def test_a_server_that_goes_away_hands_over_once_and_is_used_again_when_back(
    tmp_path: Path, command: Segment
) -> None:
    server = SpeechServer(tmp_path / "data")
    server.start()
    local, clock, switches = LocalModel(), Clock(), list[ServerSwitch]()
    remote = WyomingTranscriber(settings(server.uri, retry_s=30.0), local, switches.append, clock)
    try:
        assert words((await remote.transcribe(command, NO_BIAS)).text) == "computer go home"
        server.stop()
        with structlog.testing.capture_logs() as logs:
            for _ in range(3):
                assert (await remote.transcribe(command, NO_BIAS)).text == "local words"
                clock.now += 5.0
        assert len(local.segments) == 3
        assert [e["event"] for e in logs if e["log_level"] == "warning"] == [
            "speech server unusable; the local model transcribes"
        ]
        assert switches == [ServerSwitch(False, server.uri, switches[0].reason)]
        assert "Connect call failed" in (switches[0].reason or "")
        server.start()
        clock.now += 30.0
        with structlog.testing.capture_logs() as logs:
            back = await remote.transcribe(command, NO_BIAS)
            again = await remote.transcribe(command, NO_BIAS)
        assert words(back.text) == words(again.text) == "computer go home"
        assert len(local.segments) == 3
        assert [e["event"] for e in logs if e["log_level"] != "debug"] == [
            "speech server back; it transcribes again"
        ]
        assert switches[1:] == [ServerSwitch(True, server.uri)]
    finally:
        server.stop()


async def test_a_server_that_never_answers_costs_one_timeout(command: Segment) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # takes everything, answers nothing
        writer.close()

    port = free_port()
    hung = await asyncio.start_server(silent, "127.0.0.1", port)
    local, switches = LocalModel(), list[ServerSwitch]()
    remote = WyomingTranscriber(
        settings(f"tcp://127.0.0.1:{port}", timeout_s=0.3), local, switches.append
    )
    async with hung:
        heard = await remote.transcribe(command, NO_BIAS)
        assert heard.text == "local words"
        assert (await remote.transcribe(command, NO_BIAS)).text == "local words"
    assert [s.up for s in switches] == [False]
    assert switches[0].reason == "TimeoutError"


async def test_a_peer_without_speech_to_text_is_given_up_at_start() -> None:
    # E.g. [stt] uri pointed at a satellite: it describes itself, but transcribes nothing.
    async def satellite(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await async_read_event(reader)
        await async_write_event(Info().event(), writer)
        writer.close()

    port = free_port()
    local, switches = LocalModel(), list[ServerSwitch]()
    remote = WyomingTranscriber(settings(f"tcp://127.0.0.1:{port}"), local, switches.append)
    async with await asyncio.start_server(satellite, "127.0.0.1", port):
        await remote.load()
    assert local.loaded and not remote.using_server
    assert [(s.up, s.reason) for s in switches] == [
        (False, f"tcp://127.0.0.1:{port} offers no speech-to-text")
    ]
