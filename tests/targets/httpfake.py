"""A tiny real HTTP/1.1 server on 127.0.0.1 for the HTTP targets' tests.

It answers from a script (one `Reply` per request, the last one repeating) and records every
request. A reply with `hang=True` never answers, to exercise timeouts. Every response closes its
connection, so each retry is a fresh connection, as a restarted server would see it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from tests.httpwire import read_request, response_bytes
from tests.ports import free_port


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    """The HTTP status."""
    body: Any = field(default_factory=dict)
    """bytes are sent as they are; anything else as JSON."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (e.g. Retry-After)."""
    hang: bool = False
    """Never answer (the connection is dropped when the server stops)."""


@dataclass(frozen=True)
class Request:
    """One request as received."""

    method: str
    """"POST", ..."""
    path: str
    """The request target, e.g. "/api/chat"."""
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes
    """The body as sent (Content-Length bytes)."""

    def json(self) -> Any:
        return json.loads(self.body)


class FakeHttpServer:
    """`async with FakeHttpServer([Reply(500), Reply(200)]) as server: server.url("/tasks")`."""

    def __init__(self, replies: list[Reply]) -> None:
        if not replies:
            raise ValueError("at least one reply")
        self.replies = list(replies)
        self.requests: list[Request] = []
        self._release = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def port(self) -> int:
        assert self._port is not None, "the server is not started"
        return self._port

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def __aenter__(self) -> FakeHttpServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self._port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._release.set()
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            request = await _read_request(reader)
            self.requests.append(request)
            reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
            if reply.hang:
                await self._release.wait()
                return
            writer.write(_response(reply))
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()


async def _read_request(reader: asyncio.StreamReader) -> Request:
    return Request(*await read_request(reader))


def _response(reply: Reply) -> bytes:
    headers = {"Content-Type": "application/json", **reply.headers, "Connection": "close"}
    return response_bytes(reply.status, reply.body, headers)


def refused_url(path: str = "/") -> str:
    """A URL on 127.0.0.1 where nothing listens (a port just bound and released)."""
    port = free_port()
    return f"http://127.0.0.1:{port}{path}"


class SleepRecorder:
    """Stands in for asyncio.sleep between retries: records each delay and waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
