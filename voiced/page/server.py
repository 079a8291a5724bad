"""The cell's page server: one port, one page, for every input (`[page] enabled`).

`GET /` the page; `GET /state` the cell and the stories as JSON (what every update carries);
`GET /segments/<id>.wav` a segment's audio (16-bit PCM); `GET /events` server-sent events, one
`state` per change, at most `1 / MIN_INTERVAL_S` a second (a snapshot reads the history);
`POST /stop` the STOP button (`stopcheck` says who may). Everything else is GET/HEAD only and
bounded (`voiced.page.http`). stdlib asyncio only.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import json
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from voiced import eventtypes as ev
from voiced.commands.belief import Belief
from voiced.errors import ConfigError, Problem, describe
from voiced.events import EventLog
from voiced.eventtypes import Record
from voiced.page.drawing import cell_svg
from voiced.page.exchanges import Exchanges
from voiced.page.http import (
    MAX_LINE,
    READ_ONLY,
    HttpError,
    read_body,
    read_head,
    refuse,
    respond,
)
from voiced.page.settings import PageSettings
from voiced.page.stopcheck import is_loopback_name, refusal
from voiced.service.cellstatus import CellStatus, RemoteInbox

log = structlog.get_logger(__name__)

MIN_INTERVAL_S = 0.25
"""Least time between two pushed states."""
HEARTBEAT_S = 15.0
MAX_CONNECTIONS = 64
"""Open connections at once (live pages included); one more is answered 503 and closed, so
that no number of idle or half-sent requests can use up the daemon's file descriptors."""
REQUEST_TIMEOUT_S = 10.0
"""A request (line, headers and a STOP's body) must have arrived in this time (else 408)."""
"""SSE comment interval, so proxies and browsers keep the stream open."""
_WAV = re.compile(r"^/segments/(\d{1,9})\.wav$")


def read_token(settings: PageSettings, resolve: Callable[[str], Path]) -> str | None:
    """The STOP token from `token_file` (None when not set); a problem names the key."""
    if not settings.token_file:
        return None
    path = resolve(settings.token_file)
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        why = describe(error) if isinstance(error, UnicodeDecodeError) else error.strerror
        raise ConfigError([Problem(str(path), "page.token_file", f"cannot read: {why}")]) from None
    if len(token) < 16:
        raise ConfigError(
            [Problem(str(path), "page.token_file", "token shorter than 16 characters")]
        )
    return token


def drawing_of(belief: Callable[[], Belief]) -> Callable[[], str]:
    """The drawing of the confirmed scene (the one the status shows), read when called."""

    def draw() -> str:
        now = belief()
        return cell_svg(now.cell, now.scene)

    return draw


