"""The frame type and the services frames act through."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from voiced.rules import Rule

if TYPE_CHECKING:
    from voiced.frames.router import CommandRouter


class Services(Protocol):
    """What a frame's actions may do to the outside world."""

    def speak(self, text: str) -> None:
        """Say (or show) `text` to the operator."""

    def is_complete(self, text: str) -> bool:
        """Whether `text` already forms a whole command (so the query need not wait long)."""

    def continues(self, text: str) -> bool:
        """Whether `text` is a whole command that goes on from the one before rather than
        starting a new one: no verb of its own ("cheese and tomato" after "add bread")."""

    def voices(self) -> Sequence[str]:
        """The names of the voices the operator can pick."""

    def set_voice(self, name: str) -> None:
        """Switch the speaking voice."""

    async def submit(
        self, target: str, text: str, correlation_id: str | None, *, source: str = "voiced"
    ) -> None:
        """Hand accumulated text to a dispatch target ("robot", "note", ...); `source` names
        the frame it came from."""

    async def stop(self, reason: str, unsent: Sequence[str] = ()) -> None:
        """Stop the robot now: the global stop. `unsent` is what the frames held that a stop
        discards (a half-said query), so the operator hears that it was dropped too."""


class Frame:
    """A frame: an ordered rule list plus state that lives and dies with the frame.

    Subclasses build `self.rules` in `__init__`. A frame without `check_parent` in its rules is
    exclusive: what none of its rules handles is dropped (logged, never an error).
    """

    name: str = "frame"
    rules: Sequence[Rule] = ()
    dropped_by_stop: bool = False
    """True for frames whose half-said content "stop" discards (a query); False for frames whose
    content belongs to the operator (dictation keeps its note)."""

    def on_push(self, router: CommandRouter, now: float) -> None:
        """Called once the frame is on the stack."""

    def on_pop(self, router: CommandRouter, now: float) -> None:
        """Called once the frame has left the stack; its state goes with it."""

    def on_uncover(self, router: CommandRouter, now: float) -> None:
        """The frame above was popped: this one is on top again (timers restart here)."""

    async def on_tick(self, router: CommandRouter, now: float) -> None:
        """The input clock moved to `now` (seconds) while this frame is on top: timers listening
        to the operator fire here. Covered frames are not ticked: their timers wait."""

    def on_activity(self, now: float, voiced: bool) -> None:
        """Voice activity from the audio front end (a frame with a silence timer tracks it)."""

    def help(self) -> str:
        """What the operator can say in this frame (for "what can I say")."""
        return ""

    def unsent(self) -> str | None:
        """A command this frame holds that has not been submitted yet (None: nothing)."""
        return None

    @property
    def exclusive(self) -> bool:
        return not any(rule.name == "check_parent" for rule in self.rules)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
