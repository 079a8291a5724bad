"""Daemon lifecycle: SIGTERM while the arm moves, sd_notify readiness and watchdog."""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import say_and_wait_for_motion, start_daemon


@pytest.mark.slow
def test_sigterm_while_the_arm_moves_stops_it_and_exits_cleanly(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path, "sandwich")
    # stdin stays open: the daemon would wait for more input forever
    say_and_wait_for_motion(proc, "computer add bread\n\n")
    time.sleep(0.3)  # well inside the first move at real-time speed
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=10)
    took = time.monotonic() - sent
    assert proc.returncode == 0, stderr
    assert took < 5.0, f"shutdown took {took:.2f} s"
    assert "Traceback" not in stderr
    assert "stopped for shutdown" in stderr
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert any(e["event"] == "stopped" for e in events)
    final = [e for e in events if e["event"] == "final_state"]
    assert final and final[0]["state"]["zones"]["assembly_fixture"] == []


def test_sd_notify_ready_and_watchdog_over_a_real_socket(tmp_path: Path) -> None:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(20)
    proc = start_daemon(tmp_path, "sandwich", NOTIFY_SOCKET=str(path), WATCHDOG_USEC="400000")
    assert proc.stdin is not None
    proc.stdin.write("always listen\n")
    proc.stdin.flush()
    try:
        messages: list[str] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
            messages.count("WATCHDOG=1") < 3 or not any("always" in m for m in messages)
        ):
            messages.append(sock.recv(4096).decode())
        assert "READY=1" in messages
        assert "STATUS=listening: wake mode, cell sandwich" in messages
        assert "STATUS=listening: always mode, cell sandwich" in messages
        assert messages.count("WATCHDOG=1") >= 3
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
        sock.close()
    assert proc.returncode == 0
