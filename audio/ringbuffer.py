"""A ring buffer of recent samples addressed by absolute sample index (the audio clock).

Pre-roll is read by index range, not by "the last n", so the splice onto the live segment is
sample-exact by construction: pre-roll is [start - n, start) and the live part begins at
`start`. Seed 002's `[BLANK_AUDIO]` bug came from an off-by-one window at exactly this point.
"""

from __future__ import annotations

import numpy as np
from voiced.audio.convert import Pcm


class RingBuffer:
    """Keeps the last `capacity` samples written."""

    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.capacity = capacity
        self._data = np.zeros(max(1, capacity), dtype=np.int16)
        self._end = 0

    @property
    def end(self) -> int:
        """Absolute index one past the newest sample written."""
        return self._end

    @property
    def start(self) -> int:
        """Absolute index of the oldest sample still held."""
        return max(0, self._end - self.capacity)

    def write(self, samples: Pcm) -> None:
        """Append samples (any length; only the last `capacity` are kept)."""
        n = len(samples)
        if self.capacity == 0 or n == 0:
            self._end += n
            return
        if n >= self.capacity:
            tail = samples[n - self.capacity :]
            pos = (self._end + n - self.capacity) % self.capacity
            self._data[pos:] = tail[: self.capacity - pos]
            self._data[:pos] = tail[self.capacity - pos :]
        else:
            pos = self._end % self.capacity
            first = min(n, self.capacity - pos)
            self._data[pos : pos + first] = samples[:first]
            self._data[: n - first] = samples[first:]
        self._end += n

    def read(self, start: int, end: int) -> Pcm:
        """Samples [start, end) by absolute index; a range not fully held is clipped to what
        is (so pre-roll at the very beginning of a stream is simply shorter)."""
        start = max(start, self.start)
        end = min(end, self._end)
        if end <= start:
            return np.zeros(0, dtype=np.int16)
        a, b = start % self.capacity, end % self.capacity
        if a < b:
            return self._data[a:b].copy()
        return np.concatenate([self._data[a:], self._data[:b]])
