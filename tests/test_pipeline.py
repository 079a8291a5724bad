"""What the pipeline believes after a run that was cut short."""

from __future__ import annotations

from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.primitives import Grip

from voiced.pipeline import scene_after_partial_run

SEQUENCE = [
    {"instruction": "set_active_zone", "params": {"zone": "left"}},
    {"instruction": "add_layer", "params": {"item": "bread"}},
    {"instruction": "add_layer", "params": {"item": "cheese"}},
]


def test_partial_run_keeps_completed_steps_and_the_cut_steps_done_primitives() -> None:
    cell = load_cell("sandwich")
    program = compile_sequence(cell, cell.initial_scene, SEQUENCE).program
    assert program is not None
    third = program.steps[2]
    closes = [i for i in range(third.start, third.end) if program.primitives[i] == Grip(0.0)]
    # Completed: every primitive up to and including the grip that picks the cheese.
    completed = list(range(closes[0] + 1))
    scene = scene_after_partial_run(cell, cell.initial_scene, program, completed)
    assert scene.active_zone == "assembly_left"
    assert scene.stacks["assembly_left"] == ("bread",)
    assert scene.holding == "cheese"


def test_nothing_completed_means_nothing_changed() -> None:
    cell = load_cell("sandwich")
    program = compile_sequence(cell, cell.initial_scene, SEQUENCE[1:]).program
    assert program is not None
    assert scene_after_partial_run(cell, cell.initial_scene, program, []) == cell.initial_scene


def test_a_logical_first_step_counts_as_completed() -> None:
    cell = load_cell("sandwich")
    program = compile_sequence(cell, cell.initial_scene, SEQUENCE).program
    assert program is not None
    scene = scene_after_partial_run(cell, cell.initial_scene, program, [])
    assert scene.active_zone == "assembly_left"
    assert scene.stacks["assembly_left"] == ()
