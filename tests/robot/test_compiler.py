"""Compiling sequences of composite calls into primitives (voiced.robot.compiler)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import CompileIssue, CompileResult, Program, compile_sequence
from voiced.robot.primitives import CallRoutine, Grip, MoveJ, MoveL, Speed, Wait
from voiced.robot.scene import RoutineRun, Scene
from voiced.robot.sequence import SequenceStep
from voiced.robot.view import scene_from_view, state_view

CELLS = {name: load_cell(name) for name in ("sandwich", "weld", "blocks", "barista")}


def step(instruction: str, **params: Any) -> SequenceStep:
    return SequenceStep(instruction, params)


def compiled(cell: Cell, sequence: list[SequenceStep], scene: Scene | None = None) -> Program:
    result = compile_sequence(cell, scene or cell.initial_scene, sequence)
    assert result.ok and result.program is not None, result.errors
    return result.program


def issues(
    cell: Cell, sequence: list[SequenceStep], scene: Scene | None = None
) -> tuple[CompileIssue, ...]:
    result = compile_sequence(cell, scene or cell.initial_scene, sequence)
    assert not result.ok and result.program is None
    return result.errors


SANDWICH_SUPPLY = {item: 8 for item in ("bread", "meat", "cheese", "lettuce", "tomato")}
BARISTA_SUPPLY = {
    f"{size} cup": 10
    for size in ("small", "medium", "large", "8 ounce", "12 ounce", "16 ounce", "20 ounce")
}


def counter(*spots: list[str], used: list[str] | None = None) -> dict[str, list[str]]:
    """The barista cell's zones: the drip tray empty, cups on the pick-up spots, the used ones."""
    cups = [*spots, *[[]] * (3 - len(spots))]
    pickup = {f"pickup_{n}": cup for n, cup in enumerate(cups, 1)}
    return {"brew_tray": [], **pickup, "used_cups": used or []}


def ran(*runs: tuple[str, str]) -> list[dict[str, str]]:
    """The barista cell's routine log: (routine, where the arm was)."""
    return [{"routine": routine, "position": where} for routine, where in runs]


