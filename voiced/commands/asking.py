"""Questions about a command before it runs: the read-back ("... Proceed?", which the operator
may revise) and teaching a phrase ("Shall I remember ...?").

An answer counts only while no stop has come since the command was said: a stop takes the
question back and settles the command itself.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from voiced import eventtypes as ev
from voiced.commands.context import PipelineContext, PipelinePart
from voiced.commands.pending import Ticket, Withdraw
from voiced.commands.workload import Job, Phase
from voiced.config import ReviewConfig
from voiced.errors import VoicedError
from voiced.interpreter.check import Checked
from voiced.interpreter.learning import LearningRefused
from voiced.interpreter.result import Interpretation
from voiced.interpreter.tiers import Interpreter
from voiced.logs import correlation
from voiced.robot.sequence import steps_to_json
from voiced.rules import heard_in, words_around
from voiced.rules.negation import takes_back
from voiced.words.review import read_back, revise

log = structlog.get_logger(__name__)

NOT_SURE = "I am not sure I heard you right. Please say it again."
"""What a guess that is no plan (a resume, an undo, a replay) gets instead of being acted on."""

Ask = Callable[[str, Callable[[str], None], Callable[[str], None], float | None], Withdraw]
"""Read a plan back to the operator: the first callback gets "yes", "no" or "timeout", the
second the words of a revision ("skip position 2"); last, how loud the command was said
(`Ticket.level_db`: the answer must come in that voice). Returns how to take the question
back."""

Answer = Callable[[str], None]


QUOTED_WORDS = 12
"""Most words of what was heard around a command that its question quotes: the nearest ones
(while the daemon speaks, its stop spotter hears the room, and the operator waits)."""


def quoted(heard: str, where: str) -> str:
    """`heard` as a question about the command `where` it stands quotes it: the words nearest
    the command, "..." for the rest; all of them where the rest holds a take-back or a "no"
    (the words that made it a question are never the ones left out)."""
    said = heard.strip().split()
    if len(said) <= QUOTED_WORDS:
        return heard.strip()
    near, rest = (said[-QUOTED_WORDS:], said[:-QUOTED_WORDS]) if where == "before" else (
        said[:QUOTED_WORDS], said[QUOTED_WORDS:])  # fmt: skip
    if takes_back(" ".join(rest)):
        return heard.strip()
    return f"... {' '.join(near)}" if where == "before" else f"{' '.join(near)} ..."


class Asking(PipelinePart):
    def __init__(
        self,
        context: PipelineContext,
        ask: Ask,
        review: ReviewConfig,
        interpreter: Interpreter,
        check: Callable[[Interpretation], Checked],
        enqueue: Callable[[Job], None],
    ) -> None:
        super().__init__(context)
        self.ask = ask
        self.review = review
        self.interpreter = interpreter
        self.check = check
        """Plan an interpretation against the planned scene and check it (the compiler)."""
        self.enqueue = enqueue

    def needs_review(self, job: Job) -> bool:
        """A composite that asks for it (clear_assembly), a reviewed cell or source, or strict
        mode's low confidence (creative plans are exempt, as seed 000 says). A plan the model
        had a hand in ("llm+planner": its target, the planner's moves) counts as the model's."""
        result, review, cell = job.interpretation, self.review, self.belief.cell
        if any(
            (composite := cell.composite(step.instruction)) is not None and composite.confirm
            for step in job.program.steps
        ):
            return True
        low = review.strict and not result.is_creative
        return (
            cell.name in review.cells
            or any(part in review.sources for part in result.source.split("+"))
            or (low and result.confidence < review.strict_threshold)
        )

    def ask_first(self, job: Job, question: str | None = None, after_no: str | None = None) -> None:
        """Read the plan back (or ask `question`); it runs only on a yes, and a revision is
        read back again. `after_no` is said after a no or no answer (what still stands)."""

        def answered(answer: str) -> None:
            self.events.emit(ev.Confirmation(job.text, answer))
            if answer == "yes":
                self.enqueue(job)
            else:
                log.info("not confirmed", answer=answer, text=job.text)
                self.runlog.finish(job.ticket, "declined", f"Not confirmed ({answer}).")
                if after_no:
                    self.speak(after_no)

        def revised(feedback: str) -> None:
            self.ask_first(self._revised(job, feedback))

        goals = job.goals or job.interpretation.sequence
        question = question or f"{read_back(self.belief.cell, goals)} Proceed?"
        self._put(job.ticket, question, answered, revised)

    def check_hearing(self, job: Job) -> None:
        """A plan made of the recogniser's guess at what was said (`Ticket.doubt`: a sentence
        of the cell the audio supports, from words that began as none of them or named what
        the cell lacks), or of a command heard apart from words before or after it that may be
        the operator's about it (`rules.words_around`: quoted): the words are said back, and
        the plan runs only on a yes. The doubt is about the hearing, so the
        question is the words, not the plan (shorter, too: while the daemon speaks, its stop
        spotter acts on the room's noise)."""
        log.info("not sure of what was heard", doubt=job.ticket.doubt, text=job.ticket.text)
        said = job.ticket.text.strip().rstrip(".?!,;: ")
        around = zip(words_around(job.ticket.doubt), ("before", "after"), strict=True)
        quotes = [f'"{quoted(heard, where)}" {where}' for heard, where in around if heard]
        heard = heard_in(job.ticket.doubt)
        if heard is not None and takes_back(heard):
            # "I want a large latte. Oops, wrong one." held to the large latte: a truthful
            # yes to "Did you say ...?" would make what the "oops" took back.
            more = "".join(f" and {q} it" for q in quotes)
            self.ask_first(job, f'I heard "{quoted(heard, "after")}"{more}. Did you mean: {said}?')
            return
        if quotes:
            # Not "Did you say ...?": the operator did say it, and a truthful yes would make
            # what "let me think" after it, or "don't" before it, took back.
            around_it = "".join(f" and {q} it" for q in quotes[1:])
            self.ask_first(job, f'I heard {quotes[0]} "{said}"{around_it}. Shall I do it?')
            return
        self.ask_first(job, f"Did you say: {said}?")

    def confirm_learning(self, ticket: Ticket, meant: Interpretation) -> None:
        """Seed 000's secondary commands: spoken confirmation, then the memory writer; the
        sequence is learned, not run. A revision counts as a no."""
        phrase = (meant.composite_name or "").replace("_", " ")
        steps = meant.sequence
        if meant.is_creative or (self.belief.last_creative and steps == self.belief.last_goals):
            # Seed 000: creative results are never learned. Refused before asking: a yes
            # could only be turned down afterwards.
            why = creative_refusal(phrase)
            self.speak(why)
            self.runlog.settle(ticket, False, why)
            return

        def answered(answer: str) -> None:
            self.events.emit(ev.Confirmation(ticket.text, answer))
            self.runlog.settle(ticket, *self._learn(meant, phrase, answer))

        question = f'Shall I remember "{phrase}" as: {read_back(self.belief.cell, steps)[7:-1]}?'
        self._put(ticket, question, answered, lambda feedback: answered("no"))

    def _put(self, ticket: Ticket, question: str, answered: Answer, revised: Answer) -> None:
        """Ask the operator about `ticket`; the callbacks run only while it still counts."""

        def guarded(callback: Answer) -> Answer:
            def handle(words: str) -> None:
                ticket.withdraw = None
                if not self.pending.current(ticket):
                    return  # a stop took the question back and settled the command
                try:
                    with correlation(ticket.correlation_id):
                        callback(words)
                finally:
                    if self.workload.phase(ticket) is Phase.ASKING and ticket.withdraw is None:
                        self.workload.leave(ticket)  # settled, not queued nor asked again

            return handle

        self.workload.enter(ticket, Phase.ASKING)
        ticket.withdraw = self.ask(question, guarded(answered), guarded(revised), ticket.level_db)

    def _revised(self, job: Job, feedback: str) -> Job:
        """The job with its plan changed as the operator said, or unchanged (and told why)."""
        self.events.emit(ev.Revision(job.text, feedback))
        goals = revise(self.belief.cell, job.goals or job.interpretation.sequence, feedback)
        if goals is None:
            self.speak("I did not understand that change.")
            return job
        meant = job.interpretation.with_changes(
            sequence=tuple(goals),
            interpretation=f"{job.interpretation.interpretation} Revised: {feedback}",
        )
        checked = self.check(meant)
        if checked.compiled is None or checked.compiled.program is None:
            self.speak(f"I cannot change it that way: {checked.interpretation.user_feedback}")
            return job
        self.events.emit(ev.Interpreted(**checked.interpretation.to_dict()))
        self.runlog.replan(job.ticket, steps_to_json(goals))
        return Job(job.ticket, checked.interpretation, checked.compiled.program, meant.sequence,
                   job.understood)  # fmt: skip

    def _learn(self, meant: Interpretation, phrase: str, answer: str) -> tuple[bool, str]:
        if answer != "yes":
            self.speak("I will not remember it.")
            return False, f"Not learned ({answer})."
        try:
            self.interpreter.remember(meant)
        except (LearningRefused, VoicedError) as error:
            self.speak(f"I could not remember it: {error}")
            return False, str(error)
        self.belief.cell = self.interpreter.cell
        self.events.emit(ev.Learned(meant.composite_name, phrase, steps_to_json(meant.sequence)))
        self.speak(f'Saved. Say "{phrase}" to use it.')
        return True, "Learned."


def creative_refusal(phrase: str) -> str:
    """Why a surprise build is not given a name, as the operator hears it."""
    return (
        f'I will not remember that as "{phrase}": it was a surprise build, made up at random, '
        "and a name must do the same thing every time. To teach it, tell me the steps: "
        f'"when I say {phrase}," and then what to do.'
    )
