"""A loudspeaker heard by the microphone, for file sessions (`voiced run --room-echo DB`).

With a file as input nothing is played, so nothing the daemon says would reach its ears. This
puts it there, as a cell would: the phrase through a slightly overdriven loudspeaker, a direct
path after `delay_ms`, and a diffuse tail of reflections decaying by 60 dB in `rt60_s`, mixed
into the input at `gain_db` relative to the synthesised level (0 dB: the reply arrives about as
loud as espeak-ng's own operator voices). The impulse response is fixed by its seed, so the
same session gives the same samples at any pace. Benchmarks and tests use it to measure talking
over replies; a real cell has the real thing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from voiced.audio.convert import Pcm
from voiced.audio.settings import SAMPLE_RATE


@dataclass(frozen=True)
class RoomSettings:
    """How the loudspeaker reaches the microphone."""

    gain_db: float = 0.0
    """Echo level relative to the synthesised speech."""
    delay_ms: float = 25.0
    """Loudspeaker to microphone, plus the sound card's latency."""
    rt60_s: float = 0.25
    """Reverberation time of the tail."""
    tail_db: float = -8.0
    """Energy of the reflections relative to the direct path."""
    drive: float = 1.6
    """Loudspeaker overdrive (tanh); a linear canceller cannot undo it completely."""
    seed: int = 20261123


def impulse_response(settings: RoomSettings) -> npt.NDArray[np.float64]:
    delay = round(settings.delay_ms * SAMPLE_RATE / 1000)
    length = round(settings.rt60_s * SAMPLE_RATE)
    rng = np.random.default_rng(settings.seed)
    t = np.arange(length) / SAMPLE_RATE
    tail = rng.standard_normal(length) * np.exp(-6.9 * t / settings.rt60_s)
    tail *= np.sqrt(10 ** (settings.tail_db / 10) / np.sum(tail**2))
    h = np.zeros(delay + length)
    h[delay] = 1.0
    h[delay + 1 :] += tail[: length - 1]
    return h * 10 ** (settings.gain_db / 20)


class RoomEcho:
    """Adds the echo of the played reference to the input, frame by frame."""

    def __init__(self, settings: RoomSettings) -> None:
        self.settings = settings
        self._h = impulse_response(settings)
        self._history = np.zeros(len(self._h) - 1)

    def mix(self, frame: Pcm, reference: Pcm) -> Pcm:
        """`frame` as the microphone hears it while `reference` plays."""
        driven = np.tanh(self.settings.drive * reference / 32768.0) / np.tanh(self.settings.drive)
        signal = np.concatenate([self._history, driven * 32768.0])
        self._history = signal[len(signal) - len(self._history) :]
        if not signal.any():
            return frame
        echo = np.convolve(signal, self._h, mode="valid")
        out = frame.astype(np.float64) + echo
        return np.clip(np.round(out), -32768, 32767).astype(np.int16)
