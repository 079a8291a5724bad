"""Stops and faults, in one place: the global stop, SIGTERM, a run cut short, a lost link, and
the controller's report that settles what the daemon believes afterwards.

Two rules hold everywhere here. Nothing said before a stop moves after it: a stop withdraws
every command not yet moving (`PendingWork` starts a new epoch) and halts the arm, and nothing
resumes by itself. After any fault the controller's report is the truth: the scene is corrected
from it (`voiced.commands.reconcile`) before anything else runs, and the operator hears what
differs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace

import structlog

from voiced import eventtypes as ev
from voiced.commands.belief import scene_after_partial_run
from voiced.commands.context import PipelineContext, PipelinePart
from voiced.commands.pending import Ticket, dropped_sentence
from voiced.commands.reconcile import describe, reconcile
from voiced.commands.workload import Job
from voiced.errors import ControllerConnectionError, VoicedError
from voiced.link.keeper import LinkKeeper
from voiced.robot.link import ControllerLink
from voiced.robot.runreport import RunReport
from voiced.robot.scene import Scene
from voiced.words.plain import controller_refusal

log = structlog.get_logger(__name__)

RECONNECT_ATTEMPTS = 5
"""Attempts (with backoff, about 6 s in all) to reach a lost controller before giving up."""
LINK_WAIT_S = 8.0
"""How long a new command waits for the link keeper to bring a lost link back."""


class Faults(PipelinePart):
    def __init__(
        self,
        context: PipelineContext,
        link: ControllerLink,
        save_scene: Callable[[Scene], None],
        status: Callable[[str | None], None],
    ) -> None:
        super().__init__(context)
        self.link = link
        self.save_scene = save_scene
        self.keeper = LinkKeeper(link, self.events, self.reconcile, status)

    # -- stopping ----------------------------------------------------------------------------

    async def stop(
        self, reason: str, unsent: Sequence[str] = (), *, silenced: Sequence[str] = ()
    ) -> list[str]:
        """Stop the arm now and withdraw everything said before: nothing of it moves, nothing
        resumes by itself. `unsent` is what the frames dropped before it reached here (a
        half-said query); `silenced` the speech the stop cut off. Returns what was dropped,
        oldest first."""
        withdrawn = self._withdraw()
        await self.link.stop()
        held = self.drop_hold(reason)
        dropped = held + self._drop(withdrawn, reason) + list(unsent)
        log.warning("robot stopped", reason=reason, dropped_commands=len(dropped))
        self.events.emit(ev.Stopped(reason, len(dropped), dropped, list(silenced)))
        return dropped

    def drop_hold(self, reason: str, *, done: bool = False) -> list[str]:
        """A pause's held work is gone (a stop after it, a new command): nothing of it runs,
        and "continue" has nothing to finish (`done`: because nothing of it was left to do).
        Returns what was held, oldest first."""
        hold, self.belief.hold = self.belief.hold, None
        if hold is None:
            return []
        self.belief.interrupted = None
        if done:
            self.runlog.hold_over(hold.runs, "completed", "Done: nothing was left after the pause.")
            return hold.texts
        for text in hold.texts:
            self.events.emit(ev.Dropped(text, reason))
        self.runlog.hold_over(hold.runs, "dropped", f"Dropped: {reason}.")
        return hold.texts

    async def shutdown(self) -> list[str]:
        """For SIGTERM: withdraw everything not yet moving, and stop the arm if it moves."""
        if self.workload.moving:
            return await self.stop("shutdown")
        dropped = self._drop(self._withdraw(), "shutdown")
        if dropped:
            self.events.emit(ev.Stopped("shutdown", len(dropped), dropped))
        return dropped

    def after_fault(self, job: Job, reason: str) -> list[str]:
        """A run that failed or was cut short: what was said before it was planned on a scene
        that no longer exists. Unless a stop already withdrew it (then what is pending now was
        said after the stop and stands). Returns what was dropped."""
        if not self.pending.current(job.ticket):
            return []
        return self._drop(self._withdraw(), reason)

    def _withdraw(self) -> list[Ticket]:
        """A new epoch, synchronously: the interpretation in progress is cancelled, questions
        are taken back, and no older ticket can start to move from here on (the workers skip
        what is left of them in the inbox and the queue)."""
        withdrawn = self.pending.withdraw_all()
        self.workload.withdraw()
        self.belief.planned = self.belief.scene
        return withdrawn

    def _drop(self, tickets: list[Ticket], reason: str) -> list[str]:
        """Settle withdrawn tickets as dropped; what was said, oldest first."""
        for ticket in tickets:
            self.events.emit(ev.Dropped(ticket.text, reason))
            self.runlog.finish(ticket, "dropped", f"Dropped: {reason}.")
        return [ticket.text for ticket in tickets]

    # -- a run cut short ---------------------------------------------------------------------

    async def after_cut_short(self, job: Job, report: RunReport) -> None:
        dropped = self.after_fault(job, "the last command did not finish")
        if report.error is not None:
            self.events.emit(ev.ControllerRefused(**report.to_dict()))
            self.speak(dropped_sentence(dropped, controller_refusal(report.error)))
        elif report.lost:
            if not self.keeper.active:  # the keeper reports the loss itself
                self.events.emit(ev.LinkLost(report.lost_reason))
            lead = "I lost the controller link. The rest of the command was not run."
            self.speak(dropped_sentence(dropped, lead))
        if self.link.connected:
            try:
                await self.reconcile("cut_short")
            except VoicedError as exc:
                self.belief.reconciled = False
                log.warning("could not read the controller after a cut-short run", error=str(exc))

    async def after_pause(self) -> None:
        """A run halted by a pause: the scene from the controller's report (the rest is kept)."""
        if not self.link.connected:
            return  # the link keeper reconciles when it is back
        try:
            await self.reconcile("paused")
        except VoicedError as exc:
            self.belief.reconciled = False
            log.warning("could not read the controller after a pause", error=str(exc))

    # -- the controller's report -------------------------------------------------------------

    async def ready_controller(self, ticket: Ticket) -> bool:
        """Before a new command: reconnect a lost link, correct the scene with the controller's
        report, and clear a halt (STOP, heartbeat loss, disconnect). This is the operator's new
        command, not the old plan coming back: what was cut short stays cut short. False if a
        stop came meanwhile (then the halt stays)."""
        if self.keeper.active:
            if not (self.keeper.up.is_set() and self.link.connected):
                self.speak("Waiting for the controller link.")
                await asyncio.sleep(0)  # let the keeper see the loss first
                if not await self.keeper.wait_up(LINK_WAIT_S) or not self.link.connected:
                    raise ControllerConnectionError("the controller link is down; reconnecting")
        elif not self.link.connected:
            self.speak("Reconnecting to the controller.")
            await self.link.reconnect(max_attempts=RECONNECT_ATTEMPTS)
            self.belief.reconciled = False
        if not self.belief.reconciled:
            await self.reconcile("reconnected")
        state = await self.link.state()
        if not self.pending.current(ticket):
            return False
        if state.status == "halted":
            log.info("resuming the halted controller for a new command")
            await self.link.resume()
        return self.pending.current(ticket)

    async def reconcile(self, why: str) -> None:
        """Make the scene agree with the controller: the outcomes the reconnect settled, then
        its report of pose, gripper and tool. Saves the scene and tells the operator what the
        arm holds, where it is and what was not done. `why`: connected, reconnected, cut_short,
        paused."""
        belief, cell = self.belief, self.belief.cell
        cut = belief.interrupted
        report = self.link.last_report
        if (
            cut is not None
            and not cut.settled
            and report is not None
            and report.run == cut.run
            and not report.unknown
        ):
            cut = replace(cut, completed=frozenset(report.completed), settled=True)
            belief.interrupted = cut
            belief.scene = scene_after_partial_run(cell, cut.before, cut.program,
                                                   sorted(cut.completed))  # fmt: skip
        replaced = self._another_controller()
        state = await self.link.state()
        fixed = reconcile(cell, belief.scene, state)
        if replaced:
            fixed = replace(fixed, changes=(replaced, *fixed.changes))
        belief.scene = belief.planned = fixed.scene
        belief.reconciled = True
        self.save_scene(belief.scene)
        not_done = cut.not_done(cell) if cut is not None else []
        self.events.emit(ev.Reconciled(
            why, list(fixed.changes), state.status, state.halt_reason, state.last_done,
            belief.scene.holding, belief.scene.tool, not_done,
        ))  # fmt: skip
        if fixed.changes:
            log.warning("the controller corrected the scene", changes=list(fixed.changes))
        # After a cut-short run the arm stopped part-way by design: only what it holds or
        # carries is news then.
        halted = why in ("cut_short", "paused")
        news = len(fixed.changes) > (1 if fixed.moved and halted else 0)
        if why == "reconnected" or news:
            lead = {"reconnected": "The controller is back.",
                    "connected": "The controller's report differs from what I saved."}.get(
                why, "The controller's report differs from what I expected.")  # fmt: skip
            said = [f"{lead} {describe(cell, belief.scene)}"]
            if cut is not None and not_done and why != "paused":
                said.append(f"Not done: {', '.join(not_done)}. Say continue to finish it.")
            self.speak(" ".join(said))

    def _another_controller(self) -> str | None:
        """After a reconnect that found another controller (a restarted simulator, a swapped
        robot): what the old one was doing is not this one's. A simulator starts from the
        cell's initial world, so that is the scene; a robot's parts stay where they are, so
        the scene stays, and the operator is told to check it."""
        was, greeting = self.link.replaced, self.link.greeting
        if was is None or greeting is None:
            return None
        self.link.replaced = None
        self.belief.interrupted = None
        if greeting.kind == "sim":
            self.belief.scene = self.belief.cell.initial_scene
            return f"another controller answered ({greeting.controller}): a new simulated world"
        return (f"another controller answered ({greeting.controller}, was {was}): check what "
                "is on the cell")  # fmt: skip
