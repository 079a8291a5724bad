"""Keyword model files: what is written is read back the same, and a file that cannot be a
model is refused with its name and the reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from voiced.audio.keyword.model import (
    MODELS,
    KeywordModel,
    KeywordModelError,
    ModelInfo,
    resolve,
    shipped,
)


def _model(frames: int = 4, threshold: float = 0.7) -> KeywordModel:
    rng = np.random.default_rng(0)
    width = frames * 96
    weights = {
        "mean": np.zeros(width, np.float32),
        "scale": np.ones(width, np.float32),
        "w0": rng.standard_normal((width, 8)).astype(np.float32),
        "b0": np.zeros(8, np.float32),
        "w1": rng.standard_normal((8, 4)).astype(np.float32),
        "b1": np.zeros(4, np.float32),
        "w2": rng.standard_normal((4, 1)).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }
    return KeywordModel(ModelInfo("hey gofa", frames, 80, threshold, {"seed": 3}), weights)


def test_a_saved_model_reads_back_the_same(tmp_path: Path) -> None:
    model = _model()
    path = tmp_path / "m.npz"
    model.save(path)
    again = KeywordModel.load(path)
    assert again.info == model.info
    views = np.random.default_rng(1).standard_normal((5, 4, 96)).astype(np.float32)
    assert np.allclose(again.scores(views), model.scores(views))
    assert ((again.scores(views) >= 0) & (again.scores(views) <= 1)).all()
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"not a model at all", "not a keyword model"),
        (None, "no such file"),
    ],
)
def test_unusable_files_are_named(tmp_path: Path, content: bytes | None, why: str) -> None:
    path = tmp_path / "bad.npz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(KeywordModelError, match=why) as caught:
        KeywordModel.load(path)
    assert str(path) in str(caught.value)


def test_missing_layers_and_wrong_shapes_are_refused(tmp_path: Path) -> None:
    model = _model()
    weights = dict(model.weights)
    del weights["w1"]
    path = tmp_path / "short.npz"
    KeywordModel(model.info, {**model.weights}).save(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != "w1"}
    np.savez(path, **arrays)
    with pytest.raises(KeywordModelError, match="missing w1"):
        KeywordModel.load(path)
    wrong = KeywordModel(ModelInfo("x", 6, 80, 0.5), model.weights)  # 6 frames, layers for 4
    wrong.save(path)
    with pytest.raises(KeywordModelError, match="do not fit"):
        KeywordModel.load(path)


def test_a_newer_format_is_refused(tmp_path: Path) -> None:
    model = _model()
    info = ModelInfo(**{**model.info.__dict__, "format": 99})
    path = tmp_path / "new.npz"
    KeywordModel(info, model.weights).save(path)
    with pytest.raises(KeywordModelError, match="format 99"):
        KeywordModel.load(path)


def test_names_are_shipped_models_and_paths_are_files(tmp_path: Path) -> None:
    assert resolve("stop") == MODELS / "stop.npz" == shipped("stop")
    assert resolve("models/mine.npz", lambda p: tmp_path / p) == tmp_path / "models/mine.npz"


@pytest.mark.parametrize("name", ["computer", "stop", "halt", "freeze"])
def test_every_shipped_model_loads_and_says_how_it_was_made(name: str) -> None:
    model = KeywordModel.load(shipped(name))
    assert model.phrase == name
    made = model.info.made
    assert made["command"].startswith("voiced train-keyword")
    assert made["held_out"] and made["validation"]["positives"] > 0
