"""The robot pipeline: submitted text -> interpretation -> compiled program -> controller.

Submissions queue up and run one at a time, so typed or spoken lines are accepted without waiting
for the robot. The pipeline keeps the tracked scene (what the cell looks like after every
completed primitive) and persists it after each run, so a restarted daemon knows the real state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from robot import physics
from robot.cell import Cell
from robot.compiler import Program, compile_sequence
from robot.executor import ControllerLink, RunReport
from robot.scene import Scene
from voiced.errors import VoicedError
from voiced.events import EventLog
from voiced.interpreter.check import understand
from voiced.interpreter.grammar import Grammar
from voiced.logs import correlation

log = structlog.get_logger(__name__)


RECONNECT_ATTEMPTS = 5
"""Attempts (with backoff, about 6 s in all) to reach a lost controller before giving up."""


@dataclass(frozen=True)
class Job:
    """One submitted command."""

    text: str
    correlation_id: str | None


class RobotPipeline:
    """Turns submitted commands into motion, one at a time."""

    def __init__(
        self,
        cell: Cell,
        scene: Scene,
        link: ControllerLink,
        events: EventLog,
        speak: Callable[[str], None],
        save_scene: Callable[[Scene], None],
        trace_dir: Path | None = None,
    ) -> None:
        self.cell = cell
        self.scene = scene
        self.link = link
        self.events = events
        self.speak = speak
        self.save_scene = save_scene
        self.trace_dir = trace_dir
        self.grammar = Grammar(cell)
        self._queue: asyncio.Queue[Job] = asyncio.Queue()
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.runs = 0

    def submit(self, text: str, correlation_id: str | None) -> None:
        self._idle.clear()
        self._queue.put_nowait(Job(text, correlation_id))

    async def wait_idle(self) -> None:
        await self._idle.wait()

    @property
    def busy(self) -> bool:
        return self._busy or not self._queue.empty()

    async def run(self) -> None:
        """The worker: forever take the next job and carry it out."""
        while True:
            job = await self._queue.get()
            self._busy = True
            try:
                with correlation(job.correlation_id):
                    await self._handle_safely(job)
            finally:
                self._busy = False
                if self._queue.empty():
                    self._idle.set()

    async def stop(self, reason: str) -> RunReport | None:
        """Stop the arm now and drop every queued command; nothing resumes by itself."""
        dropped = self._drain()
        report = await self.link.stop()
        log.warning("robot stopped", reason=reason, dropped_commands=dropped)
        self.events.emit("stopped", {"reason": reason, "dropped_commands": dropped})
        return report

    def _drain(self) -> int:
        count = 0
        while not self._queue.empty():
            self._queue.get_nowait()
            count += 1
        return count

    async def _handle_safely(self, job: Job) -> None:
        """One bad command must never take the daemon down: report it and carry on."""
        try:
            await self._handle(job)
        except VoicedError as exc:
            log.error("command failed", text=job.text, error=str(exc))
            self.events.emit("error", {"kind": type(exc).__name__, "error": str(exc)})
            self.speak(f"That failed: {exc}")
        except Exception as exc:
            log.exception("command crashed", text=job.text)
            self.events.emit("error", {"kind": "internal", "error": repr(exc)})
            self.speak("Something went wrong inside me; the command was not finished.")

    async def _handle(self, job: Job) -> None:
        checked = understand(self.grammar, self.scene, job.text, job.correlation_id)
        result = checked.interpretation
        self.events.emit("interpretation", result.to_dict())
        if result.user_feedback:
            self.speak(result.user_feedback)
        if not checked.runnable:
            if checked.compiled is not None:
                issues = [issue.message for issue in checked.compiled.errors]
                self.events.emit("error", {"kind": "validation", "issues": issues})
            return
        assert checked.compiled is not None and checked.compiled.program is not None
        await self._execute(checked.compiled.program)

    async def _ready_controller(self) -> None:
        """Before a new command: reconnect a lost link and clear a halt (STOP, heartbeat loss,
        disconnect). This is the operator's new command, not the old plan coming back: what was
        cut short stays cut short."""
        if not self.link.connected:
            self.speak("Reconnecting to the controller.")
            await self.link.reconnect(max_attempts=RECONNECT_ATTEMPTS)
        state = await self.link.state()
        if state.status == "halted":
            log.info("resuming the halted controller for a new command")
            await self.link.resume()

    async def _execute(self, program: Program) -> None:
        await self._ready_controller()
        self.runs += 1
        trace = self.trace_dir / f"tcp_commands-{self.runs:04d}.json" if self.trace_dir else None
        report = await self.link.run(program.primitives, trace_path=trace)
        self._track(program, report)
        if not report.complete:
            await self._refresh_pose()
        if report.error is not None:
            self.events.emit("error", {"kind": "controller", **report.to_dict()})
            self.speak(f"The controller refused: {report.error}")
        elif report.lost:
            self.speak("I lost the controller link. The rest of the command was not run.")

    def _track(self, program: Program, report: RunReport) -> None:
        if report.complete:
            self.scene = program.expected
        else:
            self.scene = scene_after_partial_run(self.cell, self.scene, program, report.completed)
        self.save_scene(self.scene)

    async def _refresh_pose(self) -> None:
        """After a cut-short run the arm stopped part-way: ask the controller where it is."""
        if not self.link.connected:
            return
        try:
            state = await self.link.state()
        except VoicedError as exc:
            log.warning("could not read the pose after a stop", error=str(exc))
            return
        if state.pose is not None:
            self.scene = self.scene.with_changes(pose=state.pose)
            self.save_scene(self.scene)


def scene_after_partial_run(
    cell: Cell, before: Scene, program: Program, completed: Sequence[int]
) -> Scene:
    """The scene after a stopped or failed run: the steps whose primitives all completed (logical
    ones like set_active_zone included), then the completed primitives of the step cut short."""
    done = set(completed)
    prefix = 0
    while prefix < len(program.steps) and all(
        i in done for i in range(program.steps[prefix].start, program.steps[prefix].end)
    ):
        prefix += 1
    calls = [{"instruction": s.instruction, "params": dict(s.params)} for s in program.steps]
    scene = before
    if prefix:
        compiled = compile_sequence(cell, before, calls[:prefix])
        if compiled.program is None:  # cannot happen: this prefix compiled a moment ago
            log.error("tracked scene diverged", issues=[e.message for e in compiled.errors])
            return before
        scene = compiled.program.expected
    if prefix < len(program.steps):
        cut = program.steps[prefix]
        for index in range(cut.start, cut.end):
            if index not in done:
                break
            scene = physics.apply(cell, scene, program.primitives[index])
    return scene
