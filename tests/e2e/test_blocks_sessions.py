"""Issue 8 through the daemon: spoken arrangement commands (typed) reach the arrangement on the
simulator, planned optimally with the buffers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import final_state, run_text


def arrangement(events: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = final_state(events)["arrangement"]
    return result


@pytest.mark.parametrize(
    ("said", "relationship", "placements"),
    [
        ("stack the blue cube on the red cube", "stacked",
         [{"position": "bottom", "object": "red cube"},
          {"position": "top", "object": "blue cube"}]),
        ("build a tower red green blue", "stacked",
         [{"position": "bottom", "object": "red cube"},
          {"position": "middle", "object": "green cube"},
          {"position": "top", "object": "blue cube"}]),
        ("put red on the left and green on the right", "separated_left_right",
         [{"position": "left", "object": "red cube"},
          {"position": "right", "object": "green cube"}]),
        ("make a pyramid with green and red on the bottom and blue on top", "pyramid",
         [{"position": "bottom left", "object": "green cube"},
          {"position": "bottom right", "object": "red cube"},
          {"position": "top", "object": "blue cube"}]),
    ],
)  # fmt: skip
def test_arrangement_by_voice(
    tmp_path: Path, said: str, relationship: str, placements: list[dict[str, str]]
) -> None:
    events, proc = run_text(tmp_path, "blocks", f"computer {said}\n\n")
    assert proc.returncode == 0, proc.stderr
    got = arrangement(events)
    assert got["relationship"] == relationship
    assert got["placements"] == placements
    interp = next(e for e in events if e["event"] == "interpretation")
    assert interp["source"] == "planner"


def test_reordering_a_tower_uses_the_buffer(tmp_path: Path) -> None:
    session = "computer build a tower blue red green\n\ncomputer build a tower blue green red\n\n"
    events, proc = run_text(tmp_path, "blocks", session)
    assert proc.returncode == 0, proc.stderr
    moves = [e for e in events if e["event"] == "plan"][-1]
    assert any(step["action"] == "move_to_buffer" for step in moves["plan"])
    assert [p["object"] for p in arrangement(events)["placements"]] == [
        "blue cube", "green cube", "red cube"
    ]  # fmt: skip
    assert final_state(events)["buffers"] == {"B1": None, "B2": None, "B3": None}


def test_an_impossible_arrangement_is_refused_aloud(tmp_path: Path) -> None:
    events, proc = run_text(
        tmp_path, "blocks", "computer stack the yellow cube on the red cube\n\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert not [e for e in events if e["event"] == "primitive"]
    assert any("yellow" in e["text"] for e in events if e["event"] == "feedback")


@pytest.mark.parametrize(
    "swap", ["swap the red and blue cubes", "swap the blue cube and the red cube"]
)
def test_cubes_one_on_the_other_are_swapped_through_the_buffers(tmp_path: Path, swap: str) -> None:
    """It was refused: "Something is on top of the blue cube — Move what is on it first"."""
    session = f"computer stack the red cube on the blue cube\n\ncomputer {swap}\n\n"
    events, proc = run_text(tmp_path, "blocks", session)
    assert proc.returncode == 0, proc.stderr
    assert arrangement(events)["placements"] == [
        {"position": "bottom", "object": "red cube"},
        {"position": "top", "object": "blue cube"},
    ]
    assert final_state(events)["buffers"] == {"B1": None, "B2": None, "B3": None}
