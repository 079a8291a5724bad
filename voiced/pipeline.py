"""The robot pipeline: submitted text -> interpretation -> compiled program -> controller.

Interpreting, validating and (where the cell asks for it) confirming happen at once, when a
command is submitted, against the *planned* scene: what the cell will look like once everything
already queued has run. Only execution is asynchronous: commands queue up and run one at a time,
so typed or spoken lines are never held up by the robot, and a question like "Clear the assembly.
Proceed?" is on the stack before the operator's next words arrive.

The pipeline keeps the tracked scene (what the cell looks like after every completed primitive)
and persists it after each run, so a restarted daemon knows the real state. A run that is cut
short (stop, error, lost link) drops everything queued behind it: those commands were planned on
a scene that no longer exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import structlog

from voiced.config import ReviewConfig
from voiced.errors import ControllerConnectionError, VoicedError
from voiced.events import EventLog
from voiced.history import History, Run
from voiced.intent import ReplayRequest, replay_request
from voiced.interpreter.check import Checked, validate
from voiced.interpreter.grammar import is_learning
from voiced.interpreter.learning import LearningRefused
from voiced.interpreter.result import Interpretation, SequenceStep, as_sequence, unknown
from voiced.interpreter.tiers import Interpreter, Understood
from voiced.linkkeeper import LinkKeeper
from voiced.logs import correlation
from voiced.pending import Outcome, PendingWork, Ticket, Withdraw, dropped_sentence
from voiced.questions import Questions, is_question
from voiced.reconcile import Interrupted, describe, reconcile, rest_of
from voiced.review import read_back, revise
from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.compiler import Program, compile_sequence
from voiced.robot.link import ControllerLink
from voiced.robot.runreport import RunReport
from voiced.robot.scene import Scene
from voiced.rules.normalize import normalize
from voiced.sequence_builder import build
from voiced.targets.base import TargetResult

log = structlog.get_logger(__name__)

RECONNECT_ATTEMPTS = 5
"""Attempts (with backoff, about 6 s in all) to reach a lost controller before giving up."""
LINK_WAIT_S = 8.0
"""How long a new command waits for the link keeper to bring a lost link back."""
CONTINUE = frozenset(("continue", "carry on", "go on", "keep going", "resume", "please continue",
                      "continue please", "finish it", "finish that", "finish the job"))  # fmt: skip
"""What the operator says to finish a command cut short (asked first, re-planned)."""

Ask = Callable[[str, Callable[[str], None], Callable[[str], None]], Withdraw]
"""Read a plan back to the operator: the first callback gets "yes", "no" or "timeout", the
second the words of a revision ("skip position 2"). Returns how to take the question back."""


@dataclass(frozen=True)
class Job:
    """One accepted command, waiting to run."""

    ticket: Ticket
    """What was said, its outcome, its history row and its stop epoch."""
    interpretation: Interpretation
    program: Program
    goals: tuple[SequenceStep, ...] = ()
    """What the operator asked for, before navigation and tool changes were added: what is
    read back, revised, recorded and replayed."""
    understood: Understood | None = None
    """How it was understood (a verb the LLM resolved is learned once the job has run)."""

    @property
    def text(self) -> str:
        return self.ticket.text

    @property
    def correlation_id(self) -> str | None:
        return self.ticket.correlation_id


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
        ask: Ask,
        *,
        interpreter: Interpreter,
        trace_dir: Path | None = None,
        history: History | None = None,
        review: ReviewConfig | None = None,
        status: Callable[[str | None], None] = lambda text: None,
    ) -> None:
        # The interpreter's cell carries the composites learned in earlier runs (tier 2).
        self.cell = interpreter.cell
        self.scene = scene
        self.planned = scene
        self.link = link
        self.events = events
        self.speak = speak
        self.save_scene = save_scene
        self.ask = ask
        self.trace_dir = trace_dir
        self.history = history
        self.review = review or ReviewConfig()
        self.questions = Questions(cell, history)
        self.interpreter = interpreter
        self.pending = PendingWork()
        self._last_goals: tuple[SequenceStep, ...] = ()
        self._queue: asyncio.Queue[Job] = asyncio.Queue()
        self._inbox: asyncio.Queue[Ticket] = asyncio.Queue()
        self._interpreting: asyncio.Task[None] | None = None
        self._accepted = asyncio.Event()
        self._accepted.set()
        self._running = False
        self._asking: set[Ticket] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self.runs = 0
        self.interrupted: Interrupted | None = None
        """The last command cut short, until the operator continues it or says something else."""
        self._reconciled = True
        """False from a lost link until the controller's report has corrected the scene."""
        self.keeper = LinkKeeper(link, events, self.reconcile, status)

    # -- accepting commands ----------------------------------------------------------------

    def submit(self, text: str, correlation_id: str | None) -> Outcome:
        """Hand a command over for interpretation (in order, by the acceptance worker). The
        returned future settles when the command has run, or was refused, declined, dropped or
        cut short."""
        outcome: Outcome = asyncio.get_running_loop().create_future()
        self._accepted.clear()
        self._idle.clear()
        self._inbox.put_nowait(self.pending.issue(text, correlation_id, outcome))
        return outcome

    async def accept(self) -> None:
        """The acceptance worker: interpret, validate, then queue or ask, one command at a
        time and in order. Interpretation may wait on a language model; motion never waits on
        it, and neither does the global stop, which cancels it."""
        while True:
            ticket = await self._inbox.get()
            if self.pending.current(ticket):
                task = asyncio.create_task(self._accept_one(ticket), name="interpretation")
                self._interpreting = task
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    task.cancel()
                    await asyncio.wait({task})
                    raise
                finally:
                    self._interpreting = None
            if self._inbox.empty():
                self._accepted.set()
            self._settle_idle()

    async def _accept_one(self, ticket: Ticket) -> None:
        with correlation(ticket.correlation_id):
            try:
                await self._accept(ticket)
            except Exception as exc:  # one bad command must never take the daemon down
                self.pending.release(ticket)
                _settle(ticket.outcome, False, self._report_failure(ticket.text, exc))

    def is_complete(self, text: str) -> bool:
        """Whether `text` is already a whole command the offline tiers understand, or a
        question (answered at once, even while the arm moves)."""
        return is_question(text) or self.interpreter.complete_offline(
            text, self.planned, self._last_goals
        )

    def continues(self, text: str) -> bool:
        """Whether `text` is a whole command without a verb of its own (a continuation)."""
        return self.interpreter.continues_offline(text, self.planned, self._last_goals)

    async def wait_accepted(self) -> None:
        """Until every submitted command has been interpreted (and queued, asked or refused)."""
        await self._accepted.wait()

    async def _accept(self, ticket: Ticket) -> None:
        text, correlation_id = ticket.text, ticket.correlation_id
        if is_question(text) and self._answer(ticket):
            return
        if normalize(text) in CONTINUE:
            self._continue(ticket)
            return
        understood = (
            Understood(replay)
            if (replay := self._replay_of(text, correlation_id))
            else (
                await self.interpreter.interpret(
                    text, self.planned, self._last_goals, correlation_id
                )
            )
        )
        if not self.pending.current(ticket):
            return  # a stop came while it was being interpreted; the stop settled it
        meant = understood.interpretation
        if is_learning(meant):
            self._confirm_learning(ticket, meant)
            return
        checked = self._plan(meant)
        result = checked.interpretation
        self.events.emit("interpretation", result.to_dict())
        if result.user_feedback:
            self.speak(result.user_feedback)
        if checked.compiled is None or checked.compiled.program is None:
            if checked.compiled is not None:
                issues = [issue.message for issue in checked.compiled.errors]
                self.events.emit("error", {"kind": "validation", "issues": issues})
            feedback = result.user_feedback or "I could not make sense of that."
            self._record(ticket, meant, "rejected", feedback)
            self.pending.release(ticket)
            _settle(ticket.outcome, False, feedback)
            return
        self._record(ticket, meant, "planned")
        job = Job(ticket, result, checked.compiled.program, meant.sequence, understood)
        if self._needs_review(job):
            self._ask_first(job)
        else:
            self._enqueue(job)

    def _plan(self, meant: Interpretation) -> Checked:
        return plan(self.cell, self.planned, meant)

    def _answer(self, ticket: Ticket) -> bool:
        """Seed 001's question branch: answered from the cell, scene and history; no motion."""
        text = ticket.text
        answer = self.questions.answer(text, self.planned)
        if answer is None:
            return False
        self.events.emit("answer", {"question": text, "brief": answer.brief, "full": answer.full,
                                    "topic": answer.topic})  # fmt: skip
        self.speak(answer.brief)
        self.pending.release(ticket)
        _settle(ticket.outcome, True, answer.brief)
        return True

    def _needs_review(self, job: Job) -> bool:
        """A composite that asks for it (clear_assembly), a reviewed cell or source, or strict
        mode's low confidence (creative plans are exempt, as seed 000 says)."""
        result, review = job.interpretation, self.review
        if any(
            (composite := self.cell.composite(step.instruction)) is not None and composite.confirm
            for step in job.program.steps
        ):
            return True
        low = review.strict and not result.is_creative
        return (
            self.cell.name in review.cells
            or result.source in review.sources
            or (low and result.confidence < review.strict_threshold)
        )

    def _put_question(
        self,
        ticket: Ticket,
        question: str,
        answered: Callable[[str], None],
        revised: Callable[[str], None],
    ) -> None:
        """Ask the operator about `ticket`. The callbacks run only while no stop has come since
        it was said: a stop takes the question back and settles the ticket itself."""

        def on_answer(answer: str) -> None:
            if self._closed(ticket):
                with correlation(ticket.correlation_id):
                    answered(answer)
                self._settle_idle()

        def on_revise(feedback: str) -> None:
            if self._closed(ticket):
                with correlation(ticket.correlation_id):
                    revised(feedback)
                self._settle_idle()

        self._asking.add(ticket)
        self._idle.clear()
        ticket.withdraw = self.ask(question, on_answer, on_revise)

    def _closed(self, ticket: Ticket) -> bool:
        """The question about `ticket` is answered: True if it still counts."""
        self._asking.discard(ticket)
        ticket.withdraw = None
        return self.pending.current(ticket)

    def _ask_first(self, job: Job) -> None:
        """Read the plan back; it runs only on a yes, and a revision is read back again."""

        def answered(answer: str) -> None:
            self.events.emit("confirmation", {"question": job.text, "answer": answer})
            if answer == "yes":
                self._enqueue(job)
            else:
                log.info("not confirmed", answer=answer, text=job.text)
                self._finish(job.ticket, "declined", f"Not confirmed ({answer}).")

        def revised(feedback: str) -> None:
            self._ask_first(self._revised(job, feedback))

        plan = [step.to_dict() for step in job.goals or job.interpretation.sequence]
        self._put_question(job.ticket, f"{read_back(self.cell, plan)} Proceed?", answered, revised)

    def _revised(self, job: Job, feedback: str) -> Job:
        """The job with its plan changed as the operator said, or unchanged (and told why)."""
        self.events.emit("revision", {"question": job.text, "feedback": feedback})
        goals = [s.to_dict() for s in job.goals or job.interpretation.sequence]
        plan = revise(self.cell, goals, feedback)
        if plan is None:
            self.speak("I did not understand that change.")
            return job
        meant = job.interpretation.with_changes(
            sequence=as_sequence(plan),
            interpretation=f"{job.interpretation.interpretation} Revised: {feedback}",
        )
        checked = self._plan(meant)
        if checked.compiled is None or checked.compiled.program is None:
            self.speak(f"I cannot change it that way: {checked.interpretation.user_feedback}")
            return job
        self.events.emit("interpretation", checked.interpretation.to_dict())
        if self.history is not None and job.ticket.run_id is not None:
            self.history.replan(job.ticket.run_id, plan)
        return Job(job.ticket, checked.interpretation, checked.compiled.program, meant.sequence,
                   job.understood)  # fmt: skip

    def _confirm_learning(self, ticket: Ticket, meant: Interpretation) -> None:
        """Seed 000's secondary commands: spoken confirmation, then the memory writer; the
        sequence is learned, not run."""
        phrase = (meant.composite_name or "").replace("_", " ")
        plan = [step.to_dict() for step in meant.sequence]

        def answered(answer: str) -> None:
            self.events.emit("confirmation", {"question": ticket.text, "answer": answer})
            self.pending.release(ticket)
            _settle(ticket.outcome, *self._learn(meant, phrase, answer))

        def revised(feedback: str) -> None:
            answered("no")

        question = f'Shall I remember "{phrase}" as: {read_back(self.cell, plan)[7:-1]}?'
        self._put_question(ticket, question, answered, revised)

    def _learn(self, meant: Interpretation, phrase: str, answer: str) -> tuple[bool, str]:
        if answer != "yes":
            self.speak("I will not remember it.")
            return False, f"Not learned ({answer})."
        try:
            self.interpreter.remember(meant)
        except (LearningRefused, VoicedError) as error:
            self.speak(f"I could not remember it: {error}")
            return False, str(error)
        self.cell = self.interpreter.cell
        sequence = [step.to_dict() for step in meant.sequence]
        self.events.emit("learned", {"name": meant.composite_name, "phrase": phrase,
                                     "sequence": sequence})  # fmt: skip
        self.speak(f'Saved. Say "{phrase}" to use it.')
        return True, "Learned."

    def _enqueue(self, job: Job) -> None:
        self.interrupted = None  # a new command starts fresh; "continue" planned its own
        self._last_goals = job.goals or self._last_goals
        self.planned = job.program.expected
        self._idle.clear()
        self._queue.put_nowait(job)

    # -- running them --------------------------------------------------------------------------

    async def run(self) -> None:
        """The worker: forever take the next accepted command and carry it out."""
        while True:
            job = await self._queue.get()
            if not self.pending.current(job.ticket):
                self._settle_idle()  # withdrawn by a stop while it waited; the stop settled it
                continue
            self._running = True
            try:
                with correlation(job.correlation_id):
                    await self._execute_safely(job)
            finally:
                self._running = False
                self._settle_idle()

    async def _execute_safely(self, job: Job) -> None:
        try:
            await self._execute(job)
        except Exception as exc:  # one bad command must never take the daemon down
            self._finish(job.ticket, "failed", self._report_failure(job.text, exc))
            self._after_fault(job, "a command failed")

    async def _execute(self, job: Job) -> None:
        if not await self._ready_controller(job.ticket):
            return  # a stop came while the link was being readied; the stop settled it
        # Re-checked against the real scene, once the controller's report has corrected it: it
        # differs from the planned one only if something went wrong in between, and then this
        # must not run blind.
        before = self.scene
        sequence = [s.to_dict() for s in job.interpretation.sequence]
        compiled = compile_sequence(self.cell, before, sequence)
        if compiled.program is None:
            issues = [issue.message for issue in compiled.errors]
            self.events.emit("error", {"kind": "validation", "issues": issues})
            self.speak(f"I can no longer do that: {issues[0]}")
            self._finish(job.ticket, "failed", f"I can no longer do that: {issues[0]}")
            self._after_fault(job, "the scene changed")
            return
        # No await between this check and the first line: a stop now interrupts the run.
        self.pending.release(job.ticket)
        self._update(job.ticket, "running")
        self.runs += 1
        trace = self.trace_dir / f"tcp_commands-{self.runs:04d}.json" if self.trace_dir else None
        report = await self.link.run(compiled.program.primitives, trace_path=trace)
        self._track(job.text, before, compiled.program, report)
        if report.complete:
            self._finish(job.ticket, "completed", "Done.", ok=True)
            if job.understood is not None:
                self.interpreter.used(job.understood)
        else:
            self._finish(job.ticket, "stopped" if report.stopped else "failed",
                         _why_cut_short(report))  # fmt: skip
            await self._after_cut_short(job, report)

    async def _ready_controller(self, ticket: Ticket) -> bool:
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
            self._reconciled = False
        if not self._reconciled:
            await self.reconcile("reconnected")
        state = await self.link.state()
        if not self.pending.current(ticket):
            return False
        if state.status == "halted":
            log.info("resuming the halted controller for a new command")
            await self.link.resume()
        return self.pending.current(ticket)

    def _track(self, text: str, before: Scene, program: Program, report: RunReport) -> None:
        """The scene after a run, from what the controller said completed. After a lost link
        some outcomes are unknown: nothing is saved until the reconnect has settled them and
        the controller's report has corrected the scene (`reconcile`)."""
        if report.complete:
            self.scene = program.expected
            self.interrupted = None
        else:
            self.scene = scene_after_partial_run(self.cell, before, program, report.completed)
            self.interrupted = Interrupted(text, program, before, frozenset(report.completed),
                                           report.run, settled=not report.unknown)  # fmt: skip
        if report.lost:
            self._reconciled = False
            return
        self.save_scene(self.scene)

    async def reconcile(self, why: str) -> None:
        """Make the scene agree with the controller: the outcomes the reconnect settled, then
        its report of pose, gripper and tool. Saves the scene and tells the operator what the
        arm holds, where it is and what was not done. `why`: connected, reconnected, cut_short."""
        cut = self.interrupted
        report = self.link.last_report
        if (
            cut is not None
            and not cut.settled
            and report is not None
            and report.run == cut.run
            and not report.unknown
        ):
            cut = replace(cut, completed=frozenset(report.completed), settled=True)
            self.interrupted = cut
            self.scene = scene_after_partial_run(self.cell, cut.before, cut.program,
                                                 sorted(cut.completed))  # fmt: skip
        replaced = self._another_controller()
        state = await self.link.state()
        fixed = reconcile(self.cell, self.scene, state)
        if replaced:
            fixed = replace(fixed, changes=(replaced, *fixed.changes))
        self.scene = self.planned = fixed.scene
        self._reconciled = True
        self.save_scene(self.scene)
        not_done = cut.not_done(self.cell) if cut is not None else []
        self.events.emit("reconciled", {
            "why": why, "changes": list(fixed.changes), "status": state.status,
            "halt_reason": state.halt_reason, "last_done": state.last_done,
            "holding": self.scene.holding, "tool": self.scene.tool,
            "not_done": not_done,
        })  # fmt: skip
        if fixed.changes:
            log.warning("the controller corrected the scene", changes=list(fixed.changes))
        # After a cut-short run the arm stopped part-way by design: only what it holds or
        # carries is news then.
        news = len(fixed.changes) > (1 if fixed.moved and why == "cut_short" else 0)
        if why == "reconnected" or news:
            lead = {"reconnected": "The controller is back.",
                    "connected": "The controller's report differs from what I saved."}.get(
                why, "The controller's report differs from what I expected.")  # fmt: skip
            said = [f"{lead} {describe(self.cell, self.scene)}"]
            if cut is not None and not_done:
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
        self.interrupted = None
        if greeting.kind == "sim":
            self.scene = self.cell.initial_scene
            return f"another controller answered ({greeting.controller}): a new simulated world"
        return (f"another controller answered ({greeting.controller}, was {was}): check what "
                "is on the cell")  # fmt: skip

    def _continue(self, ticket: Ticket) -> None:
        """ "continue": the rest of the command cut short, re-planned from the reconciled
        scene and read back first."""
        cut = self.interrupted
        if cut is None:
            self._refuse(ticket, "There is nothing to continue.")
            return
        if self._queue.qsize() or self._running:
            self._refuse(ticket, "The arm is still busy; say continue once it has stopped.")
            return
        rest = rest_of(self.cell, cut, self.planned)
        cannot = f"I cannot finish that from here. {describe(self.cell, self.planned)}"
        if rest is None:
            self._refuse(ticket, cannot)
            return
        if not rest:
            self._refuse(ticket, "That was already done.")
            return
        meant = Interpretation(
            f"Continue: {cut.text}", as_sequence(rest), composite_name=None, confidence=1.0,
            source="continue", correlation_id=ticket.correlation_id,
        )  # fmt: skip
        checked = self._plan(meant)
        if checked.compiled is None or checked.compiled.program is None:
            self._refuse(ticket, cannot)
            return
        self._record(ticket, meant, "planned")
        job = Job(ticket, checked.interpretation, checked.compiled.program, meant.sequence)
        self._ask_first(job)

    def _refuse(self, ticket: Ticket, feedback: str) -> None:
        self.speak(feedback)
        self.pending.release(ticket)
        _settle(ticket.outcome, False, feedback)

    async def _after_cut_short(self, job: Job, report: RunReport) -> None:
        dropped = self._after_fault(job, "the last command did not finish")
        if report.error is not None:
            self.events.emit("error", {"kind": "controller", **report.to_dict()})
            self.speak(dropped_sentence(dropped, f"The controller refused: {report.error.reason}."))
        elif report.lost:
            if not self.keeper.active:  # the keeper reports the loss itself
                self.events.emit("error", {"kind": "link", "reason": report.lost_reason})
            lead = "I lost the controller link. The rest of the command was not run."
            self.speak(dropped_sentence(dropped, lead))
        if self.link.connected:
            try:
                await self.reconcile("cut_short")
            except VoicedError as exc:
                self._reconciled = False
                log.warning("could not read the controller after a cut-short run", error=str(exc))

    def _after_fault(self, job: Job, reason: str) -> list[str]:
        """A run that failed or was cut short: what was said before it was planned on a scene
        that no longer exists. Unless a stop already withdrew it (then what is pending now was
        said after the stop and stands). Returns what was dropped."""
        if not self.pending.current(job.ticket):
            return []
        return self._drop(self._withdraw(), reason)

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
        dropped = self._drop(withdrawn, reason) + list(unsent)
        log.warning("robot stopped", reason=reason, dropped_commands=len(dropped))
        self.events.emit("stopped", {"reason": reason, "dropped_commands": len(dropped),
                                     "dropped": dropped, "silenced": list(silenced)})  # fmt: skip
        return dropped

    async def shutdown(self) -> list[str]:
        """For SIGTERM: withdraw everything not yet moving, and stop the arm if it moves."""
        if self.moving:
            return await self.stop("shutdown")
        dropped = self._drop(self._withdraw(), "shutdown")
        if dropped:
            self.events.emit("stopped", {"reason": "shutdown", "dropped_commands": len(dropped),
                                         "dropped": dropped})  # fmt: skip
        return dropped

    def _withdraw(self) -> list[Ticket]:
        """A new epoch, synchronously: the interpretation in progress is cancelled, questions
        are taken back, and no older ticket can start to move from here on (the workers skip
        what is left of them in the inbox and the queue)."""
        withdrawn = self.pending.withdraw_all()
        if self._interpreting is not None:
            self._interpreting.cancel()
        self._asking.clear()
        self.planned = self.scene
        return withdrawn

    def _drop(self, tickets: list[Ticket], reason: str) -> list[str]:
        """Settle withdrawn tickets as dropped; what was said, oldest first."""
        for ticket in tickets:
            self.events.emit("dropped", {"text": ticket.text, "reason": reason})
            self._finish(ticket, "dropped", f"Dropped: {reason}.")
        self._settle_idle()
        return [ticket.text for ticket in tickets]

    # -- state -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return (
            self._running
            or self._interpreting is not None
            or bool(self._asking)
            or not self._queue.empty()
            or not self._inbox.empty()
        )

    @property
    def moving(self) -> bool:
        return self._running

    def _settle_idle(self) -> None:
        if not self.busy:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Until nothing runs, nothing is queued and no question is open."""
        await self._idle.wait()

    # -- history -----------------------------------------------------------------------------

    def _replay_of(self, text: str, correlation_id: str | None) -> Interpretation | None:
        """Seed 001's special cases, checked before anything else: "run task <id>" and "do that
        again" load a plan from the history (the run keeps its new correlation id)."""
        request = replay_request(text)
        if request is None:
            return None
        found = self._find_replay(request)
        if isinstance(found, str):
            return unknown(text, found, source="replay").with_changes(correlation_id=correlation_id)
        plan = as_sequence(found.plan)
        return Interpretation(
            interpretation=f"Replay of {found.operator_input!r} ({found.run_id[:8]}).",
            sequence=plan, pass1_sequence=plan, confidence=0.95, validated=True,
            source="replay", correlation_id=correlation_id,
        )  # fmt: skip

    def _find_replay(self, request: ReplayRequest) -> Run | str:
        if self.history is None:
            return "I keep no history, so I cannot repeat anything."
        if request.run_id is None:
            run = self.history.last_completed(self.cell.name)
            return run or "There is nothing I have finished that I could do again."
        matches = self.history.find(request.run_id)
        if len(matches) != 1:
            return f"I found {len(matches) or 'no'} runs matching {request.run_id}."
        if matches[0].cell != self.cell.name:
            return f"Run {request.run_id} was for the {matches[0].cell} cell."
        return matches[0]

    def _record(
        self, ticket: Ticket, result: Interpretation, status: str, feedback: str | None = None
    ) -> None:
        if self.history is None:
            return
        plan = [step.to_dict() for step in result.sequence]
        ticket.run_id = self.history.record(
            ticket.text, plan, cell=self.cell.name, status=status, source=result.source,
            correlation_id=result.correlation_id, feedback=feedback,
        )  # fmt: skip

    def _update(self, ticket: Ticket, status: str, feedback: str | None = None) -> None:
        if self.history is not None and ticket.run_id is not None:
            self.history.update(ticket.run_id, status, feedback)

    def _finish(self, ticket: Ticket, status: str, message: str, ok: bool = False) -> None:
        """Record how a command ended and settle its outcome."""
        self.pending.release(ticket)
        self._update(ticket, status, message)
        _settle(ticket.outcome, ok, message)

    def _report_failure(self, text: str, exc: Exception) -> str:
        if isinstance(exc, VoicedError):
            log.error("command failed", text=text, error=str(exc))
            self.events.emit("error", {"kind": type(exc).__name__, "error": str(exc)})
            message = f"That failed: {exc}"
        else:
            log.exception("command crashed", text=text)
            self.events.emit("error", {"kind": "internal", "error": repr(exc)})
            message = "Something went wrong inside me; the command was not finished."
        self.speak(message)
        return message


def _settle(outcome: Outcome, ok: bool, message: str) -> None:
    if not outcome.done():
        outcome.set_result(TargetResult(ok, message))


def _why_cut_short(report: RunReport) -> str:
    if report.stopped:
        return "Stopped."
    if report.error is not None:
        return f"The controller refused: {report.error.reason}"
    return "The controller link was lost."


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


def plan(cell: Cell, scene: Scene, meant: Interpretation) -> Checked:
    """The goals as atomic steps (navigation, tool changes: see sequence_builder), checked
    against `scene` by the compiler."""
    goals = [step.to_dict() for step in meant.sequence]
    built = build(cell, scene, goals)
    if built.errors:
        failed = meant.with_changes(
            validated=False,
            validation_issues=meant.validation_issues + built.errors,
            user_feedback=meant.user_feedback or built.errors[0],
        )
        return Checked(failed, None)
    return validate(meant.with_changes(sequence=as_sequence(built.steps)), cell, scene)
