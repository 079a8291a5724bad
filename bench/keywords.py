"""Keyword spotting in noise: the wake word on real speakers, the stop words on voices no model
was trained on, false alarms per hour of talk, and how soon after the word it fires.

    .venv/bin/python -m bench.keywords [--data ../shared/benchdata] [--quick] [--dev]
                                       [--models DIR] [--json PATH]

What is measured (each model at its own threshold, and over thresholds for the curve):

- **Wake word, real speakers**: the 200 recordings of "computer" in `wake-computer/` (test
  only), clean and with the benchmark's kitchen noise at 10 dB (relative to the active speech
  level), each after 2 s of the same noise: heard when the model fires between the start of the
  recording and 0.5 s after it.
- **Stop words, held-out voices**: `recipe.HELD_OUT` (the six voices the stop benchmark reports
  on and two voices unlike any trained one) say each stop word at three speeds, clean and in
  pink, brown, babble and kitchen noise at 20, 10 and 5 dB; heard when the model fires between
  0.3 s before and 1 s after the end of the word; the time from the end of the word to the
  firing is the detector's latency on the audio clock.
- **False alarms**: firings per hour in the real coffee orders (test half, names `8`-`f`), the
  kitchen recording's held half, and talk by held-out voices (prose, and talk full of near
  words: "top", "stock", "non-stop", "stopwatch", "commuter", ...).

Noise recordings are cut in two: training used the first half, this benchmark the second.
`--dev` measures on development data instead (other voices, the coffee orders' development
half): the figures any tuning was done on; never reported.
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from voiced.audio.convert import read_audio
from voiced.audio.keyword.features import SpeechEmbedding, clip_embeddings
from voiced.audio.keyword.model import KeywordModel, shipped
from voiced.audio.keyword.spotter import STEP_MS, STREAM_HOP, block_levels, loudest
from voiced.audio.keyword.training import rooms, voices
from voiced.audio.keyword.training.recipe import HELD_OUT
from voiced.audio.keyword.training.voices import RATE, Delivery, Voice
from voiced.audio.settings import AudioSettings

from bench.machine import machine_info
from bench.plotting import MISSING, pyplot
from bench.sessions import NEAR_STOP_PROSE, PROSE

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
DEFAULT_DATA = ROOT.parent.parent / "shared" / "benchdata"
NOISES = ("pink", "brown", "babble", "kitchen")
SNRS = (20.0, 10.0, 5.0)
STOP_WORDS = ("stop", "halt", "freeze")
DEV_VOICES = (
    "espeak:en-us-nyc+m5",
    "espeak:en-gb-x-gbclan+f2",
    "espeak:en-029+Storm",
    "joe:en-gb-x-rp",
    "flite:rms",
    "festival:kal_diphone",
)
"""Voices for development runs (`--dev`); the models used for tuning were trained without
them."""
NEAR_WAKE_PROSE = (
    "The commuter train was late again, so I had to compute the totals on the bus. Can you "
    "pass the pewter jug? My cousin is a composer; she says the computing power of a phone is "
    "enough. Come to her desk after lunch and compare the counters. Complete the form and "
    "commute home early. The copter flew over the compost heap."
)
REFRACTORY_S = 1.0
MIN_RMS = AudioSettings().rms_gate
"""The daemon's loudness gate (`[audio] rms_gate`): a model fires only on a second of audio
that has a block this loud (`spotter.loudest`)."""


@dataclass
class Trace:
    """A model's scores over a stream, one every 40 ms, and where each view ended; a score where
    the loudness gate lets nothing fire (`MIN_RMS`) is 0."""

    scores: np.ndarray
    ends: np.ndarray


def traces(
    models: Sequence[KeywordModel],
    audio: np.ndarray,
    emb: SpeechEmbedding,
    min_rms: float = MIN_RMS,
) -> dict[str, Trace]:
    """Every model's scores over `audio`, as `KeywordSpotter` computes them."""
    e = clip_embeddings(audio, emb, STREAM_HOP)
    levels = block_levels(audio)
    loud = np.array([loudest(levels, 0, int(end)) >= min_rms for end in e.ends], dtype=bool)
    out = {}
    for model in models:
        stride = max(1, model.info.spacing_ms // STEP_MS)
        need = (model.info.frames - 1) * stride + 1
        if len(e.vectors) < need:
            out[model.phrase] = Trace(np.zeros(0), np.zeros(0, np.int64))
            continue
        idx = (
            np.arange(need - 1, len(e.vectors))[:, None]
            - np.arange(model.info.frames)[::-1] * stride
        )
        scores = np.concatenate(
            [model.scores(e.vectors[idx[i : i + 2048]]) for i in range(0, len(idx), 2048)]
        )
        out[model.phrase] = Trace(np.where(loud[need - 1 :], scores, 0.0), e.ends[need - 1 :])
    return out


def firings(trace: Trace, threshold: float) -> np.ndarray:
    """Sample offsets where the score crosses `threshold` (rising edge, refractory)."""
    above = trace.scores >= threshold
    rising = np.nonzero(above & ~np.concatenate([[False], above[:-1]]))[0]
    fired: list[int] = []
    for i in rising:
        end = int(trace.ends[i])
        if not fired or end - fired[-1] >= REFRACTORY_S * RATE:
            fired.append(end)
    return np.array(fired, dtype=np.int64)


@dataclass
class Trial:
    """One positive: audio with the phrase, where its window for a detection is."""

    label: str
    audio: np.ndarray
    word_end: int
    window: tuple[int, int]
    tags: dict[str, str] = field(default_factory=dict)


def noise_source(
    kind: str, n: int, rng: np.random.Generator, kitchen: np.ndarray, babble: list[np.ndarray]
) -> np.ndarray:
    if kind == "kitchen":
        return rooms.excerpt(kitchen, n, rng)
    if kind == "babble":
        return np.asarray(sum(rooms.excerpt(b, n, rng) for b in babble), dtype=np.float64)
    return rooms.coloured(kind, n, rng)


def in_noise(
    speech: np.ndarray,
    kind: str | None,
    snr: float | None,
    seed: int,
    kitchen: np.ndarray,
    babble: list[np.ndarray],
    lead_s: float = 2.0,
    tail_s: float = 1.0,
) -> tuple[np.ndarray, int]:
    """`speech` after `lead_s` and before `tail_s` of quiet, with noise over all of it at `snr`
    below the speech's active level; returns the audio and where the speech starts."""
    rng = np.random.default_rng(seed)
    lead = round(lead_s * RATE)
    x = np.concatenate([np.zeros(lead), speech.astype(np.float64), np.zeros(round(tail_s * RATE))])
    floor = rooms.coloured("pink", len(x), rng) * (rooms.active_rms(speech) * 10 ** (-55 / 20))
    x = x + floor
    if kind is not None and snr is not None:
        noise = noise_source(kind, len(x), rng, kitchen, babble)
        level = rooms.active_rms(speech) / 10 ** (snr / 20)
        x = x + noise / (np.sqrt(np.mean(noise**2)) or 1.0) * level
    peak = np.abs(x).max() or 1.0
    if peak > 32000:
        x *= 32000 / peak
    return x.astype(np.float32), lead


def conditions(quick: bool) -> list[tuple[str | None, float | None]]:
    conds: list[tuple[str | None, float | None]] = [(None, None)]
    for kind in NOISES:
        for snr in SNRS:
            if not quick or snr == 10.0:
                conds.append((kind, snr))
    return conds


def synthetic_trials(
    phrase: str,
    voice_keys: Sequence[str],
    quick: bool,
    kitchen: np.ndarray,
    babble: list[np.ndarray],
) -> list[Trial]:
    trials = []
    speeds = (1.0,) if quick else (0.85, 1.0, 1.2)
    for key in voice_keys:
        voice = Voice.parse(key)
        for speed in speeds:
            try:
                said = voices.say(voice, phrase, Delivery(speed=speed, seed=7))
            except voices.SynthesisError as exc:
                print(f"  skipped {key}: {exc}")
                continue
            for kind, snr in conditions(quick):
                seed = zlib.crc32(repr((phrase, key, speed, kind, snr)).encode())
                audio, start = in_noise(said, kind, snr, seed, kitchen, babble)
                end = start + len(said)
                tags = {
                    "voice": key,
                    "noise": kind or "clean",
                    "snr": "clean" if snr is None else f"{snr:g}",
                }
                trials.append(Trial(phrase, audio, end, (end - int(0.3 * RATE), end + RATE), tags))
    return trials


def real_wake_trials(data: Path, kitchen: np.ndarray, quick: bool) -> list[Trial]:
    files = sorted((data / "wake-computer").glob("*.flac"))
    if quick:
        files = files[:20]
    trials = []
    for path in files:
        clip = read_audio(path).astype(np.float32)
        for kind, snr in ((None, None), ("kitchen", 10.0)):
            seed = int.from_bytes(path.stem.encode()[:4], "little")
            audio, start = in_noise(clip, kind, snr, seed, kitchen, [], tail_s=0.5)
            end = start + len(voices.trim(clip, -35.0)) + _lead_silence(clip)
            tags = {
                "voice": "real",
                "noise": kind or "clean",
                "snr": "clean" if snr is None else "10",
            }
            trials.append(
                Trial("computer", audio, end, (start, start + len(clip) + RATE // 2), tags)
            )
    return trials


def _lead_silence(clip: np.ndarray) -> int:
    trimmed = voices.trim(clip, -35.0)
    if len(trimmed) == 0:
        return 0
    # Where the trimmed part starts in the clip.
    for offset in range(0, len(clip) - len(trimmed) + 1, 160):
        if np.array_equal(clip[offset : offset + 160], trimmed[:160]):
            return offset
    return 0


def score_trials(
    trials: list[Trial], models: dict[str, KeywordModel], emb: SpeechEmbedding
) -> list[dict[str, Any]]:
    rows = []
    for trial in trials:
        model = models[trial.label]
        trace = traces([model], trial.audio, emb)[model.phrase]
        lo, hi = trial.window
        inside = (trace.ends >= lo) & (trace.ends <= hi)
        best = float(trace.scores[inside].max()) if inside.any() else 0.0
        fired = firings(trace, model.threshold)
        hits = fired[(fired >= lo) & (fired <= hi)]
        latency = (hits[0] - trial.word_end) / RATE * 1000 if len(hits) else None
        rows.append(
            {
                "phrase": trial.label,
                **trial.tags,
                "best": round(best, 4),
                "heard": bool(len(hits)),
                "latency_ms": latency,
            }
        )
    return rows


def talk_audio(voice_keys: Sequence[str], text: str) -> list[np.ndarray]:
    out = []
    for key in voice_keys:
        for speed in (0.9, 1.15):
            try:
                out.append(voices.say(Voice.parse(key), text, Delivery(speed=speed, seed=3)))
            except voices.SynthesisError as exc:
                print(f"  skipped {key}: {exc}")
    return out


def false_alarms(
    streams: dict[str, list[np.ndarray]], models: dict[str, KeywordModel], emb: SpeechEmbedding
) -> dict[str, Any]:
    """Per stream kind: hours, and per model the firings at its threshold and the score traces'
    maxima (for the curve)."""
    out: dict[str, Any] = {}
    for kind, clips in streams.items():
        hours = sum(len(c) for c in clips) / RATE / 3600
        per: dict[str, Any] = {}
        for phrase, model in models.items():
            count = 0
            tops: list[float] = []
            peaks: list[np.ndarray] = []
            for clip in clips:
                trace = traces([model], clip, emb)[phrase]
                count += len(firings(trace, model.threshold))
                tops.append(float(trace.scores.max()) if len(trace.scores) else 0.0)
                peaks.append(_peaks(trace))
            per[phrase] = {
                "firings": count,
                "per_hour": round(count / hours, 2) if hours else None,
                "peaks": np.concatenate(peaks).tolist() if peaks else [],
            }
        out[kind] = {"hours": round(hours, 3), "models": per}
    return out


def _peaks(trace: Trace) -> np.ndarray:
    """The score of each separate excursion (refractory apart): what a threshold would count."""
    if len(trace.scores) == 0:
        return np.zeros(0)
    step = REFRACTORY_S * 1000 / STEP_MS
    out = []
    i = 0
    order = np.argsort(-trace.scores)
    taken = np.zeros(len(trace.scores), bool)
    for i in order[:200]:
        if trace.scores[i] < 0.05:
            break
        lo, hi = int(max(0, i - step)), int(min(len(taken), i + step + 1))
        if not taken[lo:hi].any():
            out.append(float(trace.scores[i]))
        taken[i] = True
    return np.array(out)


def concatenated(paths: Sequence[Path], gap_s: float = 0.5) -> np.ndarray:
    parts = []
    for p in paths:
        parts += [read_audio(p).astype(np.float32), np.zeros(round(gap_s * RATE), np.float32)]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def summarise(rows: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key in keys:
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(str(row[key]), []).append(row)
        table[key] = {
            g: {
                "heard": sum(r["heard"] for r in rs),
                "of": len(rs),
                "recall": round(sum(r["heard"] for r in rs) / len(rs), 4),
            }
            for g, rs in sorted(groups.items())
        }
    return table


def latency(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ms = np.array([r["latency_ms"] for r in rows if r["latency_ms"] is not None])
    if len(ms) == 0:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50": round(float(np.percentile(ms, 50)), 1),
        "p95": round(float(np.percentile(ms, 95)), 1),
        "max": round(float(ms.max()), 1),
    }


def load_models(directory: Path | None) -> dict[str, KeywordModel]:
    names = ("computer", *STOP_WORDS)
    paths = {n: (directory / f"{n}.npz" if directory else shipped(n)) for n in names}
    return {n: KeywordModel.load(p) for n, p in paths.items() if p.exists()}


def run(data: Path, models: dict[str, KeywordModel], quick: bool, dev: bool) -> dict[str, Any]:
    emb = SpeechEmbedding(threads=2)
    sti = data / "speech-to-intent"
    kitchen_all = read_audio(sti / "kitchen.flac").astype(np.float32)
    kitchen = rooms.held_half(kitchen_all) if not dev else rooms.training_half(kitchen_all)
    voice_keys = list(DEV_VOICES if dev else sorted(HELD_OUT))
    babble = talk_audio(voice_keys[:4], PROSE)
    result: dict[str, Any] = {
        "machine": machine_info(),
        "dev": dev,
        "quick": quick,
        "voices": voice_keys,
        "thresholds": {p: m.threshold for p, m in models.items()},
    }
    began = time.monotonic()
    rows: list[dict[str, Any]] = []
    if "computer" in models and not dev:
        rows += score_trials(real_wake_trials(data, kitchen, quick), models, emb)
    for phrase in models:
        rows += score_trials(
            synthetic_trials(phrase, voice_keys, quick, kitchen, babble), models, emb
        )
    result["trials"] = rows
    result["recall"] = {
        phrase: summarise([r for r in rows if r["phrase"] == phrase], ("voice", "noise", "snr"))
        for phrase in models
    }
    result["latency"] = {
        p: latency([r for r in rows if r["phrase"] == p and r["snr"] == "10"]) for p in models
    }
    coffee = sorted(p for p in (sti / "clean").glob("*.flac") if (p.name[0] in "01234567") == dev)
    if quick:
        coffee = coffee[:30]
    real = concatenated(coffee)
    rng = np.random.default_rng(5)
    real_kitchen = rooms.add_noise(real, rooms.excerpt(kitchen, len(real), rng), 10.0)
    streams = {
        "coffee orders": [real],
        "coffee orders, kitchen 10 dB": [real_kitchen],
        "kitchen noise": [kitchen],
        "near-word talk": talk_audio(voice_keys, NEAR_STOP_PROSE + " " + NEAR_WAKE_PROSE),
        "prose": talk_audio(voice_keys[: 2 if quick else None], PROSE),
    }
    result["false_alarms"] = false_alarms(streams, models, emb)
    result["curves"] = curves(result)
    result["seconds"] = round(time.monotonic() - began)
    return result


def coffee_words(data: Path) -> dict[str, str]:
    """Each development-half coffee order's slot values, joined (for the stand-in words)."""
    labels = json.loads((data / "speech-to-intent" / "label.json").read_text(encoding="utf-8"))
    return {
        name: " ".join(v.get("slots", {}).values()).lower()
        for name, v in labels.items()
        if name[0] in "01234567"
    }


def proxy_split(data: Path, word: str) -> tuple[list[Path], list[Path], list[Path]]:
    """For a stand-in word said in the development half: (orders with it, orders without it
    that training may use, orders without it kept for false alarms)."""
    clean = data / "speech-to-intent" / "clean"
    said = coffee_words(data)
    with_word = sorted(clean / n for n, w in said.items() if word in w.split())
    without = sorted(clean / n for n, w in said.items() if word not in w.split())
    return with_word, without[::2], without[1::2]


def run_proxy(data: Path, model: KeywordModel) -> dict[str, Any]:
    """Development only: a model for a word the real coffee orders say (`cappuccino`), on the
    development half: how synthetic training carries over to people, without the test data."""
    emb = SpeechEmbedding(threads=2)
    kitchen = rooms.training_half(read_audio(data / "speech-to-intent" / "kitchen.flac"))
    with_word, _, kept = proxy_split(data, model.phrase)
    out: dict[str, Any] = {"word": model.phrase, "threshold": model.threshold}
    for label, snr in (("clean", None), ("kitchen 10 dB", 10.0)):
        best_with, best_without = [], []
        for i, path in enumerate(with_word + kept):
            clip = read_audio(path).astype(np.float32)
            audio, _ = in_noise(clip, "kitchen" if snr else None, snr, i, kitchen, [], tail_s=0.5)
            top = float(traces([model], audio, emb)[model.phrase].scores.max())
            (best_with if path in with_word else best_without).append(top)
        pos, neg = np.array(best_with), np.array(best_without)
        curve = {
            f"{th:g}": [round(float((pos >= th).mean()), 3), int((neg >= th).sum())]
            for th in (0.2, 0.3, 0.5, 0.7, 0.9, model.threshold)
        }
        out[label] = {
            "with": len(pos),
            "without": len(neg),
            "recall, false clips": curve,
            "best_median": round(float(np.median(pos)), 3),
        }
    return out


CPU_CONFIGS = {
    "keyword spotters": "",
    "without (today's: Whisper wake and stop)": (
        '[wake]\nengine = "stt"\n[audio]\nstop_engine = "whisper"\n'
    ),
}
"""Idle CPU and peak RSS with both spotters running, against the daemon without them."""


def idle_cost(seconds: float = 60.0) -> dict[str, Any]:
    """The daemon at real-time pace on `seconds` of a quiet room (a faint noise floor), in wake
    mode (the wake word is listened for): CPU after the first 10 s, and peak RSS."""
    import tempfile
    import wave

    from bench import daemon_run, metrics

    rng = np.random.default_rng(3)
    quiet = np.round(rooms.coloured("pink", round(seconds * RATE), rng) * 20).astype(np.int16)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "quiet.wav"
        with wave.open(str(wav), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(quiet.tobytes())
        for label, extra in CPU_CONFIGS.items():
            run = daemon_run.run(
                "sandwich",
                audio=wav,
                fast=False,
                mode="wake",
                sample_cpu=True,
                config=daemon_run.FAST_SIM + extra,
            )
            out[label] = {
                "idle_cpu_percent": metrics.idle_cpu_percent(run.cpu, 10.0),
                "max_rss_mb": round(run.max_rss_kb / 1024, 1),
                "returncode": run.returncode,
            }
    return out


CURVE_THRESHOLDS = tuple(round(0.3 + 0.01 * i, 2) for i in range(70))


def curves(result: dict[str, Any]) -> dict[str, Any]:
    """Per model and trial kind (real wake clean / in kitchen noise; synthetic by SNR): recall
    against false alarms per hour of all false-alarm streams, over thresholds."""
    out: dict[str, Any] = {}
    for phrase in result["thresholds"]:
        streams = result["false_alarms"].values()
        hours = sum(row["hours"] for row in streams)
        peaks = np.concatenate([np.array(row["models"][phrase]["peaks"]) for row in streams])
        rows = [r for r in result["trials"] if r["phrase"] == phrase]
        kinds: dict[str, list[float]] = {}
        for r in rows:
            snr = "clean" if r["snr"] == "clean" else f"{r['snr']} dB"
            real = r["voice"] == "real"
            noise = "" if r["noise"] == "clean" else f"{r['noise']} "
            kind = f"real speakers, {noise}{snr}" if real else f"held-out voices, {snr}"
            kinds.setdefault(kind, []).append(r["best"])
        out[phrase] = {
            "thresholds": list(CURVE_THRESHOLDS),
            "false_per_hour": [
                round(float((peaks >= t).sum()) / hours, 2) if hours else None
                for t in CURVE_THRESHOLDS
            ],
            "recall": {
                kind: [round(float((np.array(b) >= t).mean()), 4) for t in CURVE_THRESHOLDS]
                for kind, b in sorted(kinds.items())
            },
        }
    return out


def plot_curves(result: dict[str, Any], path: Path) -> str:
    """The detection / false-alarm curves as one PNG (matplotlib is the bench extra)."""
    plt = pyplot()
    if plt is None:
        return f"curve skipped: {MISSING}"
    import matplotlib.ticker

    table = result["curves"]
    rows = (len(table) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(10, 3.8 * rows), dpi=90, squeeze=False)
    for ax in axes.flat[len(table) :]:
        ax.set_visible(False)
    for ax, (phrase, curve) in zip(axes.flat, table.items(), strict=False):
        fa = np.array([x if x else 0.0 for x in curve["false_per_hour"]]) + 0.01
        for kind, recall in curve["recall"].items():
            ax.plot(fa, 100 * (1 - np.array(recall)), label=kind, linewidth=1)
        own = result["thresholds"][phrase]
        i = int(np.argmin(np.abs(np.array(curve["thresholds"]) - own)))
        ax.axvline(fa[i], color="grey", linestyle=":", linewidth=1)
        ax.set(
            title=f"{phrase} (threshold {own:.2f} dotted)",
            xlabel="false alarms per hour (+0.01)",
            ylabel="miss rate (%)",
            xscale="log",
        )
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return f"curve: {path}"


def report(result: dict[str, Any]) -> str:
    lines = [
        f"# Keyword spotting ({'development' if result['dev'] else 'test'} data)",
        "",
        f"Machine: {result['machine']}; {result['seconds']} s.",
        "",
    ]
    for phrase, table in result["recall"].items():
        lines += [
            f"## {phrase} (threshold {result['thresholds'][phrase]:.3f})",
            "",
            "| condition | heard | recall |",
            "|---|---|---|",
        ]
        for key in ("voice", "noise", "snr"):
            for group, row in table[key].items():
                lines.append(
                    f"| {key} {group} | {row['heard']}/{row['of']} | {100 * row['recall']:.1f} % |"
                )
        lat = result["latency"][phrase]
        if lat.get("n"):
            lines.append(
                f"\nEnd of word to firing at 10 dB (audio clock): p50 {lat['p50']} ms, "
                f"p95 {lat['p95']} ms, max {lat['max']} ms ({lat['n']})."
            )
        lines.append("")
    lines += [
        "## False alarms",
        "",
        "| stream | hours | " + " | ".join(result["thresholds"]) + " |",
        "|---|---|" + "---|" * len(result["thresholds"]),
    ]
    for kind, row in result["false_alarms"].items():
        cells = [f"{m['firings']} ({m['per_hour']}/h)" for m in row["models"].values()]
        lines.append(f"| {kind} | {row['hours']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.keywords", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--models", type=Path, default=None, help="a folder of NAME.npz (default: shipped)"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dev", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--cpu", action="store_true", help="only the idle CPU and RSS runs")
    parser.add_argument(
        "--proxy",
        type=Path,
        default=None,
        help="development: a model of a word the coffee orders say (its recall "
        "on their development half)",
    )
    args = parser.parse_args(argv)
    if args.proxy:
        print(json.dumps(run_proxy(args.data, KeywordModel.load(args.proxy)), indent=1))
        return
    if args.cpu:
        cost = idle_cost()
        print(json.dumps(cost, indent=1))
        (RESULTS / "keywords-cpu.json").write_text(json.dumps(cost, indent=1), encoding="utf-8")
        return
    models = load_models(args.models)
    result = run(args.data, models, args.quick, args.dev)
    text = report(result)
    print(text)
    name = "keywords-dev" if args.dev else "keywords"
    if not args.quick:
        print(plot_curves(result, RESULTS / f"{name}-curve.png"))
        (RESULTS / f"{name}.md").write_text(text, encoding="utf-8")
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
