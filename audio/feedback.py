"""Spoken feedback that the daemon never hears itself say.

`say()` is synchronous (frames call `services.speak` from their rules): it takes a hold on the
listener at once, so no audio after this point is processed until the phrase's end is known,
then `run()` speaks the phrases in order and releases each hold with "mute until the end of the
phrase plus the tail". On a file this is exact on the audio clock; on the microphone the hold
starts at the newest captured sample and covers the phrase while it plays.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from audio.listener import MuteHold
from audio.tts import Speaker

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class _Phrase:
    text: str
    hold: MuteHold | None


class SpokenFeedback:
    """Queues phrases for one speaker and mutes the listener while they are spoken."""

    def __init__(
        self, speaker: Speaker, hold: Callable[[], MuteHold] | None, tail_s: float = 0.3
    ) -> None:
        self.speaker = speaker
        self._hold = hold
        self.tail_s = tail_s
        self._queue: asyncio.Queue[_Phrase] = asyncio.Queue()
        self._busy_until = 0.0
        self.spoken: list[tuple[str, float, float]] = []
        """(text, start, end) on the audio clock, for logs and tests."""

    def say(self, text: str) -> None:
        """Queue `text`; input is held from now until its end is known."""
        self._queue.put_nowait(_Phrase(text, self._hold() if self._hold else None))

    async def run(self) -> None:
        """Speak queued phrases until cancelled (the daemon owns this task)."""
        while True:
            phrase = await self._queue.get()
            try:
                await self._speak(phrase)
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        """Wait until everything queued has been spoken."""
        await self._queue.join()

    async def _speak(self, phrase: _Phrase) -> None:
        seconds = 0.0
        try:
            seconds = await self.speaker.speak(phrase.text)
        except Exception as exc:
            # A broken speaker must not leave the operator unheard.
            log.error("speech failed", text=phrase.text, error=str(exc))
        finally:
            if phrase.hold is not None:
                # Phrases queued together play back to back, not on top of each other.
                start = max(phrase.hold.t0, self._busy_until)
                self._busy_until = start + seconds
                self.spoken.append((phrase.text, start, self._busy_until))
                phrase.hold.release(self._busy_until + self.tail_s)