# (cell, setup steps, the step under test, expected state-view entries after both)
EVERY_COMPOSITE: list[tuple[str, list[SequenceStep], SequenceStep, dict[str, Any]]] = [
    ("sandwich", [], step("pick_up", item="bread"), {"holding": "bread"}),
    (
        "sandwich",
        [step("pick_up", item="meat")],
        step("place_on_zone"),
        {
            "holding": None,
            "zones": {"assembly_fixture": ["meat"], "assembly_left": [], "assembly_right": []},
        },
    ),
    (
        "sandwich",
        [],
        step("add_layer", item="bread"),
        {"zones": {"assembly_fixture": ["bread"], "assembly_left": [], "assembly_right": []}},
    ),
    ("sandwich", [step("pick_up", item="cheese")], step("return_to_stack"), {"holding": None}),
    (
        "sandwich",
        [step("add_layer", item="bread"), step("add_layer", item="cheese")],
        step("remove_layer", zone="assembly_fixture"),
        {
            "holding": None,
            "zones": {"assembly_fixture": ["bread"], "assembly_left": [], "assembly_right": []},
        },
    ),
    (
        "sandwich",
        [
            step("add_layer", item="bread"),
            step("add_layer", item="cheese"),
            step("pick_up", item="tomato"),
        ],
        step("clear_assembly"),
        {
            "holding": None,
            "zones": {"assembly_fixture": [], "assembly_left": [], "assembly_right": []},
        },
    ),
    ("sandwich", [], step("set_active_zone", zone="left"), {"active_zone": "assembly_left"}),
    ("sandwich", [step("move_relative", direction="up")], step("go_home"), {"position": "home"}),
    (
        "sandwich",
        [],
        step("move_relative", direction="left", distance="a little"),
        {"position": None},
    ),
    ("sandwich", [], step("set_speed", speed="slow"), {"position": "home"}),
    ("sandwich", [], step("wait", seconds=0.5), {"position": "home"}),
    ("weld", [], step("move_to_position", position="Pos_2"), {"position": "Pos_2"}),
    ("weld", [], step("attach_tool", tool="Welder"), {"tool": "Welder"}),
    ("weld", [step("attach_tool", tool="Camera")], step("release_tool"), {"tool": None}),
    (
        "weld",
        [step("attach_tool", tool="Welder"), step("move_to_position", position="Pos_1")],
        step("run_routine", routine="tack_weld"),
        {"log": [{"routine": "tack_weld", "position": "Pos_1"}], "position": "Pos_1"},
    ),
    (
        "weld",
        [step("attach_tool", tool="Welder")],
        step("run_routine_at", routine="camera_inspection", position="Pos_3"),
        {"tool": "Camera", "log": [{"routine": "camera_inspection", "position": "Pos_3"}]},
    ),
    (
        "weld",
        [step("attach_tool", tool="Camera"), step("move_to_position", position="Pos_1")],
        step("release_tool_and_home"),
        {"tool": None, "position": "Home"},
    ),
    ("weld", [step("move_to_position", position="Pos_1")], step("go_home"), {"position": "Home"}),
    ("weld", [], step("set_speed", speed="fast"), {"position": "Home"}),
    (
        "weld",
        [step("move_to_position", position="Pos_1")],
        step("move_relative", direction="down", distance="a little"),
        {"position": None},
    ),
    (
        "blocks",
        [],
        step("pick", object="red cube"),
        {"holding": "red cube", "scattered": ["green cube", "blue cube"]},
    ),
    (
        "blocks",
        [step("pick", object="blue cube")],
        step("place", site="B2"),
        {"holding": None, "buffers": {"B1": None, "B2": "blue cube", "B3": None}},
    ),
    (
        "blocks",
        [],
        step("move_object", object="red cube", to="center"),
        {"arrangement": {"relationship": "stacked_middle", "placements": [{"object": "red cube"}]}},
    ),
    (
        "blocks",
        [],
        step("move_from", object="green cube", **{"from": "S2", "to": "B3"}),
        {"buffers": {"B1": None, "B2": None, "B3": "green cube"}},
    ),
    ("blocks", [step("pick", object="red cube")], step("go_home"), {"holding": "red cube"}),
    ("blocks", [], step("set_speed", speed=120), {"holding": None}),
    (
        "barista",
        [],
        step("order_drink", drink="espresso"),
        {
            "zones": counter(["medium cup"]),
            "holding": None,
            "position": "home",
            "log": ran(
                ("grind", "medium_roast"), ("usual_shots", "machine"), ("espresso", "machine")
            ),
        },
    ),
    (
        "barista",
        [],
        step(
            "order_drink_with_milk",
            drink="latte",
            cup="large cup",
            milk="soy_milk",
            milk_amount=1.5,
        ),
        {"zones": counter(["large cup"]), "supplies": {**BARISTA_SUPPLY, "large cup": 9}},
    ),
    (
        "barista",
        [step("order_drink", drink="americano")],
        step("order_drink_with_sugar", drink="coffee", roast="dark_roast", sugar="sweetener"),
        {
            "zones": counter(["medium cup"], ["medium cup"]),
            "log": ran(
                ("grind", "medium_roast"),
                ("usual_shots", "machine"),
                ("americano", "machine"),
                ("grind", "dark_roast"),
                ("usual_shots", "machine"),
                ("coffee", "machine"),
            ),
        },
    ),
    (
        "barista",
        [],
        step(
            "order_drink_with_milk_and_sugar",
            drink="iced_mocha",
            cup="8 ounce cup",
            roast="light_roast",
            shots="triple_shot",
            milk="cream",
            milk_amount=4,
            sugar="brown_sugar",
            sugar_amount=1,
        ),
        {
            "zones": counter(["8 ounce cup"]),
            "log": ran(
                ("grind", "light_roast"), ("triple_shot", "machine"), ("iced_mocha", "machine")
            ),
            "position": "home",
        },
    ),
    (
        "barista",
        [step("order_drink", drink="latte"), step("order_drink", drink="mocha", cup="small cup")],
        step("clear_counter"),
        {"zones": counter(used=["medium cup", "small cup"]), "holding": None, "position": "home"},
    ),
    ("barista", [step("order_drink", drink="latte")], step("go_home"), {"position": "home"}),
    ("barista", [], step("set_speed", speed="slow"), {"position": "home"}),
]


