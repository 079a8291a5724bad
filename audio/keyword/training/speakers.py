"""More speakers from each voice: the WORLD vocoder (`pyworld`) takes a clip apart into pitch,
spectral envelope and aperiodicity; moving the pitch, widening or flattening its contour, and
warping the envelope's frequency axis (a shorter or longer vocal tract moves every formant by
the same factor) gives a voice that no engine has."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from voiced.audio.keyword.training.voices import RATE, Audio

FRAME_MS = 5.0


@dataclass(frozen=True)
class Speaker:
    """A change of speaker: 1.0 everywhere is the voice as it is."""

    f0: float
    """Mean pitch factor (0.7: a lower voice)."""
    formant: float
    """Vocal tract factor: > 1 moves every formant up (a shorter tract: a child, many women)."""
    f0_range: float
    """Intonation: > 1 widens the pitch contour around its mean, < 1 flattens it."""

    @property
    def identity(self) -> bool:
        return self.f0 == 1.0 and self.formant == 1.0 and self.f0_range == 1.0


def random_speaker(rng: np.random.Generator) -> Speaker:
    """A plausible adult or teenage speaker relative to the source voice."""
    return Speaker(
        f0=float(np.exp(rng.uniform(np.log(0.7), np.log(1.5)))),
        formant=float(rng.uniform(0.88, 1.15)),
        f0_range=float(rng.uniform(0.6, 1.6)),
    )


def transform(audio: Audio, speaker: Speaker) -> Audio:
    """`audio` as said by `speaker` (same length)."""
    if speaker.identity or len(audio) < RATE // 20:
        return audio
    import pyworld

    x = audio.astype(np.float64)
    f0, sp, ap = pyworld.wav2world(x, RATE, frame_period=FRAME_MS)
    voiced = f0 > 0
    if voiced.any():
        log_f0 = np.log(f0[voiced])
        mean = log_f0.mean()
        f0 = f0.copy()
        f0[voiced] = np.exp(mean + (log_f0 - mean) * speaker.f0_range) * speaker.f0
    if speaker.formant != 1.0:
        bins = np.arange(sp.shape[1], dtype=np.float64)
        source = np.clip(bins / speaker.formant, 0, sp.shape[1] - 1)
        sp = np.stack([np.interp(source, bins, frame) for frame in sp])
        ap = np.stack([np.interp(source, bins, frame) for frame in ap])
    y = pyworld.synthesize(f0, np.ascontiguousarray(sp), np.ascontiguousarray(ap), RATE, FRAME_MS)
    y = y[: len(audio)]
    peak = float(np.abs(y).max()) or 1.0
    level = float(np.abs(audio).max())
    return (y * (level / peak)).astype(np.float32)
