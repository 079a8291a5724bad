"""The audio debug viewer (seed 002's planned tool): a small local web page of every segment.

Each segment is shown as a waveform with a visible marker at the pre-roll / live splice, the
engine's raw transcript (special tokens such as `[BLANK_AUDIO]` included) and its metadata. A
level jump at the marker means the ring buffer splice is off.

Segments arrive in-process only (`publish`, from the listener; `add` takes the seed's JSON
payload, `{samples, preroll_length, transcript, timestamp}` plus optional metadata): the seed's
`POST /segments` is gone, as the page has no authentication and anything that reached the port
could have filled it. `GET /` is the page, `GET /segments` the kept segments, `GET /events`
server-sent events with each new one; HEAD for each; every other method gets 405. stdlib only:
`asyncio.start_server` and the small HTTP/1.1 of `viewerhttp`. Binds to 127.0.0.1 unless
configured otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import json
import math
import time
from collections import deque
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import numpy as np
import structlog
from voiced.audio.convert import to_float
from voiced.audio.segmenter import Segment
from voiced.audio.settings import SAMPLE_RATE, ViewerSettings
from voiced.audio.transcribe import Transcript
from voiced.audio.viewerhttp import MAX_LINE, HttpError, read_head, refuse, respond

log = structlog.get_logger(__name__)

HEARTBEAT_S = 15.0
"""SSE comment interval, so proxies and browsers keep the stream open."""


class PayloadError(ValueError):
    """A segment payload is malformed; the message says which field and why."""


def segment_payload(
    segment: Segment, transcript: Transcript | None = None, reason: str | None = None
) -> dict[str, Any]:
    """The seed's JSON payload for an in-process segment, with the listener's metadata."""
    samples = to_float(segment.samples)
    payload: dict[str, Any] = {
        "samples": float_samples(samples),
        "preroll_length": segment.preroll,
        "transcript": transcript.raw if transcript else "",
        "timestamp": time.time(),
        "sample_count": len(samples),
        "duration_ms": round(1000 * len(samples) / SAMPLE_RATE, 1),
        "vad_trigger_time": segment.vad.trigger_time,
        "start": segment.start,
        "end": segment.end,
        "speech_end": segment.vad.speech_end,
        "rms": segment.vad.rms,
        "silero_prob": segment.vad.silero_prob,
        "closed_by": segment.closed_by,
        "rejected_reason": reason,
    }
    if transcript is not None:
        payload.update(
            text=transcript.text,
            no_speech_prob=transcript.no_speech_prob,
            avg_logprob=transcript.avg_logprob,
            transcribe_seconds=transcript.seconds,
        )
    return payload


def validate_payload(data: Any) -> dict[str, Any]:
    """Check a payload and fill in the derived metadata."""
    if not isinstance(data, Mapping):
        raise PayloadError("expected a JSON object")
    samples = data.get("samples")
    if not isinstance(samples, list) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in samples
    ):
        raise PayloadError("samples: expected an array of finite numbers (float32 PCM)")
    preroll = data.get("preroll_length")
    if not isinstance(preroll, int) or isinstance(preroll, bool) or preroll < 0:
        raise PayloadError(f"preroll_length: expected an integer 0..{len(samples)}")
    if preroll > len(samples):
        raise PayloadError(f"preroll_length: expected an integer 0..{len(samples)}")
    transcript = data.get("transcript", "")
    if not isinstance(transcript, str):
        raise PayloadError("transcript: expected a string")
    timestamp = data.get("timestamp", time.time())
    if not isinstance(timestamp, int | float) or isinstance(timestamp, bool):
        raise PayloadError("timestamp: expected a number")
    record = dict(data)
    record.setdefault("sample_count", len(samples))
    record.setdefault("duration_ms", round(1000 * len(samples) / SAMPLE_RATE, 1))
    record.setdefault("vad_trigger_time", None)
    return record


def splice_jump(samples: list[float], preroll: int) -> float:
    """Absolute level step across the splice (samples[preroll-1] -> samples[preroll])."""
    if not 0 < preroll < len(samples):
        return 0.0
    return round(abs(samples[preroll] - samples[preroll - 1]), 5)


class AudioViewer:
    """The viewer's state (kept segments, live subscribers) and its HTTP server."""

    def __init__(self, settings: ViewerSettings | None = None) -> None:
        self.settings = settings or ViewerSettings()
        self._segments: deque[dict[str, Any]] = deque(maxlen=self.settings.keep)
        self._subscribers: set[asyncio.Queue[dict[str, Any]]] = set()
        self._next_id = 1
        self._server: asyncio.Server | None = None
        self._page = (
            importlib.resources.files("voiced.audio").joinpath("viewer_page.html").read_bytes()
        )

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        if self._server is None:
            raise RuntimeError("viewer not started")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        """Where to point a browser."""
        return f"http://{self.settings.host}:{self.port}/"

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, self.settings.host, self.settings.port, limit=MAX_LINE
        )
        log.info("audio debug viewer", url=self.url)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for queue in list(self._subscribers):
                queue.put_nowait({})  # wakes each stream so it ends
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> AudioViewer:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def publish(
        self, segment: Segment, transcript: Transcript | None = None, reason: str | None = None
    ) -> int:
        """Add an in-process segment (the listener's `sink`); returns its id."""
        return self.add(segment_payload(segment, transcript, reason))

    def add(self, payload: Mapping[str, Any]) -> int:
        """Add a validated payload and push it to every open page."""
        record = validate_payload(payload)
        record["id"] = self._next_id
        record["splice_jump"] = splice_jump(record["samples"], record["preroll_length"])
        self._next_id += 1
        self._segments.append(record)
        for queue in self._subscribers:
            queue.put_nowait(record)
        return int(record["id"])

    def segments(self) -> list[dict[str, Any]]:
        """The kept segments, oldest first."""
        return list(self._segments)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve(reader, writer)
        except HttpError as refused:
            log.info("viewer request refused", status=refused.status, why=refused.message)
            with contextlib.suppress(ConnectionError):
                await refuse(writer, refused, reader)
        except (ConnectionError, TimeoutError) as gone:
            log.debug("viewer client went away", error=str(gone))
        except Exception as error:  # a bug here must not end the server, nor spill a traceback
            log.error("viewer request failed", error=f"{type(error).__name__}: {error}")
            with contextlib.suppress(ConnectionError, RuntimeError):
                await respond(writer, 500, "text/plain", b"internal error\n")
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        method, path, _ = await read_head(reader)
        head_only = method == "HEAD"
        if path == "/events" and not head_only:
            await self._stream(writer)
            return
        if path == "/events":
            await respond(writer, 200, "text/event-stream", b"", head_only=True)
            return
        status, kind, body = self._route(path)
        await respond(writer, status, kind, body, head_only=head_only)

    def _route(self, path: str) -> tuple[int, str, bytes]:
        if path in ("/", "/index.html"):
            return 200, "text/html; charset=utf-8", self._page
        if path == "/segments":
            return 200, "application/json", json.dumps(self.segments()).encode()
        return 404, "text/plain", b"not found\n"

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._subscribers.add(queue)
        try:
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Cache-Control: no-cache\r\nConnection: keep-alive\r\n\r\n: hello\n\n"
            )
            await writer.drain()
            while self._server is not None:
                try:
                    record = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
                except TimeoutError:
                    writer.write(b": heartbeat\n\n")
                else:
                    if not record:
                        break
                    writer.write(f"data: {json.dumps(record)}\n\n".encode())
                await writer.drain()
        finally:
            self._subscribers.discard(queue)


def float_samples(samples: np.ndarray) -> list[float]:
    """float32 samples as a JSON-ready list (for clients building a POST payload)."""
    rounded: list[float] = np.round(np.asarray(samples, dtype=np.float64), 5).tolist()
    return rounded
