"""Execution: a plan becomes blocks-cell composites that the compiler accepts from the current
scene and whose expected scene holds the target arrangement; one plan runs through the executor
on the simulator and reaches it."""

from __future__ import annotations

import random
from dataclasses import replace

from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.link import ControllerLink
from voiced.robot.rearrange import plan_rearrangement, plan_to_sequence
from voiced.robot.rearrange.targets import validate_target_structure_payload
from voiced.robot.simulator import Simulator
from voiced.robot.view import state_view

from tests.rearrange.checker import all_starts, all_targets
from voiced.interpreter.arrangement import parse_arrangement

CELL = load_cell("blocks")
PAIRS = [(start, target) for start in all_starts(CELL) for target, _ in all_targets()]
SAMPLE = random.Random(4).sample(PAIRS, 150)


def test_sampled_plans_compile_and_reach_the_target() -> None:
    for start, target in SAMPLE:
        scene = CELL.initial_scene.with_changes(stacks=start)
        plan = plan_rearrangement(CELL, scene, target)
        sequence = plan_to_sequence(CELL, plan)
        assert [s.instruction for s in sequence] == ["move_object"] * len(plan.steps)
        result = compile_sequence(CELL, scene, sequence)
        assert result.program is not None, (start, target, result.errors)
        view = state_view(CELL, result.program.expected)
        assert view["arrangement"] == validate_target_structure_payload(target).view()
        assert view == plan.final_state


def test_pick_and_place_where_the_cell_has_no_move_object() -> None:
    composites = {k: v for k, v in CELL.composites.items() if k != "move_object"}
    cell = replace(CELL, composites=composites)
    start, target = SAMPLE[0]
    scene = cell.initial_scene.with_changes(stacks=start)
    plan = plan_rearrangement(cell, scene, target)
    sequence = plan_to_sequence(cell, plan)
    assert [s.instruction for s in sequence] == ["pick", "place"] * len(plan.steps)
    assert compile_sequence(cell, scene, sequence).ok


def test_a_blocked_plan_is_no_sequence() -> None:
    target = {"relationship": "stacked_left", "placements": [{"object": "yellow cube"}]}
    plan = plan_rearrangement(CELL, CELL.initial_scene, target)
    assert plan.status == "blocked" and plan_to_sequence(CELL, plan) == []


async def test_a_plan_runs_on_the_simulator() -> None:
    """Seed Test 2 (wrong top) from a scene file's state, through the real executor."""
    stacks = {**{s: () for s in CELL.sites}, "center": ("blue cube", "red cube", "green cube")}
    scene = CELL.initial_scene.with_changes(stacks=stacks)
    target = {"relationship": "stacked", "placements": [
        {"position": "bottom", "object 1": "blue cube"},
        {"position": "middle", "object 2": "green cube"},
        {"position": "top", "object 3": "red cube"}]}  # fmt: skip
    plan = plan_rearrangement(CELL, scene, target)
    result = compile_sequence(CELL, scene, plan_to_sequence(CELL, plan))
    assert result.program is not None
    async with (
        Simulator(CELL, scene, time_scale=0.001) as sim,
        ControllerLink("127.0.0.1", sim.motion_port, sim.control_port) as link,
    ):
        report = await link.run(result.program.primitives)
    assert report.complete, report.to_dict()
    assert (
        state_view(CELL, sim.scene)["arrangement"]
        == validate_target_structure_payload(target).view()
    )
    assert sim.scene.stacks == result.program.expected.stacks


async def test_spoken_text_reaches_the_arrangement_on_the_simulator() -> None:
    """Voice text -> arrangement grammar -> plan -> composites -> executor -> simulator."""
    scene = CELL.initial_scene
    parsed = parse_arrangement("make a pyramid with green and red on the bottom and blue on top",
                               CELL, scene)  # fmt: skip
    assert parsed is not None and parsed.target is not None
    plan = plan_rearrangement(CELL, scene, parsed.target)
    result = compile_sequence(CELL, scene, plan_to_sequence(CELL, plan))
    assert result.program is not None
    async with (
        Simulator(CELL, scene, time_scale=0.001) as sim,
        ControllerLink("127.0.0.1", sim.motion_port, sim.control_port) as link,
    ):
        report = await link.run(result.program.primitives)
    assert report.complete
    assert state_view(CELL, sim.scene)["arrangement"] == {
        "relationship": "pyramid",
        "placements": [
            {"position": "bottom left", "object": "green cube"},
            {"position": "bottom right", "object": "red cube"},
            {"position": "top", "object": "blue cube"},
        ],
    }
