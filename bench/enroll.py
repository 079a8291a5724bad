"""Does enrollment pay? For each of a few speakers no model was trained on (`recipe.HELD_OUT`),
four takes of the phrase (as an operator records them at installation: clean, at their own
pace) adapt the shipped model (`voiced enroll`); twelve other takes by the same speaker, held
apart, are then heard by the shipped and the adapted model, clean and in pink, babble and
kitchen noise at 10 dB. False alarms: the coffee orders' test half and near-word talk by the
other held-out voices, per hour, for both models.

    .venv/bin/python -m bench.enroll [--phrases computer,stop] [--speakers 4]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from voiced.audio.convert import read_audio
from voiced.audio.keyword.features import SpeechEmbedding
from voiced.audio.keyword.model import KeywordModel, shipped
from voiced.audio.keyword.training import rooms, voices
from voiced.audio.keyword.training.enroll import enroll
from voiced.audio.keyword.training.recipe import HELD_OUT
from voiced.audio.keyword.training.voices import RATE, Delivery, Voice

from bench.keywords import (
    DEFAULT_DATA,
    NEAR_WAKE_PROSE,
    RESULTS,
    concatenated,
    firings,
    in_noise,
    talk_audio,
    traces,
)
from bench.sessions import NEAR_STOP_PROSE, PROSE

SPEAKERS = (
    "festival:ked_diphone",
    "flite:awb",
    "espeak:en-gb-x-rp",
    "espeak:en-us+Alex",
    "espeak:en-gb+f3",
    "espeak:en-us",
)
CONDITIONS = ((None, None), ("pink", 10.0), ("babble", 10.0), ("kitchen", 10.0))


def takes(voice: str, phrase: str, seeds: Sequence[int]) -> list[np.ndarray]:
    rng = np.random.default_rng(seeds[0])
    out = []
    for seed in seeds:
        delivery = Delivery(
            speed=float(rng.uniform(0.85, 1.2)), pitch=float(rng.uniform(0.9, 1.1)), seed=seed
        )
        said = voices.say(Voice.parse(voice), phrase, delivery)
        out.append(said)
    return out


def heard(
    model: KeywordModel,
    clips: list[np.ndarray],
    kitchen: np.ndarray,
    babble: list[np.ndarray],
    emb: SpeechEmbedding,
) -> dict[str, float]:
    out = {}
    for kind, snr in CONDITIONS:
        hits = 0
        for i, clip in enumerate(clips):
            audio, start = in_noise(clip, kind, snr, 100 + i, kitchen, babble)
            end = start + len(clip)
            fired = firings(traces([model], audio, emb)[model.phrase], model.threshold)
            hits += bool(((fired >= end - 0.3 * RATE) & (fired <= end + RATE)).any())
        out[kind or "clean"] = round(hits / len(clips), 3)
    return out


def false_alarms(model: KeywordModel, talk: np.ndarray, emb: SpeechEmbedding) -> float:
    fired = firings(traces([model], talk, emb)[model.phrase], model.threshold)
    return round(len(fired) / (len(talk) / RATE / 3600), 2)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.enroll", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--phrases", default="computer,stop")
    parser.add_argument("--speakers", type=int, default=4)
    args = parser.parse_args(argv)
    emb = SpeechEmbedding(threads=2)
    sti = args.data / "speech-to-intent"
    kitchen = rooms.held_half(read_audio(sti / "kitchen.flac").astype(np.float64))
    coffee = concatenated(
        sorted(p for p in (sti / "clean").glob("*.flac") if p.name[0] not in "01234567")
    )
    speakers = SPEAKERS[: args.speakers]
    assert set(speakers) <= HELD_OUT
    result: dict[str, Any] = {"speakers": list(speakers), "phrases": {}}
    for phrase in args.phrases.split(","):
        base = KeywordModel.load(shipped(phrase))
        rows = []
        for speaker in speakers:
            others = [v for v in sorted(HELD_OUT) if v != speaker][:4]
            babble = talk_audio(others[:3], PROSE)
            near = NEAR_WAKE_PROSE if phrase == "computer" else NEAR_STOP_PROSE
            talk = np.concatenate([coffee, *talk_audio(others, near)])
            enrolled_takes = [
                np.round(t).astype(np.int16) for t in takes(speaker, phrase, [1, 2, 3, 4])
            ]
            held_apart = takes(speaker, phrase, list(range(10, 22)))
            with tempfile.TemporaryDirectory() as tmp:
                adapted = enroll(base, enrolled_takes, Path(tmp) / "m.npz", say=lambda _: None)
            row = {
                "speaker": speaker,
                "shipped": {
                    "recall": heard(base, held_apart, kitchen, babble, emb),
                    "false_per_hour": false_alarms(base, talk, emb),
                    "threshold": base.threshold,
                },
                "enrolled": {
                    "recall": heard(adapted, held_apart, kitchen, babble, emb),
                    "false_per_hour": false_alarms(adapted, talk, emb),
                    "threshold": adapted.threshold,
                },
                "talk_hours": round(len(talk) / RATE / 3600, 3),
            }
            print(phrase, json.dumps(row), flush=True)
            rows.append(row)
        result["phrases"][phrase] = rows
    (RESULTS / "enroll.json").write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
