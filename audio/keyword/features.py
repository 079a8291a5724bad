"""openWakeWord's front end: 32-band log-mel frames every 10 ms, and Google's speech embedding
(96 values from 76 frames, 775 ms of audio) every `hop` frames.

Both run here without a TFLite runtime: the spectrogram in numpy, the embedding in ONNX Runtime
(see `convert`). The top-dB floor is applied per frame, so the features of a stream do not
depend on how it was cut into chunks: `FeatureStream` fed in any pieces gives exactly what
`clip_embeddings` gives for the whole clip. Training and the daemon see the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

DATA = Path(__file__).resolve().parent / "data"
MEL_HOP = 160
"""Samples between mel frames (10 ms)."""
MEL_WINDOW = 512
"""Samples in one mel frame's STFT."""
EMBED_FRAMES = 76
"""Mel frames in one embedding's view (775 ms)."""
EMBED_DIM = 96
TOP_DB = 80.0

Floats = npt.NDArray[np.float32]


class MelSpectrogram:
    """Log-mel frames as openWakeWord computes them (scaled to the embedding's input range)."""

    def __init__(self) -> None:
        weights = np.load(DATA / "melspectrogram.npz")
        self.real: Floats = weights["real"]
        self.imag: Floats = weights["imag"]
        self.mel: Floats = weights["mel"]

    def frames(self, samples: npt.NDArray[np.floating]) -> Floats:
        """(n, 32) for int16-scaled float samples; n = (len - 512) // 160 + 1 (0 if shorter)."""
        n = (len(samples) - MEL_WINDOW) // MEL_HOP + 1
        if n <= 0:
            return np.zeros((0, 32), dtype=np.float32)
        x = np.asarray(samples, dtype=np.float32)
        strided = np.lib.stride_tricks.sliding_window_view(x, MEL_WINDOW)[::MEL_HOP][:n]
        power = (strided @ self.real) ** 2 + (strided @ self.imag) ** 2
        db = 10.0 * np.log10(np.maximum(power @ self.mel, 1e-10))
        db = np.maximum(db, db.max(axis=1, keepdims=True) - TOP_DB)
        return np.asarray(db / 10.0 + 2.0, dtype=np.float32)


class SpeechEmbedding:
    """The embedding network in ONNX Runtime (one thread: it runs beside Whisper)."""

    def __init__(self, threads: int = 1) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped]

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # A spinning thread pool would burn a core while the cell is quiet.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        # Small inputs, one at a time: the arena's preallocation only costs memory.
        options.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(
            str(DATA / "speech_embedding.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, windows: Floats) -> Floats:
        """(b, 76, 32) mel windows -> (b, 96) embeddings."""
        if len(windows) == 0:
            return np.zeros((0, EMBED_DIM), dtype=np.float32)
        x = np.ascontiguousarray(windows[..., None], dtype=np.float32)
        out = self.session.run(None, {"input": x})[0]
        return np.asarray(out, dtype=np.float32).reshape(len(windows), EMBED_DIM)


def warp_mels(mels: Floats, factor: float) -> Floats:
    """Mel frames with the band axis stretched by `factor` (> 1: every band's content moves
    up, as a shorter vocal tract moves the formants): another speaker, at no cost."""
    bands = np.arange(mels.shape[1], dtype=np.float32)
    source = np.clip(bands / factor, 0, mels.shape[1] - 1)
    low = np.floor(source).astype(int)
    high = np.minimum(low + 1, mels.shape[1] - 1)
    frac = (source - low).astype(np.float32)
    return np.asarray(mels[:, low] * (1 - frac) + mels[:, high] * frac, dtype=np.float32)


@cache
def shared_mel() -> MelSpectrogram:
    return MelSpectrogram()


@dataclass(frozen=True)
class Embeddings:
    """Embeddings of a stretch of audio, each with where its view ends."""

    vectors: Floats
    """(n, 96)."""
    ends: npt.NDArray[np.int64]
    """(n,) sample offset (from the start of the stream or clip) where each view ends."""


def frame_end(frame: int) -> int:
    """The sample offset where mel frame `frame` (0-based) ends."""
    return frame * MEL_HOP + MEL_WINDOW


def clip_embeddings(
    samples: npt.NDArray[np.integer] | npt.NDArray[np.floating],
    embedding: SpeechEmbedding,
    hop: int,
    batch: int = 16,
    mel_warp: float = 1.0,
) -> Embeddings:
    """Every `hop`-th embedding of a whole clip, as `FeatureStream` would yield them.
    `mel_warp` (training only) stretches the mel bands first (`warp_mels`)."""
    mels = shared_mel().frames(np.asarray(samples, dtype=np.float32))
    if mel_warp != 1.0:
        mels = warp_mels(mels, mel_warp)
    last = np.arange(EMBED_FRAMES - 1, len(mels))
    last = last[(last - EMBED_FRAMES + 1) % hop == 0]
    views = np.lib.stride_tricks.sliding_window_view(mels, (EMBED_FRAMES, 32))[:, 0]
    vectors = [
        embedding(views[last[i : i + batch] - EMBED_FRAMES + 1]) for i in range(0, len(last), batch)
    ]
    stacked = np.concatenate(vectors) if vectors else np.zeros((0, EMBED_DIM), np.float32)
    return Embeddings(stacked, np.array([frame_end(f) for f in last], dtype=np.int64))


class FeatureStream:
    """Streaming embeddings: feed audio in any pieces, get one embedding every `hop` mel frames
    (4: every 40 ms) once 775 ms have been heard."""

    def __init__(self, embedding: SpeechEmbedding, hop: int) -> None:
        self.embedding = embedding
        self.hop = hop
        self._samples = np.zeros(0, dtype=np.float32)
        self._mels = np.zeros((0, 32), dtype=np.float32)
        """The last frames made (enough for one view)."""
        self._frames = 0
        """Mel frames made so far."""

    def feed(self, samples: npt.NDArray[np.int16]) -> Embeddings:
        windows, ends = self.windows(samples)
        vectors = self.embedding(windows)
        return Embeddings(vectors, ends)

    def windows(self, samples: npt.NDArray[np.int16]) -> tuple[Floats, npt.NDArray[np.int64]]:
        """The mel windows (n, 76, 32) the next embeddings would be made of, and where each
        ends, without making them: a caller that knows nothing can be heard in them may make
        them later, or never (`self.embedding(windows)`)."""
        self._samples = np.concatenate([self._samples, samples.astype(np.float32)])
        new = shared_mel().frames(self._samples)
        used = len(new) * MEL_HOP
        self._samples = self._samples[used:]
        mels = np.concatenate([self._mels, new])
        first = self._frames - len(self._mels)  # the frame number of mels[0]
        ends: list[int] = []
        views: list[Floats] = []
        for frame in range(self._frames, self._frames + len(new)):
            if frame >= EMBED_FRAMES - 1 and (frame - EMBED_FRAMES + 1) % self.hop == 0:
                stop = frame - first + 1
                views.append(mels[stop - EMBED_FRAMES : stop])
                ends.append(frame_end(frame))
        self._frames += len(new)
        self._mels = mels[-EMBED_FRAMES:]
        stacked = np.stack(views) if views else np.zeros((0, EMBED_FRAMES, 32), np.float32)
        return stacked, np.array(ends, dtype=np.int64)
