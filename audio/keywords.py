"""The wake word and the stop words, heard by trained keyword models (`voiced.audio.keyword`)
from one feature stream, every 40 ms of the input, whatever the segmenter and Whisper do.

The listener feeds every frame here once; a wake hit arms the wake gate (`WakeGate.arm`), a
stop hit goes to the keyword stop spotter (`stopspot.KeywordStopSpotter`), which acts on it
while something moves or the daemon speaks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog
from voiced.audio.convert import Pcm
from voiced.audio.keyword.model import MODELS, KeywordModel, KeywordModelError, resolve
from voiced.audio.keyword.spotter import KeywordSpotter
from voiced.audio.settings import SAMPLE_RATE

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class KeywordHit:
    """A keyword heard."""

    phrase: str
    role: str
    """"wake" or "stop"."""
    score: float
    t: float
    """Audio clock at the end of the audio the model decided on (just after the word)."""


@dataclass(frozen=True)
class KeywordModels:
    """Which models to listen with: the wake word's (None: not by keyword) and the stop
    words' (empty: not by keyword), each with an optional threshold of its own."""

    wake: KeywordModel | None
    stops: tuple[KeywordModel, ...]
    wake_threshold: float = 0.0
    stop_threshold: float = 0.0
    """0.0: the model's own threshold."""
    min_rms: float = 0.0
    """A model fires only on a second of input with a 40 ms block at least this loud (16-bit
    RMS; `[audio] rms_gate`, what the segmenter counts as possible speech); 0.0: any level.
    Louder than the daemon's own voice while it speaks, in any case."""

    @property
    def empty(self) -> bool:
        return self.wake is None and not self.stops


def load_models(
    refs: Sequence[str], file: Callable[[str], Path] = Path
) -> tuple[KeywordModel, ...]:
    """Models named in the config (shipped names or paths); KeywordModelError names the bad one."""
    return tuple(_load(ref, file) for ref in refs)


def _load(ref: str, file: Callable[[str], Path]) -> KeywordModel:
    path = resolve(ref, file)
    if path.parent == MODELS and not path.exists():
        names = ", ".join(sorted(p.stem for p in MODELS.glob("*.npz")))
        raise KeywordModelError(
            f"{ref!r}: no model of that name ships with voiced ({names}); give the path of a "
            "file made by voiced train-keyword"
        )
    return KeywordModel.load(path)


def wake_model(ref: str, wake_word: str, file: Callable[[str], Path] = Path) -> KeywordModel:
    """The wake word's model: `ref`, or the shipped model named after the wake word."""
    path = resolve(ref or wake_word, file)
    if not ref and not path.exists():
        raise KeywordModelError(
            f"no keyword model ships for the wake word {wake_word!r}: train one (voiced "
            f"train-keyword {wake_word!r} --out FILE) and name it in [wake] keyword_model, or "
            'use [wake] engine = "stt"'
        )
    model = KeywordModel.load(path)
    if model.phrase != " ".join(wake_word.lower().split()):
        raise KeywordModelError(
            f"{path}: listens for {model.phrase!r}, but the wake word is {wake_word!r} (train "
            f"one: voiced train-keyword {wake_word!r} --out FILE)"
        )
    return model


class Keywords:
    """One spotter for all the models; `feed` every input frame."""

    def __init__(self, models: KeywordModels) -> None:
        self.roles: dict[str, str] = {}
        thresholds: dict[str, float] = {}
        chosen: list[KeywordModel] = []
        if models.wake is not None:
            chosen.append(models.wake)
            self.roles[models.wake.phrase] = "wake"
            if models.wake_threshold:
                thresholds[models.wake.phrase] = models.wake_threshold
        for model in models.stops:
            if model.phrase in self.roles:
                continue
            chosen.append(model)
            self.roles[model.phrase] = "stop"
            if models.stop_threshold:
                thresholds[model.phrase] = models.stop_threshold
        self.spotter = KeywordSpotter(chosen, thresholds=thresholds, min_rms=models.min_rms)
        self.hits = 0

    @property
    def scores(self) -> dict[str, float]:
        """Each phrase's latest score."""
        return dict(self.spotter.scores)

    def feed(self, frame: Pcm, first_sample: int, echo_floor: float = 0.0) -> list[KeywordHit]:
        """The keywords heard by the end of `frame` (which starts at `first_sample`);
        `echo_floor`: the level the daemon's own voice reaches in it (a word must beat it)."""
        del first_sample  # the spotter counts samples itself, from the first frame fed
        hits = []
        for found in self.spotter.feed(frame, echo_floor):
            t = found.sample / SAMPLE_RATE
            hit = KeywordHit(found.phrase, self.roles[found.phrase], round(found.score, 4), t)
            log.info(
                "keyword heard", phrase=hit.phrase, role=hit.role, score=hit.score, t=round(t, 3)
            )
            hits.append(hit)
        self.hits += len(hits)
        return hits
