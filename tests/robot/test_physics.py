"""What primitives do to a scene (voiced.robot.physics)."""

from __future__ import annotations

import pytest
from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.physics import PhysicsError, apply, position_name
from voiced.robot.primitives import (
    CallRoutine,
    Grip,
    MoveJ,
    MoveL,
    Pose,
    Primitive,
    Speed,
    ToolAttach,
    ToolDetach,
    Wait,
)
from voiced.robot.scene import RoutineRun, Scene


@pytest.fixture(scope="module")
def sandwich() -> Cell:
    return load_cell("sandwich")


@pytest.fixture(scope="module")
def weld() -> Cell:
    return load_cell("weld")


@pytest.fixture(scope="module")
def blocks() -> Cell:
    return load_cell("blocks")


def run(cell: Cell, scene: Scene, *primitives: Primitive) -> Scene:
    for primitive in primitives:
        scene = apply(cell, scene, primitive)
    return scene


def at(pose: Pose | None, speed: float = 100.0) -> MoveL:
    assert pose is not None
    return MoveL(pose, speed)


def test_grasp_takes_the_top_object(sandwich: Cell) -> None:
    start = sandwich.initial_scene
    grasp = physics.grasp_pose(sandwich, start, "supply_bread")
    assert grasp is not None and grasp.z == pytest.approx(7 * 15 + 7.5)
    scene = run(sandwich, start, at(grasp), Grip(0))
    assert scene.holding == "bread"
    assert scene.stacks["supply_bread"] == ("bread",) * 7
    assert scene.gripper == 0
    assert start.stacks["supply_bread"] == ("bread",) * 8  # pure: the input is untouched


@pytest.mark.parametrize(("dx", "dz"), [(0.0, 12.0), (0.0, -12.0), (20.0, 0.0)])
def test_grasp_misses_when_not_at_the_object(sandwich: Cell, dx: float, dz: float) -> None:
    grasp = physics.grasp_pose(sandwich, sandwich.initial_scene, "supply_bread")
    assert grasp is not None
    scene = run(sandwich, sandwich.initial_scene, at(grasp.offset(dx=dx, dz=dz)), Grip(0))
    assert scene.holding is None
    assert len(scene.stacks["supply_bread"]) == 8


def test_closing_wider_than_the_object_grasps_nothing(sandwich: Cell) -> None:
    grasp = physics.grasp_pose(sandwich, sandwich.initial_scene, "supply_bread")
    scene = run(sandwich, sandwich.initial_scene, at(grasp), Grip(95))
    assert scene.holding is None


def holding_bread(cell: Cell) -> Scene:
    grasp = physics.grasp_pose(cell, cell.initial_scene, "supply_bread")
    assert grasp is not None
    return run(cell, cell.initial_scene, at(grasp), Grip(0), at(grasp.offset(dz=60)))


def test_place_puts_the_object_on_top(sandwich: Cell) -> None:
    scene = holding_bread(sandwich)
    place = physics.place_pose(sandwich, scene, "assembly_fixture", "bread")
    assert place.z == pytest.approx(7.5)
    scene = run(sandwich, scene, at(place), Grip(110))
    assert scene.holding is None
    assert scene.stacks["assembly_fixture"] == ("bread",)
    assert scene.dropped == ()
    grasp = physics.grasp_pose(sandwich, scene, "assembly_fixture")
    assert grasp is not None and grasp.z == pytest.approx(7.5)


def test_letting_go_away_from_a_site_drops_the_object(sandwich: Cell) -> None:
    scene = run(sandwich, holding_bread(sandwich), MoveJ(Pose(450, 0, 400), 250), Grip(110))
    assert scene.holding is None
    assert scene.dropped == ("bread",)


def test_letting_go_on_a_full_site_drops_the_object(blocks: Cell) -> None:
    start = blocks.initial_scene
    scene = run(blocks, start, at(physics.grasp_pose(blocks, start, "S1")), Grip(0))
    assert scene.holding == "red cube"
    above_s2 = physics.place_pose(blocks, scene, "S2", "red cube")
    scene = run(blocks, scene, at(above_s2), Grip(80))
    assert scene.dropped == ("red cube",)
    assert scene.stacks["S2"] == ("green cube",)


def test_pyramid_top_rests_on_its_supports(blocks: Cell) -> None:
    scene = blocks.initial_scene.with_changes(
        stacks={
            **blocks.initial_scene.stacks,
            "S1": (),
            "S2": (),
            "pyramid_left": ("red cube",),
            "pyramid_right": ("green cube",),
        }
    )
    assert physics.base_z(blocks, scene, "pyramid_top") == 40
    assert physics.has_room(blocks, scene, "pyramid_top")
    scene = run(blocks, scene, at(physics.grasp_pose(blocks, scene, "S3")), Grip(0))
    scene = run(blocks, scene, at(physics.place_pose(blocks, scene, "pyramid_top", "blue cube")))
    scene = run(blocks, scene, Grip(80))
    assert scene.stacks["pyramid_top"] == ("blue cube",)
    with pytest.raises(PhysicsError) as caught:
        run(blocks, scene, at(physics.grasp_pose(blocks, scene, "pyramid_left")), Grip(0))
    assert caught.value.code == "support"


