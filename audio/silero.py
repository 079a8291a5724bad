"""The Silero speech gate: the Silero VAD ONNX model that ships inside faster-whisper.

webrtcvad separates noise from silence well and speech from noise poorly (Silero v5 ROC-AUC 0.96
vs WebRTC 0.73), so a segment webrtcvad cut from machine noise is checked here before it costs a
transcription. The model runs on onnxruntime (a faster-whisper dependency) in a few ms per
second of audio.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from voiced.audio.convert import Pcm, to_float

WINDOW = 512
"""Samples per Silero window at 16 kHz (32 ms)."""
SMOOTH = 3
"""Windows averaged before taking the maximum: about 100 ms of sustained speech, so one
speech-like click in noise does not pass."""


def model_path() -> Path:
    """Where faster-whisper keeps the Silero ONNX model."""
    # faster-whisper (CTranslate2, onnxruntime) is slow to import: only when the gate runs.
    from faster_whisper.utils import get_assets_path  # type: ignore[import-untyped]

    found = sorted(Path(get_assets_path()).glob("silero_vad*.onnx"))
    if not found:
        raise FileNotFoundError(f"no silero_vad*.onnx in {get_assets_path()}")
    return found[-1]


def window_probabilities(samples: Pcm) -> np.ndarray:
    """Speech probability of each 32 ms window (the last one zero-padded)."""
    # faster-whisper's own loader: onnxruntime with one thread, cached for the process.
    from faster_whisper.vad import get_vad_model  # type: ignore[import-untyped]

    audio = to_float(samples)
    missing = (-len(audio)) % WINDOW if len(audio) else WINDOW
    audio = np.pad(audio, (0, missing))
    return np.asarray(get_vad_model()(audio), dtype=np.float32).reshape(-1)


def speech_probability(samples: Pcm) -> float:
    """The segment's speech probability: the best ~100 ms stretch of Silero's output."""
    probs = window_probabilities(samples)
    if len(probs) >= SMOOTH:
        probs = np.convolve(probs, np.ones(SMOOTH) / SMOOTH, mode="valid")
    return round(float(probs.max()), 4)


def warm_up() -> None:
    """Load the model now rather than on the first segment."""
    speech_probability(np.zeros(WINDOW * SMOOTH, dtype=np.int16))
