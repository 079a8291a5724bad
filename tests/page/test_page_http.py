"""The cell page over a real loopback socket: its routes, the live stream, audio as 16-bit WAV,
and STOP accepted only from this machine (or with the token) with the header a cross-site form
cannot send."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import wave

import numpy as np
import pytest
import structlog

from tests.page.served import STATUS, exchange, served, tone_segment
from voiced import eventtypes as ev
from voiced.events import EventLog
from voiced.page.server import CellPage
from voiced.page.settings import PageSettings
from voiced.service.cellstatus import CellStatus, RemoteInbox

TOKEN = "s3cret-token-of-the-cell-0123"


async def test_the_page_and_its_state() -> None:
    async with served() as page:
        status, headers, html = await exchange(page.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 200 and headers["content-type"].startswith("text/html")
        assert b'id="stop"' in html and b"/events" in html
        status, headers, body = await exchange(page.port, b"GET /state HTTP/1.1\r\n\r\n")
    state = json.loads(body)
    assert (status, headers["content-type"]) == (200, "application/json")
    assert state["status"]["cell"] == "sandwich"
    assert state["status"]["commands"][0]["said"] == "add bread"
    assert state["drawing"].startswith("<svg") and 'data-object="bread"' in state["drawing"]
    assert state["exchanges"] == []


async def test_unknown_paths_404_and_methods_405() -> None:
    async with served() as page:
        assert (await exchange(page.port, b"GET /nope HTTP/1.1\r\n\r\n"))[0] == 404
        assert (await exchange(page.port, b"GET /segments/9.wav HTTP/1.1\r\n\r\n"))[0] == 404
        status, headers, body = await exchange(page.port, b"POST /state HTTP/1.1\r\n\r\n")
        assert (status, headers["allow"]) == (405, "GET, HEAD")
        status, headers, _ = await exchange(page.port, b"GET /stop HTTP/1.1\r\n\r\n")
        assert (status, headers["allow"]) == (405, "POST")
        status, _, body = await exchange(page.port, b"DELETE / HTTP/1.1\r\n\r\n")
        assert (status, body) == (405, b"method DELETE not allowed: only GET, HEAD and POST\n")


async def test_an_utterance_heard_is_a_story_with_its_audio_as_16_bit_wav() -> None:
    segment = tone_segment(speech_end=2.5)
    async with served() as page:
        page.page.exchanges.publish(segment, None, None)
        page.events.emit(ev.Utterance("add bread", raw="Add bread.", audio_t=2.6, speech_end=2.5),
                         correlation_id="c1")  # fmt: skip
        _, _, body = await exchange(page.port, b"GET /segments HTTP/1.1\r\n\r\n")
        (story,) = json.loads(body)
        status, headers, wav = await exchange(
            page.port, f"GET {story['audio']['url']} HTTP/1.1\r\n\r\n".encode()
        )
        head = await exchange(page.port, f"HEAD {story['audio']['url']} HTTP/1.1\r\n\r\n".encode())
    assert story["said"] == "add bread" and story["source"] == "heard"
    assert story["audio"]["raw"] == "" and story["audio"]["preroll"] == 4800
    assert (status, headers["content-type"]) == (200, "audio/wav")
    assert head[1]["content-length"] == str(len(wav)) and head[2] == b""
    with wave.open(io.BytesIO(wav)) as file:
        assert (file.getnchannels(), file.getsampwidth(), file.getframerate()) == (1, 2, 16000)
        decoded = np.frombuffer(file.readframes(file.getnframes()), dtype="<i2")
    np.testing.assert_array_equal(decoded, segment.samples)
    assert len(wav) == 44 + 2 * len(segment.samples)  # PCM, not JSON floats


async def test_the_stream_sends_the_state_then_each_change() -> None:
    async with served() as page:
        reader, writer = await asyncio.open_connection("127.0.0.1", page.port)
        writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        first = await asyncio.wait_for(_event(reader), 5)
        page.events.emit(ev.Utterance("add cheese"), correlation_id="c2")
        second = await asyncio.wait_for(_event(reader), 5)
        writer.close()
    assert first["exchanges"] == []
    assert [x["said"] for x in second["exchanges"]] == ["add cheese"]
    assert second["exchanges"][0]["source"] == "typed"


async def _event(reader: asyncio.StreamReader) -> dict[str, object]:
    """The next `state` event's data (skipping the HTTP head and comments)."""
    while True:
        line = await reader.readline()
        if line.startswith(b"data: "):
            data: dict[str, object] = json.loads(line[6:])
            return data


STOP = b"POST /stop HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"


