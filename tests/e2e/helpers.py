"""Running the real `voiced` command in a subprocess, as a user or systemd would."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voiced.eventtypes import Record

REPO = Path(__file__).resolve().parents[2]

FAST_CONFIG = """
[simulator]
time_scale = 0.02
[controller]
heartbeat_interval = 0.2
heartbeat_timeout = 2.0
"""


def voiced_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("VOICED_", "NOTIFY_", "WATCHDOG_"))
    }
    env.pop("ANTHROPIC_API_KEY", None)
    env["VOICED_DATA_DIR"] = str(tmp / "data")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def voiced(*args: str) -> list[str]:
    return [sys.executable, "-m", "voiced", *args]


SIM_PORTS = re.compile(r"motion port (\d+), control port (\d+)")


@dataclass(frozen=True)
class StandaloneSim:
    process: subprocess.Popen[str]
    address: str
    """`127.0.0.1:MOTION_PORT`, for `--controller`."""
    config: Path
    """A config naming its control port."""


@contextmanager
def standalone_sim(tmp: Path, time_scale: float) -> Iterator[StandaloneSim]:
    """`voiced sim` for the sandwich cell on free ports, as a separate controller process; it
    is killed on the way out (a test may kill it sooner: a controller that dies)."""
    sim = subprocess.Popen(
        voiced("sim", "--cell", "sandwich", "--port", "0", "--time-scale", str(time_scale)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=voiced_env(tmp),
    )  # fmt: skip
    try:
        assert sim.stdout is not None
        ports = SIM_PORTS.search(sim.stdout.readline())
        assert ports, "voiced sim did not announce its ports"
        config = tmp / "real.toml"
        config.write_text(f"[controller]\ncontrol_port = {ports.group(2)}\n", encoding="utf-8")
        yield StandaloneSim(sim, f"127.0.0.1:{ports.group(1)}", config)
    finally:
        sim.kill()
        sim.communicate(timeout=10)


def work_off_queue(config: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`voiced queue run` on the sandwich cell and the simulator, events on stdout."""
    return subprocess.run(
        voiced("queue", "run", "--config", str(config), "--cell", "sandwich",
               "--controller", "sim", "--events", "-"),
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def fast_config(tmp: Path, extra: str = "") -> Path:
    path = tmp / "config.toml"
    path.write_text(FAST_CONFIG + extra, encoding="utf-8")
    return path


def run_text(
    tmp: Path, cell: str, lines: str, *args: str, timeout: float = 120
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    """`voiced run --cell CELL --text - --controller sim --events -` fed `lines`."""
    cmd = voiced("run", "--config", str(fast_config(tmp)), "--cell", cell, "--text", "-",
                 "--controller", "sim", "--events", "-", *args)  # fmt: skip
    proc = subprocess.run(
        cmd, input=lines, capture_output=True, text=True, env=voiced_env(tmp), timeout=timeout
    )
    return parse_events(proc.stdout), proc


def parse_events(stdout: str) -> list[dict[str, Any]]:
    """The records of an --events stream. Each must be a known event that its typed form
    (voiced.eventtypes) writes back field for field: what a session emits is what is documented."""
    records = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    for record in records:
        assert Record.from_dict(record).to_dict() == record, record
    return records


def final_state(events: list[dict[str, Any]]) -> dict[str, Any]:
    finals = [e for e in events if e["event"] == "final_state"]
    assert len(finals) == 1, f"expected one final_state event, got {len(finals)}"
    state: dict[str, Any] = finals[0]["state"]
    return state


def start_daemon(tmp: Path, cell: str, *args: str, **env: str) -> subprocess.Popen[str]:
    """`voiced run --text -` at real-time motion, stdin left open for the test to write to."""
    config = tmp / "realtime.toml"
    config.write_text("[simulator]\ntime_scale = 1.0\n", encoding="utf-8")
    cmd = voiced("run", "--config", str(config), "--cell", cell, "--text", "-",
                 "--controller", "sim", "--events", "-", *args)  # fmt: skip
    return subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=voiced_env(tmp, **env),
    )  # fmt: skip


def say_and_wait_for_motion(proc: subprocess.Popen[str], lines: str, timeout: float = 30) -> None:
    """Write `lines` to the daemon and return once the first primitive has gone out."""
    assert proc.stdin is not None
    proc.stdin.write(lines)
    proc.stdin.flush()
    wait_for_event(proc, lambda event: event["event"] == "primitive", "a primitive", timeout)


def wait_for_event(
    proc: subprocess.Popen[str],
    wanted: Callable[[dict[str, Any]], bool],
    what: str,
    timeout: float = 30,
) -> None:
    """Read the daemon's events (`--events -`) until one is `wanted`."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if wanted(json.loads(line)):
            return
    raise AssertionError(f"no event for {what} before the deadline")


def stopped_while_moving(
    proc: subprocess.Popen[str], said: str, then: str = "stop\n"
) -> list[dict[str, Any]]:
    """Say `said`, and `then` (a stop) 0.2 s into the motion it starts; the daemon's events
    once it has exited cleanly."""
    say_and_wait_for_motion(proc, said)
    time.sleep(0.2)
    assert proc.stdin is not None
    proc.stdin.write(then)
    proc.stdin.flush()
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    return parse_events(stdout)


async def spawn_text_daemon(
    config: Path, env: dict[str, str], cell: str = "sandwich"
) -> asyncio.subprocess.Process:
    """`voiced run --text - --controller sim --events -` with pipes, for tests that talk to
    it (or to a model server) while it runs."""
    cmd = voiced("run", "--config", str(config), "--cell", cell, "--text", "-",
                 "--controller", "sim", "--events", "-")  # fmt: skip
    return await asyncio.create_subprocess_exec(
        *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip


async def next_event(
    proc: asyncio.subprocess.Process, kind: str
) -> tuple[dict[str, Any], list[str]]:
    """Read `proc`'s events (one JSON line each) until one of `kind`; it and every line read."""
    assert proc.stdout is not None
    lines: list[str] = []
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line, f"the daemon ended before a {kind} event"
        lines.append(line)
        record = json.loads(line)
        if record["event"] == kind:
            return record, lines


def kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The events of one kind, in order."""
    return [e for e in events if e["event"] == kind]


def after(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The events after the first `kind` event."""
    first = next(i for i, e in enumerate(events) if e["event"] == kind)
    return events[first + 1 :]


def spoken(events: list[dict[str, Any]]) -> list[str]:
    """What the daemon said (its `feedback` events)."""
    return [e["text"] for e in kinds(events, "feedback")]


@contextmanager
def notify_socket(tmp: Path) -> Iterator[socket.socket]:
    """A systemd notify socket at `tmp`/notify.sock (give the daemon NOTIFY_SOCKET)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp / "notify.sock"))
    sock.setblocking(False)
    try:
        yield sock
    finally:
        sock.close()


def statuses(sock: socket.socket) -> list[str]:
    """The STATUS= lines sent to `sock` since the last call."""
    found: list[str] = []
    while True:
        try:
            message = sock.recv(4096).decode()
        except BlockingIOError:
            return found
        found += [line for line in message.splitlines() if line.startswith("STATUS=")]


def asked_about_words(events: list[dict[str, Any]]) -> list[str]:
    """The questions that quote words heard around a command ('I heard "..." after ...')."""
    return [
        str(e["text"]) for e in kinds(events, "feedback") if str(e["text"]).startswith("I heard")
    ]
