"""Fitting the head in numpy: two ReLU layers and a logistic output, Adam, class-balanced
batches, and more of the negatives it gets wrong as training goes on (hard negatives).

There is no deep-learning framework at run time, and none is needed to train a network this
size: a few hundred thousand multiply-adds per view, a few minutes on two cores.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from voiced.audio.keyword.features import EMBED_DIM
from voiced.audio.keyword.model import logits

Floats = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class FitSettings:
    hidden: tuple[int, int] = (32, 32)
    """Units of the first layer (per embedding when `per_frame`) and of the second."""
    per_frame: bool = True
    """The first layer looks at each embedding of the view alike (far fewer weights)."""
    steps: int = 6000
    batch: int = 512
    positive_share: float = 0.3
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    hard_from: float = 0.4
    """After this share of the steps, half of each batch's negatives are the hardest ones."""
    hard_pool: int = 20000
    dropout: float = 0.2
    seed: int = 0


@dataclass
class Examples:
    """Views into one long array of embeddings: an example is the view ending at `ends[i]`."""

    vectors: Floats
    """(N, 96) every clip's embeddings one after another."""
    ends: Ints
    """Index in `vectors` of the last embedding of each example's view."""
    labels: npt.NDArray[np.int8]
    weights: Floats
    """How much each negative counts when negatives are drawn."""
    frames: int

    def views(self, index: Ints) -> Floats:
        offsets = np.arange(-self.frames + 1, 1)
        return np.asarray(self.vectors[self.ends[index][:, None] + offsets], dtype=np.float32)


HARD = 2
"""A clip label: a negative view just after a near word (`clips.HARD`)."""


def examples(
    clips: list[tuple[Floats, npt.NDArray[np.int8], float]], frames: int, hard_weight: float
) -> Examples:
    """Every labelled view of every clip ((embeddings, labels, weight of its negatives)); the
    views just after a near word weigh `hard_weight` times more."""
    vectors, ends, labels, weights = [], [], [], []
    base = 0
    for emb, lab, weight in clips:
        usable = np.arange(frames - 1, len(emb))
        usable = usable[lab[usable] >= 0]
        vectors.append(emb)
        ends.append(usable + base)
        hard = lab[usable] == HARD
        labels.append(np.where(hard, 0, lab[usable]).astype(np.int8))
        weights.append(np.where(hard, weight * hard_weight, weight).astype(np.float32))
        base += len(emb)
    return Examples(
        np.concatenate(vectors).astype(np.float32),
        np.concatenate(ends).astype(np.int64),
        np.concatenate(labels).astype(np.int8),
        np.concatenate(weights),
        frames,
    )


class Mlp:
    """Three layers; with `frames`, the first is applied to each embedding of the view alike
    (as `model.logits` reads it)."""

    def __init__(self, sizes: list[int], rng: np.random.Generator, frames: int = 0) -> None:
        self.frames = frames
        shapes = list(itertools.pairwise(sizes))
        if frames:
            shapes = [(EMBED_DIM, sizes[1]), (frames * sizes[1], sizes[2]), (sizes[2], sizes[3])]
        self.params: dict[str, Floats] = {}
        for i, (a, b) in enumerate(shapes):
            self.params[f"w{i}"] = (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32)
            self.params[f"b{i}"] = np.zeros(b, np.float32)
        self.depth = len(shapes)

    def forward(
        self, x: Floats, dropout: float = 0.0, rng: np.random.Generator | None = None
    ) -> tuple[Floats, list[Floats]]:
        n = len(x)
        if self.frames:
            x = x.reshape(-1, EMBED_DIM)
        acts = [x]
        for i in range(self.depth):
            x = x @ self.params[f"w{i}"] + self.params[f"b{i}"]
            if i < self.depth - 1:
                x = np.maximum(x, 0)
                if dropout and rng is not None:
                    x = x * (rng.random(x.shape) >= dropout) / (1 - dropout)
                if i == 0 and self.frames:
                    x = x.reshape(n, -1)
            acts.append(x)
        return x[:, 0], acts

    def backward(self, acts: list[Floats], grad_out: Floats) -> dict[str, Floats]:
        grads: dict[str, Floats] = {}
        g = grad_out[:, None]
        for i in reversed(range(self.depth)):
            if i == 0 and self.frames:
                g = g.reshape(-1, self.params["w0"].shape[1])
            grads[f"w{i}"] = acts[i].T @ g
            grads[f"b{i}"] = g.sum(axis=0)
            if i > 0:
                g = (g @ self.params[f"w{i}"].T) * (acts[i] > 0)
        return grads


class Adam:
    def __init__(self, params: dict[str, Floats], lr: float, decay: float) -> None:
        self.lr, self.decay, self.t = lr, decay, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict[str, Floats], grads: dict[str, Floats], lr: float) -> None:
        self.t += 1
        for k, g in grads.items():
            if k.startswith("w"):
                g = g + self.decay * params[k]
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m = self.m[k] / (1 - 0.9**self.t)
            v = self.v[k] / (1 - 0.999**self.t)
            params[k] -= (lr * m / (np.sqrt(v) + 1e-8)).astype(np.float32)


