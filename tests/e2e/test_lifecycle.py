"""Daemon lifecycle: SIGTERM while the arm moves, sd_notify readiness and watchdog."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import voiced, voiced_env

SLOW_CONFIG = """
[simulator]
time_scale = 1.0
"""


def start_daemon(tmp: Path, **env: str) -> subprocess.Popen[str]:
    config = tmp / "config.toml"
    config.write_text(SLOW_CONFIG, encoding="utf-8")
    cmd = voiced("run", "--config", str(config), "--cell", "sandwich", "--text", "-",
                 "--controller", "sim", "--events", "-")  # fmt: skip
    return subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=voiced_env(tmp, **env),
    )  # fmt: skip


def read_until(proc: subprocess.Popen[str], event: str, deadline: float) -> dict[str, object]:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        record = json.loads(line)
        if record["event"] == event:
            return record  # type: ignore[no-any-return]
    raise AssertionError(f"no {event} event before the deadline")


@pytest.mark.slow
def test_sigterm_while_the_arm_moves_stops_it_and_exits_cleanly(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path)
    assert proc.stdin is not None
    proc.stdin.write("computer add bread\n\n")
    proc.stdin.flush()  # stdin stays open: the daemon would wait for more input forever
    read_until(proc, "primitive", time.monotonic() + 30)
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
    proc = start_daemon(tmp_path, NOTIFY_SOCKET=str(path), WATCHDOG_USEC="400000")
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
