"""What the daemon plays, on the input's sample clock: the reference for hearing past itself.

Every phrase the daemon says is synthesised to 16 kHz PCM first and placed on one timeline,
indexed by the input's sample position (the audio clock). Whoever plays it (a loudspeaker, or
nothing for a file) reads the samples from here, and the listener reads the same samples for
the same input positions: the far-end reference an echo canceller needs, and the answer to
"was I talking then, and what was I saying?". A barge-in or a stop cuts the timeline at a
position; what lies after it is never played.

Placement is deterministic on the audio clock: a phrase starts where the input was when the
phrase was decided, or where the previous phrase ends, whichever is later. On a file this is
exact whatever the pace; on a microphone the input position is the newest captured sample,
and the device plays the timeline at that same position (see `voiced.audio.source.MicSource`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from voiced.audio.convert import Pcm
from voiced.audio.settings import SAMPLE_RATE

KEEP_S = 30.0
"""Phrases that ended longer ago than this are forgotten (the listener lags by far less)."""


@dataclass
class Phrase:
    """One phrase on the timeline."""

    text: str
    """What is said."""
    start: int
    """Input sample position of its first sample."""
    pcm: Pcm
    """16 kHz mono int16."""
    end: int
    """One past its last sample: start + len(pcm), or where it was cut."""
    decided: int = 0
    """Where it was first placed (a reply may wait for the operator to finish)."""

    @property
    def seconds(self) -> float:
        """How long it plays (up to a cut)."""
        return (self.end - self.start) / SAMPLE_RATE

    @property
    def cut(self) -> bool:
        return self.end < self.start + len(self.pcm)


class Playback:
    """The timeline. Thread-safe: a PortAudio callback renders it while the loop schedules."""

    def __init__(self) -> None:
        self._phrases: list[Phrase] = []
        self._lock = threading.Lock()

    def schedule(self, text: str, pcm: Pcm, at: int) -> Phrase:
        """Place `pcm` at input position `at`, or after the last phrase if that ends later."""
        with self._lock:
            last = self._phrases[-1].end if self._phrases else 0
            start = max(at, last)
            phrase = Phrase(text, start, pcm, start + len(pcm), start)
            self._phrases.append(phrase)
            self._forget(start)
            return phrase

    def render(self, start: int, n: int) -> Pcm:
        """The samples played at input positions [start, start + n); zeros where silent."""
        out = np.zeros(n, dtype=np.int16)
        with self._lock:
            for phrase in self._phrases:
                lo, hi = max(start, phrase.start), min(start + n, phrase.end)
                if lo < hi:
                    out[lo - start : hi - start] = phrase.pcm[lo - phrase.start : hi - phrase.start]
        return out

    def during(self, start: int, end: int) -> list[Phrase]:
        """The phrases that play at some point of [start, end)."""
        with self._lock:
            return [p for p in self._phrases if p.start < end and start < p.end]

    def playing(self, position: int) -> Phrase | None:
        """The phrase playing at `position`, if any."""
        found = self.during(position, position + 1)
        return found[0] if found else None

    def ends(self) -> int:
        """Where the last phrase ends (0 when nothing was ever scheduled)."""
        with self._lock:
            return self._phrases[-1].end if self._phrases else 0

    def postpone(self, phrase: Phrase, samples: int) -> None:
        """Start `phrase` (not yet playing) `samples` later, and everything after it."""
        with self._lock:
            for later in self._phrases:
                if later.start >= phrase.start:
                    later.start += samples
                    later.end += samples

    def cut(self, position: int) -> list[Phrase]:
        """Nothing plays from `position` on: the phrase playing there ends there, later ones
        are removed. Returns the phrases that were shortened or removed."""
        with self._lock:
            touched = [p for p in self._phrases if p.end > position]
            for phrase in touched:
                phrase.end = max(phrase.start, position)
            self._phrases = [p for p in self._phrases if p.end > p.start]
            return touched

    def _forget(self, now: int) -> None:
        horizon = now - round(KEEP_S * SAMPLE_RATE)
        self._phrases = [p for p in self._phrases if p.end >= horizon]
