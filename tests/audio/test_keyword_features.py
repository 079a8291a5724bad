"""The keyword front end: numpy mel and the ONNX embedding against the TFLite models they were
converted from (pyopen-wakeword, openWakeWord's originals), and streaming against whole clips."""

from __future__ import annotations

import numpy as np
import pytest
from voiced.audio.convert import read_audio
from voiced.audio.keyword.features import (
    EMBED_DIM,
    FeatureStream,
    SpeechEmbedding,
    clip_embeddings,
    shared_mel,
)

from tests.audio.clips import Clips


@pytest.fixture(scope="module")
def embedding() -> SpeechEmbedding:
    return SpeechEmbedding()


@pytest.fixture(scope="module")
def speech(clips: Clips) -> np.ndarray:
    pcm = read_audio(clips.speech("computer, add bread and cheese"))
    rng = np.random.default_rng(0)
    pad = np.zeros(8000, np.int16)
    audio = np.concatenate([pad, pcm, pad]).astype(np.int32)
    return np.clip(audio + rng.integers(-30, 30, len(audio)), -32768, 32767).astype(np.int16)


def test_stream_in_any_pieces_gives_the_clips_embeddings(
    embedding: SpeechEmbedding, speech: np.ndarray
) -> None:
    whole = clip_embeddings(speech, embedding, hop=4)
    stream = FeatureStream(embedding, hop=4)
    rng = np.random.default_rng(1)
    got, ends, i = [], [], 0
    while i < len(speech):
        n = int(rng.integers(1, 2500))
        part = stream.feed(speech[i : i + n])
        got.append(part.vectors)
        ends.append(part.ends)
        i += n
    assert np.array_equal(np.concatenate(ends), whole.ends)
    assert np.abs(np.concatenate(got) - whole.vectors).max() < 1e-3
    assert whole.vectors.shape[1] == EMBED_DIM and len(whole.vectors) > 20


def test_windows_asked_for_late_are_the_same(
    embedding: SpeechEmbedding, speech: np.ndarray
) -> None:
    """The spotter asks for a quiet stretch's windows only when a loud block comes: the mel
    frames made then, in one go and out of order, are the ones made as the audio came."""
    whole = clip_embeddings(speech, embedding, hop=4)
    stream = FeatureStream(embedding, hop=4, keep_steps=31)
    rng = np.random.default_rng(2)
    got, waiting, i = [], [], 0
    while i < len(speech):
        n = int(rng.integers(1, 2500))
        waiting += stream.steps(speech[i : i + n]).tolist()
        if len(waiting) >= 20 or rng.random() < 0.3:  # up to 20 steps behind, as the spotter
            got.append(embedding(stream.windows(waiting)))
            waiting = []
        i += n
    got.append(embedding(stream.windows(waiting)))
    assert np.abs(np.concatenate(got) - whole.vectors).max() < 1e-3


def test_embeddings_are_openwakewords(embedding: SpeechEmbedding, speech: np.ndarray) -> None:
    """The same numbers as pyopen-wakeword's TFLite front end, fed 80 ms at a time."""
    pyopen = pytest.importorskip("pyopen_wakeword")
    features = pyopen.OpenWakeWordFeatures.from_builtin()
    features.reset()
    features.new_audio_samples = 0  # no 8 s of zeros first: start where the clip starts
    reference = [
        e.reshape(EMBED_DIM)
        for start in range(0, len(speech) - 1279, 1280)
        for e in features.process_streaming(speech[start : start + 1280].tobytes())
    ]
    ours = clip_embeddings(speech, embedding, hop=8).vectors
    n = min(len(reference), len(ours))
    assert n > 20
    scale = np.abs(np.array(reference[:n])).mean()
    assert np.abs(np.array(reference[:n]) - ours[:n]).mean() < 1e-3 * scale


def test_mel_frames_count_and_range(speech: np.ndarray) -> None:
    mels = shared_mel().frames(speech.astype(np.float32))
    assert mels.shape == ((len(speech) - 512) // 160 + 1, 32)
    assert np.isfinite(mels).all()
    assert len(shared_mel().frames(np.zeros(100, np.float32))) == 0


def test_silence_gives_finite_embeddings(embedding: SpeechEmbedding) -> None:
    out = clip_embeddings(np.zeros(16000 * 2, np.int16), embedding, hop=4)
    assert np.isfinite(out.vectors).all()
