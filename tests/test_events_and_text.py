"""The event stream and the --text input's virtual clock."""

from __future__ import annotations

import io
import json
from pathlib import Path

from voiced.events import EventLog
from voiced.eventtypes import Feedback, Utterance
from voiced.inputs.typed import LINE_STEP, Line, Pause, TextInput
from voiced.logs import correlation


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_events_are_json_lines_with_event_and_t() -> None:
    out, clock = io.StringIO(), FakeClock()
    events = EventLog(out, clock)
    clock.now += 1.25
    events.emit(Utterance("add bread"))
    record = json.loads(out.getvalue())
    assert record == {"event": "utterance", "t": 1.25, "text": "add bread"}


def test_events_carry_the_bound_correlation_id() -> None:
    out = io.StringIO()
    events = EventLog(out)
    with correlation("abc"):
        events.emit(Feedback("hi"))
    assert json.loads(out.getvalue())["correlation_id"] == "abc"


def test_listeners_see_every_event_and_can_unsubscribe() -> None:
    seen: list[str] = []
    events = EventLog()
    remove = events.subscribe(lambda r: seen.append(r.event.KIND))
    events.emit(Feedback("a"))
    remove()
    events.emit(Feedback("b"))
    assert seen == ["feedback"]


def test_a_closed_event_stream_does_not_stop_the_daemon() -> None:
    out = io.StringIO()
    out.close()
    seen: list[str] = []
    events = EventLog(out)
    events.subscribe(lambda r: seen.append(r.event.KIND))
    events.emit(Feedback("a"))
    events.emit(Utterance("b"))
    assert seen == ["feedback", "utterance"]


async def test_text_input_virtual_clock(tmp_path: Path) -> None:
    session = tmp_path / "session.txt"
    session.write_text("computer add bread\n  \ngo home\n", encoding="utf-8")
    got = [e async for e in TextInput(str(session), pause=1.6).events()]
    assert got == [
        Line("computer add bread", LINE_STEP),
        Pause(LINE_STEP + 1.6),
        Line("go home", 2 * LINE_STEP + 1.6),
    ]
