"""Audio for the page as a WAV file: 16-bit little-endian PCM, mono, 16 kHz, exactly the
samples the segmenter cut (a browser's <audio> plays it; JSON floats were 6x larger)."""

from __future__ import annotations

import io
import wave

import numpy as np
import numpy.typing as npt

from voiced.audio.settings import SAMPLE_RATE


def wav_bytes(samples: npt.ArrayLike, rate: int = SAMPLE_RATE) -> bytes:
    """A whole RIFF/WAVE file of int16 `samples` (anything else is refused, not rescaled)."""
    pcm = np.asarray(samples)
    if pcm.dtype != np.int16:
        raise TypeError(f"expected int16 samples, got {pcm.dtype}")
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(pcm.astype("<i2", copy=False).tobytes())
    return out.getvalue()