@pytest.mark.parametrize(
    ("extra", "status", "said"),
    [
        (b"X-Voiced-Stop: 1\r\n", 200, b"stopping\n"),
        (b"", 403, b"STOP needs the x-voiced-stop header or a token (Authorization: Bearer)\n"),
        (b"Authorization: Bearer wrong-token-wrong-token\r\n", 403, b"wrong token\n"),
        (b"Authorization: Bearer " + TOKEN.encode() + b"\r\n", 200, b"stopping\n"),
    ],
    ids=["own-button", "no-header", "wrong-token", "token"],
)
async def test_stop_from_this_machine(extra: bytes, status: int, said: bytes) -> None:
    async with served(token=TOKEN) as page:
        answer = await exchange(page.port, STOP + extra + b"\r\n")
        stopped = [] if status != 200 else [await asyncio.wait_for(page.inbox.next(), 1)]
    assert (answer[0], answer[2]) == (status, said)
    assert [(w.text, w.source) for w in stopped] == ([("stop", "page")] if status == 200 else [])


async def test_stop_through_a_name_that_is_not_loopback_is_refused() -> None:
    # A web page that rebinds its DNS name to 127.0.0.1 reaches the port from this machine,
    # but its requests still name its own host.
    async with served() as page:
        request = STOP.replace(b"127.0.0.1", b"evil.example:8765") + b"X-Voiced-Stop: 1\r\n\r\n"
        status, _, body = await exchange(page.port, request)
    assert (status, body) == (403, b"STOP without the token only through localhost or 127.0.0.1\n")


async def test_a_big_body_is_refused() -> None:
    async with served() as page:
        request = b"POST /stop HTTP/1.1\r\nX-Voiced-Stop: 1\r\nContent-Length: 5000\r\n\r\n"
        status, _, body = await exchange(page.port, request + b"x" * 5000)
    assert (status, body) == (413, b"body over 1024 bytes\n")


def _own_address() -> str | None:
    """This machine's address on a non-loopback interface (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 1))
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@pytest.mark.skipif(_own_address() is None, reason="no non-loopback interface")
async def test_stop_from_another_address_needs_the_token() -> None:
    address = _own_address()
    assert address is not None
    async with served(PageSettings(enabled=True, host="0.0.0.0", port=0), TOKEN) as page:
        head = f"POST /stop HTTP/1.1\r\nHost: {address}\r\nX-Voiced-Stop: 1\r\n".encode()

        async def post(extra: bytes) -> tuple[int, bytes]:
            reader, writer = await asyncio.open_connection(address, page.port)
            writer.write(head + extra + b"\r\n")
            raw = await asyncio.wait_for(reader.read(), 5)
            writer.close()
            return int(raw.split()[1]), raw.partition(b"\r\n\r\n")[2]

        refused = await post(b"")
        accepted = await post(b"Authorization: Bearer " + TOKEN.encode() + b"\r\n")
        said = await asyncio.wait_for(page.inbox.next(), 1)
    assert refused == (403, b"STOP from another machine needs the token (Authorization: Bearer)\n")
    assert accepted == (200, b"stopping\n") and said.source == "page"


async def test_a_failing_snapshot_is_logged_and_the_stream_goes_on() -> None:
    fail, failed = asyncio.Event(), asyncio.Event()

    def status() -> CellStatus:
        if fail.is_set():
            fail.clear()
            failed.set()
            raise OSError("database is locked")
        return STATUS

    async with served(status=status) as page:
        reader, writer = await asyncio.open_connection("127.0.0.1", page.port)
        writer.write(b"GET /events HTTP/1.1\r\n\r\n")
        await asyncio.wait_for(_event(reader), 5)
        fail.set()
        with structlog.testing.capture_logs() as logs:
            page.events.emit(ev.Utterance("add meat"), correlation_id="c3")
            await asyncio.wait_for(failed.wait(), 5)  # the push that fails
            page.events.emit(ev.Utterance("add tomato"), correlation_id="c4")
            later = await asyncio.wait_for(_event(reader), 5)
        writer.close()
    assert [x["said"] for x in later["exchanges"]] == ["add meat", "add tomato"]
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["cell page state failed"]


async def test_a_port_in_use_is_a_warning_and_the_run_goes_on() -> None:
    async with served() as first:
        second = CellPage(PageSettings(enabled=True, port=first.port), EventLog(), None)
        with structlog.testing.capture_logs() as logs:
            await asyncio.wait_for(second.serve(lambda: STATUS, lambda: "", RemoteInbox()), 5)
    assert not second.bound.is_set()
    (warning,) = [e for e in logs if e["log_level"] == "warning"]
    assert warning["event"] == "cell page not served" and warning["port"] == first.port
