"""The review frame: a confirm frame that also takes a change ("skip position 2")."""

from __future__ import annotations

from collections.abc import Callable

from voiced.frames.confirm import Answer, ConfirmFrame
from voiced.frames.router import CommandRouter
from voiced.rules import Classifier, Match, Pattern, Utterance

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
    ) -> None:
        super().__init__(prompt, on_answer, timeout, classifier)
        self.on_revise = on_revise
        yes, no, llm = self.rules
        self.rules = (yes, no, Pattern("revise", REVISION, self._revise), llm)

    def _revise(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        self._answered = True  # the question is replaced by the revised plan's, not answered
        router.pop(self)
        self.on_revise(utterance.text)

    def help(self) -> str:
        return f'{self.prompt} Say "yes", "no", or a change such as "skip position 2".'
