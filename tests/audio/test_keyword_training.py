"""`voiced train-keyword`: a tiny training from the command line makes a model the daemon can
load, and the same seed makes the same clips and the same weights."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from voiced.audio.keyword.model import KeywordModel
from voiced.audio.keyword.training import clips, fit, rooms, texts, voices
from voiced.audio.keyword.training.recipe import HELD_OUT, Planner, Recipe, plan

from tests.audio.clips import HAVE_TOOLS

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="espeak-ng and sox make the speech")


def voiced(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m voiced ARGS`, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "voiced", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
@pytest.mark.timeout(660)
def test_train_keyword_writes_a_model_the_daemon_reads(tmp_path: Path) -> None:
    out = tmp_path / "hey_gofa.npz"
    args = ("train-keyword", "hey gofa", "--size", "tiny", "--out", str(out), "--cell", "sandwich")
    done = voiced(*args, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    model = KeywordModel.load(out)
    assert model.phrase == "hey gofa"
    assert 0.5 <= model.threshold <= 0.98
    made = model.info.made
    assert "train-keyword" in made["command"] and "tiny" in made["command"]
    assert set(made["held_out"]) == set(HELD_OUT)
    assert made["voices"] > 0 and made["clips"] > 50
    assert f"{out}:" in done.stdout and "threshold" in done.stdout


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return voiced("train-keyword", *args)

    missing = run("hey gofa", "--out", str(tmp_path / "no/such/dir/m.npz"))
    assert missing.returncode == 1 and "its folder does not exist" in missing.stderr
    empty = run("hey gofa", "--out", str(tmp_path / "m.npz"), "--negatives", "/nowhere/*.flac")
    assert empty.returncode == 1 and "no file matches" in empty.stderr
    digits = run("take 5", "--out", str(tmp_path / "m.npz"))
    assert digits.returncode == 2 and "letters only" in digits.stderr
    text = tmp_path / "notes.flac"
    text.write_text("not a recording", encoding="utf-8")
    noise = run("hey gofa", "--out", str(tmp_path / "m.npz"), "--noise", str(text))
    assert noise.returncode == 1 and "no audio in it" in noise.stderr
    folder = run("hey gofa", "--out", str(tmp_path))
    assert folder.returncode == 1 and "is a folder" in folder.stderr
    takes = [str(tmp_path / "m.npz")] * 2
    unknown = voiced("enroll", "hey gofa", *takes, "--out", "x.npz")
    assert unknown.returncode == 2 and "--base FILE" in unknown.stderr


def test_the_same_seed_makes_the_same_clips_and_weights() -> None:
    recipe = Recipe("hey gofa", size="tiny", engines=("espeak", "joe"))
    pool = voices.all_voices(["espeak", "joe"])
    noise = rooms.NoiseSources([], [])
    first, again = plan(recipe, pool, noise.kinds()), plan(recipe, pool, noise.kinds())
    assert first.train == again.train
    clips.init_worker(1, 2, noise, recipe.labelling)
    assert clips._WORKER is not None
    picked = [job for job in first.train if job[0].voice is not None][:6]
    a = [clips.render(spec, clips._WORKER, group) for spec, group in picked]
    b = [clips.render(spec, clips._WORKER, group) for spec, group in picked]
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x.vectors, y.vectors) and np.array_equal(x.labels, y.labels)
    data = fit.examples([(r.vectors, r.labels, 1.0) for r in a], 4, 10.0)
    if (data.labels == 1).any() and (data.labels == 0).any():
        settings = fit.FitSettings(steps=30, batch=32, hidden=(4, 4))
        w1, w2 = fit.fit(data, settings).weights, fit.fit(data, settings).weights
        assert all(np.array_equal(w1[k], w2[k]) for k in w1)


def test_near_words_are_never_the_phrase() -> None:
    rng = np.random.default_rng(0)
    for phrase in ("stop", "computer", "hey gofa"):
        near = texts.near_words(phrase, rng, edits=10)
        assert near and phrase not in near
        assert texts.phonemes(phrase) not in {texts.phonemes(w) for w in near}


def test_held_out_voices_are_never_drawn() -> None:
    pool = voices.all_voices(["espeak", "flite", "festival"])
    planner = Planner(Recipe("stop"), pool)
    keys = {v.key for v in planner.voices + planner.validation_voices}
    assert not keys & HELD_OUT


@pytest.mark.slow
@pytest.mark.timeout(660)
def test_enroll_adapts_a_shipped_model_to_recorded_takes(tmp_path: Path) -> None:
    from tests.audio.clips import Clips

    clips = Clips(tmp_path)
    takes = [
        str(clips.speech("stop", voice, rate))
        for voice, rate in (("en-us", 150), ("en-us", 170), ("en-us", 190))
    ]
    out = tmp_path / "stop_enrolled.npz"
    done = voiced("enroll", "stop", *takes, "--out", str(out), "--size", "tiny", timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    model = KeywordModel.load(out)
    assert model.phrase == "stop" and model.info.made["enrolled"]["takes"] == 3
    assert 0.5 <= model.threshold <= 0.98
    silent = tmp_path / "silent.wav"
    clips_silence = clips.silence(1.0)
    takes = [str(clips_silence)] * 2
    bad = voiced("enroll", "stop", *takes, "--out", str(silent), timeout=120)
    assert bad.returncode == 1 and "take 1: no speech heard" in bad.stderr
