"""Data directory resolution and layout, atomic writes (including under SIGKILL), offline()."""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from voiced.errors import ConfigError
from voiced.paths import (
    DataDir,
    atomic_write_json,
    atomic_write_text,
    ensure_data_dir,
    offline,
    resolve_data_dir,
)

REPO = Path(__file__).resolve().parents[1]

# --- resolve_data_dir -------------------------------------------------------------------------

FULL_ENV = {
    "VOICED_DATA_DIR": "/env/voiced",
    "STATE_DIRECTORY": "/var/lib/voiced:/var/lib/other",
    "XDG_DATA_HOME": "/xdg",
    "HOME": "/home/op",
}


@pytest.mark.parametrize(
    ("cli", "environ", "expected"),
    [
        ("/cli/dir", FULL_ENV, "/cli/dir"),
        (None, FULL_ENV, "/env/voiced"),
        ("", FULL_ENV, "/env/voiced"),
        (None, {**FULL_ENV, "VOICED_DATA_DIR": ""}, "/var/lib/voiced"),
        (None, {"STATE_DIRECTORY": "/var/lib/voiced", "HOME": "/h"}, "/var/lib/voiced"),
        (None, {"STATE_DIRECTORY": ":/var/lib/second", "HOME": "/h"}, "/var/lib/second"),
        (None, {"STATE_DIRECTORY": "", "XDG_DATA_HOME": "/xdg", "HOME": "/h"}, "/xdg/voiced"),
        (None, {"XDG_DATA_HOME": "relative", "HOME": "/h"}, "/h/.local/share/voiced"),
        (None, {"XDG_DATA_HOME": "", "HOME": "/h"}, "/h/.local/share/voiced"),
        (None, {"HOME": "/h"}, "/h/.local/share/voiced"),
    ],
    ids=[
        "cli-beats-all",
        "env-beats-state-directory",
        "empty-cli-is-unset",
        "empty-env-is-unset",
        "state-directory",
        "state-directory-first-non-empty",
        "xdg",
        "relative-xdg-ignored",
        "empty-xdg-is-unset",
        "home",
    ],
)
def test_data_dir_precedence(cli: str | None, environ: dict[str, str], expected: str) -> None:
    assert resolve_data_dir(cli, environ) == Path(expected)


def test_data_dir_without_home_variable_uses_the_account_home() -> None:
    assert resolve_data_dir(None, {}) == Path.home() / ".local/share/voiced"


def test_cli_data_dir_expands_tilde() -> None:
    assert resolve_data_dir("~/d", {}) == Path.home() / "d"


# --- ensure_data_dir ------------------------------------------------------------------------


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("umask_022")
def test_ensure_data_dir_creates_with_mode_750(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "voiced"
    assert ensure_data_dir(target) == target
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert list(target.iterdir()) == []  # the write probe cleans up after itself
    assert ensure_data_dir(target) == target  # idempotent


def test_ensure_data_dir_under_a_file_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    target = blocker / "voiced"
    with pytest.raises(ConfigError) as caught:
        ensure_data_dir(target)
    [problem] = caught.value.problems
    assert problem.source == str(target)
    assert problem.message.startswith("cannot create the data directory: ")


def test_ensure_data_dir_on_a_file_is_a_config_error(tmp_path: Path) -> None:
    target = tmp_path / "voiced"
    target.write_text("x")
    with pytest.raises(ConfigError, match="cannot create the data directory"):
        ensure_data_dir(target)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only directory")
def test_ensure_data_dir_read_only_is_a_config_error(tmp_path: Path) -> None:
    target = tmp_path / "voiced"
    target.mkdir(mode=0o500)
    try:
        with pytest.raises(ConfigError, match="cannot write to the data directory"):
            ensure_data_dir(target)
    finally:
        target.chmod(0o700)


# --- DataDir --------------------------------------------------------------------------------


def test_data_dir_layout() -> None:
    data = DataDir(Path("/d"))
    assert {
        "history": data.history,
        "phrase_bank": data.phrase_bank,
        "learned_composites": data.learned_composites,
        "learned_verbs": data.learned_verbs,
        "notes": data.notes,
        "queue": data.queue,
        "traces": data.traces,
    } == {
        "history": Path("/d/history.sqlite3"),
        "phrase_bank": Path("/d/phrase_bank.json"),
        "learned_composites": Path("/d/learned_composites.json"),
        "learned_verbs": Path("/d/learned_verbs.json"),
        "notes": Path("/d/notes"),
        "queue": Path("/d/queue.sqlite3"),
        "traces": Path("/d/traces"),
    }


@pytest.mark.parametrize(
    ("cell", "name"),
    [
        ("sandwich", "scene-sandwich.json"),
        ("/etc/voiced/cells/my cell.toml", "scene-my_cell.json"),
        ("../../escape", "scene-escape.json"),
    ],
)
def test_scene_path_stays_in_the_data_dir(cell: str, name: str) -> None:
    assert DataDir(Path("/d")).scene(cell) == Path("/d") / name


@pytest.mark.parametrize("cell", ["", "..", "/"])
def test_scene_path_rejects_nameless_cells(cell: str) -> None:
    with pytest.raises(ValueError, match="cannot derive a scene file name"):
        DataDir(Path("/d")).scene(cell)


# --- Atomic writes --------------------------------------------------------------------------


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_atomic_write_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write_text(target, "one\r\n")
    assert target.read_bytes() == b"one\r\n"  # written verbatim, no newline translation
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    target.chmod(0o600)
    atomic_write_text(str(target), "two ✓")
    assert target.read_text(encoding="utf-8") == "two ✓"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # a replaced file keeps its mode
    assert leftovers(tmp_path) == []


def test_atomic_write_failure_midway_keeps_old_and_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "x" * 100_000 + "\ud800")  # fails while writing the temp file
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_atomic_write_json(tmp_path: Path) -> None:
    target = tmp_path / "bank.json"
    atomic_write_json(target, {"ä": [1, 2]})
    assert json.loads(target.read_text(encoding="utf-8")) == {"ä": [1, 2]}
    assert target.read_text(encoding="utf-8").endswith("\n")


