"""The debug viewer's HTTP over a real loopback socket: GET and HEAD only, every request bounded,
no request can make it log a traceback or stop serving."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import structlog
from voiced.audio.settings import ViewerSettings
from voiced.audio.viewer import AudioViewer

SEED_PAYLOAD = {"samples": [0.0, 0.1, -0.1, 0.2], "preroll_length": 2,
                "transcript": "[BLANK_AUDIO]", "timestamp": 1234567890}  # fmt: skip


@pytest.fixture
async def viewer() -> AsyncIterator[AudioViewer]:
    async with AudioViewer(ViewerSettings(port=0)) as running:
        yield running


async def exchange(viewer: AudioViewer, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as it is; the status, headers and body of the answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", viewer.port)
    try:
        writer.write(request)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


async def still_serves(viewer: AudioViewer) -> None:
    status, _, body = await exchange(viewer, b"GET /segments HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and isinstance(json.loads(body), list)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_only_get_and_head_are_served(viewer: AudioViewer, method: str) -> None:
    body = json.dumps(SEED_PAYLOAD).encode()
    request = (f"{method} /segments HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
               .encode() + body)  # fmt: skip
    status, headers, reply = await exchange(viewer, request)
    assert status == 405
    assert headers["allow"] == "GET, HEAD"
    assert reply == f"method {method} not allowed: only GET and HEAD\n".encode()
    assert viewer.segments() == []  # an unauthenticated POST no longer adds a segment
    await still_serves(viewer)


async def test_head_answers_as_get_without_a_body(viewer: AudioViewer) -> None:
    got = await exchange(viewer, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    head = await exchange(viewer, b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert got[0] == head[0] == 200
    assert head[1]["content-length"] == got[1]["content-length"] == str(len(got[2]))
    assert head[2] == b""


async def test_a_70_kb_header_line_gets_431_without_a_traceback(viewer: AudioViewer) -> None:
    request = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n"
    with structlog.testing.capture_logs() as logs:
        status, _, body = await exchange(viewer, request)
    assert status == 431
    assert body == b"header line too long\n"
    assert [e["log_level"] for e in logs] == ["info"], logs
    assert "exc_info" not in logs[0] and logs[0]["status"] == 431
    await still_serves(viewer)


async def test_a_long_request_line_gets_414(viewer: AudioViewer) -> None:
    status, _, body = await exchange(viewer, b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\n\r\n")
    assert (status, body) == (414, b"request line too long\n")
    await still_serves(viewer)


async def test_too_many_header_lines_get_431(viewer: AudioViewer) -> None:
    headers = b"".join(b"X-%d: y\r\n" % n for n in range(200))
    status, _, body = await exchange(viewer, b"GET / HTTP/1.1\r\n" + headers + b"\r\n")
    assert (status, body) == (431, b"more than 64 header lines\n")
    await still_serves(viewer)


async def test_a_garbled_request_gets_400(viewer: AudioViewer) -> None:
    status, _, body = await exchange(viewer, b"\x16\x03\x01 hello\r\n\r\n")  # TLS to plain HTTP
    assert (status, body) == (400, b"bad request line\n")


async def test_a_handler_error_is_a_500_and_one_log_record(viewer: AudioViewer) -> None:
    # Metadata that is not JSON: serving /segments fails inside the handler.
    viewer.add({**SEED_PAYLOAD, "odd": object()})
    with structlog.testing.capture_logs() as logs:
        status, _, body = await exchange(viewer, b"GET /segments HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (status, body) == (500, b"internal error\n")
    errors: list[dict[str, Any]] = [e for e in logs if e["log_level"] == "error"]
    assert [e["event"] for e in errors] == ["viewer request failed"]
    assert errors[0]["error"].startswith("TypeError: ") and "exc_info" not in errors[0]
    status, _, _ = await exchange(viewer, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200
