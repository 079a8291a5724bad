"""Recognition levers, measured on the development corpus only (never the test corpus).

    python -m bench.levers [--variants baseline,nbest,...] [--limit N] [--json PATH]

Each command of `sessions.COMMANDS_DEV` is rendered alone (espeak-ng, the development voices and
rates), padded as the segmenter pads a segment, and mixed with noise (development seeds) at the
development conditions. Every variant transcribes every crop; a crop counts as understood when
the wake word is heard and the offline interpreter makes of the rest exactly the steps it makes
of the typed command. This isolates the recogniser and what follows it from the segmenter and
the frames, so a lever can be compared in minutes instead of a 45-minute daemon run; the lever
kept is then confirmed by `bench.evaluate` on the test corpus.

Negatives: prose sentences under the same noise, with the wake word in front (the worst case
for a lever that bends text towards commands): any that becomes a command is a false accept.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import corpus, noise, spoken
from bench.sessions import COMMANDS_DEV, PROSE

CONDITIONS: tuple[tuple[str | None, float | None], ...] = (
    (None, None), ("pink", 20.0), ("babble", 20.0), ("white", 10.0), ("babble", 10.0),
    ("brown", 10.0), ("pink", 10.0),
)  # fmt: skip
"""Each command is heard under each; voice and rate rotate (development voices only)."""
NOISE_SEED = 7919
"""Development noise seeds start here (the test corpus uses its own)."""
PAD_BEFORE_S, PAD_AFTER_S = 0.3, 0.45
"""About the segmenter's pre-roll and hangover."""


@dataclass(frozen=True)
class Crop:
    cell: str
    text: str
    voice: str
    rate: int
    noise: str | None
    snr: float | None
    samples: np.ndarray
    negative: bool = False

    @property
    def condition(self) -> str:
        return "clean" if self.noise is None else f"{self.noise}{self.snr:g}"


def _lines() -> list[tuple[str, str]]:
    return [(s.cell, line) for s in COMMANDS_DEV for line in s.lines if line.strip()]


def _prose_lines() -> list[str]:
    sentences = [s.strip() for s in PROSE.split(".") if len(s.split()) >= 5]
    return [f"computer {' '.join(s.split()[:9]).lower()}" for s in sentences[:6]]


def crops(limit: int | None = None) -> list[Crop]:
    out: list[Crop] = []
    lines = _lines()[:limit] if limit else _lines()
    cells = sorted({cell for cell, _ in lines})
    items = [(cell, text, False) for cell, text in lines]
    items += [(cells[i % len(cells)], text, True) for i, text in enumerate(_prose_lines())]
    for j, (cell, text, negative) in enumerate(items):
        for i, (kind, snr) in enumerate(CONDITIONS):
            voice = corpus.DEV_VOICES[(i + j) % len(corpus.DEV_VOICES)]
            rate = corpus.RATES[(i // 2 + j) % len(corpus.RATES)]
            clip = spoken.trimmed(spoken.speak(text, voice, rate))
            pad = np.zeros
            padded = np.concatenate([pad(round(PAD_BEFORE_S * spoken.RATE), np.int16), clip,
                                     pad(round(PAD_AFTER_S * spoken.RATE), np.int16)])  # fmt: skip
            if kind is not None and snr is not None:
                padded = noise.mix(padded, kind, snr, seed=NOISE_SEED + 31 * j + i)
            out.append(Crop(cell, text, voice, rate, kind, snr, padded, negative))
    return out


class Judge:
    """The offline interpreter of one cell: what steps a text means, if any."""

    def __init__(self, cell_name: str) -> None:
        from voiced.robot.cellfile import load_cell

        from voiced.config import Config
        from voiced.interpreter.tiers import Interpreter
        from voiced.paths import DataDir

        self.tmp = tempfile.TemporaryDirectory()
        cell = load_cell(cell_name)
        config = Config()
        self.wake = config.daemon.wake_word
        self.interpreter = Interpreter(cell, DataDir(Path(self.tmp.name)), None, config.llm,
                                       lambda event: None)  # fmt: skip
        self.scene = cell.initial_scene

    def command(self, text: str) -> str | None:
        """The command after the wake word, or None when the wake word was not heard."""
        from voiced.audio.wake import matches_wake_word

        match = matches_wake_word(text, self.wake)
        return None if match is None else match.rest

    def steps(self, text: str) -> str | None:
        """The steps `text` means (wake word included) as JSON, or None."""
        from voiced.robot.sequence import steps_to_json

        rest = self.command(text)
        if rest is None or not rest.strip():
            return None
        understood = asyncio.run(self.interpreter.interpret(rest, self.scene, (), None))
        meant = understood.interpretation
        return json.dumps(steps_to_json(meant.sequence)) if meant.sequence else None

    def accepts(self, text: str) -> bool:
        """Whether the text is a command this cell acts on (what a re-ranker may ask)."""
        rest = self.command(text)
        return bool(rest and self.interpreter.understands(rest, self.scene, ()))


Variant = Callable[[Crop, Judge], str]


def run(variants: dict[str, Variant], limit: int | None) -> dict[str, Any]:
    began = time.perf_counter()
    all_crops = crops(limit)
    print(f"{len(all_crops)} crops rendered in {time.perf_counter() - began:.0f} s", flush=True)
    judges = {cell: Judge(cell) for cell in {c.cell for c in all_crops}}
    truth = {(c.cell, c.text): judges[c.cell].steps(c.text) for c in all_crops if not c.negative}
    refused = [k for k, v in truth.items() if v is None]
    print(f"commands refused when typed (a crop counts when nothing moves): {refused}")
    results: dict[str, Any] = {}
    for name, variant in variants.items():
        began = time.perf_counter()
        rows = []
        for crop in all_crops:
            t0 = time.perf_counter()
            heard = variant(crop, judges[crop.cell])
            seconds = time.perf_counter() - t0
            meant = judges[crop.cell].steps(heard)
            ok = meant is None if crop.negative else meant == truth[(crop.cell, crop.text)]
            rows.append({"cell": crop.cell, "text": crop.text, "heard": heard,
                         "condition": crop.condition, "voice": crop.voice, "rate": crop.rate,
                         "negative": crop.negative, "ok": ok,
                         "seconds": round(seconds, 3)})  # fmt: skip
        results[name] = {"rows": rows, "wall_s": round(time.perf_counter() - began, 1)}
        print(summary(name, rows), flush=True)
    return results


def summary(name: str, rows: list[dict[str, Any]]) -> str:
    pos = [r for r in rows if not r["negative"]]
    neg = [r for r in rows if r["negative"]]
    by: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in pos:
        total[r["condition"]] += 1
        by[r["condition"]] += r["ok"]
    per = "  ".join(f"{c} {by[c]}/{total[c]}" for c in total)
    secs = sorted(r["seconds"] for r in rows)
    false = sum(not r["ok"] for r in neg)
    return (f"{name:14} {sum(r['ok'] for r in pos)}/{len(pos)}  [{per}]  false accepts "
            f"{false}/{len(neg)}  decode p50 {secs[len(secs) // 2] * 1000:.0f} ms "
            f"p95 {secs[int(len(secs) * 0.95)] * 1000:.0f} ms")  # fmt: skip


def main() -> None:
    from bench import lever_variants

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="baseline")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    chosen = {n: lever_variants.VARIANTS[n] for n in args.variants.split(",")}
    results = run(chosen, args.limit)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
