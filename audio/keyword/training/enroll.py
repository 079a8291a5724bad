"""`voiced enroll`: a keyword model adapted to the people who will say the phrase.

A few takes of the operators saying the phrase (recordings, or the microphone at install time)
become many positives (rooms, microphones, noise, a little band warp: the same voice in other
places), a small synthetic set gives the negatives (near words, lone words, talk, noise), and the
shipped model is fitted further on both, starting from its own weights. The threshold is set so
that the adapted model accepts no more of the synthetic negatives than the model it came from.
"""

from __future__ import annotations

import tempfile
import time
import wave
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from voiced.audio.keyword.model import KeywordModel
from voiced.audio.keyword.training import fit, rooms, voices
from voiced.audio.keyword.training.clips import ClipSpec, Rendered
from voiced.audio.keyword.training.recipe import (
    HARD_WEIGHT,
    NEGATIVE_WEIGHT,
    Planner,
    Recipe,
    clip_scores,
    near_words,
    render_all,
)
from voiced.audio.keyword.training.voices import RATE

COPIES = 40
"""Positives made from each take."""
NEGATIVES = {"near": 500, "words": 300, "talk": 100, "noise": 60}
"""Synthetic negatives (about a minute and a half of rendering on two cores)."""
STEPS = 1500
TINY = 0.1
"""`size="tiny"`: this share of all of the above (a smoke test)."""


def write_take(path: Path, samples: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.clip(samples, -32768, 32767).astype(np.int16).tobytes())


def take_problems(takes: Sequence[np.ndarray]) -> list[str]:
    """What makes a take unusable: too short, too quiet, clipped."""
    found = []
    for i, take in enumerate(takes, 1):
        said = voices.trim(take.astype(np.float32))
        peak = float(np.abs(take).max()) if len(take) else 0.0
        if len(said) < 0.2 * RATE or peak < 300:
            found.append(f"take {i}: no speech heard (too short or too quiet)")
        elif float(np.mean(np.abs(take) >= 32700)) > 0.001:
            found.append(f"take {i}: clipped (the microphone is too loud)")
        elif len(said) > 2.5 * RATE:
            found.append(f"take {i}: {len(said) / RATE:.1f} s of speech: say the phrase alone")
    return found


def enroll(
    base: KeywordModel,
    takes: Sequence[np.ndarray],
    out: Path,
    *,
    seed: int = 1,
    jobs: int = 2,
    say: Callable[[str], None] = print,
    command: str = "",
    size: str = "full",
) -> KeywordModel:
    """The model `base` adapted to `takes` (16 kHz int16 recordings of the phrase), written to
    `out`."""
    began = time.monotonic()
    share = TINY if size == "tiny" else 1.0
    rendered = _render(base, takes, seed, jobs, share, say)
    train, check = _split(rendered)
    fitted = _adapt(base, train, seed, share)
    adapted = KeywordModel(base.info, fitted.weights)
    _, base_groups = clip_scores(base, check, base.info.frames)
    pos, groups = clip_scores(adapted, check, base.info.frames)
    base_neg, neg = _pooled(base_groups), _pooled(groups)
    threshold = matched_threshold(neg, int((base_neg >= base.threshold).sum()))
    made: dict[str, Any] = {
        **base.info.made,
        "enrolled": {
            "command": command,
            "takes": len(takes),
            "seed": seed,
            "base_threshold": base.threshold,
            "takes_recall": round(float((pos >= threshold).mean()), 4) if len(pos) else None,
            "seconds": round(time.monotonic() - began),
        },
    }
    model = KeywordModel(
        replace(base.info, threshold=round(threshold, 4), made=made), fitted.weights
    )
    model.save(out)
    say(
        f"wrote {out}: threshold {threshold:.3f} (was {base.threshold:.3f}), "
        f"{made['enrolled']['seconds']} s"
    )
    return model


