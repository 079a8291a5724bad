"""Hand-written fakes for the boundaries frames and rules talk to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from voiced.frames.router import StackChange
from voiced.frames.services import HeardWhole
from voiced.rules import normalize


@dataclass
class FakeServices:
    """Records what frames ask of the outside world."""

    spoken: list[str] = field(default_factory=list)
    submitted: list[tuple[str, str]] = field(default_factory=list)
    doubts: dict[str, str] = field(default_factory=dict)
    levels: dict[str, float | None] = field(default_factory=dict)
    """Why the recogniser was unsure of a submitted text (only texts submitted with one)."""
    stops: list[str] = field(default_factory=list)
    pauses: list[str] = field(default_factory=list)
    unsent: list[str] = field(default_factory=list)
    """What the frames said a stop discarded."""
    voice: str = "Alex"
    voice_names: tuple[str, ...] = ("Alex", "Annie", "Michael")

    def speak(self, text: str) -> None:
        self.spoken.append(text)

    complete_phrases: tuple[str, ...] = ()

    def is_complete(self, text: str) -> bool:
        return text in self.complete_phrases

    going_on: tuple[str, ...] = ()
    """Whole commands that may yet go on (`may_go_on`)."""

    def may_go_on(self, text: str) -> bool:
        return text in self.going_on

    dropped_said: list[tuple[str, str]] = field(default_factory=list)

    def dropped(
        self, text: str, reason: str, correlation_id: str | None = None, *, lead: str = ""
    ) -> None:
        self.dropped_said.append((text, reason))

    questions: tuple[str, ...] = ()
    things: tuple[str, ...] = ("sugar", "large", "mocha", "shot")
    """Words of what the cell's sentences are about (`about_the_cell`)."""

    def about_the_cell(self, text: str) -> bool:
        return any(word in self.things for word in normalize(text).split())

    def values_named(self, text: str) -> frozenset[tuple[str, ...]]:
        return frozenset((word,) for word in normalize(text).split() if word in self.things)

    whole: HeardWhole | None = None
    """What a stretch of audio heard again reads as (`hear_whole`); None: nothing."""
    reheard: list[tuple[float, float]] = field(default_factory=list)
    """The stretches heard again."""

    async def hear_whole(self, start: float, end: float) -> HeardWhole | None:
        self.reheard.append((start, end))
        return self.whole

    def asks(self, text: str) -> bool:
        return text in self.questions

    own_verbs: tuple[str, ...] = ("go", "add", "put", "can", "may", "give")
    """First words of whole commands that have a verb of their own ("can i have a latte")."""

    def continues(self, text: str) -> bool:
        return self.is_complete(text) and text.split()[0] not in self.own_verbs

    def starts_with_verb(self, text: str) -> bool:
        return bool(text.split()) and text.split()[0] in ("go", "add", "put", "pick")

    def voices(self) -> tuple[str, ...]:
        return self.voice_names

    def set_voice(self, name: str) -> None:
        self.voice = name

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
        self.submitted.append((target, text))
        self.levels[text] = level_db
        if doubt is not None:
            self.doubts[text] = doubt

    async def stop(self, reason: str, unsent: Sequence[str] = ()) -> None:
        self.stops.append(reason)
        self.unsent.extend(unsent)

    async def pause(self, reason: str) -> None:
        self.pauses.append(reason)


@dataclass
class EventRecorder:
    """Collects the stack changes `CommandRouter` reports."""

    events: list[StackChange] = field(default_factory=list)

    def __call__(self, change: StackChange) -> None:
        self.events.append(change)

    def frames(self) -> list[tuple[str, str]]:
        return [(change.action, change.mode or change.frame) for change in self.events]
