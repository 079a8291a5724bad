"""The daemon in-process: every task it creates has ended when `run()` returns, after the input
ends (typed text, an audio file, the deferred queue) and after SIGTERM."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from voiced.robot.cellfile import load_cell

from tests.audio.clips import HAVE_TOOLS, Clips
from voiced.config import load_config, with_overrides
from voiced.events import EventLog
from voiced.paths import DataDir, ensure_data_dir
from voiced.service.daemon import Daemon, Session
from voiced.service.sdnotify import Notifier
from voiced.targets import DeferredQueue

CONFIG = """
[simulator]
time_scale = 0.02
[controller]
heartbeat_interval = 0.2
heartbeat_timeout = 2.0
"""


class SignalOnReady(Notifier):
    """Sends this process SIGTERM once the daemon is ready (a session that never ends)."""

    def __init__(self) -> None:
        super().__init__({})

    def ready(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        monkeypatch.delenv(name, raising=False)


def _session(tmp_path: Path, **inputs: Any) -> tuple[Session, io.StringIO]:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    config = with_overrides(load_config(str(path), environ={}), {"controller": {"address": "sim"}})
    cell = load_cell("sandwich")
    data = DataDir(ensure_data_dir(tmp_path / "data"))
    out = io.StringIO()
    inputs.setdefault("text", None)
    session = Session(config, cell, cell.initial_scene, data, events=EventLog(out), **inputs)
    return session, out


async def _run(daemon: Daemon, out: io.StringIO) -> list[dict[str, Any]]:
    """Run the daemon to its end: no task it created may be left pending, nor an error left
    unretrieved in one. Returns its events."""
    loop = asyncio.get_running_loop()
    reported: list[str] = []
    loop.set_exception_handler(lambda _, context: reported.append(context["message"]))
    before = asyncio.all_tasks()
    try:
        assert await daemon.run() == 0
        left = asyncio.all_tasks() - before
        gc.collect()  # a task dropped with an error unretrieved is reported now
    finally:
        loop.set_exception_handler(None)
    assert not left, sorted(task.get_name() for task in left)
    assert not reported
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _said(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["event"] == "utterance"]


async def test_a_text_session_leaves_no_task_behind(tmp_path: Path) -> None:
    lines = tmp_path / "session.txt"
    lines.write_text("computer add bread\n\ncomputer go home\n", encoding="utf-8")
    session, out = _session(tmp_path, text=str(lines))
    events = await _run(Daemon(session), out)
    assert _said(events) == ["computer add bread", "computer go home"]
    assert [e["event"] for e in events][-1] == "final_state"


async def test_a_queue_session_leaves_no_task_behind(tmp_path: Path) -> None:
    session, out = _session(tmp_path, queue=True)
    DeferredQueue(session.data.queue).put("add bread", None)
    events = await _run(Daemon(session), out)
    assert _said(events) == ["add bread"]
    assert [(e["worked_off"], e["ok"]) for e in events if e["event"] == "queue"] == [(1, True)]


async def test_sigterm_leaves_no_task_behind(tmp_path: Path) -> None:
    """No input at all: the daemon runs until the signal, which cancels the input loop."""
    session, out = _session(tmp_path)
    events = await _run(Daemon(session, SignalOnReady()), out)
    assert [e["event"] for e in events][-1] == "final_state"


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox are not installed")
async def test_an_audio_file_session_leaves_no_task_behind(tmp_path: Path) -> None:
    clips = Clips(tmp_path / "clips")
    clips.root.mkdir()
    wav = clips.concat([clips.silence(0.5), clips.speech("computer add bread"), clips.silence(2)])
    session, out = _session(tmp_path, audio=str(wav), fast=True)
    events = await _run(Daemon(session), out)
    assert [text.lower().rstrip(".") for text in _said(events)] == ["computer add bread"]
    assert [e["event"] for e in events][-1] == "final_state"
