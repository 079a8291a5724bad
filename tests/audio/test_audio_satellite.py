"""`SatelliteSource` against a peer that speaks the satellite's side of the Wyoming protocol:
the microphone comes in on one clock without gaps, the daemon's speech goes out while it plays,
and a link that drops is said once and made again while the listener hears silence."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import numpy as np
import pytest
import structlog
from voiced.audio.playback import Playback
from voiced.audio.satellite import LinkChange, NotASatellite, SatelliteSource
from voiced.audio.source import AudioChunk
from wyoming.audio import AudioChunk as WyomingChunk
from wyoming.audio import AudioStart, AudioStop
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.info import AsrProgram, Attribution, Describe, Info, Satellite
from wyoming.satellite import RunSatellite

from tests.wyomingservers import free_port
from voiced.errors import AudioError

CHUNK = 1024


@dataclass
class FakeSatellite:
    """Describes itself, streams its microphone (the connection's number as every sample,
    at 22.05 kHz as a real one may) after `run-satellite`, keeps what it is sent, and hangs up
    after `hang_up_after` chunks on its first connection."""

    hang_up_after: int | None = None
    connections: int = 0
    received: list[Event] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        describe = await async_read_event(reader)
        assert describe is not None and Describe.is_type(describe.type)
        me = Satellite("fake", Attribution("", ""), True, "fake", None)
        await async_write_event(Info(satellite=me).event(), writer)
        run = await async_read_event(reader)
        assert run is not None and RunSatellite.is_type(run.type)
        listening = asyncio.create_task(self._listen(reader))
        try:
            sent = 0
            while self.hang_up_after is None or number > 1 or sent < self.hang_up_after:
                audio = np.full(CHUNK, number, dtype="<i2").tobytes()
                await async_write_event(WyomingChunk(22050, 2, 1, audio).event(), writer)
                sent += 1
                await asyncio.sleep(0.005)
        finally:
            listening.cancel()
            writer.close()

    async def _listen(self, reader: asyncio.StreamReader) -> None:
        while (event := await async_read_event(reader)) is not None:
            self.received.append(event)


@contextlib.asynccontextmanager
async def fake(peer: FakeSatellite) -> AsyncIterator[str]:
    port = free_port()
    server = await asyncio.start_server(peer.handle, "127.0.0.1", port)
    async with server:
        yield f"wyoming://127.0.0.1:{port}"
        server.close()


async def take(source: SatelliteSource, until: int) -> list[AudioChunk]:
    """Chunks until one carries the value `until` (the peer's connection number)."""
    got: list[AudioChunk] = []
    async with contextlib.aclosing(source.chunks()) as chunks:
        async for chunk in chunks:
            got.append(chunk)
            if len(chunk.samples) and chunk.samples.max() >= until:
                return got
    raise AssertionError("the source ended")


async def test_a_dropped_link_is_said_once_heard_as_silence_and_made_again() -> None:
    peer = FakeSatellite(hang_up_after=20)
    links: list[LinkChange] = []
    async with fake(peer) as uri:
        source = SatelliteSource(uri, on_link=links.append, backoff_s=(0.2, 0.4))
        with structlog.testing.capture_logs() as logs:
            got = await asyncio.wait_for(take(source, until=2), 10)
    assert [(c.connected, c.name) for c in links] == [(True, "fake"), (False, None), (True, "fake")]
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == [
        "satellite link lost; reconnecting"
    ]
    assert all(b.start == a.end for a, b in itertools.pairwise(got)), "the audio clock has gaps"
    levels = [int(c.samples.max()) if len(c.samples) else 0 for c in got]
    first_silence = levels.index(0)
    assert set(levels[:first_silence]) == {1}
    # 22.05 kHz in, 16 kHz out: 20 chunks of 1024 samples are about 14,860 samples here.
    assert abs(got[first_silence].start - 20 * CHUNK * 16000 / 22050) < 50
    silent = sum(len(c.samples) for c in got if len(c.samples) and c.samples.max() == 0)
    assert silent >= 0.2 * 16000, "no silence while the link was down"


async def test_the_daemons_speech_goes_to_the_satellite_while_it_plays() -> None:
    peer = FakeSatellite()
    playback = Playback()
    reply = np.arange(1, 3001, dtype=np.int16)
    playback.schedule("Done.", reply, 2048)
    async with fake(peer) as uri:
        source = SatelliteSource(uri, playback=playback)
        async with contextlib.aclosing(source.chunks()) as chunks:
            async for chunk in chunks:
                if chunk.end > 2048 + 3000 + 4 * CHUNK:
                    break
        await asyncio.sleep(0.05)
    kinds = [e.type for e in peer.received]
    assert kinds[0] == "audio-start" and "audio-stop" in kinds
    stop = kinds.index("audio-stop")
    assert set(kinds[1:stop]) == {"audio-chunk"}
    played = b"".join(WyomingChunk.from_event(e).audio for e in peer.received[1:stop])
    samples = np.frombuffer(played, dtype="<i2")
    start = AudioStart.from_event(peer.received[0])
    assert (start.rate, start.width, start.channels) == (16000, 2, 1)
    # Whole chunks of the timeline: silence around the reply, the reply whole and in order.
    voiced = samples[samples != 0]
    assert np.array_equal(voiced, reply)
    assert AudioStop.is_type(peer.received[stop].type)


@pytest.mark.parametrize("uri", ["tcp://127.0.0.1:10700", "wyoming://nohost", "wyoming://h:0"])
def test_only_a_wyoming_address_names_a_satellite(uri: str) -> None:
    with pytest.raises(AudioError):
        SatelliteSource(uri)


async def test_a_reply_cut_off_stops_on_the_satellite_too() -> None:
    # A barge-in or a stop cuts the timeline: the satellite gets no more of the reply after it.
    peer = FakeSatellite()
    playback = Playback()
    reply = np.arange(1, 30001, dtype=np.int16)  # almost 2 s
    playback.schedule("A long answer.", reply, 0)
    cut_at: int | None = None
    async with fake(peer) as uri:
        source = SatelliteSource(uri, playback=playback)
        async with contextlib.aclosing(source.chunks()) as chunks:
            async for chunk in chunks:
                if cut_at is None and chunk.end > 8000:
                    cut_at = source.head_samples
                    playback.cut(cut_at)
                if chunk.end > 30000:
                    break
        await asyncio.sleep(0.05)
    kinds = [e.type for e in peer.received]
    stop = kinds.index("audio-stop")
    played = b"".join(WyomingChunk.from_event(e).audio for e in peer.received[1:stop])
    samples = np.frombuffer(played, dtype="<i2")
    assert cut_at is not None and 8000 < cut_at < 20000
    assert np.array_equal(samples[samples != 0], reply[:cut_at])
    assert "audio-chunk" not in kinds[stop:], "the reply went on after the cut"


async def test_a_peer_that_is_no_satellite_is_a_wrong_address_said_once() -> None:
    """E.g. --audio pointed at the speech server's port: it would take run-satellite and be
    silent. Waiting will not mend the address: the source ends with an error naming it, what
    the peer offers instead, and the daemon exits with that line (it retried for ever)."""

    async def speech_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await async_read_event(reader)
        asr = AsrProgram(name="faster-whisper", description="", attribution=Attribution("", ""),
                         installed=True, version="3", models=[])  # fmt: skip
        await async_write_event(Info(asr=[asr]).event(), writer)
        await reader.read()
        writer.close()

    port = free_port()
    links: list[LinkChange] = []
    async with await asyncio.start_server(speech_server, "127.0.0.1", port):
        source = SatelliteSource(f"wyoming://127.0.0.1:{port}", on_link=links.append)
        with pytest.raises(NotASatellite) as raised:
            async with contextlib.aclosing(source.chunks()) as chunks:
                async for _ in chunks:
                    pass
    assert str(raised.value) == (
        f"--audio wyoming://127.0.0.1:{port}: not a satellite: it describes "
        "speech-to-text (faster-whisper)"
    )
    assert links == [], "not reported as a link that may come back"
