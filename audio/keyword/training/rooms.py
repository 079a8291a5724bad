"""What happens to a voice between the mouth and the samples: a room (image-source impulse
responses from `pyroomacoustics`), a microphone and its preamp (band limits, a resonance,
sometimes clipping or a telephone band), and noise at a chosen SNR.

The noise kinds are those the benchmarks use: white, pink and brown (spectrally shaped), babble
(several voices at once) and recordings (a kitchen). Of every recording only the first half is
used for training; the second half is kept for measuring (`held_half`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.signal import butter, fftconvolve, lfilter, sosfilt  # type: ignore[import-untyped]
from voiced.audio.keyword.training.voices import RATE, Audio, resample

FRAME = RATE // 50
"""20 ms frames for the active-speech level."""


def active_rms(samples: np.ndarray) -> float:
    """RMS over the 20 ms frames within 30 dB of the loudest (where someone is speaking)."""
    x = np.asarray(samples, dtype=np.float64)
    n = len(x) // FRAME
    if n == 0:
        return 0.0
    frames = np.sqrt(np.mean(x[: n * FRAME].reshape(n, FRAME) ** 2, axis=1))
    active = frames[frames > frames.max() * 10 ** (-30 / 20)]
    return float(np.sqrt(np.mean(active**2))) if len(active) else 0.0


def coloured(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS white, pink (1/f power) or brown (1/f^2) noise, shaped in the frequency domain."""
    white = rng.standard_normal(n)
    if kind == "white":
        shaped = white
    else:
        spectrum = np.fft.rfft(white)
        f = np.fft.rfftfreq(n, 1 / RATE)
        f[0] = f[1]
        power = 1.0 if kind == "pink" else 2.0
        shaped = np.fft.irfft(spectrum / f ** (power / 2), n)
    return shaped / (np.sqrt(np.mean(shaped**2)) or 1.0)


def training_half(recording: np.ndarray) -> np.ndarray:
    """The part of a noise recording that training may use."""
    return recording[: len(recording) // 2]


def held_half(recording: np.ndarray) -> np.ndarray:
    """The part of a noise recording kept for measuring."""
    return recording[len(recording) // 2 :]


def excerpt(source: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` samples of `source` from a random point (looped when it is shorter)."""
    if len(source) == 0:
        return np.zeros(n)
    reps = int(np.ceil((n + len(source)) / len(source)))
    start = int(rng.integers(0, len(source)))
    return np.tile(source, reps)[start : start + n].astype(np.float64)


def add_noise(speech: Audio, noise: np.ndarray, snr_db: float) -> Audio:
    """`speech` plus `noise` scaled to `snr_db` below the speech's active level."""
    level = active_rms(speech)
    noise_level = float(np.sqrt(np.mean(np.square(noise, dtype=np.float64)))) or 1.0
    return (speech + noise * (level / noise_level) / 10 ** (snr_db / 20)).astype(np.float32)


class RoomBank:
    """Impulse responses of random rooms (an office to a workshop hall), made once per seed."""

    def __init__(self, count: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.responses = [_room_response(rng) for _ in range(count)]

    def apply(self, audio: Audio, rng: np.random.Generator) -> Audio:
        rir = self.responses[int(rng.integers(0, len(self.responses)))]
        wet = fftconvolve(audio, rir)[: len(audio)]
        peak = float(np.abs(wet).max()) or 1.0
        return np.asarray(wet * (float(np.abs(audio).max()) / peak), dtype=np.float32)


def _room_response(rng: np.random.Generator) -> np.ndarray:
    import pyroomacoustics as pra  # type: ignore[import-untyped]

    dims = np.array([rng.uniform(3, 15), rng.uniform(3, 12), rng.uniform(2.5, 6)])
    rt60 = rng.uniform(0.15, 1.0)
    try:
        absorption, max_order = pra.inverse_sabine(rt60, dims)
    except ValueError:  # the room cannot be that reverberant: take the most it can
        absorption, max_order = 0.05, 20
    room = pra.ShoeBox(
        dims, fs=RATE, materials=pra.Material(absorption), max_order=min(max_order, 20)
    )
    mic = dims * rng.uniform(0.2, 0.8, 3)
    distance = rng.uniform(0.4, 3.0)
    direction = rng.standard_normal(3)
    direction /= np.linalg.norm(direction) or 1.0
    source = np.clip(mic + direction * distance, 0.3, dims - 0.3)
    room.add_source(source)
    room.add_microphone(mic)
    room.compute_rir()
    rir = np.asarray(room.rir[0][0], dtype=np.float64)
    first = int(np.argmax(np.abs(rir) > np.abs(rir).max() * 0.1))
    return rir[max(0, first - 16) : first + int(RATE * min(rt60, 0.8))]


def microphone(audio: Audio, rng: np.random.Generator) -> Audio:
    """A random microphone and preamp: band limits, a resonance, now and then a telephone band
    or an overdriven input."""
    x = audio.astype(np.float64)
    low = rng.uniform(50, 350)
    high = rng.uniform(3400, 7600)
    x = sosfilt(butter(2, [low, high], btype="band", fs=RATE, output="sos"), x)
    centre, gain = rng.uniform(300, 4000), rng.uniform(-8, 8)
    x = _peaking(x, centre, gain, q=rng.uniform(0.7, 3))
    if rng.random() < 0.08:
        x = resample(resample_to(x.astype(np.float32), 8000), 8000).astype(np.float64)
    if rng.random() < 0.1:
        drive = rng.uniform(1.5, 4)
        peak = float(np.abs(x).max()) or 1.0
        x = np.tanh(x / peak * drive) / np.tanh(drive) * peak
    return x.astype(np.float32)


def resample_to(audio: Audio, rate: int) -> Audio:
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(rate, RATE)
    return np.asarray(resample_poly(audio, rate // g, RATE // g), dtype=np.float32)


def _peaking(x: np.ndarray, centre: float, gain_db: float, q: float) -> np.ndarray:
    """An RBJ peaking filter."""
    a = 10 ** (gain_db / 40)
    w0 = 2 * np.pi * centre / RATE
    alpha = np.sin(w0) / (2 * q)
    b = [1 + alpha * a, -2 * np.cos(w0), 1 - alpha * a]
    den = [1 + alpha / a, -2 * np.cos(w0), 1 - alpha / a]
    return np.asarray(lfilter(b, den, x))


@dataclass(frozen=True)
class NoiseSources:
    """Where noise comes from: the coloured kinds, babble made from speech clips, recordings."""

    babble: Sequence[Audio]
    """Speech to make babble from (several at once)."""
    recordings: Sequence[np.ndarray]
    """Noise recordings (already cut to their training half)."""

    def digest(self) -> str:
        """What the sources hold (for caching what was rendered with them)."""
        import hashlib

        h = hashlib.sha256()
        for clip in (*self.babble, *self.recordings):
            h.update(np.ascontiguousarray(clip).tobytes())
        return h.hexdigest()[:16]

    def kinds(self) -> list[str]:
        return [
            "white",
            "pink",
            "brown",
            *(["babble"] if self.babble else []),
            *(["recording"] if self.recordings else []),
        ]

    def make(self, kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
        if kind == "babble":
            talkers = int(rng.integers(3, 7))
            picks = rng.integers(0, len(self.babble), talkers)
            out = sum(excerpt(self.babble[i], n, rng) for i in picks)
            return np.asarray(out, dtype=np.float64)
        if kind == "recording":
            return excerpt(self.recordings[int(rng.integers(0, len(self.recordings)))], n, rng)
        return coloured(kind, n, rng)
