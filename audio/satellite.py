"""A Wyoming satellite as the microphone and loudspeaker (`--audio wyoming://HOST:PORT`).

wyoming-satellite is a server that waits for its one client (Home Assistant, normally). The
daemon takes that place: it asks the satellite to describe itself, sends `run-satellite`, and
then an always-streaming satellite sends its microphone as `audio-chunk` events without end.
The satellite also announces `run-pipeline`, `streaming-started` and the like for a pipeline
server to act on; the daemon runs its own pipeline on the audio, so these are only logged.

Those chunks go into the same listener as a local microphone's (segmenter, wake gate, stop
spotter, echo handling), on the audio clock of the samples received. The daemon's speech is
the playback timeline (`voiced.audio.playback`): as each microphone chunk arrives, the timeline
at that chunk's positions is sent back as `audio-start` / `audio-chunk` (16 kHz mono; the
satellite converts it to what its `--snd-command` plays) / `audio-stop` when the reply ends or
is cut.
So a barge-in or a stop cuts the reply within a chunk, as on the local sound card.

The link dropping is not the end of input: the source reconnects with growing pauses and the
listener hears silence in real time meanwhile, so the operator's timers keep running. Each
change of the link is reported once (`LinkChange`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

import numpy as np
import structlog
from voiced.audio.convert import Pcm
from voiced.audio.playback import Playback
from voiced.audio.settings import SAMPLE_RATE, wyoming_address
from voiced.audio.source import AudioChunk
from wyoming.audio import AudioChunk as WyomingChunk
from wyoming.audio import AudioChunkConverter, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info
from wyoming.satellite import RunSatellite

from voiced.errors import AudioError

log = structlog.get_logger(__name__)

SCHEME = "wyoming://"
"""How `--audio` names a satellite."""
DESCRIBE_TIMEOUT_S = 5.0
"""A satellite that does not accept the connection, or describe itself, in this time is not
one that works (a machine that is off would otherwise hold each attempt for minutes)."""
BACKOFF_S = (0.5, 10.0)
"""The first pause before reconnecting, and the longest; it doubles after each failure."""
SILENCE_BLOCK_MS = 20
"""Silence heard while the link is down comes in blocks this long, in real time."""


def is_satellite(spec: str) -> bool:
    """Whether `--audio` names a satellite."""
    return spec.startswith(SCHEME)


@dataclass(frozen=True)
class LinkChange:
    """The link to the satellite came up or was lost."""

    connected: bool
    uri: str
    reason: str | None = None
    """Why it was lost (None when it came up)."""
    name: str | None = None
    """The satellite's own name (when it came up)."""


LinkSink = Callable[[LinkChange], None]


class LinkLost(Exception):
    """The satellite closed the link or answered nothing usable."""


class NotASatellite(AudioError):
    """The address answers, but as another Wyoming service (a speech server, a wake-word
    service): the configuration is wrong, and waiting will not mend it."""


