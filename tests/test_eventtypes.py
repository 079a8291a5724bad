"""Every kind of event goes to JSON and back unchanged, and the documentation lists them all."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from voiced.frames.router import StackChange
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange import plan_rearrangement

from voiced import eventtypes as ev
from voiced.eventtypes import KINDS, EventError, Record, event_from_dict

DOC = Path(__file__).resolve().parents[1] / "docs" / "EVENTS.md"
STEP = {"instruction": "add_layer", "params": {"item": "bread"}}

EXAMPLES: list[Any] = [
    ev.Utterance("add bread"),
    ev.Utterance(
        "add bread",
        raw="Add bread.",
        audio_t=1.5,
        speech_end=1.9,
        decoded_at=2.3,
        transcribe_s=0.31,
        spotted=True,
    ),
    ev.Utterance("add bread", queued=4),
    ev.Utterance("computer add bread", raw="Computer art bread.", hypothesis=1, repaired=True),
    ev.Utterance("run task abc", replay="abc"),
    ev.Spotted("stop", 3.2, 3.4, 0.12),
    ev.Spotted("halt", 5.1, 5.1, 0.0, engine="keyword", score=0.97),
    ev.Keyword("computer", "wake", 0.91, 1.2, True),
    ev.Keyword("stop", "stop", 0.88, 7.5, False),
    ev.Rejected("no wake word", "add bread", 7.25),
    ev.Ignored("longer than 2000 characters", 10_000_013, "computer add xxx"),
    ev.BargeIn(4.5, ["Adding bread."]),
    ev.RemoteSaid("stop", "page"),
    ev.RunChanged("9b1c", "completed", "add bread", "Done."),
    ev.RunChanged("9b1c", "running"),
    ev.PageUp("http://127.0.0.1:8765/"),
    ev.SpeechServer(False, "tcp://10.0.0.5:10300", "connection refused"),
    ev.SpeechServer(True, "tcp://10.0.0.5:10300"),
    ev.SatelliteLink(True, "wyoming://10.0.0.7:10700", name="welder left"),
    ev.SatelliteLink(False, "wyoming://10.0.0.7:10700", reason="connection reset"),
    StackChange("push", "query"),
    StackChange("mode", "base", "always"),
    ev.Submitted("robot", "add bread", "query"),
    ev.TargetDone("note", "dictation", True, "Saved.", {"id": 3}),
    ev.VoicePicked("en-scottish"),
    ev.Interpreted(
        "Add bread.", [STEP], [STEP], None, 0.95, True, [], None, False, None, None, "grammar", "c1"
    ),
    ev.Planned("success", [{"step": 1, "action": "move"}], {"a": "b"}, "planner", True, 1),
    ev.Planned(
        "blocked",
        [],
        None,
        "planner",
        True,
        0,
        reason="no buffer",
        final_state={"x": 1},
        notes=["n"],
    ),
    ev.LlmUsage(1, 100, 20, 0, 0, None),
    ev.LlmResolution("slap", "add", "a verb for putting down"),
    ev.Answered("what is on the left", "Bread.", "Bread, then cheese.", "zones"),
    ev.CorrectionRound(2, 3, ["move_absolute is not a valid instruction (removed)"]),
    ev.Confirmation("add bread", "yes"),
    ev.Revision("add bread", "make it cheese"),
    ev.Learned("lunch", "make lunch", [STEP]),
    ev.Feedback("Adding bread."),
    ev.Primitive(3, "3 MOVEJ 1 2 3"),
    ev.ControllerLine("rx", "control", "STATE idle"),
    ev.Reconciled(
        "reconnected", ["holding bread"], "halted", "disconnect", 4, "bread", None, ["add bread"]
    ),
    ev.Stopped("stop", 1, ["add cheese"], ["Adding bread."]),
    ev.Stopped("shutdown", 0, []),
    ev.Dropped("add cheese", "stop"),
    ev.Paused('operator said "hold on"', True, ["add bread, meat and cheese"], ["Adding"]),
    ev.Paused('operator said "pause"', False, ["add cheese"]),
    ev.Resumed(["add bread, meat and cheese"], ["add meat", "add cheese"]),
    ev.ValidationFailed(["no such item"]),
    ev.IntentUnreadable("hmm", "the model answered the intent 'chitchat'"),
    ev.ControllerRefused(
        1,
        "s1",
        [0],
        1,
        [2],
        [],
        {"index": 1, "seq": 2, "code": "REACH", "reason": "out of reach"},
        False,
        False,
        None,
    ),
    ev.LinkLost("timeout"),
    ev.AuthRefused("wrong key"),
    ev.PersistFailed("/data/scene.json", "disk full"),
    ev.Failure("internal", "RuntimeError('x')"),
    ev.Failure("ReplayError", "no run abc"),
    ev.QueueWorkedOff(2, 1),
    ev.Replayed("abc", True, "Done."),
    ev.FinalState({"zones": {"left": []}, "holding": None}),
]


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_goes_through_json_and_back(event: Any) -> None:
    record = Record(event, 12.5, "c1")
    line = json.dumps(record.to_dict())
    assert Record.from_dict(json.loads(line)) == record
    assert json.loads(line)["event"] == event.KIND


def test_every_kind_has_an_example() -> None:
    assert {type(e) for e in EXAMPLES} == set(KINDS.values()) | {ev.Failure}


def test_the_stream_looks_as_it_always_has() -> None:
    """Flat fields after the envelope; the variant's `kind` first; optional fields left out."""
    assert Record(ev.LinkLost("gone"), 1.0).to_dict() == {
        "event": "error", "t": 1.0, "kind": "link", "reason": "gone"
    }  # fmt: skip
    assert Record(ev.Utterance("hi"), 2.0, "c").to_dict() == {
        "event": "utterance", "t": 2.0, "correlation_id": "c", "text": "hi"
    }  # fmt: skip
    assert Record(ev.Failure("internal", "x"), 0.0).to_dict()["kind"] == "internal"


