"""Sample format conversion: any file or device rate/channels -> 16 kHz mono int16.

PyAV (FFmpeg's resampler, already a dependency of faster-whisper) does the work, so files of
any format and devices that cannot open at 16 kHz give the same samples the rest expects.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
from voiced.audio.settings import SAMPLE_RATE

from voiced.errors import AudioError

Pcm = npt.NDArray[np.int16]
"""16 kHz mono int16 samples."""


class AudioFileError(AudioError, ValueError):
    """An audio file could not be read; the message names the file and why."""


class Resampler:
    """Streaming conversion of int16 blocks at `rate` Hz with `channels` to 16 kHz mono.

    Holds FFmpeg's filter state between blocks, so consecutive blocks resample as one signal
    (no click at block edges)."""

    def __init__(self, rate: int, channels: int) -> None:
        self.rate = rate
        self.channels = channels
        self._layout = "mono" if channels == 1 else "stereo" if channels == 2 else f"{channels}c"
        self._resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        self._pts = 0

    def convert(self, block: npt.NDArray[np.int16]) -> Pcm:
        """`block` is (frames,) or (frames, channels) int16; returns what is ready so far."""
        interleaved = np.ascontiguousarray(block.reshape(1, -1), dtype=np.int16)
        frame = av.AudioFrame.from_ndarray(interleaved, format="s16", layout=self._layout)
        frame.sample_rate = self.rate
        frame.pts = self._pts
        self._pts += block.shape[0]
        return _join(self._resampler.resample(frame))

    def flush(self) -> Pcm:
        """The samples still held by the filter at the end of the stream."""
        return _join(self._resampler.resample(None))


def _join(frames: list[av.AudioFrame]) -> Pcm:
    if not frames:
        return np.zeros(0, dtype=np.int16)
    return np.concatenate([f.to_ndarray().reshape(-1) for f in frames]).astype(np.int16)


def read_audio(path: str | Path) -> Pcm:
    """Decode an audio file (WAV or anything FFmpeg reads) to 16 kHz mono int16."""
    parts = list(audio_blocks(path))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int16)


def audio_blocks(path: str | Path, seconds: float = 1.0) -> Iterator[Pcm]:
    """Decode an audio file to 16 kHz mono int16 in blocks of about `seconds`, so that a long
    file is never held whole (an hour's recording is 115 MB of samples)."""
    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    size = max(1, round(seconds * SAMPLE_RATE))
    parts: list[Pcm] = []
    held = 0
    try:
        with av.open(str(path), mode="r") as container:
            if not container.streams.audio:
                raise AudioFileError(f"{path}: no audio stream")
            for frame in container.decode(audio=0):
                part = _join(resampler.resample(frame))
                parts.append(part)
                held += len(part)
                if held >= size:
                    yield np.concatenate(parts)
                    parts, held = [], 0
            parts.append(_join(resampler.resample(None)))
    except (OSError, av.FFmpegError) as exc:
        if held:
            yield np.concatenate(parts)  # what decoded before the damage is still heard
        raise AudioFileError(f"{path}: {unreadable(exc)}") from exc
    tail = np.concatenate(parts)
    if len(tail):
        yield tail


def probe_audio(path: str | Path) -> None:
    """Raise AudioFileError, with why in plain words, unless `path` opens as audio."""
    try:
        with av.open(str(path), mode="r") as container:
            if not container.streams.audio:
                raise AudioFileError("no audio stream in it")
    except (OSError, av.FFmpegError) as exc:
        raise AudioFileError(unreadable(exc)) from exc


def unreadable(exc: OSError | av.FFmpegError) -> str:
    """FFmpeg's reason without its error number and the path it repeats."""
    reason = getattr(exc, "strerror", None) or str(exc)
    return f"cannot read audio: {reason[:1].lower()}{reason[1:]}"


def to_float(samples: Pcm) -> npt.NDArray[np.float32]:
    """int16 -> float32 in [-1, 1), the form Whisper, and Silero take."""
    return samples.astype(np.float32) / 32768.0


LEVEL_FRAME = 480
"""30 ms at 16 kHz: a frame short enough that its loudest one is a word, not the pauses."""


def peak_level_db(samples: Pcm) -> float | None:
    """The level of the loudest 30 ms frame, in dB below full scale (None for no audio): how
    loud a talker is at the microphone, pauses and the ends of words aside."""
    frames = samples.size // LEVEL_FRAME
    if frames == 0:
        return None
    blocks = samples[: frames * LEVEL_FRAME].astype(np.float64).reshape(frames, LEVEL_FRAME)
    loudest = float(np.sqrt(np.max(np.mean(np.square(blocks), axis=1))))
    return round(20 * math.log10(max(loudest, 1.0) / 32768.0), 1)


def rms(samples: Pcm) -> float:
    """Root mean square in int16 units (0 for no samples)."""
    if samples.size == 0:
        return 0.0
    return float(np.sqrt(np.mean(np.square(samples.astype(np.float64)))))
