"""Accepting commands: what was said -> an interpretation -> a checked plan -> the queue (or a
question first, or an answer, or a refusal).

Interpreting, validating and (where the cell asks for it) confirming happen at once, when a
command is submitted, against the *planned* scene: what the cell will look like once everything
already queued has run. Commands are taken one at a time and in order, so a question like "Clear
the assembly. Proceed?" is on the stack before the operator's next words arrive. Interpretation
may wait on a language model; motion never waits on it, and neither does the global stop, which
cancels it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence

from voiced import eventtypes as ev
from voiced.commands.asking import NOT_SURE, Asking
from voiced.commands.context import PipelineContext, PipelinePart
from voiced.commands.early import worked_out_first
from voiced.commands.pending import Outcome, Ticket
from voiced.commands.reconcile import describe, rest_of
from voiced.commands.sequence_builder import build
from voiced.commands.workload import Job, Phase
from voiced.history import History
from voiced.interpreter.check import Checked, validate
from voiced.interpreter.grammar import is_learning
from voiced.interpreter.result import Interpretation
from voiced.interpreter.templategraph import may_go_on, names_a_thing, values_named
from voiced.interpreter.tiers import Interpreter, Understood
from voiced.logs import correlation
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.normalize import normalize
from voiced.rules.question import is_question
from voiced.words.behaviours import SPEED, is_behaviour
from voiced.words.questions import Answer, Questions

NOTHING_TO_CONTINUE = "There is nothing to continue."

_ASKING_FOR_MORE = re.compile(r"^[A-Z][a-z]*(?: [a-z]+)? (?:what|where)\?")
"""A refusal that asks for what the command left out ("Put what? — available ingredients
are: ..."): the operator's answer finishes the command (`BaseFrame.expect_more`)."""


def asks_for_more(feedback: str) -> bool:
    return _ASKING_FOR_MORE.match(feedback) is not None


class Acceptance(PipelinePart):
    def __init__(
        self,
        context: PipelineContext,
        interpreter: Interpreter,
        asking: Asking,
        enqueue: Callable[[Job], None],
        questions: Questions,
        history: History | None,
        resume: Callable[[Ticket], Awaitable[None]],
    ) -> None:
        super().__init__(context)
        self.resume = resume
        """ "continue" after a pause (voiced/commands/pausing.py)."""
        self.interpreter = interpreter
        self.asking = asking
        self.enqueue = enqueue
        self.history = history
        self.questions = questions
        self._inbox: asyncio.Queue[Ticket] = asyncio.Queue()

    def submit(
        self,
        text: str,
        correlation_id: str | None,
        *,
        doubt: str | None = None,
        level_db: float | None = None,
    ) -> Outcome:
        """Hand a command over for interpretation (in order, by the acceptance worker). The
        returned future settles when the command has run, or was refused, declined, dropped or
        cut short. A command with a `doubt` (the recogniser's guess) is read back first; a
        question about it is answered at about its `level_db`."""
        outcome: Outcome = asyncio.get_running_loop().create_future()
        ticket = self.pending.issue(text, correlation_id, outcome, doubt, level_db)
        self.workload.enter(ticket, Phase.SUBMITTED)
        self._inbox.put_nowait(ticket)
        return outcome

    async def accept(self) -> None:
        """The acceptance worker: interpret, validate, then queue or ask, one command at a
        time and in order."""
        while True:
            ticket = await self._inbox.get()
            if not self.pending.current(ticket):
                continue  # withdrawn by a stop while it waited; the stop settled it
            self.workload.enter(ticket, Phase.INTERPRETING)
            task = asyncio.create_task(self._accept_one(ticket), name="interpretation")
            self.workload.set_interpretation(task)
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                task.cancel()
                await asyncio.wait({task})
                raise
            finally:
                self.workload.set_interpretation(None)
                if self.workload.phase(ticket) is Phase.INTERPRETING:
                    self.workload.leave(ticket)  # settled: not queued, not asked about

    async def _accept_one(self, ticket: Ticket) -> None:
        with correlation(ticket.correlation_id):
            try:
                await self._accept(ticket)
            except Exception as exc:  # one bad command must never take the daemon down
                self.runlog.settle(ticket, False, self.runlog.failed(ticket.text, exc))

    def is_complete(self, text: str) -> bool:
        """Whether `text` is already a whole command the offline tiers understand, or a
        question (answered at once, even while the arm moves)."""
        belief = self.belief
        return (
            is_question(text)
            or is_behaviour(text)
            or self.interpreter.complete_offline(text, belief.planned, belief.last_goals)
        )

    def starts_with_verb(self, text: str) -> bool:
        return self.interpreter.starts_with_verb(text)

    def values_named(self, text: str) -> frozenset[tuple[str, ...]]:
        return values_named(self.interpreter.templates, text)

    def about_the_cell(self, text: str) -> bool:
        return names_a_thing(self.interpreter.templates, text)

    def asks(self, text: str) -> bool:
        """Whether `text` is a question and no command the offline tiers understand ("give
        me a small americano" is both a question's opening and an order)."""
        belief = self.belief
        return is_question(text) and not self.interpreter.complete_offline(
            normalize(text), belief.planned, belief.last_goals
        )

    def may_go_on(self, text: str) -> bool:
        return may_go_on(self.interpreter.templates, text)

    def continues(self, text: str) -> bool:
        """Whether `text` is a whole command without a verb of its own (a continuation)."""
        belief = self.belief
        return self.interpreter.continues_offline(text, belief.planned, belief.last_goals)

    async def _accept(self, ticket: Ticket) -> None:
        belief = self.belief
        early = worked_out_first(
            ticket.text, belief.cell, belief.planned, belief.placed, self.questions, self.history,
            ticket.correlation_id, belief.scene,
        )  # fmt: skip
        if early is not None and early.answer is not None:
            self._tell(ticket, early.answer)
            return
        if early is not None and ticket.doubt is not None:
            # A guess at what was said never resumes, undoes or replays: only a plan can be
            # read back and confirmed.
            self.runlog.refuse(ticket, NOT_SURE)
            return
        if early is not None and early.resume:
            if belief.hold is not None:
                await self.resume(ticket)
            else:
                self._continue(ticket)
            return
        understood = await self._understand(ticket, early.meant if early is not None else None)
        if not self.pending.current(ticket):
            return  # a stop came while it was being interpreted; the stop settled it
        if understood.intent == "question":
            if not self._answer(ticket):
                self._unanswerable(ticket)
            return
        meant = understood.interpretation
        if is_learning(meant):
            self.asking.confirm_learning(ticket, meant)
            return
        settled = not self.workload.any_in(Phase.QUEUED, Phase.RUNNING)
        checked = checked_plan(self.belief.cell, self.belief.planned, meant, settled)
        result = checked.interpretation
        self.events.emit(ev.Interpreted(**result.to_dict()))
        if result.user_feedback:
            self.speak(result.user_feedback)
        if checked.compiled is None or checked.compiled.program is None:
            if checked.compiled is not None:
                issues = [issue.message for issue in checked.compiled.errors]
                self.events.emit(ev.ValidationFailed(issues))
            feedback = result.user_feedback or "I could not make sense of that."
            self.runlog.record(ticket, meant, "rejected", feedback, intent=understood.intent)
            self.runlog.settle(ticket, False, feedback, asks_for_more=asks_for_more(feedback))
            return
        self.runlog.record(ticket, meant, "planned")
        job = Job(ticket, result, checked.compiled.program, meant.sequence, understood)
        if ticket.doubt is not None:
            self.asking.check_hearing(job)
        elif self.asking.needs_review(job):
            self.asking.ask_first(job)
        else:
            self.enqueue(job)

    async def _understand(self, ticket: Ticket, early: Interpretation | None) -> Understood:
        """What the daemon worked out itself (`worked_out_first`: a speed change, an undo, a
        replay), else the interpreter's tiers."""
        if early is not None:
            if early.source == SPEED and early.sequence:
                early = self._speed_when_busy(early)
            return Understood(early)
        belief = self.belief
        return await self.interpreter.interpret(
            ticket.text, belief.planned, belief.last_goals, ticket.correlation_id
        )

    def _speed_when_busy(self, meant: Interpretation) -> Interpretation:
        """A new speed is taken between commands: while the arm works, the operator hears that
        what is moving or queued keeps its speed (and how to change that: pause first)."""
        if not self.workload.any_in(Phase.QUEUED, Phase.RUNNING) or self.belief.hold is not None:
            return meant
        later = (f"{meant.user_feedback} From the next command on; what is already under way "
                 "keeps its speed. Say hold on first to change the rest too.")  # fmt: skip
        return meant.with_changes(user_feedback=later)

    def _answer(self, ticket: Ticket) -> bool:
        """Seed 001's question branch: answered from the cell, scene and history; no motion."""
        answer = self.questions.answer(ticket.text, self.belief.planned, self.belief.scene)
        if answer is None:
            return False
        self._tell(ticket, answer)
        return True

    def _tell(self, ticket: Ticket, answer: Answer) -> None:
        self.events.emit(ev.Answered(ticket.text, answer.brief, answer.full, answer.topic))
        self.speak(answer.brief)
        self.runlog.question(ticket, answer.brief, answer.full)
        self.runlog.settle(ticket, True, answer.brief)

    def _unanswerable(self, ticket: Ticket) -> None:
        """The model took it for a question the cell, scene and history cannot answer."""
        said = ("I cannot answer that. Ask me about the positions, tools, routines or items, "
                "what is where, or what I did last.")  # fmt: skip
        self.runlog.question(ticket, said, None)
        self.runlog.refuse(ticket, said)

    def _continue(self, ticket: Ticket) -> None:
        """ "continue": the rest of the command cut short, re-planned from the reconciled
        scene and read back first."""
        cell, cut = self.belief.cell, self.belief.interrupted
        if cut is None:
            self.runlog.refuse(ticket, NOTHING_TO_CONTINUE)
            return
        if self.workload.any_in(Phase.QUEUED, Phase.RUNNING):
            self.runlog.refuse(ticket, "The arm is still busy; say continue once it has stopped.")
            return
        rest = rest_of(cell, cut, self.belief.planned)
        cannot = f"I cannot finish that from here. {describe(cell, self.belief.planned)}"
        if rest is None:
            self.runlog.refuse(ticket, cannot)
            return
        if not rest:
            self.runlog.refuse(ticket, "That was already done.")
            return
        meant = Interpretation(
            f"Continue: {cut.text}", tuple(rest), composite_name=None, confidence=1.0,
            source="continue", correlation_id=ticket.correlation_id,
        )  # fmt: skip
        checked = checked_plan(self.belief.cell, self.belief.planned, meant)
        if checked.compiled is None or checked.compiled.program is None:
            self.runlog.refuse(ticket, cannot)
            return
        self.runlog.record(ticket, meant, "planned")
        job = Job(ticket, checked.interpretation, checked.compiled.program, meant.sequence)
        self.asking.ask_first(job)


def checked_plan(cell: Cell, scene: Scene, meant: Interpretation, settled: bool = True) -> Checked:
    """The goals as atomic steps (navigation, tool changes: see sequence_builder), checked
    against `scene` by the compiler (`settled`: nothing runs or waits before them)."""
    built = build(cell, scene, meant.sequence)
    if built.errors:
        failed = meant.with_changes(
            validated=False,
            validation_issues=meant.validation_issues + built.errors,
            user_feedback=meant.user_feedback or built.errors[0],
        )
        return Checked(failed, None)
    if meant.sequence and not built.steps and not meant.user_feedback:
        meant = meant.with_changes(user_feedback=already_done(meant.sequence, settled))
    return validate(meant.with_changes(sequence=built.steps), cell, scene)


def already_done(goals: Sequence[SequenceStep], settled: bool = True) -> str:
    """What the operator hears when every goal already holds ("go to the welder" twice): the
    arm does nothing, and says why rather than staying silent. While earlier work is still to
    run (`settled` False) it is said as what will hold by then, not as what holds now."""
    goal = goals[-1]
    said = str(goal.params.get("tool") or goal.params.get("position") or "").replace("_", " ")
    if goal.instruction == "attach_tool" and said:
        text = f"I already hold the {said}" if settled else f"I will already hold the {said}"
    elif goal.instruction == "move_to_position" and said:
        text = f"I am already at {said}" if settled else f"I will already be at {said}"
    elif goal.instruction == "go_home":
        text = "I am already home" if settled else "I will already be home"
    elif goal.instruction in ("release_tool", "release_tool_and_home"):
        text = "I hold no tool" if settled else "I will hold no tool"
        return f"{text}{'' if settled else ' by then'}; nothing to put back."
    else:
        return "That is done already." if settled else "That will be done already by then."
    return f"{text}." if settled else f"{text} by then."
