"""Audio sources: async iterators of 16 kHz mono int16 chunks stamped on the audio clock.

The AUDIO CLOCK is the index of a sample since the source started, divided by 16000. Every timer
that listens to the operator runs on it, so a file gives the same result at real-time pace and
as fast as possible.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import sys
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import structlog
from voiced.audio.convert import AudioFileError, Pcm, Resampler, audio_blocks
from voiced.audio.playback import Playback
from voiced.audio.settings import SAMPLE_RATE

from voiced.errors import AudioError

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class AudioChunk:
    """A run of consecutive samples."""

    samples: Pcm
    """16 kHz mono int16."""
    start: int
    """Index of the first sample on the audio clock (samples since the source started)."""

    @property
    def end(self) -> int:
        """Index one past the last sample."""
        return self.start + len(self.samples)

    @property
    def t(self) -> float:
        """Audio-clock seconds at the end of the chunk."""
        return self.end / SAMPLE_RATE


class AudioSource(Protocol):
    """Anything the listener can read chunks from."""

    def chunks(self) -> AsyncGenerator[AudioChunk, None]:
        """Chunks in order, without gaps, until the source ends."""
        ...


@runtime_checkable
class LiveSource(Protocol):
    """A source on a clock of its own (the sound card, a satellite): it keeps receiving while
    the listener is busy, so it can be ahead of the listener."""

    @property
    def head_samples(self) -> int:
        """Audio-clock position of the newest sample received: where its speaker plays now."""
        ...


def _block(block_ms: int) -> int:
    return max(1, SAMPLE_RATE * block_ms // 1000)


class ArraySource:
    """Samples already in memory (tests, `transcribe_file`); never waits."""

    def __init__(self, samples: Pcm, block_ms: int = 20) -> None:
        self.samples = samples
        self.block = _block(block_ms)

    async def chunks(self) -> AsyncGenerator[AudioChunk, None]:
        for start in range(0, len(self.samples), self.block):
            yield AudioChunk(self.samples[start : start + self.block], start)
            # Let other tasks run between chunks, as a real source would.
            await asyncio.sleep(0)


class WavSource:
    """An audio file (any rate, channels or format FFmpeg reads) as if it were the microphone.

    `realtime=True` paces chunks on the event loop's clock against the time the first chunk
    went out, so a consumer that falls behind catches up instead of drifting."""

    def __init__(self, path: str | Path, realtime: bool = True, block_ms: int = 20) -> None:
        self.path = Path(path)
        self.realtime = realtime
        self.block = _block(block_ms)

    async def chunks(self) -> AsyncGenerator[AudioChunk, None]:
        # Decoded a second at a time as it is played: a file of an hour held whole had been
        # 115 MB of samples on top of the daemon (most of a bench session's peak memory).
        blocks = audio_blocks(self.path)
        log.info("audio file", path=str(self.path))
        loop = asyncio.get_running_loop()
        began = loop.time()
        start = 0
        rest = np.zeros(0, dtype=np.int16)
        while True:
            try:
                block = await asyncio.to_thread(next, blocks, None)
            except AudioFileError as error:
                if start == 0 and not len(rest):
                    raise
                # Damaged part way (a cut-off download): what was heard before stands, and the
                # run ends as at the end of the file, not in the middle of what it was doing.
                log.error("audio file unreadable from here on: the rest is not heard",
                          path=str(self.path), seconds=round((start + len(rest)) / SAMPLE_RATE, 3),
                          error=str(error))  # fmt: skip
                break
            if block is None:
                break
            rest = np.concatenate([rest, block])
            whole = len(rest) // self.block * self.block
            for at in range(0, whole, self.block):
                yield await self._paced(AudioChunk(rest[at : at + self.block], start), began)
                start += self.block
            rest = rest[whole:]
        if len(rest):
            yield await self._paced(AudioChunk(rest, start), began)
            start += len(rest)
        log.info("audio file ended", path=str(self.path), seconds=round(start / SAMPLE_RATE, 3))

    async def _paced(self, chunk: AudioChunk, began: float) -> AudioChunk:
        """`chunk` once it is due (at once when not real time)."""
        if self.realtime:
            delay = began + chunk.end / SAMPLE_RATE - asyncio.get_running_loop().time()
            await asyncio.sleep(max(0.0, delay))
        else:
            await asyncio.sleep(0)
        return chunk


class StdinPcmSource:
    """Raw s16le 16 kHz mono on stdin (e.g. `arecord -f S16_LE -r 16000 -c 1 | voiced ...`)."""

    def __init__(self, block_ms: int = 20, fd: int | None = None) -> None:
        self.block = _block(block_ms)
        self.fd = fd
        """The descriptor read; None = stdin (looked up when reading starts)."""

    async def chunks(self) -> AsyncGenerator[AudioChunk, None]:
        start = 0
        pending = b""
        async with contextlib.aclosing(self._reads()) as reads:
            async for data in reads:
                pending += data
                usable = len(pending) - len(pending) % 2
                if usable == 0:
                    continue
                samples = np.frombuffer(pending[:usable], dtype="<i2").astype(np.int16)
                pending = pending[usable:]
                yield AudioChunk(samples, start)
                start += len(samples)
        if pending:
            log.warning("odd trailing byte on stdin dropped")

    async def _reads(self) -> AsyncGenerator[bytes, None]:
        size = self.block * 2
        fd = sys.stdin.fileno() if self.fd is None else self.fd
        if not pollable(fd):
            # epoll cannot watch a regular file or /dev/null: read in a thread (an empty one
            # ends at once, as the end of input).
            while data := await asyncio.to_thread(os.read, fd, size):
                yield data
            return
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        pipe = os.fdopen(os.dup(fd), "rb", buffering=0)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        try:
            while data := await reader.read(size):
                yield data
        finally:
            transport.close()


class MicSource:
    """The microphone through sounddevice (PortAudio), imported only when a MicSource starts.

    Opens the device at 16 kHz when it can, else at its default rate with resampling. The
    PortAudio callback only copies the block and hands it to the loop; the queue is bounded
    (`queue_seconds`): when the listener falls behind, the oldest audio is replaced by silence
    of the same length, so the audio clock stays the device's clock.

    With a `playback` timeline (the daemon speaks through this device) the stream is duplex:
    the callback plays the timeline at the very sample positions it captures, so what was
    played and what was heard line up sample for sample (the echo canceller's reference)."""

    def __init__(
        self,
        device: str | int | None = "",
        *,
        block_ms: int = 20,
        queue_seconds: float = 10.0,
        backend: Any = None,
        playback: Playback | None = None,
    ) -> None:
        self.device = sounddevice_device(device)
        """What sounddevice is given: None (the default device), an index or a name substring."""
        self.block_ms = block_ms
        self.queue_seconds = queue_seconds
        self.playback = playback
        """What the daemon says, played on this device; None: input only."""
        self._backend = backend
        """A module with sounddevice's API; None imports sounddevice itself."""
        self.overflows = 0
        """PortAudio input overflows (samples lost in the driver)."""
        self.dropped_blocks = 0
        """Blocks replaced by silence because the listener fell behind."""
        self._queue: deque[Pcm | int] = deque()
        self._ready = asyncio.Event()
        self._max_blocks = max(1, int(queue_seconds * 1000 / block_ms))
        self._head = 0

    def _sounddevice(self) -> Any:
        if self._backend is None:
            # PortAudio is loaded only when the microphone is used (it may not be installed).
            import sounddevice  # type: ignore[import-untyped]

            self._backend = sounddevice
        return self._backend

    def _open_rate(self, sd: Any) -> int:
        try:
            sd.check_input_settings(
                device=self.device, channels=1, dtype="int16", samplerate=SAMPLE_RATE
            )
            return SAMPLE_RATE
        except Exception as exc:
            # PortAudio says "no" with assorted exception types (ValueError, PortAudioError).
            try:
                rate = int(sd.query_devices(self.device, "input")["default_samplerate"])
            except Exception as missing:
                raise AudioError(self._unusable(missing)) from None
            log.info("microphone cannot do 16 kHz; resampling", rate=rate, reason=str(exc))
            return rate

    def _can_play(self, sd: Any, rate: int) -> bool:
        """Whether the output device takes 16 kHz mono int16 (duplex needs one clock)."""
        if self.playback is None:
            return False
        if rate != SAMPLE_RATE:
            log.warning("no speech output: the microphone cannot run at 16 kHz for duplex")
            return False
        try:
            sd.check_output_settings(
                device=self.device, channels=1, dtype="int16", samplerate=SAMPLE_RATE
            )
        except Exception as exc:
            log.warning("no speech output: the output device refuses 16 kHz", reason=str(exc))
            return False
        return True

    def _unusable(self, error: Exception) -> str:
        which = "the default input device" if self.device in (None, "") else f"{self.device!r}"
        return (
            f"cannot open the microphone ({which}): {error}. Set [audio] device, or give "
            "--audio FILE or --text"
        )

    def check(self) -> None:
        """Fail now, with a reason, if the microphone cannot be opened (before READY=1)."""
        try:
            sd = self._sounddevice()
        except (ImportError, OSError) as error:
            raise AudioError(self._unusable(error)) from None
        self._open_rate(sd)

    @property
    def head_samples(self) -> int:
        """Audio-clock position of the newest sample captured (queued ones included): where
        the loudspeaker is playing now."""
        return self._head

    def _push(self, block: Pcm, rate: int) -> None:
        """On the loop thread: enqueue; when full the oldest block becomes a gap of silence."""
        if len(self._queue) >= self._max_blocks:
            gap = 0
            if isinstance(head := self._queue[0], int):
                self._queue.popleft()
                gap = head
            if self._queue and not isinstance(oldest := self._queue[0], int):
                self._queue.popleft()
                gap += len(oldest)
            self._queue.appendleft(gap)
            self.dropped_blocks += 1
            if self.dropped_blocks == 1 or self.dropped_blocks % 100 == 0:
                log.warning("listener behind the microphone", dropped_blocks=self.dropped_blocks)
        self._queue.append(block)
        self._ready.set()

    async def chunks(self) -> AsyncGenerator[AudioChunk, None]:
        sd = self._sounddevice()
        loop = asyncio.get_running_loop()
        rate = self._open_rate(sd)
        blocksize = max(1, rate * self.block_ms // 1000)
        resampler = Resampler(rate, 1) if rate != SAMPLE_RATE else None
        playback = self.playback if self._can_play(sd, rate) else None

        def captured(indata: Any, status: Any) -> None:
            # PortAudio's thread: copy and hand over, nothing else.
            if status and getattr(status, "input_overflow", False):
                loop.call_soon_threadsafe(self._count_overflow)
            self._head += round(len(indata) * SAMPLE_RATE / rate)
            loop.call_soon_threadsafe(self._push, indata[:, 0].copy(), rate)

        def duplex(indata: Any, outdata: Any, frames: int, time: Any, status: Any) -> None:
            assert playback is not None
            outdata[:, 0] = playback.render(self._head, frames)
            captured(indata, status)

        def input_only(indata: Any, frames: int, time: Any, status: Any) -> None:
            captured(indata, status)

        options = dict(device=self.device, channels=1, samplerate=rate, dtype="int16",
                       blocksize=blocksize)  # fmt: skip
        stream = (
            sd.Stream(callback=duplex, **options)
            if playback is not None
            else sd.InputStream(callback=input_only, **options)
        )
        start = 0
        with stream:
            log.info("microphone open", device=self.device, rate=rate, duplex=bool(playback))
            while True:
                await self._ready.wait()
                self._ready.clear()
                while self._queue:
                    item = self._queue.popleft()
                    if isinstance(item, int):
                        samples = np.zeros(round(item * SAMPLE_RATE / rate), dtype=np.int16)
                    else:
                        samples = resampler.convert(item) if resampler else item
                    if len(samples):
                        yield AudioChunk(samples, start)
                        start += len(samples)

    def _count_overflow(self) -> None:
        self.overflows += 1
        if self.overflows == 1 or self.overflows % 100 == 0:
            log.warning("microphone input overflow", overflows=self.overflows)


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on `fd` (a pipe, a socket, a terminal), or it must be read
    at once (a regular file, /dev/null: epoll refuses them, and would leave a reader waiting
    forever)."""
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


def sounddevice_device(device: str | int | None) -> str | int | None:
    """`[audio] device` as sounddevice takes it: "" (or None) = the system default (None), digits
    = a device index, anything else = a substring of the device's name."""
    if device is None or isinstance(device, int):
        return device
    text = device.strip()
    if not text:
        return None
    # isdigit alone admits non-ASCII digits such as "²", which int() then rejects.
    return int(text) if text.isascii() and text.isdigit() else text


def open_source(
    source: str,
    *,
    device: str,
    realtime: bool,
    block_ms: int,
    queue_seconds: float,
    playback: Playback | None = None,
) -> AudioSource:
    """The source named by `[audio] source`: "mic", "stdin" or a file path. `playback` is what
    the microphone's device is to play (the daemon's speech)."""
    if source == "mic":
        return MicSource(device, block_ms=block_ms, queue_seconds=queue_seconds,
                         playback=playback)  # fmt: skip
    if source == "stdin":
        return StdinPcmSource(block_ms)
    return WavSource(source, realtime=realtime, block_ms=block_ms)