def test_the_table_covers_every_composite() -> None:
    covered = {(cell, call.instruction) for cell, _, call, _ in EVERY_COMPOSITE}
    for name, cell in CELLS.items():
        for instruction in cell.instructions():
            assert (name, instruction) in covered, f"{name}.{instruction} has no compile test"


@pytest.mark.parametrize(
    ("cell_name", "setup", "call", "expected"),
    EVERY_COMPOSITE,
    ids=[f"{c}.{call.instruction}" for c, _, call, _ in EVERY_COMPOSITE],
)
def test_every_composite_compiles_to_its_expected_scene(
    cell_name: str, setup: list[SequenceStep], call: SequenceStep, expected: dict[str, Any]
) -> None:
    cell = CELLS[cell_name]
    before = compiled(cell, setup).expected
    program = compiled(cell, [call], before)
    view = state_view(cell, program.expected)
    for key, value in expected.items():
        assert view[key] == value, key
    assert program.steps[0].instruction == call.instruction
    assert program.steps[0].end == len(program.primitives)


def test_clear_assembly_returns_items_to_their_supplies() -> None:
    cell = CELLS["sandwich"]
    program = compiled(
        cell,
        [
            step("add_layer", item="bread"),
            step("add_layer", item="cheese"),
            step("add_layer", item="bread"),
            step("clear_assembly"),
        ],
    )
    assert program.expected.stacks == cell.initial_scene.stacks
    assert scene_counts(program.expected) == SANDWICH_SUPPLY


def scene_counts(scene: Scene) -> dict[str, int]:
    return {item: len(scene.stacks[f"supply_{item}"]) for item in SANDWICH_SUPPLY}


def test_a_sandwich_on_three_zones() -> None:
    cell = CELLS["sandwich"]
    program = compiled(
        cell,
        [
            step("add_layer", item="bread"),
            step("set_active_zone", zone="left"),
            step("add_layer", item="Meat"),
            step("set_active_zone", zone="over there"),
            step("add_layer", item="cheese"),
            step("set_active_zone", zone="right"),
            step("add_layer", item="tomato"),
            step("go_home"),
        ],
    )
    view = state_view(cell, program.expected)
    assert view["zones"] == {
        "assembly_fixture": ["bread", "cheese"],
        "assembly_left": ["meat"],
        "assembly_right": ["tomato"],
    }
    assert view["position"] == "home"
    assert program.steps[1].start == program.steps[1].end  # set_active_zone moves nothing
    assert [s.params for s in program.steps[:4]] == [
        {"item": "bread"},
        {"zone": "assembly_left"},
        {"item": "meat"},
        {"zone": "assembly_fixture"},
    ]


def test_step_ranges_partition_the_primitives() -> None:
    cell = CELLS["sandwich"]
    program = compiled(
        cell, [step("add_layer", item="bread"), step("set_speed", speed="fast"), step("go_home")]
    )
    assert program.steps[0].start == 0
    for previous, current in zip(program.steps, program.steps[1:], strict=False):
        assert previous.end == current.start
    assert program.steps[-1].end == len(program.primitives)
    assert program.primitives[program.steps[1].start] == Speed(500.0)


def test_add_layer_picks_then_places_with_approach() -> None:
    cell = CELLS["sandwich"]
    program = compiled(cell, [step("add_layer", item="bread")])
    kinds = [type(p) for p in program.primitives]
    assert kinds == [Grip, MoveJ, MoveL, Grip, MoveL, MoveJ, MoveL, Grip, MoveL]
    grasp = program.primitives[2]
    assert isinstance(grasp, MoveL) and grasp.target.z == pytest.approx(112.5)
    place = program.primitives[6]
    assert isinstance(place, MoveL) and (place.target.x, place.target.z) == (450.0, 7.5)


def test_weld_attach_move_and_weld_logs_the_position() -> None:
    cell = CELLS["weld"]
    program = compiled(
        cell,
        [
            step("attach_tool", tool="Welder"),
            step("move_to_position", position="Pos_1"),
            step("run_routine", routine="tack_weld"),
        ],
    )
    assert program.expected.log == (RoutineRun("tack_weld", "Pos_1"),)
    assert state_view(cell, program.expected)["log"] == [
        {"routine": "tack_weld", "position": "Pos_1"}
    ]