class SatelliteSource:
    """`AudioSource` on a wyoming-satellite; plays `playback` on its speaker."""

    def __init__(
        self,
        uri: str,
        *,
        playback: Playback | None = None,
        queue_seconds: float = 10.0,
        on_link: LinkSink | None = None,
        backoff_s: tuple[float, float] = BACKOFF_S,
    ) -> None:
        address = wyoming_address(uri)
        if address is None or not is_satellite(uri):
            raise AudioError(f'--audio {uri}: expected "wyoming://HOST:PORT"')
        self.uri = uri
        self.host, self.port = address
        self.playback = playback
        """What the daemon says, played on the satellite's speaker; None: nothing is sent."""
        self.on_link = on_link
        self.backoff_s = backoff_s
        self.connected: bool | None = None
        """None before the first attempt, then whether the link is up."""
        self.dropped_samples = 0
        """Received audio replaced by silence because the listener fell behind."""
        self._max_samples = max(1, round(queue_seconds * SAMPLE_RATE))
        self._queue: deque[Pcm | int] = deque()
        self._queued = 0
        self._ready = asyncio.Event()
        self._failed: Exception | None = None
        self._head = 0
        self._speaking = False

    @property
    def head_samples(self) -> int:
        """Audio-clock position of the newest sample received: where the satellite's speaker
        is playing now (the listener may lag behind it by a transcription)."""
        return self._head

    async def chunks(self) -> AsyncGenerator[AudioChunk, None]:
        link = asyncio.create_task(self._keep_linked(), name="satellite-link")
        start = 0
        try:
            while True:
                await self._ready.wait()
                self._ready.clear()
                if self._failed is not None:
                    raise self._failed
                while self._queue:
                    item = self._queue.popleft()
                    if isinstance(item, int):
                        samples = np.zeros(item, dtype=np.int16)
                    else:
                        samples = item
                        self._queued -= len(item)
                    yield AudioChunk(samples, start)
                    start += len(samples)
        finally:
            link.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await link

    async def _keep_linked(self) -> None:
        try:
            pause = self.backoff_s[0]
            while True:
                try:
                    client = AsyncTcpClient(self.host, self.port, DESCRIBE_TIMEOUT_S)
                    async with client:
                        name = await self._start(client)
                        self._linked(name)
                        pause = self.backoff_s[0]
                        await self._stream(client)
                    reason = "the satellite closed the link"
                except NotASatellite:
                    if self.connected is None:
                        raise  # the first answer: a wrong address, said once, and the end
                    reason = "the address no longer answers as a satellite"
                except (OSError, TimeoutError, ValueError, LinkLost) as exc:
                    reason = str(exc) or type(exc).__name__
                self._lost(reason, pause)
                await self._silence(pause)
                pause = min(pause * 2, self.backoff_s[1])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # Not a link problem (a bug, a wrong address): the listener must hear of it, not
            # wait for ever.
            self._failed = exc
            self._ready.set()

    async def _start(self, client: AsyncTcpClient) -> str:
        """Describe, then run: the satellite streams its microphone from here on."""
        await client.write_event(Describe().event())
        info = await asyncio.wait_for(self._info(client), DESCRIBE_TIMEOUT_S)
        if info.satellite is None:
            # A speech server or a wake-word service would take run-satellite and say nothing.
            found = _services(info) or "nothing"
            raise NotASatellite(f"--audio {self.uri}: not a satellite: it describes {found}")
        await client.write_event(RunSatellite().event())
        self._speaking = False
        return info.satellite.name

    async def _info(self, client: AsyncTcpClient) -> Info:
        while (event := await client.read_event()) is not None:
            if Info.is_type(event.type):
                return Info.from_event(event)
        raise LinkLost("the satellite closed the link before describing itself")

    async def _stream(self, client: AsyncTcpClient) -> None:
        """Microphone chunks in, the daemon's speech out, until the link ends."""
        converter = AudioChunkConverter(rate=SAMPLE_RATE, width=2, channels=1)
        while (event := await client.read_event()) is not None:
            if not WyomingChunk.is_type(event.type):
                log.debug("satellite says", kind=event.type)
                continue
            chunk = converter.convert(WyomingChunk.from_event(event))
            samples = np.frombuffer(chunk.audio, dtype="<i2").astype(np.int16)
            start = self._head
            self._push(samples)
            await self._play(client, start, len(samples))

    def _push(self, samples: Pcm) -> None:
        """Enqueue; beyond `queue_seconds` the oldest audio becomes silence of its length, so
        the audio clock stays the satellite's."""
        self._head += len(samples)
        self._queue.append(samples)
        self._queued += len(samples)
        while self._queued > self._max_samples:
            gap = 0
            while isinstance(head := self._queue[0], int):
                gap += head
                self._queue.popleft()
            oldest = self._queue.popleft()
            assert not isinstance(oldest, int)
            self._queued -= len(oldest)
            self._queue.appendleft(gap + len(oldest))
            if self.dropped_samples == 0:
                log.warning("listener behind the satellite; oldest audio dropped")
            self.dropped_samples += len(oldest)
        self._ready.set()

    async def _play(self, client: AsyncTcpClient, start: int, n: int) -> None:
        """Send the timeline at the positions of the chunk just received, as a sound card
        plays while it records (`MicSource`): a phrase placed at the newest position goes out
        whole with the next chunk. `audio-stop` once nothing plays."""
        if self.playback is None:
            return
        if self.playback.during(start, start + n):
            if not self._speaking:
                await client.write_event(AudioStart(SAMPLE_RATE, 2, 1).event())
                self._speaking = True
            pcm = self.playback.render(start, n)
            await client.write_event(WyomingChunk(SAMPLE_RATE, 2, 1, pcm.tobytes()).event())
        elif self._speaking:
            await client.write_event(AudioStop().event())
            self._speaking = False

    async def _silence(self, seconds: float) -> None:
        """Silence in real time while there is no link: the operator's timers run on."""
        loop = asyncio.get_running_loop()
        block = SAMPLE_RATE * SILENCE_BLOCK_MS // 1000
        began, sent = loop.time(), 0
        while sent < seconds * SAMPLE_RATE:
            self._push(np.zeros(block, dtype=np.int16))
            sent += block
            await asyncio.sleep(max(0.0, began + sent / SAMPLE_RATE - loop.time()))

    def _linked(self, name: str) -> None:
        self.connected = True
        log.info("satellite linked", uri=self.uri, name=name)
        self._report(LinkChange(True, self.uri, name=name))

    def _lost(self, reason: str, pause: float) -> None:
        if self.connected is False:
            log.debug("satellite still unreachable", uri=self.uri, error=reason, retry_s=pause)
            return
        what = "satellite link lost" if self.connected else "satellite unreachable"
        self.connected = False
        log.warning(f"{what}; reconnecting", uri=self.uri, error=reason)
        self._report(LinkChange(False, self.uri, reason=reason))

    def _report(self, change: LinkChange) -> None:
        if self.on_link is not None:
            self.on_link(change)


def _services(info: Info) -> str:
    """What a Wyoming peer says it offers ("speech-to-text (faster-whisper)")."""
    kinds = {"asr": "speech-to-text", "tts": "text-to-speech", "wake": "wake-word detection",
             "handle": "intent handling", "intent": "intent recognition", "mic": "a microphone",
             "snd": "a speaker"}  # fmt: skip
    offered = []
    for attribute, kind in kinds.items():
        for service in getattr(info, attribute, None) or ():
            offered.append(f"{kind} ({service.name})")
    return ", ".join(offered)