def _render(
    base: KeywordModel,
    takes: Sequence[np.ndarray],
    seed: int,
    jobs: int,
    share: float,
    say: Callable[[str], None],
) -> list[Rendered]:
    """Copies of each take in rooms and noise (the positives) and synthetic negatives: near
    words, the cells' words, talk and noise alone."""
    phrase = base.phrase
    copies = max(2, round(COPIES * share))
    counts = {kind: max(2, round(n * share)) for kind, n in NEGATIVES.items()}
    recipe = Recipe(phrase, size="small", seed=seed, jobs=jobs, frames=base.info.frames)
    pool = voices.all_voices([e for e, why in voices.available_engines().items() if why is None])
    noise = rooms.NoiseSources([], [])
    kinds = noise.kinds()
    planner = Planner(recipe, pool)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="voiced-enroll-") as tmp:
        paths = []
        for i, take in enumerate(takes):
            paths.append(Path(tmp) / f"take{i}.wav")
            write_take(paths[-1], take)
        positives = [_copy(planner, str(path), kinds, rng) for path in paths for _ in range(copies)]
        jobs_list: list[tuple[ClipSpec, str]] = [(spec, "positive") for spec in positives]
        near = near_words(recipe, planner.rng)
        jobs_list += [
            (planner.near(planner.voices, near, kinds), "near") for _ in range(counts["near"])
        ]
        jobs_list += [
            (planner.words(planner.voices, kinds), "words") for _ in range(counts["words"])
        ]
        jobs_list += [
            (planner.talking(planner.voices, kinds), "talk") for _ in range(counts["talk"])
        ]
        jobs_list += [(planner.quiet(kinds), "noise") for _ in range(counts["noise"])]
        say(
            f"{phrase!r}: {len(takes)} takes, {len(positives)} positives, "
            f"{len(jobs_list) - len(positives)} synthetic negatives"
        )
        return render_all(jobs_list, recipe, noise, say)


def _adapt(base: KeywordModel, train: Sequence[Rendered], seed: int, share: float) -> fit.Fitted:
    """`base` fitted further on `train`, from its own weights, at its own shape."""
    data = fit.examples(
        [(r.vectors, r.labels, NEGATIVE_WEIGHT.get(r.group, 1.0)) for r in train],
        base.info.frames,
        HARD_WEIGHT,
    )
    w0, w1 = base.weights["w0"], base.weights["w1"]
    settings = fit.FitSettings(
        hidden=(w0.shape[1], w1.shape[1]),
        per_frame=w0.shape[0] == 96,
        steps=max(50, round(STEPS * share)),
        learning_rate=3e-4,
        seed=seed,
        hard_from=0.2,
    )
    return fit.fit(data, settings, start=base.weights)


def _pooled(groups: dict[str, np.ndarray]) -> np.ndarray:
    return np.concatenate(list(groups.values())) if groups else np.zeros(0)


def matched_threshold(negatives: np.ndarray, allowed: int) -> float:
    """The lowest threshold (0.5 to 0.98) that no more than `allowed` of these negative clips
    reach: the adapted model lets through no more than the model it came from."""
    top = np.sort(negatives)[::-1]
    lowest = float(top[allowed]) + 1e-3 if allowed < len(top) else 0.5
    return float(min(0.98, max(0.5, lowest)))


def _copy(planner: Planner, path: str, kinds: Sequence[str], rng: np.random.Generator) -> ClipSpec:
    """One take in a random room, microphone and noise, its bands warped a little."""
    acoustics = planner.acoustics(0.0, 0.6, 0.7, 0.8, kinds, (0.0, 30.0))
    warp = float(rng.uniform(0.96, 1.04))
    return ClipSpec(
        None,
        (),
        acoustics=replace(acoustics, mel_warp=warp),
        phrase_at=0,
        lead_s=float(rng.uniform(1.6, 2.0)),
        tail_s=float(rng.uniform(0.5, 0.7)),
        recording=path,
    )


def _split(rendered: list[Rendered]) -> tuple[list[Rendered], list[Rendered]]:
    """Every fifth clip of each kind is kept to set the threshold."""
    train: list[Rendered] = []
    check: list[Rendered] = []
    seen: dict[str, int] = {}
    for clip in rendered:
        n = seen.get(clip.group, 0)
        seen[clip.group] = n + 1
        (check if n % 5 == 4 else train).append(clip)
    return train, check
