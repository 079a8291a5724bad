"""The `Services` frames act through: everything a frame does outside the frame stack."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class HeardWhole:
    """What the recogniser made of a stretch of audio heard again as one segment."""

    text: str
    """The transcript, as the recogniser chose (or held) it."""
    doubt: str | None = None
    """Why the recogniser is not sure of it (None: it may be acted on as heard)."""


class Services(Protocol):
    """What a frame's actions may do to the outside world."""

    def speak(self, text: str) -> None:
        """Say (or show) `text` to the operator."""

    def is_complete(self, text: str) -> bool:
        """Whether `text` already forms a whole command (so the query need not wait long)."""

    def may_go_on(self, text: str) -> bool:
        """Whether `text` is the start of a longer one of the cell's sentences (a whole command
        that may go on waits for the rest as a partial one does)."""

    def dropped(
        self, text: str, reason: str, correlation_id: str | None, *, lead: str = "Not understood."
    ) -> None:
        """`text` was said but will never be acted on, for `reason`: the operator hears `lead`
        and what was dropped."""

    def values_named(self, text: str) -> frozenset[tuple[str, ...]]:
        """The values of the cell's lists that `text` names ("large", "iced mocha", "a lot
        of"), each as its words, numbers as digits."""

    async def hear_whole(self, start: float, end: float) -> HeardWhole | None:
        """The audio from `start` to `end` on the input clock heard again as one segment (a
        command said in pieces); None where nothing can hear it again (typed input, a remote
        engine's failure, audio no longer held) or not now (the arm moves: a stop said
        meanwhile would wait for the decoding)."""

    def about_the_cell(self, text: str) -> bool:
        """Whether `text` names one of the things the cell's sentences are about ("sugar",
        "large", "mocha"): talk about them is about the order, however quietly said."""

    def asks(self, text: str) -> bool:
        """Whether `text` is a question and no command the cell takes ("do you have decaf?";
        "give me a small americano" is an order)."""

    def continues(self, text: str) -> bool:
        """Whether `text` is a whole command that goes on from the one before rather than
        starting a new one: no verb of its own ("cheese and tomato" after "add bread")."""

    def starts_with_verb(self, text: str) -> bool:
        """Whether `text` starts with a verb the cell knows: a command of its own ("go home"),
        not the rest of one ("position 2")."""

    def voices(self) -> Sequence[str]:
        """The names of the voices the operator can pick."""

    def set_voice(self, name: str) -> None:
        """Switch the speaking voice."""

    async def submit(
        self,
        target: str,
        text: str,
        correlation_id: str | None,
        *,
        source: str = "voiced",
        doubt: str | None = None,
        level_db: float | None = None,
    ) -> None:
        """Hand accumulated text to a dispatch target ("robot", "note", ...); `source` names
        the frame it came from; `doubt`, why the recogniser was not sure of it (a command is
        then read back before it runs); `level_db`, how loud it was said (a question about it
        is answered in that voice)."""

    async def stop(self, reason: str, unsent: Sequence[str] = ()) -> None:
        """Stop the robot now: the global stop. `unsent` is what the frames held that a stop
        discards (a half-said query), so the operator hears that it was dropped too."""

    async def pause(self, reason: str) -> None:
        """Halt the robot now but keep what it was doing and what is queued: "continue"
        (asked first) finishes it, "stop" drops it."""