def test_unknown_instruction_and_tier_0_names_are_not_callable() -> None:
    cell = CELLS["sandwich"]
    found = issues(
        cell, [step("move_absolute", x=1), step("move_to", at="home"), step("take", site="B1")]
    )
    assert [(i.step, i.code) for i in found] == [
        (0, "unknown_instruction"),
        (1, "unknown_instruction"),
        (2, "unknown_instruction"),
    ]
    assert "add_layer" in found[0].message


def test_unknown_item_lists_the_available_items() -> None:
    (issue,) = issues(CELLS["sandwich"], [step("add_layer", item="avocado")])
    assert (issue.code, issue.param, issue.instruction) == ("unknown_item", "item", "add_layer")
    assert "avocado" in issue.message
    assert "bread, meat, cheese, lettuce, tomato" in issue.message


def test_pick_while_holding_is_refused() -> None:
    found = issues(
        CELLS["sandwich"], [step("pick_up", item="bread"), step("add_layer", item="meat")]
    )
    assert [(i.step, i.code) for i in found] == [(1, "precondition")]
    assert found[0].message == "add_layer: already holding bread"


def test_empty_supply_is_refused() -> None:
    cell = CELLS["sandwich"]
    scene = scene_from_view(cell, {"supplies": {"cheese": 0}}, "test")
    (issue,) = issues(
        cell, [step("add_layer", item="bread"), step("add_layer", item="cheese")], scene
    )
    assert (issue.step, issue.code) == (1, "precondition")
    assert issue.message == "add_layer: the cheese supply is empty"


def test_a_command_that_asks_for_more_than_a_supply_has_says_how_many_it_has() -> None:
    """ "add ten layers of cheese" with eight left said "the cheese supply is empty"."""
    cell = CELLS["sandwich"]
    scene = scene_from_view(cell, {"supplies": {"cheese": 3}}, "test")
    (issue,) = issues(cell, [step("add_layer", item="cheese")] * 5, scene)
    assert (issue.step, issue.code) == (3, "precondition")
    assert issue.message == "add_layer: the cheese supply has only 3, not enough for all of this"


def test_running_a_supply_dry() -> None:
    cell = CELLS["sandwich"]
    found = issues(cell, [step("add_layer", item="tomato")] * 9)
    assert [(i.step, i.code) for i in found] == [(8, "precondition")]


def test_return_to_stack_is_a_no_op_when_not_holding() -> None:
    program = compiled(CELLS["sandwich"], [step("return_to_stack")])
    assert program.primitives == ()
    assert program.expected == CELLS["sandwich"].initial_scene


def test_speed_over_the_limit_is_refused() -> None:
    (issue,) = issues(CELLS["sandwich"], [step("set_speed", speed=900)])
    assert issue.code == "speed"
    assert "900" in issue.message


def test_moving_up_a_lot_many_times_leaves_the_workspace() -> None:
    found = issues(CELLS["sandwich"], [step("move_relative", direction="up", distance="a lot")] * 5)
    assert [(i.step, i.code) for i in found] == [(2, "workspace")]
    assert "z" in found[0].message


@pytest.mark.parametrize(
    ("speed", "mm_s"), [("slow", 100.0), ("Normal", 250.0), ("FAST", 500.0), ("150", 150.0)]
)
def test_speed_profiles_resolve(speed: str, mm_s: float) -> None:
    cell = CELLS["sandwich"]
    program = compiled(
        cell, [step("set_speed", speed=speed), step("move_relative", direction="up")]
    )
    assert program.primitives[0] == Speed(mm_s)
    move = program.primitives[1]
    assert isinstance(move, MoveL) and move.speed == mm_s
    assert program.expected.speed == mm_s


@pytest.mark.parametrize(
    ("distance", "mm"),
    [("a little", 20.0), ("a bit", 50.0), ("A Lot", 150.0), (35, 35.0), (None, 50.0)],
)
def test_distance_aliases_resolve(distance: object, mm: float) -> None:
    cell = CELLS["sandwich"]
    params: dict[str, Any] = {"direction": "right"}
    if distance is not None:
        params["distance"] = distance
    program = compiled(cell, [SequenceStep("move_relative", params)])
    (move,) = program.primitives
    assert isinstance(move, MoveL)
    assert move.target.x - cell.initial_scene.pose.x == pytest.approx(mm)
    assert program.steps[0].params == {"direction": "right", "distance": mm}