@dataclass
class Fitted:
    weights: dict[str, Floats]
    """mean, scale, w0..w2, b0..b2 (as `KeywordModel` reads them)."""
    losses: list[float]


def fit(
    data: Examples,
    settings: FitSettings,
    progress: Callable[[int, float], None] = lambda step, loss: None,
    start: dict[str, Floats] | None = None,
) -> Fitted:
    """The head fitted to `data`; from `start` (a model's weights: its standardisation and
    layers are kept as the starting point) or from scratch."""
    rng = np.random.default_rng(settings.seed)
    positives = np.nonzero(data.labels == 1)[0]
    negatives = np.nonzero(data.labels == 0)[0]
    if len(positives) == 0 or len(negatives) == 0:
        raise ValueError("training needs positive and negative examples")
    width = data.frames * EMBED_DIM
    net = Mlp([width, *settings.hidden, 1], rng, data.frames if settings.per_frame else 0)
    mean, scale = _starting_point(net, data, start, rng)
    adam = Adam(net.params, settings.learning_rate, settings.weight_decay)
    neg_p = data.weights[negatives] / data.weights[negatives].sum()
    hard: Ints = np.zeros(0, np.int64)
    losses: list[float] = []
    n_pos = round(settings.batch * settings.positive_share)
    for step in range(settings.steps):
        if step >= settings.hard_from * settings.steps and step % 500 == 0:
            hard = _hardest(net, data, negatives, mean, scale, settings.hard_pool, rng)
        index = _batch(positives, (negatives, neg_p, hard), n_pos, settings.batch, rng)
        y = (data.labels[index] == 1).astype(np.float32)
        x = (data.views(index).reshape(len(index), -1) - mean) / scale
        out, acts = net.forward(x, settings.dropout, rng)
        p = 1 / (1 + np.exp(-np.clip(out, -40, 40)))
        loss = float(-np.mean(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7)))
        grads = net.backward(acts, ((p - y) / len(y)).astype(np.float32))
        lr = settings.learning_rate * 0.5 * (1 + np.cos(np.pi * step / settings.steps))
        adam.step(net.params, grads, lr)
        losses.append(loss)
        if step % 500 == 0:
            progress(step, float(np.mean(losses[-500:])))
    return Fitted({"mean": mean, "scale": scale, **net.params}, losses)


def _starting_point(
    net: Mlp, data: Examples, start: dict[str, Floats] | None, rng: np.random.Generator
) -> tuple[Floats, Floats]:
    """The standardisation (mean, scale): from a sample of `data`, or `start`'s own, whose
    layers `net` then starts from."""
    if start is None:
        sample = rng.choice(len(data.ends), min(20000, len(data.ends)), replace=False)
        flat = data.views(sample).reshape(len(sample), -1)
        mean = flat.mean(axis=0).astype(np.float32)
        scale = (flat.std(axis=0) + 1e-3).astype(np.float32)
        return mean, scale
    net.params = {k: v.copy() for k, v in start.items() if k[0] in "wb"}
    return start["mean"], start["scale"]


def _batch(
    positives: Ints,
    negatives: tuple[Ints, Floats, Ints],
    n_pos: int,
    size: int,
    rng: np.random.Generator,
) -> Ints:
    """One batch's example indices: `n_pos` positives, the rest negatives by weight, half of
    them from the hardest found so far (once there are any)."""
    pool, weights, hard = negatives
    pos = rng.choice(positives, n_pos)
    n_neg = size - n_pos
    if len(hard):
        neg = np.concatenate(
            [rng.choice(pool, n_neg - n_neg // 2, p=weights), rng.choice(hard, n_neg // 2)]
        )
    else:
        neg = rng.choice(pool, n_neg, p=weights)
    return np.concatenate([pos, neg])


def _hardest(
    net: Mlp,
    data: Examples,
    negatives: Ints,
    mean: Floats,
    scale: Floats,
    pool: int,
    rng: np.random.Generator,
) -> Ints:
    """The negatives scoring highest now (from a random sample of them, for speed)."""
    sample = rng.choice(negatives, min(len(negatives), pool * 5), replace=False)
    scores = score_views({**net.params, "mean": mean, "scale": scale}, data, sample)
    return np.asarray(sample[np.argsort(scores)[-pool:]], dtype=np.int64)


def score_views(
    weights: dict[str, Floats], data: Examples, index: Ints, batch: int = 4096
) -> Floats:
    """The head's logits for the examples `index`."""
    out = [logits(weights, data.views(index[i : i + batch])) for i in range(0, len(index), batch)]
    return np.concatenate(out) if out else np.zeros(0, np.float32)
