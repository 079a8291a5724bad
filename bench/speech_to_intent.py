"""Coffee orders from real speakers, through the whole daemon: Picovoice's speech-to-intent
benchmark on the `barista` cell.

Each recording of `speech-to-intent/clean/` (619 crowd-sourced orders, 50+ speakers; names
starting 0-7 are development, 8-f test) is mixed with the benchmark's kitchen noise the way its
`src/mix.py` mixes (the noise scaled so that the loudest 2048-sample frame of the speech over the
loudest frame of the noise is the SNR, the mix normalised to a peak of 0.5), followed by 3 s of
the same kitchen, and the whole session is played to `voiced run --cell barista --mode always
--fast` (always listening: the recordings have no wake word). A recording counts when an
interpretation of words heard during it holds the order's intent and every labelled slot exactly
and nothing more (the benchmark's `src/engine.py` rule). The development half mixes with the
first half of the kitchen recording, the test half with the second.

    .venv/bin/python -m bench.speech_to_intent [--data DIR] [--dev] [--snr clean,24,...,6]
        [--limit N [--shift I]] [--set stt.judge=true] [--out NAME] [--results DIR]

DIR is a folder holding `speech-to-intent/` (`label.json`, `clean/*.flac`, `kitchen.flac`), as in
the benchmark's repository; the default is `../shared/benchdata` beside the clone.

Prints and writes `results/<out>.{json,md}` and a plot of accuracy per SNR beside the published
figures, and the decoding time of the orders understood.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from voiced.audio.convert import read_audio
from voiced.rules.normalize import normalize

from bench import daemon_run
from bench.keywords import DEFAULT_DATA, RESULTS
from bench.machine import machine_info
from bench.plotting import MISSING, pyplot
from bench.wake import write_wav

RATE = 16000
GAP_S = 3.0
FRAME = 2048
"""Picovoice's mix.py frame for the loudest-frame SNR."""
PEAK = 0.5 * 32768
AFTER_SPEECH_S = 1.0
"""An order read from speech that ended this long after the recording's did was read from the
kitchen's talk that follows it (the segmenter's hangover is 0.3 s): a false accept."""
SNRS = (None, 24.0, 21.0, 18.0, 15.0, 12.0, 9.0, 6.0)
PUBLISHED = {
    "Rhino": {24: 99, 21: 99, 18: 99, 15: 99, 12: 98, 9: 97, 6: 96},
    "Microsoft LUIS": {24: 93, 21: 93, 18: 92, 15: 91, 12: 90, 9: 89, 6: 86},
    "IBM Watson": {24: 96, 21: 95, 18: 95, 15: 93, 12: 89, 9: 84, 6: 72},
    "Amazon Lex": {24: 88, 21: 87, 18: 87, 15: 87, 12: 85, 9: 84, 6: 80},
    "Google Dialogflow": {24: 83, 21: 82, 18: 81, 15: 80, 12: 78, 9: 78, 6: 70},
}
"""Accuracy (%) in kitchen noise by SNR (dB), from the benchmark's README."""

SIZES = {"small cup": "small", "medium cup": "medium", "large cup": "large",
         "8 ounce cup": "eight ounce", "12 ounce cup": "twelve ounce",
         "16 ounce cup": "sixteen ounce", "20 ounce cup": "twenty ounce"}  # fmt: skip
AMOUNTS = {1.0: "a little bit of ", 1.5: "a bit of ", 2.0: "", 2.5: "some ", 3.5: "a lot of ",
           4.0: "lots of "}  # fmt: skip
"""The barista cell's values back in the benchmark's words (its lists, read backwards)."""


def labelled(step: dict[str, Any]) -> dict[str, Any] | None:
    """An interpreted step as the benchmark labels an order; None when it is not an order."""
    if not str(step.get("instruction", "")).startswith("order_drink"):
        return None
    p = step.get("params", {})
    slots: dict[str, str] = {}
    if "cup" in p:
        slots["size"] = SIZES.get(str(p["cup"]), str(p["cup"]))
    if "roast" in p:
        slots["roast"] = str(p["roast"]).replace("_", " ")
    if p.get("shots", "usual_shots") != "usual_shots":
        slots["numberOfShots"] = str(p["shots"]).replace("_", " ")
    if "drink" in p:
        slots["coffeeDrink"] = str(p["drink"]).replace("_", " ")
    for kind, label in (("milk", "milkAmount"), ("sugar", "sugarAmount")):
        if kind in p:
            amount = AMOUNTS.get(float(p.get(f"{kind}_amount", 2.0)), "? ")
            slots[label] = amount + str(p[kind]).replace("_", " ")
    return {"intent": "orderDrink", "slots": slots}


