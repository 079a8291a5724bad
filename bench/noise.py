"""Noise for the corpus: white, pink and brown (spectrally shaped, as keyword training makes
them: `voiced.audio.keyword.training.rooms`), babble (several espeak-ng voices reading unrelated
text at once), and mixing at a target SNR where the speech level is the RMS over its active
frames only (the pauses would otherwise flatter the SNR)."""

from __future__ import annotations

import numpy as np
from voiced.audio.keyword.training.rooms import active_rms, coloured

from bench.sessions import PROSE
from bench.spoken import RATE, speak

BABBLE_VOICES = ("en-us", "en-gb+f3", "en-gb-x-rp+m3", "en-us+f2")


def babble(n: int, rng: np.random.Generator) -> np.ndarray:
    """Four voices reading the prose at once, each from a random point, unit RMS."""
    out = np.zeros(n)
    for voice in BABBLE_VOICES:
        clip = _prose_clip(voice, 170).astype(np.float64)
        reps = int(np.ceil((n + len(clip)) / len(clip)))
        tiled = np.tile(clip, reps)
        start = int(rng.integers(0, len(clip)))
        out += tiled[start : start + n]
    return out / (np.sqrt(np.mean(out**2)) or 1.0)


def make(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    return babble(n, rng) if kind == "babble" else coloured(kind, n, rng)


def mix(speech: np.ndarray, kind: str, snr_db: float, seed: int = 0) -> np.ndarray:
    """`speech` plus `kind` noise at `snr_db` below its active RMS; scaled down if it clips."""
    rng = np.random.default_rng(seed % 2**32)
    level = active_rms(speech)
    noise = make(kind, len(speech), rng) * level / 10 ** (snr_db / 20)
    out = speech.astype(np.float64) + noise
    peak = np.abs(out).max()
    if peak > 32000:
        out *= 32000 / peak
    return out.astype(np.int16)


_PROSE_CACHE: dict[tuple[str, int, str], np.ndarray] = {}


def _prose_clip(voice: str, rate: int, text: str = PROSE) -> np.ndarray:
    if (voice, rate, text) not in _PROSE_CACHE:
        _PROSE_CACHE[(voice, rate, text)] = speak(text, voice, rate)
    return _PROSE_CACHE[(voice, rate, text)]


def prose(seconds: float, voice: str, rate: int, text: str = PROSE) -> np.ndarray:
    """`seconds` of `text` read by one voice, with a 2 s pause between runs (tiled: the text
    is about a minute long)."""
    clip = _prose_clip(voice, rate, text)
    gap = np.zeros(2 * RATE, dtype=np.int16)
    unit = np.concatenate([clip, gap])
    n = round(seconds * RATE)
    return np.tile(unit, n // len(unit) + 1)[:n]
