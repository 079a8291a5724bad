"""A small real HTTP/1.1 server on 127.0.0.1 that speaks the Anthropic Messages API.

`POST /v1/messages` is answered from a scripted queue (`Reply`: status, body, headers, delay);
when the queue is empty a `responder` callable may answer instead, else the server answers 500
so that a test never passes on an answer it did not script. Every request is recorded with its
JSON body. Connections are kept alive, as the SDK's pooled client expects; a reply with a delay
longer than the client's timeout exercises timeouts (the client hangs up; the server notices).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from tests.httpwire import read_request, response_bytes

_IDS = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    """The HTTP status."""
    body: Any = field(default_factory=dict)
    """bytes are sent as they are; anything else as JSON."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (retry-after, ...)."""
    delay: float = 0.0
    """Seconds to wait before answering."""


@dataclass(frozen=True)
class Recorded:
    """One request as received."""

    method: str
    """"POST", ..."""
    path: str
    """The request target ("/v1/messages")."""
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes
    """The body as sent."""

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def system_text(self) -> str:
        """Every system block's text, joined."""
        system = self.json().get("system", "")
        if isinstance(system, str):
            return system
        return "\n".join(block["text"] for block in system)

    @property
    def user_text(self) -> str:
        messages = self.json()["messages"]
        content = messages[-1]["content"]
        if isinstance(content, str):
            return content
        return "\n".join(block.get("text", "") for block in content)


def message(
    text: str,
    *,
    input_tokens: int = 1200,
    output_tokens: int = 80,
    cache_read: int = 0,
    cache_write: int = 0,
    model: str = "claude-haiku-4-5",
    stop_reason: str = "end_turn",
) -> Reply:
    """A 200 answer carrying `text` as a Messages API message."""
    body = {
        "id": f"msg_fake_{next(_IDS)}",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": model,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }
    return Reply(200, body)


def json_message(data: Any, **kwargs: Any) -> Reply:
    return message(json.dumps(data), **kwargs)


def error(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> Reply:
    """An API error body as the real service sends it."""
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return Reply(status, body, headers or {})


Responder = Callable[[Recorded], Reply]


class MessagesApi:
    """`async with MessagesApi([message("...")]) as api: LlmClient(..., base_url=api.url)`."""

    def __init__(self, replies: Iterable[Reply] = (), responder: Responder | None = None) -> None:
        self.queue: deque[Reply] = deque(replies)
        self.responder = responder
        self.requests: list[Recorded] = []
        self.hung_up: list[Recorded] = []
        """Requests whose client closed the connection before the (delayed) reply: cancelled."""
        self.received = asyncio.Event()
        """Set whenever a request arrives (clear it to wait for the next one)."""
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._closing = asyncio.Event()

    def script(self, *replies: Reply) -> None:
        self.queue.extend(replies)

    @property
    def url(self) -> str:
        assert self._server is not None, "the server is not started"
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    @property
    def messages(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.startswith("/v1/messages")]

    async def __aenter__(self) -> MessagesApi:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._closing.set()
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        # Handlers end on their own once their connection is closed; waiting for them keeps a
        # handler from being cancelled by the loop's shutdown (which asyncio reports as an error).
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=2.0)
        await self._server.wait_closed()

    def _next(self, request: Recorded) -> Reply:
        if request.method != "POST" or not request.path.startswith("/v1/messages"):
            return error(404, "not_found_error", f"no route {request.method} {request.path}")
        if self.queue:
            return self.queue.popleft()
        if self.responder is not None:
            return self.responder(request)
        return error(500, "api_error", "the fake server has no scripted reply left")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                self.received.set()
                reply = self._next(request)
                if reply.delay and await self._waited(reply.delay, reader, request):
                    return
                writer.write(_response(reply))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client hung up (a timeout on its side): nothing to answer
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
            if task is not None:
                self._handlers.discard(task)

    async def _waited(
        self, seconds: float, reader: asyncio.StreamReader, request: Recorded
    ) -> bool:
        """Wait `seconds` (a slow server); True if the server stopped or the client hung up
        meanwhile (then there is no one to answer)."""
        closing = asyncio.create_task(self._closing.wait())
        eof = asyncio.create_task(reader.read(1))
        done, _ = await asyncio.wait({closing, eof}, timeout=seconds,
                                     return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        for task in (closing, eof):
            task.cancel()
        await asyncio.wait({closing, eof})
        if eof in done and not eof.cancelled() and eof.result() == b"":
            self.hung_up.append(request)
            return True
        return closing in done


async def _read_request(reader: asyncio.StreamReader) -> Recorded | None:
    try:
        return Recorded(*await read_request(reader))
    except asyncio.IncompleteReadError:
        return None  # the client closed a kept-alive connection


def _response(reply: Reply) -> bytes:
    headers = {"content-type": "application/json", "request-id": "req_fake", **reply.headers}
    return response_bytes(reply.status, reply.body, headers)
