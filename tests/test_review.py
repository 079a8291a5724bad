"""Plans read back, and revised the way the operator says."""

from __future__ import annotations

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.sequence import SequenceStep

from voiced.words.review import read_back, revise

WELD = load_cell("weld")
SANDWICH = load_cell("sandwich")


def weld_at(*positions: str, routine: str = "tack_weld") -> list[SequenceStep]:
    return [SequenceStep("run_routine_at", {"routine": routine, "position": p}) for p in positions]


def test_read_back_a_weld_plan() -> None:
    assert read_back(WELD, weld_at("Pos_1", "Pos_2")) == (
        "I will tack weld at Pos 1, then tack weld at Pos 2."
    )


def test_read_back_a_sandwich_plan() -> None:
    plan = [
        SequenceStep("set_active_zone", {"zone": "assembly_left"}),
        SequenceStep("add_layer", {"item": "bread"}),
        SequenceStep("go_home"),
    ]
    assert read_back(SANDWICH, plan) == (
        "I will switch to assembly left, then add bread, then go home."
    )


def zone(name: str) -> SequenceStep:
    return SequenceStep("set_active_zone", {"zone": name})


CLEAR, HOME = SequenceStep("clear_assembly"), SequenceStep("go_home")


@pytest.mark.parametrize(
    ("plan", "said"),
    [
        ([CLEAR, HOME], "I will clear the assembly, then go home."),
        (
            [zone("assembly_fixture"), CLEAR, zone("assembly_right"), CLEAR,
             zone("assembly_fixture"), HOME],
            "I will clear what is on the fixture and on the right, then go home.",
        ),
        ([zone("assembly_left"), CLEAR], "I will clear what is on the left."),
        (
            [zone("assembly_left"), CLEAR, zone("assembly_right"), SequenceStep("add_layer",
             {"item": "bread"})],
            "I will clear what is on the left, then switch to assembly right, then add bread.",
        ),
    ],
)  # fmt: skip
def test_zones_cleared_are_read_back_as_one(plan: list[SequenceStep], said: str) -> None:
    """ "start over" on two zones was read back as "I will switch to assembly fixture, then
    clear the assembly, then switch to assembly right, then clear the assembly, ..." """
    assert read_back(SANDWICH, plan) == said


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
def test_weld_revisions(feedback: str, expected: list[SequenceStep]) -> None:
    assert revise(WELD, weld_at("Pos_1", "Pos_2", "Pos_3"), feedback) == expected


def test_also_repeats_the_last_step_for_the_new_value() -> None:
    assert revise(WELD, weld_at("Pos_1"), "also position 3") == weld_at("Pos_1", "Pos_3")


def test_sandwich_revisions() -> None:
    plan = [SequenceStep("add_layer", {"item": i}) for i in ("bread", "cheese")]
    assert revise(SANDWICH, plan, "skip the cheese") == plan[:1]
    assert revise(SANDWICH, plan, "tomato instead of cheese") == [
        plan[0], SequenceStep("add_layer", {"item": "tomato"})
    ]  # fmt: skip
    assert revise(SANDWICH, plan, "also lettuce") == [
        *plan, SequenceStep("add_layer", {"item": "lettuce"})
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
