"""The cell page's HTTP/1.1, as little as a local page needs: GET and HEAD, and POST only
where the server allows it (STOP); one request per connection, every part of the request
bounded.

A request the page will not serve gets a status and a one-line body, never a traceback: a
line longer than `MAX_LINE` (431, or 414 for the request line), more than `MAX_HEADERS` header
lines (431), a method other than GET, HEAD or POST (405), a POST body over `MAX_BODY` (413).
"""

from __future__ import annotations

import asyncio
import contextlib

MAX_LINE = 8 * 1024
"""Longest request or header line, in bytes (the limit most servers use)."""
MAX_HEADERS = 64
"""Most header lines in one request."""
METHODS = ("GET", "HEAD", "POST")
"""What the page understands at all; `Allow` names what one path takes."""
READ_ONLY = ("GET", "HEAD")
"""What every path but STOP takes."""
MAX_BODY = 1024
"""Largest POST body read (STOP needs none: it is read and thrown away)."""
_DISCARD_BYTES = 1024 * 1024
_DISCARD_S = 0.2

REASONS = {
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    413: "Content Too Large",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class HttpError(Exception):
    """A request the page refuses: its status, the one line said about it, and for 405 what
    the path allows."""

    def __init__(self, status: int, message: str, allow: tuple[str, ...] = READ_ONLY) -> None:
        self.status = status
        self.message = message
        self.allow = allow
        super().__init__(f"{status} {message}")


async def read_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]]:
    """Method, path (without the query) and headers (lower-case names) of one request.
    `reader`'s limit must be at least `MAX_LINE`."""
    line = await _line(reader, 414, "request line too long")
    parts = line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise HttpError(400, "bad request line")
    method, target = parts[0].upper(), parts[1]
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        header = await _line(reader, 431, "header line too long")
        if not header:
            if method not in METHODS:
                raise HttpError(405, f"method {method} not allowed: only GET, HEAD and POST")
            return method, target.split("?", 1)[0], headers
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    raise HttpError(431, f"more than {MAX_HEADERS} header lines")


async def read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    """The body of a POST, at most `MAX_BODY` bytes (413 beyond; 400 for a length that is not
    a number)."""
    length = headers.get("content-length", "0")
    if not length.isdigit():
        raise HttpError(400, "bad Content-Length")
    if int(length) > MAX_BODY:
        raise HttpError(413, f"body over {MAX_BODY} bytes")
    try:
        return await reader.readexactly(int(length))
    except asyncio.IncompleteReadError:
        raise HttpError(400, "request cut short") from None


async def _line(reader: asyncio.StreamReader, status: int, too_long: str) -> str:
    try:
        raw = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise HttpError(status, too_long) from None
    except asyncio.IncompleteReadError as error:
        if error.partial:
            raise HttpError(400, "request cut short") from None
        raise ConnectionResetError("closed before a request") from None
    if len(raw) > MAX_LINE:
        raise HttpError(status, too_long)
    return raw.decode("latin-1").strip()


async def respond(
    writer: asyncio.StreamWriter,
    status: int,
    kind: str,
    body: bytes,
    *,
    head_only: bool = False,
    extra: str = "",
) -> None:
    """One whole response; the connection closes after it. `head_only` for HEAD: the headers
    GET would send, no body."""
    head = (
        f"HTTP/1.1 {status} {REASONS.get(status, 'OK')}\r\nContent-Type: {kind}\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\n{extra}"
        "Connection: close\r\n\r\n"
    )
    writer.write(head.encode("latin-1") + (b"" if head_only else body))
    await writer.drain()


async def refuse(
    writer: asyncio.StreamWriter, error: HttpError, reader: asyncio.StreamReader
) -> None:
    """Answer a refused request, then read away (a bounded amount of) what the client is still
    sending: closing with unread data resets the connection, and the client would lose the
    answer."""
    extra = f"Allow: {', '.join(error.allow)}\r\n" if error.status == 405 else ""
    await respond(writer, error.status, "text/plain", f"{error.message}\n".encode(), extra=extra)
    with contextlib.suppress(TimeoutError, ConnectionError):
        async with asyncio.timeout(_DISCARD_S):
            received = 0
            while received < _DISCARD_BYTES and (chunk := await reader.read(64 * 1024)):
                received += len(chunk)
