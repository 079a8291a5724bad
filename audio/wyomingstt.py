"""A Wyoming speech server as the engine (`[stt] engine = "wyoming"`), the local model beside it.

One connection per segment, as Home Assistant talks to wyoming-faster-whisper: `transcribe`
(language and the cell's vocabulary), `audio-start`, the segment in `audio-chunk`s,
`audio-stop`; the server answers with one `transcript` and closes. The protocol carries the
vocabulary as `transcript_names` (the cell's words) and `transcript_terms` (example commands);
a server that ignores them (wyoming-faster-whisper 3.8 takes only its own `--initial-prompt`)
still gives text that the grammar chooser reads and repairs like the local model's best
hypothesis.

When the server cannot be reached, fails, or takes longer than `[stt] timeout_s`, the local
faster-whisper model transcribes that segment and every one after it; the server is tried again
on the first segment after `[stt] retry_s`. Each switch is reported once (`ServerSwitch`), not
once per segment.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from voiced.audio import guards
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SAMPLE_RATE, SttSettings, wyoming_address
from voiced.audio.transcribe import (
    BiasVocabulary,
    Chooser,
    Transcriber,
    Transcript,
    TranscriptionError,
)
from wyoming.asr import Transcribe
from wyoming.asr import Transcript as WyomingTranscript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info

log = structlog.get_logger(__name__)

LANGUAGE = "en"
"""The language asked for (the cells and the local model are English)."""
CHUNK_SAMPLES = 1024
"""Samples per `audio-chunk` (what wyoming-satellite and Home Assistant send)."""
CONNECT_TIMEOUT_S = 2.0
"""A server on the plant's network answers a connection in milliseconds; a machine that is off
can take seconds to say so, and the operator's command waits on the retry meanwhile."""


class ServerFailed(TranscriptionError):
    """The speech server answered with an error, or closed before its transcript."""


@dataclass(frozen=True)
class ServerSwitch:
    """Who transcribes changed: the speech server became unusable, or usable again."""

    up: bool
    """True: the server transcribes again; False: the local model took over."""
    uri: str
    """The server's address."""
    reason: str | None = None
    """Why the server was given up (None when it is back)."""


SwitchSink = Callable[[ServerSwitch], None]

SERVER_FAILURES = (OSError, TimeoutError, ValueError, ServerFailed)
"""What makes the server unusable for now: refused, reset, timed out, malformed, or failed."""


class WyomingTranscriber:
    """`Transcriber` on a Wyoming ASR server, falling back to `local`."""

    name = "wyoming"

    def __init__(
        self,
        settings: SttSettings,
        local: Transcriber,
        on_switch: SwitchSink | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        address = wyoming_address(settings.uri)
        if address is None:
            raise TranscriptionError(f'[stt] uri {settings.uri!r} is not "tcp://HOST:PORT"')
        self.settings = settings
        self.host, self.port = address
        self.local = local
        """The model that stands in while the server cannot be used."""
        self.on_switch = on_switch
        self.clock = clock
        self.retry_at: float | None = None
        """Clock time from which the server is tried again; None while it is in use."""

    @property
    def using_server(self) -> bool:
        """Whether the next segment goes to the server."""
        return self.retry_at is None or self.clock() >= self.retry_at

    async def load(self) -> None:
        """Load the local model (it must be ready to take over) and ask the server who it is:
        a server that cannot be reached now is reported at start, not at the first command."""
        await self.local.load()
        try:
            info = await asyncio.wait_for(self._describe(), self.settings.timeout_s)
        except SERVER_FAILURES as exc:
            self._give_up(exc)
            return
        names = [program.name for program in info.asr]
        if not names:
            self._give_up(ServerFailed(f"{self.settings.uri} offers no speech-to-text"))
            return
        log.info("speech server", uri=self.settings.uri, asr=names)

    async def transcribe(
        self, segment: Segment, bias: BiasVocabulary, choose: Chooser | None = None
    ) -> Transcript:
        if not self.using_server:
            return await self.local.transcribe(segment, bias, choose)
        began = time.perf_counter()
        try:
            raw = await asyncio.wait_for(self._remote(segment, bias), self.settings.timeout_s)
        except SERVER_FAILURES as exc:
            self._give_up(exc)
            return await self.local.transcribe(segment, bias, choose)
        self._server_back()
        text, reason = guards.judge(raw, 0.0, 0.0)
        # The chooser may synthesise speech for its repair: off the event loop.
        chosen = await asyncio.to_thread(choose, [raw]) if choose and reason is None else None
        repaired = chosen is not None and chosen.text is not None
        return Transcript(
            text=chosen.text if chosen is not None and chosen.text is not None else text,
            raw=raw,
            no_speech_prob=0.0,
            avg_logprob=0.0,
            rejected_reason=reason,
            seconds=round(time.perf_counter() - began, 4),
            repaired=repaired,
        )

    def _connected(self) -> AsyncTcpClient:
        connect_s = min(CONNECT_TIMEOUT_S, self.settings.timeout_s)
        return AsyncTcpClient(self.host, self.port, connect_timeout=connect_s)

    async def _describe(self) -> Info:
        async with self._connected() as client:
            await client.write_event(Describe().event())
            while True:
                event = await client.read_event()
                if event is None:
                    raise ServerFailed("the speech server closed without describing itself")
                if Info.is_type(event.type):
                    return Info.from_event(event)

    async def _remote(self, segment: Segment, bias: BiasVocabulary) -> str:
        """The server's text for `segment` (raises on any failure)."""
        async with self._connected() as client:
            ask = Transcribe(
                language=LANGUAGE,
                transcript_names=list(bias.words) or None,
                transcript_terms=list(bias.phrases) or None,
            )
            await client.write_event(ask.event())
            await client.write_event(AudioStart(SAMPLE_RATE, 2, 1).event())
            pcm = segment.samples.astype("<i2").tobytes()
            step = CHUNK_SAMPLES * 2
            for start in range(0, len(pcm), step):
                chunk = AudioChunk(SAMPLE_RATE, 2, 1, pcm[start : start + step])
                await client.write_event(chunk.event())
            await client.write_event(AudioStop().event())
            while True:
                event = await client.read_event()
                if event is None:
                    raise ServerFailed("the speech server closed before its transcript")
                if Error.is_type(event.type):
                    raise ServerFailed(f"the speech server failed: {Error.from_event(event).text}")
                if WyomingTranscript.is_type(event.type):
                    return WyomingTranscript.from_event(event).text

    def _give_up(self, exc: BaseException) -> None:
        """The server failed: the local model transcribes until `retry_s` has passed."""
        reason = str(exc) or type(exc).__name__
        was_up = self.retry_at is None
        self.retry_at = self.clock() + self.settings.retry_s
        if not was_up:
            log.debug("speech server still unusable", uri=self.settings.uri, error=reason)
            return
        log.warning(
            "speech server unusable; the local model transcribes",
            uri=self.settings.uri, error=reason, retry_s=self.settings.retry_s,
        )  # fmt: skip
        self._report(ServerSwitch(False, self.settings.uri, reason))

    def _server_back(self) -> None:
        if self.retry_at is None:
            return
        self.retry_at = None
        log.info("speech server back; it transcribes again", uri=self.settings.uri)
        self._report(ServerSwitch(True, self.settings.uri))

    def _report(self, switch: ServerSwitch) -> None:
        if self.on_switch is not None:
            self.on_switch(switch)
