"""Spoken feedback on the playback timeline, and cutting it off.

`say()` is synchronous (frames call `services.speak` from their rules): it takes a hold on the
listener at once, so the phrase starts at the audio-clock position where it was decided. `run()`
synthesises the phrases in order, puts each on the playback timeline (`voiced.audio.playback`) and
releases its hold. The loudspeaker plays the timeline; the listener keeps listening and knows
what it is hearing of itself (`voiced.audio.duplex`).

`interrupt()` is the barge-in and the stop: what is being said ends at the given position and
nothing queued is said.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from voiced.audio.listener import SpeechHold
from voiced.audio.playback import Playback
from voiced.audio.settings import SAMPLE_RATE
from voiced.audio.tts import Speaker

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class _Queued:
    text: str
    hold: SpeechHold | None


class SpokenFeedback:
    """Queues phrases for one speaker and places them on the playback timeline."""

    def __init__(
        self,
        speaker: Speaker,
        playback: Playback,
        hold: Callable[[], SpeechHold] | None,
        position: Callable[[], int] = lambda: 0,
        lead_s: float = 0.0,
    ) -> None:
        self.speaker = speaker
        self.playback = playback
        self.lead = round(lead_s * SAMPLE_RATE)
        """Samples between deciding a phrase and playing it."""
        self._hold = hold
        self._position = position
        """Where the input is now (used when there is no listener to hold)."""
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._generation = 0
        self.spoken: list[tuple[str, float, float]] = []
        """(text, start, end) on the audio clock of every phrase placed, for logs and tests."""

    def say(self, text: str) -> None:
        """Queue `text`; the listener is held from now until the phrase is placed."""
        self._queue.put_nowait(_Queued(text, self._hold() if self._hold else None))

    async def run(self) -> None:
        """Speak queued phrases until cancelled (the daemon owns this task)."""
        while True:
            queued = await self._queue.get()
            try:
                await self._place(queued)
            finally:
                if queued.hold is not None:
                    queued.hold.release()
                self._queue.task_done()

    async def drain(self) -> None:
        """Wait until everything queued has been placed on the timeline."""
        await self._queue.join()

    def interrupt(self, position: int, why: str) -> list[str]:
        """Stop talking at input position `position`: the phrase playing there ends there, and
        nothing queued or placed later is said. Returns the texts cut short or never said."""
        self._generation += 1
        unsaid: list[str] = []
        while not self._queue.empty():
            queued = self._queue.get_nowait()
            if queued.hold is not None:
                queued.hold.release()
            unsaid.append(queued.text)
            self._queue.task_done()
        cut = [phrase.text for phrase in self.playback.cut(position)]
        if cut or unsaid:
            log.info("speech interrupted", why=why, cut=cut, unsaid=unsaid,
                     t=round(position / SAMPLE_RATE, 3))  # fmt: skip
        return cut + unsaid

    async def _place(self, queued: _Queued) -> None:
        generation = self._generation
        try:
            pcm = await asyncio.to_thread(self.speaker.synthesize, queued.text)
        except Exception as exc:
            # A broken speaker must not leave the operator unheard.
            log.error("speech failed", text=queued.text, error=str(exc))
            return
        if generation != self._generation or len(pcm) == 0:
            return  # interrupted while it was synthesised, or nothing to play
        at = queued.hold.position if queued.hold is not None else self._position()
        phrase = self.playback.schedule(queued.text, pcm, at + self.lead)
        self.spoken.append(
            (queued.text, phrase.start / SAMPLE_RATE, (phrase.start + len(pcm)) / SAMPLE_RATE)
        )