class CellPage:
    """The page's state and its HTTP server. Built before the run (so no utterance is missed),
    served by `serve` as a task of the run."""

    def __init__(self, settings: PageSettings, events: EventLog, token: str | None) -> None:
        self.settings = settings
        self.events = events
        self.exchanges = Exchanges(settings.keep)
        self._token = token
        self._dirty = asyncio.Event()
        self._subscribers: set[asyncio.Queue[str | None]] = set()
        self._server: asyncio.Server | None = None
        self._open = 0
        """Connections being served now."""
        self.bound = asyncio.Event()
        """Set once the port is bound (`url` is known)."""
        self._status: Callable[[], CellStatus] | None = None
        self._drawing: Callable[[], str] | None = None
        self._inbox: RemoteInbox | None = None
        self._html = importlib.resources.files("voiced.page").joinpath("page.html").read_bytes()
        self._unsubscribe = events.subscribe(self._on_record)

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("page not started")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        host = self.settings.host
        if host in ("0.0.0.0", "::", ""):
            host = socket.gethostname()  # every address: this machine's name opens it
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/"

    async def serve(
        self, status: Callable[[], CellStatus], drawing: Callable[[], str], inbox: RemoteInbox
    ) -> None:
        """Serve until cancelled (the end of the run): `status` reads the cell now (a
        `StatusBoard.snapshot`), `drawing` draws it (`drawing_of`), STOP goes to `inbox`."""
        self._status, self._drawing, self._inbox = status, drawing, inbox
        try:
            self._server = await asyncio.start_server(
                self._handle, self.settings.host, self.settings.port, limit=MAX_LINE
            )
        except OSError as error:
            # The page shows the cell; it must not stop the cell being run (a `voiced replay`
            # beside the running service finds the port taken).
            self._unsubscribe()
            log.warning("cell page not served", host=self.settings.host,
                        port=self.settings.port, error=str(error))  # fmt: skip
            return
        self.bound.set()
        log.info("cell page", url=self.url, stop_token=self._token is not None)
        if not is_loopback_name(self.settings.host):
            log.warning("the cell page is open to the network: it shows what is said at the cell"
                        + ("" if self._token else "; STOP works only from this machine (no token)"),
                        host=self.settings.host)  # fmt: skip
        self.events.emit(ev.PageUp(self.url))
        try:
            await self._push_changes()
        finally:
            self._unsubscribe()
            self._server.close()
            for queue in list(self._subscribers):
                _offer(queue, None)  # ends each open stream
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._server.wait_closed()

    def state(self) -> dict[str, Any]:
        """What the page shows, read now."""
        assert self._status is not None and self._drawing is not None
        return {
            "status": self._status().to_dict(),
            "drawing": self._drawing(),
            "exchanges": [story.to_dict() for story in self.exchanges.stories()],
            "keywords": list(self.exchanges.keywords),
        }

    def _on_record(self, record: Record) -> None:
        self.exchanges.on_record(record)
        self._dirty.set()

    async def _push_changes(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            if self._subscribers:
                try:
                    body = json.dumps(self.state(), default=str)
                except Exception as error:  # the page must never take the daemon down
                    log.error("cell page state failed", error=f"{type(error).__name__}: {error}")
                else:
                    for queue in self._subscribers:
                        _offer(queue, body)
            await asyncio.sleep(MIN_INTERVAL_S)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open += 1
        try:
            if self._open > MAX_CONNECTIONS:
                raise HttpError(503, f"more than {MAX_CONNECTIONS} connections open")
            await self._serve(reader, writer)
        except HttpError as refused:
            log.info("page request refused", status=refused.status, why=refused.message)
            with contextlib.suppress(ConnectionError):
                await refuse(writer, refused, reader)
        except (ConnectionError, TimeoutError) as gone:
            log.debug("page client went away", error=str(gone))
        except Exception as error:  # a bug here must not end the server, nor spill a traceback
            log.error("page request failed", error=f"{type(error).__name__}: {error}")
            with contextlib.suppress(ConnectionError, RuntimeError):
                await respond(writer, 500, "text/plain", b"internal error\n")
        finally:
            self._open -= 1
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT_S):
                method, path, headers = await read_head(reader)
                if path == "/stop" and method == "POST":
                    await read_body(reader, headers)
        except TimeoutError:
            raise HttpError(408, f"no whole request in {REQUEST_TIMEOUT_S:g} s") from None
        if path == "/stop":
            if method != "POST":
                raise HttpError(405, "STOP is pressed with POST", allow=("POST",))
            await self._stop(writer, headers)
            return
        if method == "POST":
            raise HttpError(405, f"method POST not allowed on {path}: only GET and HEAD", READ_ONLY)
        head_only = method == "HEAD"
        if path == "/events":
            if head_only:
                await respond(writer, 200, "text/event-stream", b"", head_only=True)
            else:
                await self._stream(writer)
            return
        status, kind, body = self._route(path)
        await respond(writer, status, kind, body, head_only=head_only)

    def _route(self, path: str) -> tuple[int, str, bytes]:
        if path in ("/", "/index.html"):
            return 200, "text/html; charset=utf-8", self._html
        if path == "/state":
            return 200, "application/json", json.dumps(self.state(), default=str).encode()
        if path == "/segments":
            stories = [story.to_dict() for story in self.exchanges.stories()]
            return 200, "application/json", json.dumps(stories, default=str).encode()
        if (found := _WAV.match(path)) and (clip := self.exchanges.clip(int(found[1]))):
            return 200, "audio/wav", clip.wav
        return 404, "text/plain", b"not found\n"

    async def _stop(self, writer: asyncio.StreamWriter, headers: dict[str, str]) -> None:
        peer = writer.get_extra_info("peername")
        address = peer[0] if isinstance(peer, tuple) else None
        why = refusal(address, headers, self._token)
        if why is not None:
            log.warning("STOP refused", peer=address, why=why)
            await respond(writer, 403, "text/plain", f"{why}\n".encode())
            return
        assert self._inbox is not None
        log.info("STOP pressed on the cell page", peer=address)
        self._inbox.stop("page")
        await respond(writer, 200, "text/plain", b"stopping\n")

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=2)
        self._subscribers.add(queue)
        try:
            first = json.dumps(self.state(), default=str)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Cache-Control: no-cache\r\nConnection: keep-alive\r\n\r\n"
                + f"event: state\ndata: {first}\n\n".encode()
            )
            await writer.drain()
            while self._server is not None and self._server.is_serving():
                try:
                    body = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
                except TimeoutError:
                    writer.write(b": heartbeat\n\n")
                else:
                    if body is None:
                        break
                    writer.write(f"event: state\ndata: {body}\n\n".encode())
                await writer.drain()
        finally:
            self._subscribers.discard(queue)


def _offer(queue: asyncio.Queue[str | None], body: str | None) -> None:
    """Queue the newest state; a slow page skips the ones it had no time for."""
    while queue.full():
        queue.get_nowait()
    queue.put_nowait(body)
