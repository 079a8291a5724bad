"""The wake word through the whole daemon, on real speakers: each of the 200 recordings of
"computer" in `wake-computer/` (test data), then 9 s of the same background, played to
`voiced run --mode wake --fast`; a recording wakes the daemon when a query opens (`frame` push
`query`) for an utterance heard between its start and 2 s after its end. False wakes: queries
opened in talk without the wake word (the coffee orders' test half, the kitchen recording's
held half, prose by held-out voices).

    .venv/bin/python -m bench.wake [--data DIR] [--engines keyword,stt,keyword+text] [--quick]

One run per engine and background (clean; kitchen noise at 10 dB relative to each recording's
active speech level, from the half of the recording that no model was trained on).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import wave
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from voiced.audio.convert import read_audio
from voiced.audio.keyword.training import rooms
from voiced.audio.keyword.training.recipe import HELD_OUT

from bench import daemon_run
from bench.keywords import DEFAULT_DATA, RESULTS, concatenated, talk_audio
from bench.machine import machine_info
from bench.sessions import PROSE

RATE = 16000
GAP_S = 9.0
ENGINES = {
    "keyword": '[wake]\nengine = "keyword"\n',
    "keyword+text": '[wake]\nengine = "keyword"\ntranscribe_all = true\n',
    "stt": '[wake]\nengine = "stt"\n',
}
"""Each engine's config; `keyword+text` also wakes on the transcript (either way)."""


def write_wav(path: Path, audio: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.clip(np.round(audio), -32768, 32767).astype(np.int16).tobytes())


def wake_session(
    files: Sequence[Path], kitchen: np.ndarray, snr: float | None
) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """The recordings one after another, each followed by `GAP_S` of quiet (or the kitchen at
    `snr` below that recording's active level, over the recording and its gap)."""
    rng = np.random.default_rng(11)
    parts, spans, t = [], [], 1.0
    parts.append(np.zeros(RATE))
    for path in files:
        clip = read_audio(path).astype(np.float64)
        piece = np.concatenate([clip, np.zeros(round(GAP_S * RATE))])
        floor = rooms.coloured("pink", len(piece), rng) * 3.0
        piece = piece + floor
        if snr is not None:
            noise = rooms.excerpt(kitchen, len(piece), rng)
            level = rooms.active_rms(clip) / 10 ** (snr / 20)
            piece = piece + noise / (np.sqrt(np.mean(noise**2)) or 1.0) * level
        parts.append(piece)
        spans.append((t, t + len(clip) / RATE))
        t += len(piece) / RATE
    audio = np.concatenate(parts)
    peak = np.abs(audio).max()
    return (audio * (30000 / peak) if peak > 30000 else audio), spans


def wakes(events: list[dict[str, Any]]) -> list[float]:
    """Audio times of the utterances that opened a query."""
    heard = {
        e.get("correlation_id"): e.get("speech_end", e.get("audio_t"))
        for e in events
        if e["event"] == "utterance"
    }
    return sorted(
        float(heard[e["correlation_id"]])
        for e in events
        if e["event"] == "frame"
        and e.get("action") == "push"
        and e.get("frame") == "query"
        and heard.get(e.get("correlation_id")) is not None
    )


def run_engine(engine: str, wav: Path, spans: list[tuple[float, float]] | None) -> dict[str, Any]:
    result = daemon_run.run(
        "sandwich",
        audio=wav,
        mode="wake",
        config=daemon_run.FAST_SIM + ENGINES[engine],
        timeout=3600,
    )
    times = wakes(result.events)
    out: dict[str, Any] = {"returncode": result.returncode, "wakes": len(times), "audio_s": None}
    if spans is not None:
        woke = [any(s - 0.2 <= t <= e + 2.0 for t in times) for s, e in spans]
        stray = [t for t in times if not any(s - 0.2 <= t <= e + 2.0 for s, e in spans)]
        out.update(
            heard=sum(woke),
            of=len(spans),
            recall=round(sum(woke) / len(spans), 4),
            stray=len(stray),
        )
    if result.returncode != 0:
        out["stderr_tail"] = result.stderr_tail
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.wake", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--engines", default="keyword,keyword+text,stt")
    parser.add_argument("--quick", action="store_true", help="20 recordings, no false-wake runs")
    args = parser.parse_args(argv)
    files = sorted((args.data / "wake-computer").glob("*.flac"))[: 20 if args.quick else None]
    sti = args.data / "speech-to-intent"
    kitchen = rooms.held_half(read_audio(sti / "kitchen.flac").astype(np.float64))
    coffee = sorted(p for p in (sti / "clean").glob("*.flac") if p.name[0] not in "01234567")
    result: dict[str, Any] = {"machine": machine_info(), "recordings": len(files), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="voiced-wake-") as tmp:
        sessions = {}
        for label, snr in (("clean", None), ("kitchen 10 dB", 10.0)):
            audio, spans = wake_session(files, kitchen, snr)
            path = Path(tmp) / f"{label.replace(' ', '_')}.wav"
            write_wav(path, audio)
            sessions[label] = (path, spans)
        if not args.quick:
            talk = np.concatenate(
                [concatenated(coffee), kitchen, *talk_audio(sorted(HELD_OUT), PROSE)]
            )
            path = Path(tmp) / "talk.wav"
            write_wav(path, talk)
            sessions["talk (no wake word)"] = (path, None)
            result["talk_hours"] = round(len(talk) / RATE / 3600, 3)
        for engine in args.engines.split(","):
            for label, (path, spans) in sessions.items():
                row = run_engine(engine, path, spans)
                result["runs"][f"{engine} / {label}"] = row
                print(
                    engine, label, {k: v for k, v in row.items() if k != "stderr_tail"}, flush=True
                )
    if not args.quick:
        (RESULTS / "wake.json").write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
