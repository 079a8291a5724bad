"""The shipped systemd unit: the settings the daemon relies on, and systemd's own verdict."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent.parent / "systemd" / "voiced.service"

Unit = dict[str, dict[str, list[str]]]


def parse_unit(text: str) -> Unit:
    """Parse a unit file into section -> key -> values (in order).

    Not configparser: systemd allows repeated keys (each DeviceAllow= adds a rule) and an
    empty assignment resets a list, which configparser cannot represent.
    """
    unit: Unit = {}
    section: dict[str, list[str]] | None = None
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith(("#", ";"))):
            continue
        if line.endswith("\\"):  # continuation: the value goes on on the next line
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.startswith("[") and line.endswith("]"):
            section = unit.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        if section is None or not sep:
            raise ValueError(f"not a unit file line: {raw!r}")
        section.setdefault(key.strip(), []).append(value.strip())
    return unit


@pytest.fixture(scope="module")
def service() -> dict[str, list[str]]:
    return parse_unit(UNIT.read_text(encoding="utf-8"))["Service"]


def test_parser_keeps_repeated_keys_and_joins_continuations() -> None:
    unit = parse_unit("[Service]\n# c\nDeviceAllow=a\nDeviceAllow=b\nExecStart=x \\\n  y\n")
    assert unit["Service"]["DeviceAllow"] == ["a", "b"]
    assert unit["Service"]["ExecStart"][0].split() == ["x", "y"]


def test_notify_with_watchdog(service: dict[str, list[str]]) -> None:
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    (watchdog,) = service["WatchdogSec"]
    assert int(watchdog) > 0


def test_restart_and_stop(service: dict[str, list[str]]) -> None:
    assert service["Restart"] == ["on-failure"]
    assert service["KillSignal"] == ["SIGTERM"]
    # Our graceful shutdown takes up to 5 s; systemd must not SIGKILL before that.
    assert int(service["TimeoutStopSec"][0]) > 5


def test_runs_unprivileged_with_state_directory(service: dict[str, list[str]]) -> None:
    assert service["User"] == ["voiced"]
    assert service["Group"] == ["voiced"]
    assert "audio" in service["SupplementaryGroups"][0].split()
    assert service["StateDirectory"] == ["voiced"]
    assert service["ExecStart"][0].split()[1:] == ["run", "--config", "/etc/voiced/config.toml"]


def test_sandbox_keeps_audio_and_jit_working(service: dict[str, list[str]]) -> None:
    assert service["PrivateDevices"] == ["no"]
    assert service["DevicePolicy"] == ["closed"]
    assert "char-alsa rw" in service["DeviceAllow"]
    assert service["MemoryDenyWriteExecute"] == ["no"]
    assert service["IPAddressAllow"] == ["localhost"]
    assert service["IPAddressDeny"] == ["any"]


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed on this machine")
    # verify also checks that ExecStart's program exists; /opt/voiced is a deployment path,
    # so point it at a program that exists here and let verify judge everything else.
    text = UNIT.read_text(encoding="utf-8").replace(
        "ExecStart=/opt/voiced/.venv/bin/voiced", f"ExecStart={sys.executable}", 1
    )
    copy = tmp_path / "voiced.service"
    copy.write_text(text, encoding="utf-8")
    result = subprocess.run(
        [analyze, "verify", "--man=no", str(copy)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # Unknown or misspelt settings are only warnings; treat them as failures.
    assert "Unknown key" not in result.stderr, result.stderr
    assert "Unknown section" not in result.stderr, result.stderr


def test_logs_go_to_the_journal_with_their_priority(service: dict[str, list[str]]) -> None:
    # The daemon starts each line with "<N>" under the journal; journald must read it.
    assert service["StandardError"] == ["journal"]
    assert service["SyslogLevelPrefix"] == ["yes"]
