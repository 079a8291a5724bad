"""Issue acceptance: for every composite of every packaged cell, the compiled program sent through
the executor to the simulator over TCP yields the scene the compiler expected."""

from __future__ import annotations

from typing import Any

import pytest
from voiced.robot.compiler import compile_sequence
from voiced.robot.link import ControllerLink
from voiced.robot.sequence import SequenceStep
from voiced.robot.simulator import Simulator
from voiced.robot.view import state_view

from tests.robot.test_compiler import CELLS, EVERY_COMPOSITE


@pytest.mark.parametrize(
    ("cell_name", "setup", "call", "expected"),
    EVERY_COMPOSITE,
    ids=[f"{c}.{call.instruction}" for c, _, call, _ in EVERY_COMPOSITE],
)
async def test_composite_on_the_simulator(
    cell_name: str, setup: list[SequenceStep], call: SequenceStep, expected: dict[str, Any]
) -> None:
    cell = CELLS[cell_name]
    result = compile_sequence(cell, cell.initial_scene, [*setup, call])
    assert result.program is not None, result.errors
    program = result.program
    async with (
        Simulator(cell, cell.initial_scene, time_scale=0.001) as sim,
        ControllerLink("127.0.0.1", sim.motion_port, sim.control_port) as link,
    ):
        report = await link.run(program.primitives)
    assert report.complete, report.to_dict()
    # active_zone is the one logical field: the controller never hears of it.
    on_sim = sim.scene.with_changes(active_zone=program.expected.active_zone)
    assert state_view(cell, on_sim) == state_view(cell, program.expected)
    assert on_sim.stacks == program.expected.stacks
    assert (on_sim.holding, on_sim.tool, on_sim.log) == (
        program.expected.holding,
        program.expected.tool,
        program.expected.log,
    )
    for key, value in expected.items():
        assert state_view(cell, on_sim)[key] == value, key
    assert all(count == 1 for count in sim.executions.values())
    assert len(sim.executions) == len(program.primitives)
