"""Plans read back, and revised the way the operator says."""

from __future__ import annotations

from typing import Any

import pytest
from voiced.robot.cellfile import load_cell

from voiced.review import read_back, revise

WELD = load_cell("weld")
SANDWICH = load_cell("sandwich")


def weld_at(*positions: str, routine: str = "tack_weld") -> list[dict[str, Any]]:
    return [
        {"instruction": "run_routine_at", "params": {"routine": routine, "position": p}}
        for p in positions
    ]


def test_read_back_a_weld_plan() -> None:
    assert read_back(WELD, weld_at("Pos_1", "Pos_2")) == (
        "I will tack weld at Pos 1, then tack weld at Pos 2."
    )


def test_read_back_a_sandwich_plan() -> None:
    plan = [
        {"instruction": "set_active_zone", "params": {"zone": "assembly_left"}},
        {"instruction": "add_layer", "params": {"item": "bread"}},
        {"instruction": "go_home", "params": {}},
    ]
    assert read_back(SANDWICH, plan) == (
        "I will switch to assembly left, then add bread, then go home."
    )


@pytest.mark.parametrize(
    ("feedback", "expected"),
    [
        ("skip position 2", weld_at("Pos_1", "Pos_3")),
        ("revise: skip position 2", weld_at("Pos_1", "Pos_3")),
        ("without pos 2", weld_at("Pos_1", "Pos_3")),
        ("Skip Pos_2.", weld_at("Pos_1", "Pos_3")),
        ("skip position 2 please", weld_at("Pos_1", "Pos_3")),
        ("use the camera", weld_at("Pos_1", "Pos_2", "Pos_3", routine="camera_inspection")),
        ("position 3 instead of position 2", weld_at("Pos_1", "Pos_3", "Pos_3")),
    ],
)
def test_weld_revisions(feedback: str, expected: list[dict[str, Any]]) -> None:
    assert revise(WELD, weld_at("Pos_1", "Pos_2", "Pos_3"), feedback) == expected


def test_also_repeats_the_last_step_for_the_new_value() -> None:
    assert revise(WELD, weld_at("Pos_1"), "also position 3") == weld_at("Pos_1", "Pos_3")


def test_sandwich_revisions() -> None:
    plan = [{"instruction": "add_layer", "params": {"item": i}} for i in ("bread", "cheese")]
    assert revise(SANDWICH, plan, "skip the cheese") == plan[:1]
    assert revise(SANDWICH, plan, "tomato instead of cheese") == [
        plan[0], {"instruction": "add_layer", "params": {"item": "tomato"}}
    ]  # fmt: skip
    assert revise(SANDWICH, plan, "also lettuce") == [
        *plan, {"instruction": "add_layer", "params": {"item": "lettuce"}}
    ]  # fmt: skip


@pytest.mark.parametrize(
    "feedback", ["make it nicer", "skip position 9", "use the hammer", "skip the bread"]
)
def test_not_understood(feedback: str) -> None:
    assert revise(WELD, weld_at("Pos_1", "Pos_2"), feedback) is None


def test_revision_does_not_touch_the_original() -> None:
    plan = weld_at("Pos_1", "Pos_2")
    revise(WELD, plan, "use the camera")
    assert plan == weld_at("Pos_1", "Pos_2")