def expected(label: dict[str, Any]) -> dict[str, Any]:
    """A label with its slot values cleaned (the file has " soy milk" with a space)."""
    slots = {k: " ".join(v.split()) for k, v in label.get("slots", {}).items()}
    return {"intent": label["intent"], "slots": slots}


def loudest_frame(x: np.ndarray) -> float:
    n = max(1, len(x) // FRAME)
    frames = x[: n * FRAME].reshape(n, -1) if len(x) >= FRAME else x[None]
    return float(np.sqrt(np.mean(frames.astype(np.float64) ** 2, axis=1)).max())


def mixed(speech: np.ndarray, noise: np.ndarray, snr: float | None) -> np.ndarray:
    """`speech` then `GAP_S` of the same noise, scaled as mix.py scales it (`noise` as long)."""
    piece = np.concatenate([speech, np.zeros(round(GAP_S * RATE))]).astype(np.float64)
    if snr is not None:
        scale = loudest_frame(speech) / (loudest_frame(noise[: len(speech)]) or 1.0)
        piece = piece + noise * scale / 10 ** (snr / 20)
    peak = np.abs(piece[: len(speech)]).max() or 1.0
    return piece * (PEAK / peak)


def session(
    files: Sequence[Path], kitchen: np.ndarray, snr: float | None, seed: int = 5
) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """The recordings one after another; each one's (start, end) on the audio clock."""
    rng = np.random.default_rng(seed)
    parts, spans, t = [np.zeros(RATE)], [], 1.0
    for path in files:
        speech = read_audio(path).astype(np.float64)
        length = len(speech) + round(GAP_S * RATE)
        at = int(rng.integers(0, len(kitchen) - length))
        parts.append(mixed(speech, kitchen[at : at + length], snr))
        spans.append((t, t + len(speech) / RATE))
        t += length / RATE
    return np.concatenate(parts), spans


SLOW_S = 1.0
"""Orders understood whose decoding took longer than this (the p95 target) are listed."""


def scored(
    events: list[dict[str, Any]], spans: list[tuple[float, float]], labels: list[dict[str, Any]]
) -> dict[str, Any]:
    """Each recording right or wrong, and the latency of the right ones: the wall-clock time
    of their decoding (the judge included), which is what an order waits for after its last
    word beyond the segmenter's end-of-speech pause (the session plays faster than real time,
    so its audio clock cannot tell)."""
    read = {e.get("correlation_id"): e for e in events if e["event"] == "interpretation"}
    got: list[list[dict[str, Any]]] = [[] for _ in spans]
    from_talk: list[str] = []
    for u in (e for e in events if e["event"] == "utterance"):
        e = read.get(u.get("correlation_id"), {})
        at = float(u.get("speech_end", u.get("audio_t", -1)))
        for i, (start, end) in enumerate(spans):
            if start - 0.2 <= at <= end + GAP_S:
                steps = e.get("sequence") or [{}]
                order = labelled(steps[0])
                got[i].append({"order": order, "text": u.get("text"),
                               "raw": u.get("raw"), "read": e.get("interpretation"),
                               "doubt": u.get("doubt"),
                               "latency": float(u.get("transcribe_s", 0.0))})  # fmt: skip
                if order is not None and at > end + AFTER_SPEECH_S:
                    from_talk.append(f"{u.get('raw')} -> {u.get('text')}")
    dropped: list[list[str]] = [[] for _ in spans]
    for e in events:
        if e["event"] == "rejected":
            at = float(e.get("audio_t", -1))
            for i, (start, end) in enumerate(spans):
                if start - 0.2 <= at <= end + GAP_S:
                    dropped[i].append(f"{e.get('reason')}: {e.get('raw', '')}")
    right, latency, wrong, read_back, slow = 0, [], [], 0, []
    for i, (readings, label) in enumerate(zip(got, labels, strict=True)):
        hits = [r for r in readings if r["order"] == expected(label)]
        right += bool(hits)
        read_back += bool(hits) and all(r["doubt"] for r in hits)
        latency += [r["latency"] for r in hits[:1]]
        if hits and hits[0]["latency"] > SLOW_S:
            slow.append({"i": i, "latency": hits[0]["latency"], "raw": hits[0]["raw"],
                         "text": hits[0]["text"]})  # fmt: skip
        if not hits:
            wrong.append({"i": i, "want": expected(label), "got": readings,
                          "rejected": dropped[i]})  # fmt: skip
    p = np.percentile(latency, [50, 95]).round(3).tolist() if latency else [None, None]
    return {"right": right, "of": len(spans), "accuracy": round(100 * right / len(spans), 1),
            "latency_p50_s": p[0], "latency_p95_s": p[1], "wrong": wrong,
            "read_back": read_back, "slow": slow,
            "orders_from_talk": from_talk}  # fmt: skip


def stop_sources(events: list[dict[str, Any]]) -> dict[str, int]:
    """What the stops were sent on: "keyword halt", "whisper stop", ... (the spotter's engine
    and what it heard; "transcript": a segment's text), and how many of each."""
    heard = Counter(f"{e.get('engine', '?')} {normalize(str(e.get('text', '')))}"
                    for e in events if e["event"] == "spotted")  # fmt: skip
    stopped = sum(e["event"] == "stopped" and e.get("reason") != "shutdown" for e in events)
    if stopped > heard.total():  # the rest were heard in a transcript ("No, stop.")
        heard["transcript"] = stopped - heard.total()
    return dict(heard.most_common())


def run_condition(
    files: list[Path], labels: list[dict[str, Any]], kitchen: np.ndarray, snr: float | None,
    settings: tuple[str, ...],
) -> dict[str, Any]:  # fmt: skip
    audio, spans = session(files, kitchen, snr)
    config = daemon_run.settings_toml(settings) + daemon_run.FAST_SIM
    with tempfile.TemporaryDirectory(prefix="voiced-sti-") as tmp:
        wav = Path(tmp) / "session.wav"
        write_wav(wav, audio)
        run = daemon_run.run("barista", audio=wav, mode="always", config=config, timeout=7200)
    out = scored(run.events, spans, labels)
    stops = [e for e in run.events if e["event"] == "stopped" and e.get("reason") != "shutdown"]
    # Nobody says "stop" in these sessions: every stop is a false one (the kitchen's talk).
    out.update(returncode=run.returncode, wall_s=round(run.wall_s, 1), false_stops=len(stops),
               false_stop_sources=stop_sources(run.events),
               peak_rss_mb=round(run.max_rss_kb / 1024))  # fmt: skip
    if run.returncode != 0:
        out["stderr_tail"] = run.stderr_tail
    return out


def plot(result: dict[str, Any], path: Path) -> str:
    plt = pyplot()
    if plt is None:
        return f"plot skipped: {MISSING}"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, figures in PUBLISHED.items():
        xs = sorted(figures)
        ax.plot(xs, [figures[x] for x in xs], "--", alpha=0.6, label=name)
    ours = {float(k): v["accuracy"] for k, v in result["conditions"].items() if k != "clean"}
    snrs = sorted(ours)
    ax.plot(snrs, [ours[x] for x in snrs], "o-", color="black", linewidth=2, label="voiced")
    ax.set_xlabel("SNR (dB), kitchen noise")
    ax.set_ylabel("orders understood exactly (%)")
    ax.set_title(f"Speech to intent, {result['half']} half ({result['recordings']} orders)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return str(path)


def markdown(result: dict[str, Any]) -> str:
    conditions = result["conditions"]
    head = "| engine | " + " | ".join(conditions) + " |"
    rows = [head, "|" + "---|" * (len(conditions) + 1)]
    rows.append("| voiced | " + " | ".join(f"{c['accuracy']}" for c in conditions.values()) + " |")
    if all("read_back" in c for c in conditions.values()):
        asked = [str(c["read_back"]) for c in conditions.values()]
        rows.append(
            "| voiced: right, but read back first (heard unsure) | " + " | ".join(asked) + " |"
        )
    if all("false_stops" in c for c in conditions.values()):
        stops = [str(c["false_stops"]) for c in conditions.values()]
        rows.append("| voiced: false stops | " + " | ".join(stops) + " |")
    if all("orders_from_talk" in c for c in conditions.values()):
        talk = [str(len(c["orders_from_talk"])) for c in conditions.values()]
        rows.append("| voiced: orders read from talk | " + " | ".join(talk) + " |")
    for name, figures in PUBLISHED.items():
        cells = [str(figures.get(int(float(k)), "")) if k != "clean" else "" for k in conditions]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    lat = [f"{k}: p50 {c['latency_p50_s']} s, p95 {c['latency_p95_s']} s"
           for k, c in conditions.items()]  # fmt: skip
    latency = "Decoding time of the orders understood (wall clock): " + "; ".join(lat)
    if all("peak_rss_mb" in c for c in conditions.values()):
        rss = [f"{k}: {c['peak_rss_mb']} MB" for k, c in conditions.items()]
        latency += "\n\nPeak RSS of the daemon (VmHWM): " + "; ".join(rss)
    return "\n".join(rows) + "\n\n" + latency + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speech_to_intent",
        description="Picovoice's coffee orders (real speakers) through the whole daemon on the "
        "barista cell, clean and in kitchen noise.",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="folder holding speech-to-intent/ (default: %(default)s)")  # fmt: skip
    parser.add_argument("--dev", action="store_true", help="the development half (0-7)")
    parser.add_argument("--snr", default="clean,24,21,18,15,12,9,6",
                        help="conditions: clean and SNRs in dB (default: %(default)s)")  # fmt: skip
    parser.add_argument("--limit", type=int, default=0, help="every k-th recording, N of them")
    parser.add_argument("--shift", type=int, default=0,
                        help="with --limit, start at the i-th (another slice)")  # fmt: skip
    parser.add_argument("--set", action="append", default=[], help="section.key=value")
    parser.add_argument("--out", default="", help="results name (default speech-to-intent[-dev])")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where results go")
    args = parser.parse_args(argv)
    sti = args.data / "speech-to-intent"
    if not (sti / "label.json").is_file():
        parser.error(f"{sti}: no label.json (see github.com/Picovoice/speech-to-intent-benchmark)")
    labels = json.loads((sti / "label.json").read_text(encoding="utf-8"))
    half = "0123456789abcdef"[:8] if args.dev else "89abcdef"
    clean = sorted((sti / "clean").glob("*.flac"))
    files = [p for p in clean if p.name[0] in half and p.name in labels]
    if args.limit and args.limit < len(files):
        step = len(files) // args.limit
        files = files[args.shift % step :: step][: args.limit]
    kitchen = read_audio(sti / "kitchen.flac").astype(np.float64)
    kitchen = kitchen[: len(kitchen) // 2] if args.dev else kitchen[len(kitchen) // 2 :]
    wanted = [labels[p.name] for p in files]
    result: dict[str, Any] = {"half": "development" if args.dev else "test",
                              "recordings": len(files), "settings": args.set, "shift": args.shift,
                              "machine": machine_info(), "conditions": {}}  # fmt: skip
    for token in args.snr.split(","):
        snr = None if token == "clean" else float(token)
        out = run_condition(files, wanted, kitchen, snr, tuple(args.set))
        result["conditions"][token] = out
        print(f"{token:>5}: {out['right']}/{out['of']} ({out['accuracy']} %), decoding p50 "
              f"{out['latency_p50_s']} s p95 {out['latency_p95_s']} s, false stops "
              f"{out['false_stops']} {out['false_stop_sources'] or ''}, orders from talk "
              f"{len(out['orders_from_talk'])}, right but read back first "
              f"{out['read_back']}, peak RSS {out['peak_rss_mb']} MB", flush=True)  # fmt: skip
    name = args.out or ("speech-to-intent-dev" if args.dev else "speech-to-intent")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / f"{name}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (args.results / f"{name}.md").write_text(markdown(result), encoding="utf-8")
    print(plot(result, args.results / f"{name}.png"))


if __name__ == "__main__":
    main()
