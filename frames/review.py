"""The review frame: a confirm frame that also takes a change ("skip position 2")."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog
from voiced.frames.base import after_wake_word
from voiced.frames.confirm import Answer, ConfirmFrame
from voiced.frames.router import CommandRouter
from voiced.rules import NO_MATCH, Classifier, Handled, Match, Pattern, RuleResult, Utterance

log = structlog.get_logger(__name__)

REVISION = r"^(?:revise|skip|without|also|use|but|change|leave out|drop|plus|add)\b|\binstead of\b"


class ReviewFrame(ConfirmFrame):
    """Seed 001's human review: approve (yes), reject (no), or revise with words that change
    the plan; a revision hands the feedback back and the plan is read back again."""

    name = "review"

    def __init__(
        self,
        prompt: str,
        on_answer: Callable[[Answer], None],
        on_revise: Callable[[str], None],
        timeout: float,
        classifier: Classifier | None = None,
        wake_words: Sequence[str] = (),
        command_db: float | None = None,
    ) -> None:
        super().__init__(prompt, on_answer, timeout, classifier, command_db)
        self.on_revise = on_revise
        no, far, yes, llm = self.rules
        self.next_command = _NextCommand(self._give_way, tuple(wake_words))
        revise = Pattern("revise", REVISION, self._revise)
        apart = _HeardApart(self._give_way, self.next_command)
        # After the far-talk rule: another voice's command, even one heard unsure, neither
        # answers nor declines the operator's question.
        self.rules = (no, far, apart, yes, revise, self.next_command, llm)

    def on_push(self, router: CommandRouter, now: float) -> None:
        self.next_command.router = router
        super().on_push(router, now)

    def _give_way(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        """A whole command of its own, said instead of an answer: the operator moved on. The
        plan read back is not done (said so), and the command is heard as if nothing was asked
        (a customer at a barista cell orders the next drink rather than answer "Proceed?")."""
        log.info("question left for the next command", prompt=self.prompt, text=utterance.text)
        router.services.speak("Not confirmed; I did not do it.")
        self._answer("no")
        router.pop(self)
        router.hear_again(utterance)

    def _revise(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        self._answered = True  # the question is replaced by the revised plan's, not answered
        router.pop(self)
        self.on_revise(utterance.text)

    def help(self) -> str:
        return f'{self.prompt} Say "yes", "no", or a change such as "skip position 2".'


class _HeardApart:
    """A command heard unsure, or apart from words around it that may take it back
    (`Utterance.doubt`: "add bread" ... "Don't." ... "add cheese"), is one to ask about on its
    own: never an answer, nor a change to the plan asked about ("also add cheese")."""

    name = "heard_apart"

    def __init__(
        self, action: Callable[[CommandRouter, Utterance, Match], None], said: _NextCommand
    ) -> None:
        self.action = action
        self.said = said

    def match(self, utterance: Utterance) -> RuleResult:
        if utterance.doubt is None or self.said.command(utterance) is None:
            return NO_MATCH  # in wake mode, without the wake word it is not said to the cell
        return Handled(Match(self.name, utterance.text, "a command heard unsure"), self.action)


class _NextCommand:
    """Matches a whole command of its own: what the cell would act on with no question open,
    after the wake word where one is needed; not a question (talk nearby is full of them:
    "are you sure?", "is it raining?"). Unmatched words stay the review's to drop."""

    name = "next_command"

    def __init__(
        self, action: Callable[[CommandRouter, Utterance, Match], None], wake_words: tuple[str, ...]
    ) -> None:
        self.action = action
        self.wake_words = wake_words
        self.router: CommandRouter | None = None

    def command(self, utterance: Utterance) -> str | None:
        """The words said to the cell, after the wake word where one is needed; None when
        they were not said to it (no wake word in wake mode), or no question is open."""
        router, text = self.router, utterance.text
        if router is None:
            return None
        said = after_wake_word(text, self.wake_words) if self.wake_words else None
        if said is None and router.mode == "wake" and self.wake_words:
            return None  # without the wake word it is not said to the cell
        return said or text

    def match(self, utterance: Utterance) -> RuleResult:
        command = self.command(utterance)
        if command is None or self.router is None:
            return NO_MATCH
        services = self.router.services
        if services.asks(command) or not services.is_complete(command):
            return NO_MATCH
        match = Match(self.name, utterance.text, "a whole command of its own")
        return Handled(match, self.action)
