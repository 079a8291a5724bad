"""Rearrangement through the real daemon: alike cubes (the seed's wrong-top example), commands
that contradict themselves, and targets the model understood, which run only once read back and
confirmed (the model is the local server that speaks the Messages API)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.e2e.helpers import (
    fast_config,
    final_state,
    kinds,
    parse_events,
    run_text,
    spawn_text_daemon,
    voiced_env,
)
from tests.llm.messages_api import MessagesApi, Recorded, Reply, json_message

WRONG_TOP = {"arrangement": {"relationship": "stacked", "placements": [
    {"position": "bottom", "object": "blue cube"},
    {"position": "middle", "object": "green cube"},
    {"position": "top", "object": "green cube"}]}}  # fmt: skip
"""The seed's "complex reordering with buffer" scene: a second green cube on top (the red cube
keeps its place on S1)."""
BLUE_ON_RED = {"relationship": "stacked", "placements": [
    {"position": "bottom", "object 1": "red cube"},
    {"position": "top", "object 2": "blue cube"}]}  # fmt: skip


def said(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in kinds(events, "feedback")]


def objects(arrangement: dict[str, Any]) -> list[str]:
    return [p["object"] for p in arrangement["placements"]]


def test_the_seeds_wrong_top_object_is_replaced_through_the_buffer(tmp_path: Path) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(WRONG_TOP), encoding="utf-8")
    events, proc = run_text(tmp_path, "blocks", "computer build a tower blue green red\n\n",
                            "--scene", str(scene))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    plan = kinds(events, "plan")[-1]
    assert plan["status"] == "success" and plan["moves"] == 2 and plan["optimal"] is True
    assert [(s["action"], s["object"]) for s in plan["plan"]] == [
        ("move_to_buffer", "green cube"), ("move_to_position", "red cube")
    ]  # fmt: skip
    state = final_state(events)
    assert state["arrangement"]["relationship"] == "stacked"
    assert objects(state["arrangement"]) == ["blue cube", "green cube", "red cube"]
    assert state["buffers"]["B1"] == "green cube"


def test_a_contradiction_is_refused_aloud_and_nothing_moves(tmp_path: Path) -> None:
    session = "computer put red on blue and blue on red\n\ncomputer build a tower red red blue\n\n"
    events, proc = run_text(tmp_path, "blocks", session)
    assert proc.returncode == 0, proc.stderr
    assert not kinds(events, "primitive")
    spoken = said(events)
    assert any(
        "the red cube on the blue cube and the blue cube on the red cube" in s
        and "round in a circle" in s
        for s in spoken
    ), spoken
    assert any("only one red cube: it cannot be in two places at once" in s for s in spoken)


def _arranger(target: dict[str, Any] | None, contradiction: str | None = None) -> Any:
    """The model's side: any arrangement request gets `target` (or a contradiction)."""

    def respond(request: Recorded) -> Reply:
        if "TARGET STRUCTURE" not in request.system_text:
            return Reply(status=500)
        answer: dict[str, Any] = {"target_structure": target, "user_feedback": None}
        if contradiction is not None:
            answer["contradiction"] = contradiction
        return json_message(answer)

    return respond


async def _session(tmp_path: Path, responder: Any, lines: bytes) -> list[dict[str, Any]]:
    async with MessagesApi(responder=responder) as api:
        env = voiced_env(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        proc = await spawn_text_daemon(fast_config(tmp_path), env, cell="blocks")
        stdout, stderr = await asyncio.wait_for(proc.communicate(lines), 120)
        assert api.messages, "the model was asked"
    assert proc.returncode == 0, stderr.decode()
    return parse_events(stdout.decode())


async def test_a_target_from_the_model_runs_once_read_back_and_confirmed(tmp_path: Path) -> None:
    events = await _session(
        tmp_path, _arranger(BLUE_ON_RED), b"computer arrange blue over red\n\nyes\n"
    )
    (interpretation,) = kinds(events, "interpretation")
    assert interpretation["source"] == "llm+planner"
    question = next(s for s in said(events) if s.endswith("Proceed?"))
    assert "move the red cube to center" in question and "move the blue cube to center" in question
    assert kinds(events, "confirmation")[0]["answer"] == "yes"
    assert objects(final_state(events)["arrangement"]) == ["red cube", "blue cube"]


async def test_a_target_from_the_model_declined_moves_nothing(tmp_path: Path) -> None:
    events = await _session(
        tmp_path, _arranger(BLUE_ON_RED), b"computer arrange blue over red\n\nno\n"
    )
    assert any(s.endswith("Proceed?") for s in said(events))
    assert not kinds(events, "primitive")
    assert final_state(events)["arrangement"]["placements"] == []


async def test_a_contradiction_the_model_finds_is_refused_with_its_reason(tmp_path: Path) -> None:
    reason = "red over blue and blue over red go round in a circle"
    events = await _session(
        tmp_path, _arranger(None, reason), b"computer arrange red over blue and blue over red\n\n"
    )
    assert not kinds(events, "primitive")
    assert f"That cannot all be done: {reason}" in " ".join(said(events))


async def test_a_contradictory_target_from_the_model_is_refused(tmp_path: Path) -> None:
    """The model places the red cube twice (it heard "red on blue and blue on red" as a
    three-high tower); there is one red cube, so nothing runs and the operator hears why."""
    tower = {"relationship": "stacked", "placements": [
        {"position": "bottom", "object 1": "red cube"},
        {"position": "middle", "object 2": "blue cube"},
        {"position": "top", "object 3": "red cube"}]}  # fmt: skip
    events = await _session(
        tmp_path, _arranger(tower), b"computer arrange red over blue and blue over red\n\n"
    )
    assert not kinds(events, "primitive")
    assert not any(s.endswith("Proceed?") for s in said(events))
    assert any(
        "there is only one red cube: it cannot be in two places at once" in s for s in said(events)
    )