def test_pyramid_top_needs_both_supports(blocks: Cell) -> None:
    stacks = {**blocks.initial_scene.stacks, "pyramid_left": ("yellow cube",)}
    assert not physics.has_room(
        blocks, blocks.initial_scene.with_changes(stacks=stacks), "pyramid_top"
    )


@pytest.mark.parametrize(
    ("primitive", "code"),
    [
        (MoveL(Pose(900, 0, 300), 100), "workspace"),
        (MoveJ(Pose(400, 0, -30), 100), "workspace"),
        (MoveL(Pose(400, 600, 300), 100), "workspace"),
        (MoveL(Pose(400, 0, 300), 600), "speed"),
        (MoveL(Pose(400, 0, 300), 0), "speed"),
        (Speed(501), "speed"),
        (Speed(-5), "speed"),
        (Grip(120), "gripper"),
        (Grip(-1), "gripper"),
    ],
)
def test_limits_are_enforced(sandwich: Cell, primitive: Primitive, code: str) -> None:
    with pytest.raises(PhysicsError) as caught:
        apply(sandwich, sandwich.initial_scene, primitive)
    assert caught.value.code == code
    assert caught.value.message


def test_workspace_bounds_are_inclusive_and_speed_sets_the_default(sandwich: Cell) -> None:
    corner = Pose(*sandwich.limits.workspace_max)
    assert apply(sandwich, sandwich.initial_scene, MoveL(corner, 500)).pose == corner
    assert apply(sandwich, sandwich.initial_scene, Speed(300)).speed == 300
    assert apply(sandwich, sandwich.initial_scene, Wait(500)) == sandwich.initial_scene


def test_tool_attach_and_detach_at_the_stand(weld: Cell) -> None:
    stand = weld.tools["Welder"].stand
    scene = run(weld, weld.initial_scene, MoveL(stand, 100), ToolAttach("Welder"))
    assert scene.tool == "Welder"
    scene = run(weld, scene, MoveL(stand.offset(dz=80), 100), MoveL(stand, 100), ToolDetach())
    assert scene.tool is None


@pytest.mark.parametrize(
    ("setup", "primitive", "message"),
    [
        ((), ToolAttach("Welder"), "not at its stand"),
        (
            (MoveL(Pose(400, -350, 120), 100), ToolAttach("Welder")),
            ToolAttach("Camera"),
            "attached",
        ),
        ((), ToolAttach("Laser"), "no tool called Laser"),
        ((), ToolDetach(), "none is attached"),
        (
            (
                MoveL(Pose(400, -350, 120), 100),
                ToolAttach("Welder"),
                MoveL(Pose(250, -350, 120), 100),
            ),
            ToolDetach(),
            "not at its stand",
        ),
    ],
)
def test_tool_errors(
    weld: Cell, setup: tuple[Primitive, ...], primitive: Primitive, message: str
) -> None:
    scene = run(weld, weld.initial_scene, *setup)
    with pytest.raises(PhysicsError, match=message) as caught:
        apply(weld, scene, primitive)
    assert caught.value.code == "tool"


def welder_at(weld: Cell, position: str) -> Scene:
    stand = weld.tools["Welder"].stand
    target = weld.poses[position].pose
    return run(
        weld, weld.initial_scene, MoveL(stand, 100), ToolAttach("Welder"), MoveJ(target, 250)
    )


def test_routine_logs_the_named_position(weld: Cell) -> None:
    scene = apply(weld, welder_at(weld, "Pos_1"), CallRoutine("tack_weld"))
    assert scene.log == (RoutineRun("tack_weld", "Pos_1"),)
    moved = run(weld, scene, MoveL(scene.pose.offset(dx=30), 100), CallRoutine("tack_weld"))
    assert moved.log[-1] == RoutineRun("tack_weld", None)


@pytest.mark.parametrize(
    ("routine", "message"),
    [("camera_inspection", "needs the Camera"), ("polish", "no routine called polish")],
)
def test_routine_errors(weld: Cell, routine: str, message: str) -> None:
    with pytest.raises(PhysicsError, match=message) as caught:
        apply(weld, welder_at(weld, "Pos_2"), CallRoutine(routine))
    assert caught.value.code == "routine"


def test_routine_without_a_tool(weld: Cell) -> None:
    with pytest.raises(PhysicsError, match="no tool is attached"):
        apply(weld, weld.initial_scene, CallRoutine("tack_weld"))


@pytest.mark.parametrize(("offset", "name"), [(0.0, "Pos_1"), (4.9, "Pos_1"), (5.1, None)])
def test_position_name_within_5_mm(weld: Cell, offset: float, name: str | None) -> None:
    assert position_name(weld, weld.poses["Pos_1"].pose.offset(dy=offset)) == name
