"""The cell page's HTTP over a real loopback socket: every request bounded, no request can make
it log a traceback or stop serving."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import structlog

from tests.page.served import STATUS, Served, served
from tests.page.served import exchange as _exchange
from voiced.page import server
from voiced.page.settings import PageSettings
from voiced.service.cellstatus import CellStatus


@pytest.fixture
async def viewer() -> AsyncIterator[Served]:
    async with served() as running:
        yield running


async def exchange(viewer: Served, request: bytes) -> tuple[int, dict[str, str], bytes]:
    return await _exchange(viewer.port, request)


async def still_serves(viewer: Served) -> None:
    status, _, body = await exchange(viewer, b"GET /segments HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and isinstance(json.loads(body), list)


async def test_head_answers_as_get_without_a_body(viewer: Served) -> None:
    got = await exchange(viewer, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    head = await exchange(viewer, b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert got[0] == head[0] == 200
    assert head[1]["content-length"] == got[1]["content-length"] == str(len(got[2]))
    assert head[2] == b""


async def test_a_70_kb_header_line_gets_431_without_a_traceback(viewer: Served) -> None:
    request = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n"
    with structlog.testing.capture_logs() as logs:
        status, _, body = await exchange(viewer, request)
    assert status == 431
    assert body == b"header line too long\n"
    assert [e["log_level"] for e in logs] == ["info"], logs
    assert "exc_info" not in logs[0] and logs[0]["status"] == 431
    await still_serves(viewer)


async def test_a_long_request_line_gets_414(viewer: Served) -> None:
    status, _, body = await exchange(viewer, b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\n\r\n")
    assert (status, body) == (414, b"request line too long\n")
    await still_serves(viewer)


async def test_too_many_header_lines_get_431(viewer: Served) -> None:
    headers = b"".join(b"X-%d: y\r\n" % n for n in range(200))
    status, _, body = await exchange(viewer, b"GET / HTTP/1.1\r\n" + headers + b"\r\n")
    assert (status, body) == (431, b"more than 64 header lines\n")
    await still_serves(viewer)


async def test_a_garbled_request_gets_400(viewer: Served) -> None:
    status, _, body = await exchange(viewer, b"\x16\x03\x01 hello\r\n\r\n")  # TLS to plain HTTP
    assert (status, body) == (400, b"bad request line\n")


async def test_a_handler_error_is_a_500_and_one_log_record() -> None:
    calls = iter([ValueError("the history is gone")])

    def status() -> CellStatus:
        # Fails once, inside the handler, then reads again.
        if (error := next(calls, None)) is not None:
            raise error
        return STATUS

    async with served(status=status) as page:
        with structlog.testing.capture_logs() as logs:
            status_code, _, body = await _exchange(page.port, b"GET /state HTTP/1.1\r\n\r\n")
        again, _, _ = await _exchange(page.port, b"GET /state HTTP/1.1\r\n\r\n")
    assert (status_code, body) == (500, b"internal error\n")
    errors: list[dict[str, Any]] = [e for e in logs if e["log_level"] == "error"]
    assert [e["event"] for e in errors] == ["page request failed"]
    assert errors[0]["error"] == "ValueError: the history is gone" and "exc_info" not in errors[0]
    assert again == 200


async def test_a_half_sent_request_is_closed_with_408(
    viewer: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "REQUEST_TIMEOUT_S", 0.3)
    reader, writer = await asyncio.open_connection("127.0.0.1", viewer.port)
    writer.write(b"GET / HTTP/1.1\r\n")  # and never the rest
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
    await still_serves(viewer)


async def test_connections_beyond_the_cap_get_503_and_the_page_serves_on(
    viewer: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle connections cannot use up the daemon's file descriptors: over the cap each new one
    is answered and closed at once; when the idle ones go, the page serves again."""
    monkeypatch.setattr(server, "MAX_CONNECTIONS", 5)
    idle = [await asyncio.open_connection("127.0.0.1", viewer.port) for _ in range(5)]
    await asyncio.sleep(0.1)
    status, _, body = await exchange(viewer, b"GET /state HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (status, body) == (503, b"more than 5 connections open\n")
    for _, writer in idle:
        writer.close()
    await asyncio.sleep(0.2)
    await still_serves(viewer)


async def test_a_page_on_every_address_names_this_machine_and_warns() -> None:
    with structlog.testing.capture_logs() as logs:
        async with served(PageSettings(enabled=True, host="0.0.0.0", port=0)) as running:
            assert running.url == f"http://{socket.gethostname()}:{running.port}/"
    (warning,) = [e for e in logs if e["log_level"] == "warning"]
    assert warning["event"].startswith("the cell page is open to the network")
    assert warning["event"].endswith("STOP works only from this machine (no token)")
