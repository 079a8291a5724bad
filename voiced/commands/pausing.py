"""Pause and continue: "hold on" halts the arm like a stop but keeps the plan; "continue" asks
first, then finishes it re-planned from the controller's report.

A pause takes the stop's fast path (a global rule of the frames; the stop spotter hears it)
and halts the arm at once. What was said before it is held, at whatever point it had reached:
the command running (the rest of it), the queue, a command still being understood or waiting
for a yes (it is held when it would have been queued; see `Execution.enqueue`). Nothing of it
moves unless the operator says "continue" and confirms the read-back ("Continue with add
cheese, then add tomato?"); the plan is then made again from the scene the controller reports,
not from what the daemon believed. "stop" after a pause drops the held work; a new command
does too (a speed change excepted: the rest then runs at the new speed). Questions are answered
as ever.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from voiced import eventtypes as ev
from voiced.commands.asking import Asking
from voiced.commands.context import PipelineContext, PipelinePart
from voiced.commands.execution import Execution
from voiced.commands.faults import Faults
from voiced.commands.pause_hold import Hold
from voiced.commands.pending import Ticket
from voiced.commands.reconcile import describe as where_the_arm_is
from voiced.commands.reconcile import rest_of
from voiced.commands.workload import Job
from voiced.errors import VoicedError
from voiced.interpreter.check import Checked
from voiced.interpreter.result import Interpretation
from voiced.robot.link import ControllerLink
from voiced.robot.sequence import SequenceStep
from voiced.words.behaviours import RESUME
from voiced.words.review import describe

PAUSED = "Paused. Say continue to go on, or stop to drop it."


class Pausing(PipelinePart):
    def __init__(
        self,
        context: PipelineContext,
        link: ControllerLink,
        execution: Execution,
        faults: Faults,
        asking: Asking,
        check: Callable[[Interpretation], Checked],
    ) -> None:
        super().__init__(context)
        self.link = link
        self.execution = execution
        self.faults = faults
        self.asking = asking
        self.check = check
        """Plan an interpretation against the planned scene and check it (the compiler)."""

    async def pause(self, reason: str, silenced: Sequence[str] = ()) -> str:
        """Halt the arm now and hold everything said before; returns what the operator hears."""
        if self.belief.hold is not None:
            # What was said since the first pause (still being interpreted, or queued) was
            # said before this one: it is held too, never run as the command that ends the
            # pause.
            self.belief.hold = replace(self.belief.hold, mark=self.pending.issued)
            for job in self.execution.take_queued():
                self.execution.hold(job)
            await self.link.stop()
            return f"Already paused. {PAUSED[8:]}"
        if not self.workload.busy:
            return "Nothing is moving."
        running = self.execution.current
        hold = Hold(self.pending.issued, running.text if running is not None else None)
        self.belief.hold = hold
        for job in self.execution.take_queued():
            self.execution.hold(job)
        # The arm: whatever the worker starts from here sees the hold and does not run.
        await self.link.stop()
        self.belief.planned = self.belief.scene
        held = self.belief.hold.texts if self.belief.hold else []
        self.events.emit(ev.Paused(reason, running is not None, held, list(silenced) or None))
        return PAUSED

    async def resume(self, ticket: Ticket) -> None:
        """ "continue" while paused: the rest, re-planned from the controller's report, read
        back as a question; it runs on a yes (`Execution.enqueue` then ends the pause)."""
        await self.workload.wait_still()  # the halted run has reported how far it got
        hold = self.belief.hold
        if hold is None or not self.pending.current(ticket):
            self.runlog.refuse(ticket, "There is nothing to continue.")
            return
        try:
            await self.faults.reconcile("paused")  # the controller's word, not the belief
        except VoicedError as error:
            self.runlog.refuse(ticket, f"I cannot read the controller: {error}")
            return
        goals = self._rest(hold)
        if goals is None:
            cell, scene = self.belief.cell, self.belief.scene
            cannot = f"I cannot finish {hold.cut} from here. {where_the_arm_is(cell, scene)}"
            self.runlog.refuse(ticket, cannot)
            return
        if not goals:
            self.faults.drop_hold("nothing was left to do", done=True)
            self.runlog.refuse(ticket, "Nothing was left to do; the pause is over.")
            return
        meant = Interpretation(
            f"Continue after the pause: {'; '.join(hold.texts)}", tuple(goals),
            pass1_sequence=tuple(goals), confidence=1.0, validated=True, source=RESUME,
            correlation_id=ticket.correlation_id,
        )  # fmt: skip
        checked = self.check(meant)
        program = checked.compiled.program if checked.compiled is not None else None
        if program is None:
            why = checked.interpretation.user_feedback or "the plan does not fit the cell now"
            self.runlog.refuse(ticket, f"I cannot continue from here: {why}")
            return
        self.runlog.record(ticket, meant, "planned")
        said = ", then ".join(describe(self.belief.cell, step) for step in goals)
        job = Job(ticket, checked.interpretation, program, meant.sequence,
                  said="; ".join(hold.texts))  # fmt: skip
        still = "Still paused: say continue when you are ready, or stop to drop the rest."
        self.asking.ask_first(job, question=f"Continue with {said}?", after_no=still)

    def _rest(self, hold: Hold) -> list[SequenceStep] | None:
        """What is left: the rest of the command halted part-way (from the reconciled scene),
        then the held commands' goals. None when the halted one cannot be finished from here."""
        rest: list[SequenceStep] = []
        cut = self.belief.interrupted
        if hold.cut is not None and cut is not None:
            finish = rest_of(self.belief.cell, cut, self.belief.scene)
            if finish is None:
                return None
            rest.extend(finish)
        for held in hold.held:
            rest.extend(held.goals)
        return rest
