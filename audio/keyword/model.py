"""A keyword model: a small network over the last `frames` speech embeddings, `spacing_ms`
apart, that says how sure it is that the phrase has just been said.

The file is a numpy `.npz` (no pickle): the layers' weights and a JSON header with the phrase,
the view, the threshold, and how the model was made (the command, the voices, the figures it
reached on held-out voices). `voiced train-keyword` writes it; the daemon only reads it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from voiced.audio.keyword.features import EMBED_DIM

from voiced.errors import AudioError

FORMAT = 1
MODELS = Path(__file__).resolve().parent / "models"
"""The models that ship with voiced (`computer`, `stop`, `halt`, `freeze`)."""

Floats = npt.NDArray[np.float32]


class KeywordModelError(AudioError, ValueError):
    """A keyword model file that cannot be used; the message names the file and why."""


@dataclass(frozen=True)
class ModelInfo:
    """The header of a model file."""

    phrase: str
    """What it listens for, lower case ("computer", "hey gofa")."""
    frames: int
    """Embeddings in the head's view."""
    spacing_ms: int
    """Time between the embeddings of the view (80)."""
    threshold: float
    """Score at which the daemon takes the phrase as said."""
    made: dict[str, Any] = field(default_factory=dict)
    """How it was made: command, seed, voices, clips, figures."""
    format: int = FORMAT


def logits(weights: dict[str, Floats], views: Floats) -> Floats:
    """The head's output before the logistic, for (n, frames, 96) views: standardise, then
    three layers, ReLU between them. When the first layer is 96 wide it is applied to each
    embedding of the view alike (the same few hundred weights at every moment), and the second
    layer sees all moments at once."""
    n = len(views)
    x = (views.reshape(n, -1) - weights["mean"]) / weights["scale"]
    w0 = weights["w0"]
    if w0.shape[0] == EMBED_DIM and x.shape[1] != EMBED_DIM:
        x = np.maximum(x.reshape(-1, EMBED_DIM) @ w0 + weights["b0"], 0.0).reshape(n, -1)
    else:
        x = np.maximum(x @ w0 + weights["b0"], 0.0)
    x = np.maximum(x @ weights["w1"] + weights["b1"], 0.0)
    return np.asarray((x @ weights["w2"] + weights["b2"])[:, 0], dtype=np.float32)


class KeywordModel:
    """The head: standardise, two hidden layers (ReLU), one logistic output."""

    def __init__(self, info: ModelInfo, weights: dict[str, Floats]) -> None:
        self.info = info
        self.weights = weights

    @property
    def phrase(self) -> str:
        return self.info.phrase

    @property
    def threshold(self) -> float:
        return self.info.threshold

    def scores(self, views: Floats) -> Floats:
        """(n, frames, 96) views -> (n,) scores in 0..1."""
        return (1.0 / (1.0 + np.exp(-np.clip(logits(self.weights, views), -40, 40)))).astype(
            np.float32
        )

    def save(self, path: Path) -> None:
        """Write the model (to a temporary name first, so a reader never sees half a file)."""
        header = json.dumps(asdict(self.info), sort_keys=True)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as f:
            arrays: dict[str, Any] = {"header": np.array(header), **self.weights}
            np.savez_compressed(f, **arrays)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> KeywordModel:
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: np.asarray(data[k]) for k in data.files}
        except FileNotFoundError:
            raise KeywordModelError(f"{path}: no such file") from None
        except (OSError, ValueError) as exc:
            # numpy tries any file that is not a zip archive as a pickle, and says so.
            why = "not an .npz archive" if "pickle" in str(exc) else str(exc)
            raise KeywordModelError(f"{path}: not a keyword model ({why})") from exc
        try:
            header = json.loads(str(arrays.pop("header")))
            info = ModelInfo(**header)
        except (KeyError, TypeError, ValueError) as exc:
            raise KeywordModelError(f"{path}: no usable header ({exc})") from exc
        if info.format != FORMAT:
            raise KeywordModelError(f"{path}: format {info.format}, this voiced reads {FORMAT}")
        weights = {k: v.astype(np.float32) for k, v in arrays.items()}
        _check_shapes(path, info, weights)
        return cls(info, weights)


def _check_shapes(path: Path, info: ModelInfo, weights: dict[str, Floats]) -> None:
    needed = ["mean", "scale", "w0", "b0", "w1", "b1", "w2", "b2"]
    missing = [k for k in needed if k not in weights]
    if missing:
        raise KeywordModelError(f"{path}: missing {', '.join(missing)}")
    width = info.frames * EMBED_DIM
    w0, w1 = weights["w0"], weights["w1"]
    per_frame = w0.shape[0] == EMBED_DIM and w1.shape[0] == info.frames * w0.shape[1]
    ok = (per_frame or w0.shape[0] == width) and weights["mean"].shape == (width,)
    ok = ok and weights["w2"].shape[1] == 1 and info.spacing_ms in (40, 80, 120, 160)
    ok = ok and 0.0 < info.threshold < 1.0
    if not ok:
        raise KeywordModelError(
            f"{path}: layer shapes do not fit a view of {info.frames} embeddings "
            f"({weights['w0'].shape}), or spacing/threshold out of range"
        )


def shipped(name: str) -> Path:
    """The path of a model that ships with voiced ("computer", "stop", ...)."""
    return MODELS / f"{name.replace(' ', '_')}.npz"


def resolve(ref: str, file: Callable[[str], Path] = Path) -> Path:
    """A model named in the config: a shipped model's name ("stop", "computer") or a file
    path (made a path by `file`: relative to the config file, say)."""
    if "/" not in ref and not ref.endswith(".npz"):
        return shipped(ref)
    return file(ref)
