"""sd_notify and the watchdog, against real AF_UNIX datagram sockets standing in for systemd."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from voiced.service.sdnotify import Notifier, run_watchdog, watchdog_interval


def _receiver(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(2.0)
    return sock


@pytest.fixture
def fs_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket bound to a path, and the NOTIFY_SOCKET value naming it."""
    path = str(tmp_path / "notify")
    sock = _receiver(path)
    yield sock, path
    sock.close()


@pytest.fixture
def abstract_socket() -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket in the abstract namespace, and its "@name" NOTIFY_SOCKET value."""
    name = f"voiced-test-{uuid.uuid4().hex}"
    sock = _receiver("\0" + name)
    yield sock, "@" + name
    sock.close()


def _pending(sock: socket.socket) -> list[bytes]:
    """Every datagram already queued on `sock`, without waiting for more."""
    received = []
    sock.setblocking(False)
    try:
        while True:
            received.append(sock.recv(4096))
    except BlockingIOError:
        return received
    finally:
        sock.settimeout(2.0)


def test_ready_status_watchdog_stopping_send_exact_bytes(
    fs_socket: tuple[socket.socket, str],
) -> None:
    sock, address = fs_socket
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        assert notifier.enabled
        notifier.ready()
        assert sock.recv(4096) == b"READY=1"
        notifier.status("listening")
        assert sock.recv(4096) == b"STATUS=listening"
        notifier.watchdog()
        assert sock.recv(4096) == b"WATCHDOG=1"
        notifier.stopping()
        assert sock.recv(4096) == b"STOPPING=1"


def test_abstract_socket(abstract_socket: tuple[socket.socket, str]) -> None:
    sock, address = abstract_socket
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        notifier.ready()
        assert sock.recv(4096) == b"READY=1"


def test_status_is_made_single_line(fs_socket: tuple[socket.socket, str]) -> None:
    sock, address = fs_socket
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        notifier.status("controller lost\r\nreconnecting\n")
        assert sock.recv(4096) == b"STATUS=controller lost reconnecting"


def test_notify_sends_all_fields_in_one_datagram(fs_socket: tuple[socket.socket, str]) -> None:
    sock, address = fs_socket
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        notifier.notify(READY=1, STATUS="up", EXTEND_TIMEOUT_USEC=5_000_000, X=True)
        assert sock.recv(4096) == b"READY=1\nSTATUS=up\nEXTEND_TIMEOUT_USEC=5000000\nX=1"
        notifier.notify()
        assert _pending(sock) == []


def test_utf8_status(fs_socket: tuple[socket.socket, str]) -> None:
    sock, address = fs_socket
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        notifier.status("Greifer öffnen")
        assert sock.recv(4096) == "STATUS=Greifer öffnen".encode()


def test_unset_socket_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    notifier = Notifier({})
    assert not notifier.enabled

    def no_sockets(*args: object, **kwargs: object) -> socket.socket:
        raise AssertionError("a disabled notifier must not open a socket")

    monkeypatch.setattr(socket, "socket", no_sockets)
    notifier.ready()
    notifier.status("x")
    notifier.watchdog()
    notifier.stopping()
    notifier.notify(FOO="bar")
    notifier.close()


def test_default_environ_is_os_environ(
    fs_socket: tuple[socket.socket, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sock, address = fs_socket
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    with Notifier() as notifier:
        notifier.ready()
    assert sock.recv(4096) == b"READY=1"


@pytest.mark.parametrize("value", ["relative/path", "@", "vsock:2:1234"])
def test_unsupported_address_disables_with_a_warning(value: str) -> None:
    with capture_logs() as logs:
        notifier = Notifier({"NOTIFY_SOCKET": value})
        notifier.ready()
    assert not notifier.enabled
    assert [entry["event"] for entry in logs] == ["sd_notify_unsupported_address"]


def test_send_failure_is_logged_once_then_recovery(tmp_path: Path) -> None:
    path = str(tmp_path / "notify")  # nobody listens here yet
    with Notifier({"NOTIFY_SOCKET": path}) as notifier, capture_logs() as logs:
        notifier.ready()
        notifier.watchdog()
        notifier.watchdog()
        assert [entry["event"] for entry in logs] == ["sd_notify_failed"]
        assert logs[0]["log_level"] == "warning"

        sock = _receiver(path)
        try:
            notifier.watchdog()
            assert sock.recv(4096) == b"WATCHDOG=1"
        finally:
            sock.close()
        assert [entry["event"] for entry in logs] == ["sd_notify_failed", "sd_notify_recovered"]


def test_full_receiver_queue_does_not_block(fs_socket: tuple[socket.socket, str]) -> None:
    # The kernel queues only a few datagrams per unread socket (net.unix.max_dgram_qlen);
    # a blocking sender would hang here, freezing the daemon's event loop.
    sock, address = fs_socket
    with Notifier({"NOTIFY_SOCKET": address}) as notifier, capture_logs() as logs:
        started = time.monotonic()
        for _ in range(2000):
            notifier.watchdog()
        assert time.monotonic() - started < 5
    assert [entry["event"] for entry in logs].count("sd_notify_failed") <= 1
    assert set(_pending(sock)) == {b"WATCHDOG=1"}


_PID = str(os.getpid())


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, None),
        ({"WATCHDOG_USEC": "10000000"}, 5.0),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": _PID}, 5.0),
        ({"WATCHDOG_USEC": "3000000", "WATCHDOG_PID": _PID}, 1.5),
        ({"WATCHDOG_USEC": "1"}, 0.0000005),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "not-a-pid"}, None),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": ""}, None),
        ({"WATCHDOG_USEC": ""}, None),
        ({"WATCHDOG_USEC": "ten"}, None),
        ({"WATCHDOG_USEC": "1.5"}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "-10000000"}, None),
        ({"WATCHDOG_PID": _PID}, None),
    ],
)
def test_watchdog_interval(environ: dict[str, str], expected: float | None) -> None:
    assert watchdog_interval(environ) == pytest.approx(expected)


def test_watchdog_interval_default_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "8000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert watchdog_interval() == 4.0


async def _recv(sock: socket.socket, timeout: float = 2.0) -> bytes:
    sock.setblocking(False)
    return await asyncio.wait_for(asyncio.get_running_loop().sock_recv(sock, 4096), timeout)


async def test_run_watchdog_pings_until_stopped(fs_socket: tuple[socket.socket, str]) -> None:
    sock, address = fs_socket
    stop = asyncio.Event()
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        task = asyncio.create_task(run_watchdog(notifier, 0.02, lambda: True, stop))
        for _ in range(4):
            assert await _recv(sock) == b"WATCHDOG=1"
        stop.set()
        await asyncio.wait_for(task, timeout=2.0)


async def test_run_watchdog_stops_promptly_mid_interval(
    fs_socket: tuple[socket.socket, str],
) -> None:
    sock, address = fs_socket
    stop = asyncio.Event()
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        task = asyncio.create_task(run_watchdog(notifier, 60.0, lambda: True, stop))
        assert await _recv(sock) == b"WATCHDOG=1"  # the first ping goes out at once
        started = time.monotonic()
        stop.set()
        await asyncio.wait_for(task, timeout=5.0)
        # Far below the 60 s interval: the wait ends with the event, not with a sleep.
        assert time.monotonic() - started < 2.0
    assert _pending(sock) == []


async def test_run_watchdog_returns_at_once_if_already_stopped(
    fs_socket: tuple[socket.socket, str],
) -> None:
    sock, address = fs_socket
    stop = asyncio.Event()
    stop.set()
    with Notifier({"NOTIFY_SOCKET": address}) as notifier:
        await asyncio.wait_for(run_watchdog(notifier, 60.0, lambda: True, stop), timeout=2.0)
    assert _pending(sock) == []


async def test_unhealthy_withholds_pings(fs_socket: tuple[socket.socket, str]) -> None:
    sock, address = fs_socket
    stop = asyncio.Event()
    with Notifier({"NOTIFY_SOCKET": address}) as notifier, capture_logs() as logs:
        task = asyncio.create_task(run_watchdog(notifier, 0.01, lambda: False, stop))
        await asyncio.sleep(0.1)
        stop.set()
        await asyncio.wait_for(task, timeout=2.0)
    assert _pending(sock) == []
    assert [entry["event"] for entry in logs] == ["watchdog_withheld"]


async def test_pings_resume_when_healthy_again(fs_socket: tuple[socket.socket, str]) -> None:
    sock, address = fs_socket
    stop = asyncio.Event()
    healthy = False
    with Notifier({"NOTIFY_SOCKET": address}) as notifier, capture_logs() as logs:
        task = asyncio.create_task(run_watchdog(notifier, 0.01, lambda: healthy, stop))
        await asyncio.sleep(0.05)
        assert _pending(sock) == []
        healthy = True
        assert await _recv(sock) == b"WATCHDOG=1"
        stop.set()
        await asyncio.wait_for(task, timeout=2.0)
    assert [entry["event"] for entry in logs] == ["watchdog_withheld", "watchdog_resumed"]


async def test_failing_health_check_counts_as_unhealthy(
    fs_socket: tuple[socket.socket, str],
) -> None:
    sock, address = fs_socket
    stop = asyncio.Event()

    def broken() -> bool:
        raise RuntimeError("probe bug")

    with Notifier({"NOTIFY_SOCKET": address}) as notifier, capture_logs() as logs:
        task = asyncio.create_task(run_watchdog(notifier, 0.01, broken, stop))
        await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, timeout=2.0)
    assert _pending(sock) == []
    # One traceback per unhealthy run, not one per interval.
    assert [entry["event"] for entry in logs] == [
        "watchdog_health_check_failed",
        "watchdog_withheld",
    ]


async def test_run_watchdog_survives_a_dead_socket(tmp_path: Path) -> None:
    stop = asyncio.Event()
    with Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")}) as notifier:
        task = asyncio.create_task(run_watchdog(notifier, 0.01, lambda: True, stop))
        await asyncio.sleep(0.05)
        assert not task.done()
        stop.set()
        await asyncio.wait_for(task, timeout=2.0)


@pytest.mark.parametrize("interval", [0.0, -1.0])
async def test_run_watchdog_rejects_non_positive_interval(interval: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        await run_watchdog(Notifier({}), interval, lambda: True, asyncio.Event())