@pytest.mark.parametrize(
    ("word", "zone"),
    [
        ("left", "assembly_left"),
        ("right", "assembly_right"),
        ("over there", "assembly_fixture"),
        ("Center", "assembly_fixture"),
        ("middle", "assembly_fixture"),
    ],
)
def test_zone_aliases_resolve(word: str, zone: str) -> None:
    program = compiled(CELLS["sandwich"], [step("set_active_zone", zone=word)])
    assert program.expected.active_zone == zone


@pytest.mark.parametrize(
    ("sequence", "code", "param"),
    [
        ([step("add_layer", item="bread", colour="red")], "unknown_param", "colour"),
        ([step("add_layer")], "missing_param", "item"),
        ([step("set_active_zone", zone="kitchen")], "unknown_zone", "zone"),
        ([step("move_relative", direction="sideways")], "bad_value", "direction"),
        ([step("move_relative", direction="up", distance="miles")], "bad_value", "distance"),
        ([step("wait", seconds="soon")], "bad_value", "seconds"),
        ([step("wait", seconds=-1)], "bad_value", None),
    ],
)
def test_bad_steps_are_reported(sequence: list[SequenceStep], code: str, param: str | None) -> None:
    (issue,) = issues(CELLS["sandwich"], sequence)
    assert (issue.step, issue.code, issue.param) == (0, code, param)


def test_every_bad_step_is_reported_not_just_the_first() -> None:
    found = issues(
        CELLS["sandwich"],
        [
            step("add_layer", item="avocado"),
            step("go_home"),
            step("move_absolute"),
            step("set_active_zone", zone="kitchen"),
        ],
    )
    assert [(i.step, i.code) for i in found] == [
        (0, "unknown_item"),
        (2, "unknown_instruction"),
        (3, "unknown_zone"),
    ]


def test_blocks_errors() -> None:
    cell = CELLS["blocks"]
    found = issues(cell, [step("pick", object="purple cube")])
    assert found[0].message == "pick: purple cube is not in the cell"
    found = issues(cell, [step("move_object", object="red cube", to="S2")])
    assert found[0].message == "move_object: S2 is full"
    found = issues(cell, [step("move_object", object="red cube", to="pyramid_top")])
    assert "pyramid_left" in found[0].message
    found = issues(cell, [step("pick", object="pink cube")])
    assert found[0].code == "unknown_item" and "red cube" in found[0].message


def test_weld_errors() -> None:
    cell = CELLS["weld"]
    found = issues(cell, [step("run_routine", routine="tack_weld")])
    assert found[0].message == "run_routine: tack_weld needs the Welder (no tool is attached)"
    found = issues(cell, [step("attach_tool", tool="Camera"), step("attach_tool", tool="Welder")])
    assert found[0].message == "attach_tool: the Camera is already attached"
    found = issues(cell, [step("move_to_position", position="Pos_9")])
    assert found[0].code == "unknown_position" and "Pos_1" in found[0].message


def test_compiling_is_deterministic_and_pure() -> None:
    cell = CELLS["sandwich"]
    start = cell.initial_scene
    snapshot = start.to_dict()
    sequence = [step("add_layer", item=i) for i in ("bread", "meat", "cheese", "bread")]
    first = compile_sequence(cell, start, sequence)
    second = compile_sequence(cell, start, sequence)
    assert first == second
    assert start.to_dict() == snapshot


def test_wait_lowers_to_milliseconds() -> None:
    program = compiled(CELLS["sandwich"], [step("wait", seconds=1.5), step("wait")])
    assert program.primitives == (Wait(1500), Wait(1000))


