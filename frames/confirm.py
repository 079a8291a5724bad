"""The yes/no confirmation frame. Exclusive; a timeout discards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import structlog
from voiced.frames.pieces import FAR_TALK_DB
from voiced.frames.router import CommandRouter, Frame
from voiced.rules import (
    NO_MATCH,
    Classifier,
    ExactSet,
    Handled,
    LlmClassifier,
    Match,
    RuleResult,
    Utterance,
)

log = structlog.get_logger(__name__)

Answer = Literal["yes", "no", "timeout"]

YES = ["yes", "yeah", "yep", "confirm", "proceed", "go ahead", "do it", "yes please", "ok", "okay"]
NO = ["no", "nope", "cancel", "don't", "do not", "abort", "no thanks", "stop that"]


class ConfirmFrame(Frame):
    """Seed 002's confirm frame: it owns the pending action (`on_answer`); only yes / no are
    accepted. One-word answers are enough, and the timeout runs on the input clock."""

    name = "confirm"
    dropped_by_stop = True

    def __init__(
        self,
        prompt: str,
        on_answer: Callable[[Answer], None],
        timeout: float,
        classifier: Classifier | None = None,
        command_db: float | None = None,
    ) -> None:
        self.prompt = prompt
        self.on_answer = on_answer
        self.timeout = timeout
        self.asked_at = 0.0
        self._answered = False
        # The LLM classifier only sees what the word lists missed ("sure, why not"); offline
        # it never matches and such answers are dropped until a plain yes or no comes.
        context = f"The operator was asked: {prompt} Classify the reply as yes or no."
        self.far_talk = FarTalk(command_db)
        # A "no" is taken at any level: the operator may have turned away, and another
        # voice's "no" can only keep the arm still. What would act waits for the operator.
        self.rules = (
            ExactSet("no", NO, self._no),
            self.far_talk,
            ExactSet("yes", YES, self._yes),
            LlmClassifier("llm_yes_no", {"yes": self._yes, "no": self._no}, classifier, context),
        )

    def on_push(self, router: CommandRouter, now: float) -> None:
        self.asked_at = now
        router.services.speak(self.prompt)

    def on_uncover(self, router: CommandRouter, now: float) -> None:
        self.asked_at = now

    def on_pop(self, router: CommandRouter, now: float) -> None:
        # Popped by anything else (a stop): the pending action is discarded, never left hanging.
        self._answer("no")

    def _answer(self, answer: Answer) -> None:
        if not self._answered:
            self._answered = True
            self.on_answer(answer)

    def _yes(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        self._answer("yes")
        router.pop(self)

    def _no(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        # Said first: what the owner of the action says next (what still stands) follows it.
        router.services.speak("Cancelled.")
        self._answer("no")
        router.pop(self)

    async def on_tick(self, router: CommandRouter, now: float) -> None:
        if now - self.asked_at >= self.timeout and self in router.stack:
            self._answer("timeout")
            router.pop(self)
            router.services.speak("No answer; I did not do it.")

    def help(self) -> str:
        return f'{self.prompt} Say "yes" or "no".'


class FarTalk:
    """Takes (and drops) speech `FAR_TALK_DB` quieter than the command the question is about:
    another voice in the room ("yeah", "okay" at the next table) never says yes for the
    operator, nor changes or replaces the command. A "no" is heard before it, and a stop is a
    global rule, heard first."""

    name = "far_talk"

    def __init__(self, command_db: float | None) -> None:
        self.command_db = command_db
        """How loud the command the question is about was said (dBFS; None: typed or sent,
        and then no answer is too quiet)."""

    def match(self, utterance: Utterance) -> RuleResult:
        level, command = utterance.level_db, self.command_db
        if level is None or command is None or level - command > -FAR_TALK_DB:
            return NO_MATCH
        match = Match(self.name, utterance.text, f"{command - level:.0f} dB below the command")
        return Handled(match, _ignored)


def _ignored(router: CommandRouter, utterance: Utterance, match: Match) -> None:
    log.info("not the operator's answer", text=utterance.text, why=match.why)
