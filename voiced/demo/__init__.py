"""`voiced demo`: the daemon on a bundled session with the simulated GoFa, traced readably."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from voiced import eventtypes as ev
from voiced.config import load_config, with_overrides
from voiced.events import EventLog
from voiced.eventtypes import Record
from voiced.frames.router import StackChange
from voiced.logs import configure_logging
from voiced.paths import DataDir
from voiced.robot.cellfile import load_cell
from voiced.service.daemon import Daemon, Session

DEMO_TIME_SCALE = 0.25
"""The demo's arm moves four times faster than real time, so the whole session takes seconds."""


def demo_session_path() -> Path:
    """The demo session as text (what the recording says, one utterance per line)."""
    return Path(str(resources.files("voiced.demo").joinpath("sandwich.txt")))


def demo_recording_path() -> Path:
    """The demo session spoken (espeak-ng, rendered by `python -m bench.spoken`)."""
    return Path(str(resources.files("voiced.demo").joinpath("sandwich.flac")))


class TracePrinter:
    """Turns events into a readable trace on a terminal."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, record: Record) -> None:
        line = self.render(record)
        if line:
            print(f"[{record.t:6.2f}s] {line}", file=self.out, flush=True)

    def render(self, record: Record) -> str | None:
        match record.event:
            case ev.Utterance(text=text):
                return f'heard     "{text}"'
            case StackChange(action=action, frame=frame, mode=mode):
                return f"frame     {action} {mode or frame}"
            case ev.Submitted(text=text, target=target):
                return f'submit    "{text}" -> {target}'
            case ev.Interpreted() as meant:
                seq = ", ".join(_call(s) for s in meant.sequence) or "(nothing)"
                how = f"[{meant.source} {meant.confidence:.2f}]"
                return f"meaning   {meant.interpretation} {how} {seq}"
            case ev.Primitive(line=line):
                return f"robot  -> {line}"
            case ev.Feedback(text=text):
                return f'says      "{text}"'
            case ev.FinalState(state=state):
                return "final scene:\n" + json.dumps(state, indent=2)
            case event if event.KIND == "error":
                fields = {k: v for k, v in record.to_dict().items() if k != "t"}
                return f"error     {json.dumps(fields)}"
        return None


def _call(step: dict[str, Any]) -> str:
    params = ", ".join(f"{k}={v}" for k, v in step.get("params", {}).items())
    return f"{step['instruction']}({params})"


def run_demo(events_target: str | None = None, text: bool = False, realtime: bool = False) -> int:
    """The daemon on the bundled recording (or, with `text`, its transcript as typed lines)."""
    config = with_overrides(
        load_config(None, environ={}),
        {"simulator": {"time_scale": DEMO_TIME_SCALE}, "logging": {"level": "warning"}},
        source="the demo",
    )
    configure_logging(
        config.logging.level, config.logging.format, prefix=config.logging.priority_prefix
    )
    cell = load_cell("sandwich")
    source = demo_session_path() if text else demo_recording_path()
    print(f"voiced demo: cell '{cell.name}', simulated controller, listening to {source.name}")
    with tempfile.TemporaryDirectory(prefix="voiced-demo-") as tmp:
        stream = None if events_target is None else _open(events_target)
        events = EventLog(stream)
        events.subscribe(TracePrinter(sys.stdout))
        session = Session(
            config, cell, cell.initial_scene, DataDir(Path(tmp)),
            str(source) if text else None, events, audio=None if text else str(source),
            fast=not realtime,
        )  # fmt: skip
        try:
            return asyncio.run(Daemon(session).run())
        finally:
            if stream is not None and stream is not sys.stdout:
                stream.close()


def _open(target: str) -> TextIO:
    return sys.stdout if target == "-" else open(target, "a", encoding="utf-8")
