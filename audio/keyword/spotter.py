"""Streaming keyword spotting: one feature stream, any number of models (the wake word and the
stop words share it), a score for each every 40 ms.

A model fires when its score crosses its threshold, at most once per `refractory_s`: the score
stays high for a few steps after the phrase. Nothing here depends on the segmenter, the VAD or
Whisper: every 40 ms of input is looked at, speech or not.

A word is also something loud enough to hear: with `min_rms`, a model fires only when the last
second holds a 40 ms block at least that loud, and louder than the daemon's own voice at the
microphone while it speaks (`Levels`). On real coffee orders the heads fired on the
near-silence after people stopped talking (-80 dBFS, some of it digital zero from the echo
canceller's noise suppression), and on the faint trace of the daemon's reply the canceller
leaves (-55 dBFS): input nothing like what they were trained on, or the daemon's own voice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from voiced.audio.keyword.features import EMBED_DIM, FeatureStream, Floats, SpeechEmbedding
from voiced.audio.keyword.model import KeywordModel

STREAM_HOP = 4
"""Mel frames between embeddings in the stream (40 ms; a view takes every second one). Every
80 ms, the heads' own spacing, halves the spotters' CPU (2.8 % of a core against 5.2 %) but on
the test data lost 3 of 200 real wake words, 2 points of "stop" and 8 of "halt" at 10 dB, and
40 ms of p95 latency (bench.keywords): a stop heard is worth more than the CPU."""
STEP_MS = STREAM_HOP * 10
LEVEL_BLOCK = 640
"""Samples in a block whose level the loudness gate looks at (40 ms)."""
LOUD_WINDOW_S = 1.0
"""How far back from a firing the word's loudest part is looked for: a model fires 0-0.5 s
after the end of its word (bench.keywords), and a stop word is shorter than half a second."""
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
        min_rms: float = 0.0,
    ) -> None:
        self.models = list(models)
        self.thresholds = {m.phrase: m.threshold for m in self.models} | (thresholds or {})
        self._strides = [max(1, m.info.spacing_ms // STEP_MS) for m in self.models]
        depth = max(
            ((m.info.frames - 1) * s + 1 for m, s in zip(self.models, self._strides, strict=True)),
            default=1,
        )
        self.stream = FeatureStream(embedding or SpeechEmbedding(), STREAM_HOP, depth)
        self._history = np.zeros((depth, EMBED_DIM), dtype=np.float32)
        self._unmade: list[int] = []
        """Where the newest steps whose embeddings are not made yet end (quiet ones)."""
        self._seen = 0
        self._scored = True
        """Whether the last step was scored (the scores stand for something heard)."""
        self._above = [False] * len(self.models)
        self._last = [-(10**12)] * len(self.models)
        self._refractory = round(refractory_s * 16000)
        self.scores: dict[str, float] = {m.phrase: 0.0 for m in self.models}
        """Each model's latest score (for the page and the logs)."""
        self.levels = Levels(min_rms)
        self._offset = 0
        self.feed(_quiet(round(PRIMING_S * 16000)))
        self._offset = round(PRIMING_S * 16000)

    def feed(self, samples: npt.NDArray[np.int16], floor: float = 0.0) -> list[Detection]:
        """Audio in; the phrases heard in it, in order. `floor`: the level the daemon's own
        voice reaches at the microphone while these samples played (`Levels`)."""
        found: list[Detection] = []
        self.levels.feed(samples, floor)
        for end in self.stream.steps(samples).tolist():
            self._history[:-1] = self._history[1:]
            self._unmade.append(end)
            if len(self._unmade) > len(self._history):
                del self._unmade[0]
            self._seen += 1
            if self.levels.loud(end):
                found += self._score(end)
            elif self._scored:
                # Nothing can fire on this step: its mel frames and embedding are made only if
                # a loud block comes while it is still in view (a quiet cell costs next to
                # nothing).
                self._scored = False
                self._above = [False] * len(self.models)
                self.scores = dict.fromkeys(self.scores, 0.0)
        return found

    def _make_embeddings(self) -> None:
        """The embeddings of the steps in view that were not made yet (`_unmade`)."""
        if self._unmade:
            windows = self.stream.windows(self._unmade)
            self._history[-len(self._unmade) :] = self.stream.embedding(windows)
            self._unmade = []

    def _score(self, stream_end: int) -> list[Detection]:
        """Every model's score on the view ending at `stream_end` (a step loud enough to
        hear), and the models that fire on it."""
        self._make_embeddings()
        self._scored = True
        found = []
        end = stream_end - self._offset
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


def block_levels(samples: npt.NDArray[np.integer] | npt.NDArray[np.floating]) -> Floats:
    """The RMS level of each whole `LEVEL_BLOCK` of `samples` (16-bit units)."""
    n = len(samples) // LEVEL_BLOCK
    blocks = np.asarray(samples[: n * LEVEL_BLOCK], dtype=np.float64).reshape(n, LEVEL_BLOCK)
    levels: Floats = np.sqrt(np.mean(blocks**2, axis=1)).astype(np.float32)
    return levels


def loudest(levels: Floats, first_block: int, end: int) -> float:
    """The loudest block that ends within `LOUD_WINDOW_S` before sample `end`, of `levels`
    (block `first_block` onwards, as `block_levels` made them); 0.0 when none does."""
    window = round(LOUD_WINDOW_S * 16000)
    lo = max(first_block, (end - window) // LEVEL_BLOCK)
    hi = end // LEVEL_BLOCK
    seen = levels[max(0, lo - first_block) : max(0, hi - first_block)]
    return float(seen.max()) if len(seen) else 0.0


class Levels:
    """How loud the last few seconds of a stream were, block by block, against what a block
    had to beat: `min_rms`, or the daemon's own voice at the microphone while it speaks (the
    echo floor: the canceller leaves a trace of the reply, and the reply is an espeak-ng
    voice, the kind the models were trained on)."""

    KEEP = 64
    """Blocks kept (2.56 s: more than `LOUD_WINDOW_S` behind the newest embedding)."""

    def __init__(self, min_rms: float) -> None:
        self.min_rms = min_rms
        self._margins = np.zeros(0, dtype=np.float32)
        """Each block's level over the level it had to beat."""
        self._first = 0
        self._pending = np.zeros(0, dtype=np.int16)

    def feed(self, samples: npt.NDArray[np.int16], floor: float = 0.0) -> None:
        """More of the stream; `floor`: the echo floor while it played (0: nothing played)."""
        pending = np.concatenate([self._pending, samples])
        new = block_levels(pending)
        self._pending = pending[len(new) * LEVEL_BLOCK :]
        needed = max(self.min_rms, floor)
        margin = new / needed if needed > 0 else np.full(len(new), np.inf, dtype=np.float32)
        margins = np.concatenate([self._margins, margin])
        drop = max(0, len(margins) - self.KEEP)
        self._margins, self._first = margins[drop:], self._first + drop

    def loud(self, end: int) -> bool:
        """Whether the second before stream sample `end` has a block loud enough (with neither
        `min_rms` nor an echo floor: any block)."""
        return loudest(self._margins, self._first, end) >= 1.0


def _quiet(n: int) -> npt.NDArray[np.int16]:
    """A microphone's floor, the same every time: faint noise, not digital silence."""
    rng = np.random.default_rng(0)
    return np.round(rng.standard_normal(n) * 3.0).astype(np.int16)
