"""Running accepted commands on the robot, one at a time, and tracking the scene they leave.

The scene is tracked after every completed primitive and saved after each run, so a restarted
daemon knows the real state; a run cut short leaves it as far as the controller got (and the
fault handling, `voiced.commands.faults`, corrects it from the controller's report).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from voiced import eventtypes as ev
from voiced.commands.belief import scene_after_partial_run
from voiced.commands.context import PipelineContext, PipelinePart
from voiced.commands.faults import Faults
from voiced.commands.pause_hold import Held, Hold
from voiced.commands.pending import dropped_sentence
from voiced.commands.reconcile import Interrupted
from voiced.commands.workload import Job, Phase
from voiced.interpreter.check import program_from
from voiced.interpreter.tiers import Interpreter
from voiced.logs import correlation
from voiced.robot.compiler import Program
from voiced.robot.link import ControllerLink
from voiced.robot.runreport import RunReport
from voiced.robot.scene import Scene
from voiced.words.behaviours import RESUME, UNDO
from voiced.words.plain import controller_refusal
from voiced.words.replay import REPLAY
from voiced.words.review import describe, surprise_said
from voiced.words.speed import SPEED_STEP
from voiced.words.undo import placements, remember


class Execution(PipelinePart):
    def __init__(
        self,
        context: PipelineContext,
        link: ControllerLink,
        faults: Faults,
        interpreter: Interpreter,
        save_scene: Callable[[Scene], None],
        trace_dir: Path | None,
    ) -> None:
        super().__init__(context)
        self.link = link
        self.faults = faults
        self.interpreter = interpreter
        self.save_scene = save_scene
        self.trace_dir = trace_dir
        self.current: Job | None = None
        """The job the arm is running."""
        self._queue: asyncio.Queue[Job] = asyncio.Queue()

    def enqueue(self, job: Job) -> None:
        """Accept `job` for the arm: new commands are planned from where it will leave the cell.
        While a pause holds, what was said before it is held too; a command said after it
        (but a speed change, and the confirmed "continue") drops what the pause held."""
        hold = self.belief.hold
        if hold is not None:
            if job.ticket.serial < hold.mark:
                self.hold(job)
                return
            if job.interpretation.source == RESUME:
                self._resumed(job, hold)
            elif not _only_speed(job) and (
                dropped := self.faults.drop_hold("a new command after the pause")
            ):
                self.speak(dropped_sentence(dropped, "The pause is over."))
        if self.belief.hold is None:
            self.belief.interrupted = None  # a new command starts fresh; "continue" planned its own
        if job.goals:
            belief = self.belief
            # "Do that again" after a surprise build repeats the same made-up goals.
            repeat = belief.last_creative and job.goals == belief.last_goals
            belief.last_creative = job.interpretation.is_creative or repeat
            belief.last_goals = job.goals
            if job.interpretation.is_creative:
                # Made up at random: the operator hears what the arm is about to build.
                again = repeat or job.interpretation.source == REPLAY
                lead = "Again" if again else "A surprise"
                said = surprise_said(belief.cell, belief.planned, job.program.expected, lead)
                self.speak(said)
        self.belief.planned = job.program.expected
        undoing = job.interpretation.source == UNDO
        moves = placements(self.belief.cell, job.program)
        self.belief.placed = remember(self.belief.placed, moves, undoing)
        self.workload.enter(job.ticket, Phase.QUEUED)
        self._queue.put_nowait(job)

    def hold(self, job: Job) -> None:
        """Keep `job`'s goals for "continue"; it does not run as it is."""
        hold = self.belief.hold
        assert hold is not None
        goals = job.goals or job.interpretation.sequence
        # Paused while it was about to start: it is held whole, not halted part-way.
        cut = None if job is self.current else hold.cut
        held = Held(job.text, goals, job.ticket.serial)
        in_order = tuple(sorted((*hold.held, held), key=lambda h: h.serial))
        self.belief.hold = replace(hold, cut=cut, held=in_order)
        self._paused(job)
        self.workload.leave(job.ticket)

    def _paused(self, job: Job) -> None:
        """`job` is held by the pause in force: its history row says so until the pause ends."""
        self.runlog.finish(job.ticket, "paused", "Paused; say continue to finish it.")
        hold, run_id = self.belief.hold, job.ticket.run_id
        if hold is not None and run_id is not None and run_id not in hold.runs:
            self.belief.hold = replace(hold, runs=(*hold.runs, run_id))

    def take_queued(self) -> list[Job]:
        """The accepted jobs still waiting for the arm, oldest first (the queue is left empty)."""
        jobs: list[Job] = []
        while not self._queue.empty():
            job = self._queue.get_nowait()
            if self.pending.current(job.ticket):
                jobs.append(job)
        return jobs

    def _resumed(self, job: Job, hold: Hold) -> None:
        steps = [describe(self.belief.cell, step) for step in job.goals]
        self.events.emit(ev.Resumed(hold.texts, steps))
        job.ticket.carries = hold.runs
        self.belief.hold = None

    async def run(self) -> None:
        """The worker: forever take the next accepted command and carry it out."""
        while True:
            job = await self._queue.get()
            if not self.pending.current(job.ticket):
                continue  # withdrawn by a stop while it waited; the stop settled it
            self.workload.enter(job.ticket, Phase.RUNNING)
            self.current = job
            try:
                with correlation(job.correlation_id):
                    await self._execute_safely(job)
            finally:
                self.current = None
                self.workload.leave(job.ticket)

    async def _execute_safely(self, job: Job) -> None:
        try:
            await self._execute(job)
        except Exception as exc:  # one bad command must never take the daemon down
            self.runlog.finish(job.ticket, "failed", self.runlog.failed(job.text, exc))
            self.faults.after_fault(job, "a command failed")

    async def _execute(self, job: Job) -> None:
        if not await self.faults.ready_controller(job.ticket):
            return  # a stop came while the link was being readied; the stop settled it
        # The program accepted runs if the arm is in the scene it was planned on. The real scene,
        # once the controller's report has corrected it, differs from the planned one only if
        # something went wrong in between: then it is compiled again and must not run blind.
        cell, before = self.belief.cell, self.belief.scene
        compiled = program_from(cell, before, job.program, job.interpretation.sequence)
        if compiled.program is None:
            issues = [issue.message for issue in compiled.errors]
            self.events.emit(ev.ValidationFailed(issues))
            self.speak(f"I can no longer do that: {issues[0]}")
            self.runlog.finish(job.ticket, "failed", f"I can no longer do that: {issues[0]}")
            self.faults.after_fault(job, "the scene changed")
            return
        hold = self.belief.hold
        if hold is not None and job.ticket.serial < hold.mark:
            self.hold(job)  # paused while the link was being readied
            return
        # No await between this check and the first line: a stop now interrupts the run.
        self.pending.release(job.ticket)
        self.runlog.update(job.ticket, "running")
        trace = trace_path(self.trace_dir, job.ticket.run_id) if self.trace_dir else None
        report = await self.link.run(compiled.program.primitives, trace_path=trace)
        self._track(job.text, before, compiled.program, report)
        if report.complete:
            self.runlog.finish(job.ticket, "completed", "Done.", ok=True)
            if job.understood is not None:
                self.interpreter.used(job.understood)
        elif report.stopped and self.belief.hold is not None:
            self._paused(job)
            await self.faults.after_pause()
        else:
            self.runlog.finish(job.ticket, "stopped" if report.stopped else "failed",
                               _why_cut_short(report))  # fmt: skip
            await self.faults.after_cut_short(job, report)

    def _track(self, text: str, before: Scene, program: Program, report: RunReport) -> None:
        """The scene after a run, from what the controller said completed. After a lost link
        some outcomes are unknown: nothing is saved until the reconnect has settled them and
        the controller's report has corrected the scene (`reconcile`)."""
        belief = self.belief
        if report.complete:
            belief.scene = program.expected
            belief.interrupted = None
        else:
            belief.scene = scene_after_partial_run(belief.cell, before, program, report.completed)
            belief.interrupted = Interrupted(text, program, before, frozenset(report.completed),
                                             report.run, settled=not report.unknown)  # fmt: skip
        if report.lost:
            belief.reconciled = False
            return
        self.save_scene(belief.scene)


def _only_speed(job: Job) -> bool:
    """A speed change alone: it keeps a pause (the rest then runs at the new speed)."""
    steps = job.goals or job.interpretation.sequence
    return bool(steps) and all(step.instruction == SPEED_STEP for step in steps)


def _why_cut_short(report: RunReport) -> str:
    if report.stopped:
        return "Stopped."
    if report.error is not None:
        return controller_refusal(report.error)
    return "The controller link was lost."


def trace_path(directory: Path, run_id: str | None) -> Path:
    """Where one run's TCP trace goes: named by its run id in the history (`voiced history`
    lists it), so no run, of this process or another, overwrites another's trace. Without a
    history a fresh id stands in; a run id that moves twice (continued after a pause) gets a
    numbered second trace."""
    stem = f"tcp_commands-{run_id or uuid.uuid4()}"
    path, number = directory / f"{stem}.json", 1
    while path.exists():
        number += 1
        path = directory / f"{stem}-{number}.json"
    return path
