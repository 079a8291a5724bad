"""A stop that lands between the pipeline's state check and the command's first line: the
controller answers `ERR HALTED halted by stop: send RESUME`. The operator hears that the arm is
stopped and to say continue (a word the daemon takes), never the wire words; "continue" then
finishes the command."""

from __future__ import annotations

import asyncio
from pathlib import Path

from voiced.robot.cellfile import load_cell
from voiced.robot.connection import ControllerState
from voiced.robot.link import ControllerLink
from voiced.robot.simulator import Simulator

from voiced.commands.early import CONTINUE
from voiced.commands.pipeline import RobotPipeline
from voiced.events import EventLog
from voiced.eventtypes import ControllerRefused, Record
from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir


class StopAfterTheCheck(ControllerLink):
    """The real link; the first state check is followed at once by a stop on the controller
    (the pendant, or a stop spotted on another channel): the race the operator ran into."""

    sim: Simulator | None = None

    async def state(self) -> ControllerState:
        found = await super().state()
        if self.sim is not None:
            self.sim.core.halt("stop")
            self.sim = None
        return found


async def test_a_halt_before_the_first_line_is_said_in_plain_words(tmp_path: Path) -> None:
    cell = load_cell("sandwich")
    said: list[str] = []
    asked: list[str] = []
    refused: list[Record] = []
    events = EventLog()
    events.subscribe(
        lambda r: refused.append(r) if isinstance(r.event, ControllerRefused) else None
    )
    async with (
        Simulator(cell, cell.initial_scene, time_scale=0.001) as sim,
        StopAfterTheCheck("127.0.0.1", sim.motion_port, sim.control_port) as link,
    ):
        interpreter = Interpreter(cell, DataDir(tmp_path), None, LlmSettings(), lambda e, f: None)
        pipeline = RobotPipeline(
            cell, cell.initial_scene, link, events, speak=said.append,
            save_scene=lambda scene: None,
            ask=lambda question, answered, revised, level: asked.append(question) or (lambda: None),
            interpreter=interpreter,
        )  # fmt: skip
        tasks = [asyncio.create_task(pipeline.accept()), asyncio.create_task(pipeline.run())]
        try:
            link.sim = sim
            first = await asyncio.wait_for(pipeline.submit("add bread", None), 30)
            assert not first.ok
            [record] = refused
            assert record.event.error is not None and record.event.error["code"] == "HALTED"
            assert said[-1] == ("The arm is stopped by a stop, so the command did not finish. "
                                "Say continue to finish it, or give a new command.")  # fmt: skip
            assert "continue" in CONTINUE
            await asyncio.wait_for(pipeline.wait_idle(), 30)
            pipeline.submit("continue", None)
            await asyncio.wait_for(pipeline.wait_accepted(), 30)
            assert asked == ["I will add bread. Proceed?"], (asked, said)  # read back first
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
    assert not [line for line in said if "RESUME" in line or "HALTED" in line], said
