"""What the pipeline believes after a run that was cut short, and how often a command is
compiled."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from voiced.robot import compiler
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import CompileResult, compile_sequence
from voiced.robot.link import ControllerLink
from voiced.robot.primitives import Grip
from voiced.robot.scene import Scene
from voiced.robot.sequence import steps
from voiced.robot.simulator import Simulator

from voiced.commands.belief import scene_after_partial_run
from voiced.commands.pipeline import RobotPipeline
from voiced.events import EventLog
from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir

SEQUENCE = steps(("set_active_zone", {"zone": "left"}), ("add_layer", {"item": "bread"}),
                 ("add_layer", {"item": "cheese"}))  # fmt: skip


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


def count_compilations(monkeypatch: pytest.MonkeyPatch) -> list[Scene]:
    """Every call of `compile_sequence`, wherever it was imported: the scene it started from."""
    calls: list[Scene] = []
    real = compiler.compile_sequence

    def counted(*args: Any) -> CompileResult:
        calls.append(args[1])
        return real(*args)

    for module in list(sys.modules.values()):
        if module is not compiler and getattr(module, "compile_sequence", None) is real:
            monkeypatch.setattr(module, "compile_sequence", counted)
    return calls


async def run_one_command(
    tmp_path: Path, text: str, before_it_runs: Callable[[RobotPipeline], None]
) -> bool:
    """Accept `text`, call `before_it_runs`, then let the command run on the simulator."""
    cell = load_cell("sandwich")
    async with (
        Simulator(cell, cell.initial_scene, time_scale=0.001) as sim,
        ControllerLink("127.0.0.1", sim.motion_port, sim.control_port) as link,
    ):
        interpreter = Interpreter(cell, DataDir(tmp_path), None, LlmSettings(), lambda e, f: None)
        pipeline = RobotPipeline(
            cell, cell.initial_scene, link, EventLog(), speak=lambda text: None,
            save_scene=lambda scene: None,
            ask=lambda question, answered, revised, level_db: lambda: None,
            interpreter=interpreter,
        )  # fmt: skip
        accepting = asyncio.create_task(pipeline.accept())
        outcome = pipeline.submit(text, None)
        await pipeline.wait_accepted()
        before_it_runs(pipeline)
        running = asyncio.create_task(pipeline.run())
        try:
            result = await asyncio.wait_for(outcome, 30)
        finally:
            for task in (accepting, running):
                task.cancel()
            await asyncio.wait({accepting, running})
    return result.ok


async def test_a_command_is_compiled_once_when_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled_from = count_compilations(monkeypatch)
    assert await run_one_command(tmp_path, "add bread", lambda pipeline: None)
    assert compiled_from == [load_cell("sandwich").initial_scene]


async def test_a_command_is_compiled_again_when_the_arm_starts_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As after a reconcile that corrected the scene between acceptance and the run."""
    compiled_from = count_compilations(monkeypatch)
    elsewhere = load_cell("sandwich").initial_scene.with_changes(speed=50.0)

    def arm_moved(pipeline: RobotPipeline) -> None:
        pipeline.belief.scene = elsewhere

    assert await run_one_command(tmp_path, "add bread", arm_moved)
    assert compiled_from == [load_cell("sandwich").initial_scene, elsewhere]
