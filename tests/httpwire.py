"""HTTP/1.1 on the wire for the test servers (the fake Messages API, the fake task list):
read one request, write one JSON response. Real sockets, no framework."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes]:
    """(method, path, headers with lower-case names, body). Raises IncompleteReadError when the
    client closed the connection before sending a request."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, path, headers, body


def response_bytes(status: int, body: Any, headers: Mapping[str, str]) -> bytes:
    """A complete response: `body` is bytes, or JSON-encoded; Content-Length is set."""
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    lines = [f"HTTP/1.1 {status} {phrase}".rstrip()]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"content-length: {len(payload)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
