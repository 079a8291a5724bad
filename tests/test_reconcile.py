"""The controller's report corrects the scene, and "continue" finishes from there (issue 14)."""

from __future__ import annotations

import pytest
from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import Program, compile_sequence
from voiced.robot.connection import ControllerState
from voiced.robot.primitives import Pose
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep

from voiced.commands.belief import scene_after_partial_run
from voiced.commands.reconcile import Interrupted, reconcile, rest_of


@pytest.fixture(scope="module")
def sandwich() -> Cell:
    return load_cell("sandwich")


def _program(cell: Cell, scene: Scene, *calls: tuple[str, dict[str, str]]) -> Program:
    compiled = compile_sequence(cell, scene, [SequenceStep(i, p) for i, p in calls])
    assert compiled.program is not None, compiled.errors
    return compiled.program


def _report(scene: Scene, **changes: object) -> ControllerState:
    fields: dict[str, object] = {"pose": scene.pose, "status": "halted", "last_done": 0,
                                 "gripper": scene.gripper, "tool": scene.tool}  # fmt: skip
    fields.update(changes)
    return ControllerState(**fields)  # type: ignore[arg-type]


def _carrying(cell: Cell) -> tuple[Program, Scene]:
    """Bread grasped and lifted off its supply (the first five primitives of add bread), the
    arm then stopped part-way to the fixture."""
    program = _program(cell, cell.initial_scene, ("add_layer", {"item": "bread"}),
                       ("add_layer", {"item": "cheese"}))  # fmt: skip
    scene = scene_after_partial_run(cell, cell.initial_scene, program, range(5))
    return program, scene.with_changes(pose=Pose(300.0, -150.0, 160.0))


def test_a_report_that_agrees_changes_nothing(sandwich: Cell) -> None:
    scene = sandwich.initial_scene
    fixed = reconcile(sandwich, scene, _report(scene))
    assert fixed.scene == scene
    assert fixed.changes == ()


def test_the_reported_pose_tool_and_gripper_win(sandwich: Cell) -> None:
    scene = sandwich.initial_scene
    moved = Pose(500.0, 100.0, 300.0)
    fixed = reconcile(sandwich, scene, _report(scene, pose=moved, gripper=40.0))
    assert fixed.scene.pose == moved
    assert fixed.scene.gripper == 40.0
    assert any("x 500, y 100, z 300" in change for change in fixed.changes)


def test_an_open_gripper_in_mid_air_means_the_part_was_let_go(sandwich: Cell) -> None:
    _, carrying = _carrying(sandwich)
    assert carrying.holding == "bread"
    fixed = reconcile(sandwich, carrying, _report(carrying, gripper=110.0))
    assert fixed.scene.holding is None
    assert fixed.scene.dropped == ("bread",)
    assert any("let go" in change for change in fixed.changes)


def test_a_gripper_closed_on_a_part_means_it_is_held(sandwich: Cell) -> None:
    # Believed open at the bread supply's grasp height; the controller says it closed.
    grasp = physics.grasp_pose(sandwich, sandwich.initial_scene, "supply_bread")
    assert grasp is not None
    believed = sandwich.initial_scene.with_changes(pose=grasp, gripper=110.0)
    fixed = reconcile(sandwich, believed, _report(believed, gripper=0.0))
    assert fixed.scene.holding == "bread"
    assert any("holds bread" in change for change in fixed.changes)


def test_continue_puts_the_carried_part_where_it_was_going_then_goes_on(sandwich: Cell) -> None:
    program, carrying = _carrying(sandwich)
    cut = Interrupted("add bread and cheese", program, sandwich.initial_scene,
                      frozenset(range(5)), run=1, settled=True)  # fmt: skip
    rest = rest_of(sandwich, cut, carrying)
    assert rest == [SequenceStep("place_on_zone"),
                    SequenceStep("add_layer", {"item": "cheese"})]  # fmt: skip
    assert cut.not_done(sandwich) == ["add bread", "add cheese"]
    finished = compile_sequence(sandwich, carrying, rest).program
    assert finished is not None
    assert finished.expected.stacks["assembly_fixture"] == ("bread", "cheese")
    assert finished.expected.dropped == ()


def test_continue_redoes_a_step_cut_before_it_picked_anything(sandwich: Cell) -> None:
    program = _program(sandwich, sandwich.initial_scene, ("add_layer", {"item": "bread"}),
                       ("add_layer", {"item": "cheese"}))  # fmt: skip
    first = program.steps[0]
    done = frozenset(range(first.end + 2))  # bread placed, the arm on its way to the cheese
    scene = scene_after_partial_run(sandwich, sandwich.initial_scene, program, sorted(done))
    cut = Interrupted("add bread and cheese", program, sandwich.initial_scene, done, 1, True)
    assert rest_of(sandwich, cut, scene) == [SequenceStep("add_layer", {"item": "cheese"})]


def test_continue_skips_a_step_cut_after_it_set_its_part_down(sandwich: Cell) -> None:
    """Halted on the way back up from the fixture: the bread is there; fetching another would
    put two slices on the stack."""
    program = _program(sandwich, sandwich.initial_scene, ("add_layer", {"item": "bread"}),
                       ("add_layer", {"item": "cheese"}))  # fmt: skip
    first = program.steps[0]
    done = frozenset(range(first.end - 1))  # the gripper opened on the fixture, no lift yet
    scene = scene_after_partial_run(sandwich, sandwich.initial_scene, program, sorted(done))
    assert scene.stacks["assembly_fixture"] == ("bread",)
    cut = Interrupted("add bread and cheese", program, sandwich.initial_scene, done, 1, True)
    assert rest_of(sandwich, cut, scene) == [SequenceStep("add_layer", {"item": "cheese"})]


def test_continue_after_everything_ran_has_nothing_left(sandwich: Cell) -> None:
    program = _program(sandwich, sandwich.initial_scene, ("add_layer", {"item": "bread"}))
    done = frozenset(range(len(program.primitives)))
    cut = Interrupted("add bread", program, sandwich.initial_scene, done, 1, True)
    assert rest_of(sandwich, cut, program.expected) == []


def test_blocks_continue_places_the_carried_cube_on_its_target() -> None:
    blocks = load_cell("blocks")
    scene = blocks.initial_scene
    top = next((site, stack[-1]) for site, stack in scene.stacks.items() if stack and site != "B3")
    program = _program(blocks, scene, ("move_object", {"object": top[1], "to": "B3"}))
    grasped = next(
        i + 1
        for i in range(len(program.primitives))
        if scene_after_partial_run(blocks, scene, program, range(i + 1)).holding is not None
    )
    carrying = scene_after_partial_run(blocks, scene, program, range(grasped + 1))
    cut = Interrupted("move it", program, scene, frozenset(range(grasped + 1)), 1, True)
    rest = rest_of(blocks, cut, carrying)
    assert rest is not None and len(rest) == 1
    finished = compile_sequence(blocks, carrying, rest).program
    assert finished is not None
    assert finished.expected.stacks["B3"][-1] == top[1]
