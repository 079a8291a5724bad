"""The robot pipeline: submitted text -> interpretation -> compiled program -> controller.

It is put together from parts with one job each, around one picture of the cell (`Belief`)
and one state machine of where every command is (`Workload`):

- `Acceptance` (voiced/commands/acceptance.py): interpret, plan and check each command in order;
  answer questions; "continue" and replays;
- `Asking` (voiced/commands/asking.py): the read-back before a command runs, revisions, teaching;
- `Execution` (voiced/commands/execution.py): run accepted commands one at a time, track the scene;
- `Pausing` (voiced/commands/pausing.py): "hold on" halts and holds the plan; "continue" asks, then
  finishes it re-planned from the controller's report;
- `Faults` (voiced/commands/faults.py): the stop, SIGTERM, runs cut short, the lost link, and the
  controller's report that corrects the scene afterwards;
- `RunLog` (voiced/commands/runlog.py): the history and every command's outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from voiced.commands.acceptance import Acceptance, checked_plan
from voiced.commands.asking import Ask, Asking
from voiced.commands.belief import Belief
from voiced.commands.context import PipelineContext
from voiced.commands.execution import Execution
from voiced.commands.faults import Faults
from voiced.commands.pausing import Pausing
from voiced.commands.pending import Outcome, PendingWork
from voiced.commands.runlog import RunLog
from voiced.commands.workload import Workload
from voiced.config import ReviewConfig
from voiced.events import EventLog
from voiced.history import History
from voiced.interpreter.check import Checked
from voiced.interpreter.result import Interpretation
from voiced.interpreter.tiers import Interpreter
from voiced.link.keeper import LinkKeeper
from voiced.robot.cell import Cell
from voiced.robot.link import ControllerLink
from voiced.robot.scene import Scene
from voiced.words.questions import Questions

__all__ = ["Ask", "RobotPipeline"]


class RobotPipeline:
    """Turns submitted commands into motion, one at a time. What it believes about the cell is
    `belief`; where every command is, `workload`."""

    def __init__(
        self,
        cell: Cell,
        scene: Scene,
        link: ControllerLink,
        events: EventLog,
        speak: Callable[[str], None],
        save_scene: Callable[[Scene], None],
        ask: Ask,
        *,
        interpreter: Interpreter,
        trace_dir: Path | None = None,
        history: History | None = None,
        review: ReviewConfig | None = None,
        status: Callable[[str | None], None] = lambda text: None,
    ) -> None:
        # The interpreter's cell carries the composites learned in earlier runs (tier 2).
        self.belief = Belief(interpreter.cell, scene, scene)
        self.link = link
        self.interpreter = interpreter
        self.workload = Workload()
        pending = PendingWork()
        runlog = RunLog(lambda: self.belief.cell.name, history, pending, events, speak)
        context = PipelineContext(self.belief, pending, self.workload, runlog, events, speak)
        self.faults = Faults(context, link, save_scene, status)
        self.execution = Execution(context, link, self.faults, interpreter, save_scene, trace_dir)
        belief = self.belief
        asking = Asking(context, ask, review or ReviewConfig(), interpreter,
                        lambda meant: checked_plan(belief.cell, belief.planned, meant),
                        self.execution.enqueue)  # fmt: skip

        def plan(meant: Interpretation) -> Checked:
            return checked_plan(belief.cell, belief.planned, meant)

        self.pausing = Pausing(context, link, self.execution, self.faults, asking, plan)
        self.acceptance = Acceptance(context, interpreter, asking, self.execution.enqueue,
                                     Questions(cell, history), history,
                                     self.pausing.resume)  # fmt: skip

    # -- what the daemon drives --------------------------------------------------------------

    def submit(
        self,
        text: str,
        correlation_id: str | None,
        *,
        doubt: str | None = None,
        level_db: float | None = None,
    ) -> Outcome:
        return self.acceptance.submit(text, correlation_id, doubt=doubt, level_db=level_db)

    async def accept(self) -> None:
        await self.acceptance.accept()

    async def run(self) -> None:
        await self.execution.run()

    async def stop(
        self, reason: str, unsent: Sequence[str] = (), *, silenced: Sequence[str] = ()
    ) -> list[str]:
        return await self.faults.stop(reason, unsent, silenced=silenced)

    async def pause(self, reason: str, *, silenced: Sequence[str] = ()) -> str:
        return await self.pausing.pause(reason, silenced)

    async def shutdown(self) -> list[str]:
        return await self.faults.shutdown()

    async def reconcile(self, why: str) -> None:
        await self.faults.reconcile(why)

    def is_complete(self, text: str) -> bool:
        return self.acceptance.is_complete(text)

    def continues(self, text: str) -> bool:
        return self.acceptance.continues(text)

    def asks(self, text: str) -> bool:
        return self.acceptance.asks(text)

    def values_named(self, text: str) -> frozenset[tuple[str, ...]]:
        return self.acceptance.values_named(text)

    def about_the_cell(self, text: str) -> bool:
        return self.acceptance.about_the_cell(text)

    def may_go_on(self, text: str) -> bool:
        return self.acceptance.may_go_on(text)

    def starts_with_verb(self, text: str) -> bool:
        return self.acceptance.starts_with_verb(text)

    async def wait_accepted(self) -> None:
        """Until every submitted command has been interpreted (and queued, asked or refused)."""
        await self.workload.wait_accepted()

    async def wait_idle(self) -> None:
        """Until nothing runs, nothing is queued and no question is open."""
        await self.workload.wait_idle()

    # -- what it reads -----------------------------------------------------------------------

    @property
    def keeper(self) -> LinkKeeper:
        return self.faults.keeper