LOOPING_CELL = """
[cell]
description = "loops"
primitives = ["wait"]
state_view = ["holding"]

[motion]
default_speed = "normal"
speeds = { normal = 100 }

[limits]
workspace_min = [0, 0, 0]
workspace_max = [100, 100, 100]
max_speed = 100
gripper_min = 0
gripper_max = 10

[poses.home]
at = [50, 50, 50]
role = "home"

[composites.spin]
description = "Wait until something is held (never)."
steps = [{ while = "not holding", do = [{ op = "wait", ms = 1 }] }]

[initial]
pose = "home"
"""


def test_unbounded_loops_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "loops.toml"
    path.write_text(LOOPING_CELL, encoding="utf-8")
    cell = load_cell(path)
    (issue,) = issues(cell, [step("spin")])
    assert issue.code == "loop"


def test_a_twenty_step_sequence_compiles_quickly() -> None:
    cell = CELLS["sandwich"]
    sequence = [
        step("add_layer", item=i) for i in ("bread", "meat", "cheese", "lettuce", "tomato")
    ] * 3 + [
        step("set_active_zone", zone="left"),
        step("add_layer", item="bread"),
        step("set_speed", speed="fast"),
        step("go_home"),
        step("wait", seconds=1),
    ]
    assert len(sequence) == 20
    result: CompileResult | None = None
    rounds = 20
    began = time.perf_counter()
    for _ in range(rounds):
        result = compile_sequence(cell, cell.initial_scene, sequence)
    per_compile = (time.perf_counter() - began) / rounds
    assert result is not None and result.ok
    assert per_compile < 0.02  # typically about 1 ms; generous for loaded CI machines


def test_a_barista_order_takes_a_cup_grinds_pulls_makes_pours_and_serves() -> None:
    cell = CELLS["barista"]
    order = step(
        "order_drink_with_milk_and_sugar", drink="latte", cup="large cup", roast="dark_roast",
        shots="triple_shot", milk="soy_milk", milk_amount=1.5, sugar="brown_sugar",
    )  # fmt: skip
    program = compiled(cell, [order])
    routines = [p.routine for p in program.primitives if isinstance(p, CallRoutine)]
    assert routines == ["grind", "triple_shot", "latte"]
    # The cup waits under the soy milk tap 1.5 s, under the brown sugar 2 s (the default).
    assert [p.ms for p in program.primitives if isinstance(p, Wait)] == [1500, 2000]
    stops = [p.target for p in program.primitives if isinstance(p, MoveL) and p.speed == 100]
    assert stops == [cell.poses[name].pose for name in ("dark_roast", "soy_milk", "brown_sugar")]
    assert program.expected.stacks["group_head"] == ("portafilter",)  # back in the machine
    view = state_view(cell, program.expected)
    assert view["zones"] == counter(["large cup"])
    assert view["supplies"] == {**BARISTA_SUPPLY, "large cup": 9}
    assert view["log"][0] == {"routine": "grind", "position": "dark_roast"}


def test_the_barista_counter_holds_three_cups_until_it_is_cleared() -> None:
    cell = CELLS["barista"]
    three = [step("order_drink", drink=drink) for drink in ("latte", "mocha", "espresso")]
    found = issues(cell, [*three, step("order_drink", drink="coffee")])
    assert [(issue.step, issue.message) for issue in found] == [(3, "put: pickup_3 is full")]
    program = compiled(cell, [*three, step("clear_counter"), step("order_drink", drink="coffee")])
    assert state_view(cell, program.expected)["zones"] == counter(
        ["medium cup"], used=["medium cup"] * 3
    )


def test_a_barista_order_needs_a_free_tray_a_cup_and_the_portafilter() -> None:
    cell = CELLS["barista"]
    start = cell.initial_scene
    stacks = dict(start.stacks)
    empty = start.with_changes(stacks={**stacks, "cups_small": ()})
    (issue,) = issues(cell, [step("order_drink", drink="latte", cup="small cup")], empty)
    assert issue.message == "order_drink: the small cup supply is empty"
    busy = start.with_changes(stacks={**stacks, "brew_tray": ("medium cup",)})
    (issue,) = issues(cell, [step("order_drink", drink="latte")], busy)
    assert issue.message == "order_drink: the brew_tray is not empty (medium cup on top)"
    away = start.with_changes(stacks={**stacks, "group_head": ()})
    (issue,) = issues(cell, [step("order_drink", drink="latte")], away)
    assert issue.message == "order_drink: the group_head is empty"
