"""openWakeWord's front end: 32-band log-mel frames every 10 ms, and Google's speech embedding
(96 values from 76 frames, 775 ms of audio) every `hop` frames.

Both run here without a TFLite runtime: the spectrogram in numpy, the embedding in ONNX Runtime
(see `convert`). The top-dB floor is applied per frame, so the features of a stream do not
depend on how it was cut into chunks, nor on when a frame is made: `FeatureStream` fed in any
pieces gives exactly what `clip_embeddings` gives for the whole clip. Training and the daemon
see the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    (4: every 40 ms) once 775 ms have been heard.

    The mel frames are made when a window is asked for, not as the audio comes: a frame depends
    on its own 512 samples alone, so making it later gives the same numbers, and a caller that
    knows nothing can be heard in a stretch (the spotter, on quiet input) never pays for it.
    The last `keep_steps` windows can be asked for."""

    def __init__(self, embedding: SpeechEmbedding, hop: int, keep_steps: int = 1) -> None:
        self.embedding = embedding
        self.hop = hop
        self._keep_frames = max(1, keep_steps) * hop + EMBED_FRAMES
        """Frames kept behind the newest ones: enough for the last `keep_steps` windows."""
        self._audio = np.zeros(0, dtype=np.float32)
        self._first = 0
        """The stream offset of `_audio[0]`."""
        self._frames = 0
        """Mel frames the audio so far holds."""
        self._made = np.zeros((0, 32), dtype=np.float32)
        self._made_from = 0
        """Mel frames already made (`_made[i]` is frame `_made_from + i`): a frame is in 19
        windows one after another, and is made once."""

    def feed(self, samples: npt.NDArray[np.int16]) -> Embeddings:
        ends = self.steps(samples)
        return Embeddings(self.embedding(self.windows(ends)), ends)

    def steps(self, samples: npt.NDArray[np.int16]) -> npt.NDArray[np.int64]:
        """More audio; where each new window ends (its embedding is made from
        `self.windows(ends)`, now or later, or never)."""
        self._audio = np.concatenate([self._audio, samples.astype(np.float32)])
        total = self._first + len(self._audio)
        frames = max(0, (total - MEL_WINDOW) // MEL_HOP + 1)
        new = range(self._frames, frames)
        self._frames = frames
        # Kept: the audio of every window from `keep_steps` before the first new one on, so
        # the windows of a long piece fed at once can all be asked for.
        oldest = max(0, (new.start - self._keep_frames) * MEL_HOP)
        drop = max(0, oldest - self._first)
        self._audio, self._first = self._audio[drop:], self._first + drop
        last = [f for f in new if f >= EMBED_FRAMES - 1 and (f - EMBED_FRAMES + 1) % self.hop == 0]
        return np.array([frame_end(f) for f in last], dtype=np.int64)

    def windows(self, ends: npt.NDArray[np.int64] | Sequence[int]) -> Floats:
        """The mel windows (n, 76, 32) of the windows ending at `ends` (from `steps`, among
        the last `keep_steps`), made in one go."""
        if len(ends) == 0:
            return np.zeros((0, EMBED_FRAMES, 32), dtype=np.float32)
        last = [(int(end) - MEL_WINDOW) // MEL_HOP for end in ends]
        first = min(last) - EMBED_FRAMES + 1
        mels = self._mels(first, max(last) + 1)
        return np.stack([mels[f - first - EMBED_FRAMES + 1 : f - first + 1] for f in last])

    def _mels(self, first: int, stop: int) -> Floats:
        """Mel frames `first` to `stop` (exclusive), made where not made yet."""
        made_to = self._made_from + len(self._made)
        if not len(self._made) or first > made_to or stop < self._made_from:
            self._made, self._made_from = self._frames_of(first, stop), first
        else:
            before = self._frames_of(first, self._made_from) if first < self._made_from else None
            after = self._frames_of(made_to, stop) if stop > made_to else None
            parts = [p for p in (before, self._made, after) if p is not None]
            self._made = np.concatenate(parts) if len(parts) > 1 else self._made
            self._made_from = min(first, self._made_from)
        asked = self._made[first - self._made_from : stop - self._made_from]
        keep = max(0, len(self._made) - self._keep_frames)
        self._made, self._made_from = self._made[keep:], self._made_from + keep
        return asked

    def _frames_of(self, first: int, stop: int) -> Floats:
        start = first * MEL_HOP - self._first
        if start < 0:
            raise ValueError("a window asked for is older than the audio kept")
        end = (stop - 1) * MEL_HOP + MEL_WINDOW - self._first
        return shared_mel().frames(self._audio[start:end])
