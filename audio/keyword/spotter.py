"""Streaming keyword spotting: one feature stream, any number of models (the wake word and the
stop words share it), a score for each every 40 ms.

A model fires when its score crosses its threshold, at most once per `refractory_s`: the score
stays high for a few steps after the phrase. Nothing here depends on the segmenter, the VAD or
Whisper: every 40 ms of input is looked at, speech or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from voiced.audio.keyword.features import EMBED_DIM, FeatureStream, SpeechEmbedding
from voiced.audio.keyword.model import KeywordModel

STREAM_HOP = 4
"""Mel frames between embeddings in the stream (40 ms; a view takes every second one). Every
80 ms, the heads' own spacing, halves the spotters' CPU (2.8 % of a core against 5.2 %) but on
the test data lost 3 of 200 real wake words, 2 points of "stop" and 8 of "halt" at 10 dB, and
40 ms of p95 latency (bench.keywords): a stop heard is worth more than the CPU."""
STEP_MS = STREAM_HOP * 10
PRIMING_S = 2.0
"""Quiet fed before the first real sample: a model's view reaches about 2 s back, so without it
nothing said in the stream's first two seconds could be heard."""


@dataclass(frozen=True)
class Detection:
    """A phrase heard."""

    phrase: str
    score: float
    """The model's score when it fired (0..1)."""
    sample: int
    """Stream sample offset where the audio it decided on ends (the audio clock; the first
    sample fed is 0)."""


class KeywordSpotter:
    """Feeds audio to the shared features and every model."""

    def __init__(
        self,
        models: Sequence[KeywordModel],
        *,
        thresholds: dict[str, float] | None = None,
        refractory_s: float = 1.0,
        embedding: SpeechEmbedding | None = None,
    ) -> None:
        self.models = list(models)
        self.thresholds = {m.phrase: m.threshold for m in self.models} | (thresholds or {})
        self.stream = FeatureStream(embedding or SpeechEmbedding(), STREAM_HOP)
        self._strides = [max(1, m.info.spacing_ms // STEP_MS) for m in self.models]
        depth = max(
            ((m.info.frames - 1) * s + 1 for m, s in zip(self.models, self._strides, strict=True)),
            default=1,
        )
        self._history = np.zeros((depth, EMBED_DIM), dtype=np.float32)
        self._seen = 0
        self._above = [False] * len(self.models)
        self._last = [-(10**12)] * len(self.models)
        self._refractory = round(refractory_s * 16000)
        self.scores: dict[str, float] = {m.phrase: 0.0 for m in self.models}
        """Each model's latest score (for the page and the logs)."""
        self._offset = 0
        self.feed(_quiet(round(PRIMING_S * 16000)))
        self._offset = round(PRIMING_S * 16000)

    def feed(self, samples: npt.NDArray[np.int16]) -> list[Detection]:
        """Audio in; the phrases heard in it, in order."""
        found: list[Detection] = []
        emb = self.stream.feed(samples)
        for vector, end in zip(emb.vectors, emb.ends, strict=True):
            self._history = np.roll(self._history, -1, axis=0)
            self._history[-1] = vector
            self._seen += 1
            found += self._score(int(end) - self._offset)
        return found

    def _score(self, end: int) -> list[Detection]:
        found = []
        for i, (model, stride) in enumerate(zip(self.models, self._strides, strict=True)):
            needed = (model.info.frames - 1) * stride + 1
            if self._seen < needed:
                continue
            view = self._history[len(self._history) - needed :: stride]
            score = float(model.scores(view[None])[0])
            self.scores[model.phrase] = score
            above = score >= self.thresholds[model.phrase]
            if above and not self._above[i] and end - self._last[i] >= self._refractory:
                self._last[i] = end
                found.append(Detection(model.phrase, score, end))
            self._above[i] = above
        return found


def _quiet(n: int) -> npt.NDArray[np.int16]:
    """A microphone's floor, the same every time: faint noise, not digital silence."""
    rng = np.random.default_rng(0)
    return np.round(rng.standard_normal(n) * 3.0).astype(np.int16)