def test_a_plan_keeps_the_field_order_of_the_planners_own_dict() -> None:
    """`ActionPlan.to_dict` is the source of the `plan` event, key order included."""
    cell = load_cell("blocks")
    target = {"target_structure": {"relationship": "none", "placements": []}}
    for made in [plan_rearrangement(cell, cell.initial_scene, target)]:
        made_dict = made.to_dict()
        assert list(ev.Planned(**made_dict).to_dict()) == list(made_dict)
    blocked = ev.Planned("blocked", [], None, "planner", True, 0, reason="r", final_state={})
    assert list(blocked.to_dict()) == [
        "status", "plan", "final_expected", "reason", "final_state", "source", "optimal", "moves"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"t": 1}, "needs an 'event' string"),
        ({"event": "nonsense", "t": 1}, "unknown event 'nonsense'"),
        ({"event": "llm", "kind": "dream", "t": 1}, "unknown event 'llm/dream'"),
        ({"event": "feedback", "t": 1}, "event 'feedback': missing field 'text'"),
        ({"event": "feedback", "t": 1, "text": "x", "tone": "warm"}, "unknown field 'tone'"),
        ({"event": "frame", "t": 1, "frame": "query"}, "event 'frame'"),
        ({"event": "feedback", "t": "soon", "text": "x"}, "'t' must be a number"),
    ],
)
def test_a_record_that_is_not_an_event_is_refused_by_name(
    record: dict[str, Any], message: str
) -> None:
    with pytest.raises(EventError, match=re.escape(message)):
        Record.from_dict(record)


def test_an_error_of_an_unlisted_kind_is_a_failure() -> None:
    got = event_from_dict({"event": "error", "t": 0, "kind": "OSError", "error": "boom"})
    assert got == ev.Failure("OSError", "boom")


def doc_rows() -> tuple[dict[str, str], dict[str, str]]:
    """docs/EVENTS.md's table rows by their first cell: the events, and the errors' kinds."""
    events: dict[str, str] = {}
    errors: dict[str, str] = {}
    section = ""
    for line in DOC.read_text("utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif line.startswith("| `"):
            first = line.split("|")[1].strip().strip("`")
            (errors if section == "Problems" else events)[first] = line
    return events, errors


def test_the_documentation_gives_every_kind_its_fields() -> None:
    """Each kind's row names each of its fields (an error's row, each of the variant's)."""
    events, errors = doc_rows()
    for kind in {*KINDS.values(), ev.Failure}:
        variant = getattr(kind, "VARIANT", None)
        if kind.KIND == "error":
            rows = [errors[variant]] if variant else [errors["learned"], errors["internal"]]
        else:
            rows = [events[kind.KIND]]
        for row in rows:
            if variant is not None:
                assert f"`{variant}`" in row, f"{kind.KIND}/{variant}"
            for spec in fields(kind):
                if spec.name != "kind":
                    assert f"`{spec.name}`" in row, f"{kind.KIND}.{spec.name}: {row}"