@pytest.mark.parametrize(
    ("obj", "error"), [({"x": float("nan")}, ValueError), ({"x": {1, 2}}, TypeError)]
)
def test_atomic_write_json_unserialisable_leaves_file_alone(
    tmp_path: Path, obj: object, error: type[Exception]
) -> None:
    target = tmp_path / "bank.json"
    target.write_text("{}")
    with pytest.raises(error):
        atomic_write_json(target, obj)
    assert target.read_text() == "{}"
    assert leftovers(tmp_path) == []


# The writer runs in a real subprocess that is SIGKILLed: no cleanup handler can run, exactly as
# with kill -9 or the OOM killer. (A kill does not lose the page cache the way a power cut does;
# the fsyncs are what cover that case and are not tested here.)

PAUSE_BEFORE_RENAME = """
import os, sys, time
from voiced.paths import atomic_write_text
real_fsync = os.fsync
def fsync_then_stop(fd):
    real_fsync(fd)
    print("temp file complete", flush=True)
    time.sleep(600)
os.fsync = fsync_then_stop
atomic_write_text(sys.argv[1], "new" * 1_000_000)
"""

WRITE_FOREVER = """
import sys
from voiced.paths import atomic_write_text
size = int(sys.argv[2])
print("ready", flush=True)
while True:
    for letter in "BA":
        atomic_write_text(sys.argv[1], letter * size)
"""


def start_writer(script: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True, env=env
    )


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL


def test_sigkill_after_temp_written_leaves_old_content(tmp_path: Path) -> None:
    target = tmp_path / "phrase_bank.json"
    target.write_text("old")
    writer = start_writer(PAUSE_BEFORE_RENAME, str(target))
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "temp file complete\n"
        [temp] = leftovers(tmp_path)
        assert (tmp_path / temp).read_text() == "new" * 1_000_000  # only the rename is missing
    finally:
        kill(writer)
    assert target.read_text() == "old"


def test_sigkill_at_random_moments_never_tears_the_file(tmp_path: Path) -> None:
    size = 4_000_000
    target = tmp_path / "queue.json"
    target.write_text("A" * size)
    rng = random.Random(1234)
    interrupted = 0
    for _ in range(8):
        writer = start_writer(WRITE_FOREVER, str(target), str(size))
        try:
            assert writer.stdout is not None
            assert writer.stdout.readline() == "ready\n"
            time.sleep(rng.uniform(0.0, 0.15))
        finally:
            kill(writer)
        content = target.read_text()
        assert content in ("A" * size, "B" * size), f"torn file: {len(content)} characters"
        interrupted += bool(leftovers(tmp_path))
        for temp in leftovers(tmp_path):
            (tmp_path / temp).unlink()
    # A stray temp file proves a kill landed between creating it and the rename.
    assert interrupted > 0


# --- offline --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, True),
        ({"ANTHROPIC_API_KEY": ""}, True),
        ({"ANTHROPIC_API_KEY": "  \n"}, True),
        ({"ANTHROPIC_API_KEY": "sk-ant-x"}, False),
    ],
    ids=["unset", "empty", "whitespace", "set"],
)
def test_offline(environ: dict[str, str], expected: bool) -> None:
    assert offline(environ) is expected
