"""The daemon's implementation of `frames.Services`: speech out, dispatch targets, stop."""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from voiced.events import EventLog
from voiced.pipeline import RobotPipeline

log = structlog.get_logger(__name__)


DEFAULT_VOICES = ("Alex", "Annie", "Michael", "Linda", "Andy")
"""espeak-ng voice variants with names an operator can say."""


class DaemonServices:
    """What frames reach: feedback to the operator, the submit targets and the global stop."""

    def __init__(
        self, events: EventLog, pipeline: RobotPipeline, voices: Sequence[str] = DEFAULT_VOICES
    ) -> None:
        self.events = events
        self.pipeline = pipeline
        self._voices = tuple(voices)
        self.voice = self._voices[0]

    def voices(self) -> tuple[str, ...]:
        return self._voices

    def set_voice(self, name: str) -> None:
        self.voice = name
        self.events.emit("voice", {"voice": name})

    def speak(self, text: str) -> None:
        log.info("feedback", text=text)
        self.events.emit("feedback", {"text": text})

    async def submit(self, target: str, text: str, correlation_id: str | None) -> None:
        self.events.emit("submit", {"target": target, "text": text})
        if target == "robot":
            self.pipeline.submit(text, correlation_id)
            return
        # Config validation only allows known targets; reaching here is a wiring bug.
        raise ValueError(f"unknown submit target {target!r}")

    async def stop(self, reason: str) -> None:
        self.speak("Stopping.")
        await self.pipeline.stop(reason)
