"""Stop in noise: stop recall per voice, noise and SNR with each stop said while the
arm moves, the time from the end of the word to STOP on the wire, and false stops per hour of
talk full of near words ("top", "stock", "shop", "non-stop").

    python -m bench.stops [--quick | --dev] [--json PATH] [--out DIR] [--jobs N]

Recall runs the real daemon as fast as it goes (`--fast`; every decision is on the audio
clock), one session per voice x noise x SNR, four stops per session, each after a command that
set the arm moving. Stop time is measured on the wall clock at real-time pace (the 10 dB runs,
one per voice and noise). False stops run an hour of talk in always-listen mode. The corpus is
test data: the stop path is tuned on `--dev` (other voices, other noise seeds, other words).
Figures only: nothing asserts a target.
"""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any

from bench import corpus, corpus_cli, daemon_run, metrics
from bench.corpus import Condition
from bench.machine import machine_info
from bench.sessions import NEAR_STOP_PROSE, PROSE, STOP_RUNS, STOP_RUNS_DEV, Session

REAL_TIME = "[simulator]\ntime_scale = 1.0\n"
"""The arm at real speed, so every stop lands while it moves."""
ARMED = REAL_TIME + "[audio]\nstop_spotter_always = true\n"
"""For the talk: the spotter listens all the time, as it does near a moving arm."""
TALK_MINUTES = 5.0
"""Each false-stop file: five minutes of talk."""
TALK = (
    ("en-us", None, None),
    ("en-gb", "pink", 20.0),
    ("en-gb-x-rp", "babble", 10.0),
    ("en+f3", "white", 10.0),
    ("en+m3", "brown", 20.0),
    ("en-us+Alex", "pink", 10.0),
    ("en-us", "babble", 20.0),
    ("en-gb", "brown", 5.0),
    ("en-gb-x-rp", None, None),
    ("en+f3", "pink", 5.0),
    ("en+m3", "babble", 5.0),
    ("en-us+Alex", "white", 20.0),
)
"""Twelve five-minute files (an hour): every voice, every noise, every SNR."""


@dataclass(frozen=True)
class StopRun:
    session: Session
    condition: Condition
    realtime: bool = False


def plan(quick: bool, dev: bool) -> tuple[list[StopRun], list[Condition]]:
    """(stop runs, talk files). Full: every voice clean and under each noise at 20, 10 and 5 dB
    (sessions rotating), plus the 10 dB runs again at real-time pace for stop time."""
    sessions, voices = (STOP_RUNS_DEV, corpus.DEV_VOICES) if dev else (STOP_RUNS, corpus.VOICES)
    if quick:
        cond = Condition(voices[0], 160, "pink", 10.0)
        return [StopRun(sessions[0], cond), StopRun(sessions[0], cond, True)], []
    conditions = [(None, None)] + [(n, float(s)) for s in corpus.SNRS for n in corpus.NOISES]
    runs = []
    for i, voice in enumerate(voices):
        for j, (noise, snr) in enumerate(conditions):
            session = sessions[(i + j) % len(sessions)]
            runs.append(StopRun(session, Condition(voice, corpus.RATES[(i + j) % 3], noise, snr)))
    runs += [replace(r, realtime=True) for r in runs if r.condition.snr_db == 10]
    talk = [] if dev else [Condition(v, 165, n, s) for v, n, s in TALK]
    return runs, talk


def execute_stop(run: StopRun) -> dict[str, Any]:
    item = corpus.render(run.session, run.condition, None)
    result = daemon_run.run(
        run.session.cell, audio=item.wav, fast=not run.realtime, config=REAL_TIME
    )
    origin = metrics.audio_origin(result.events) if run.realtime else None
    found = metrics.stop_detections(result.events, item.truth)
    record: dict[str, Any] = {
        "cell": run.session.cell,
        "session": run.session.name,
        **asdict(run.condition),
        "realtime": run.realtime,
        "returncode": result.returncode,
        **found,
        "stop_s": metrics.stop_times(result.events, origin, item.truth) if origin else [],
        "heard": metrics.transcripts(result.events),
        "wall_s": round(result.wall_s, 1),
    }
    if result.returncode != 0:
        record["stderr_tail"] = result.stderr_tail
    _show("stop", record)
    return record


def execute_talk(cond: Condition, index: int) -> dict[str, Any]:
    text = NEAR_STOP_PROSE + " " + PROSE
    wav = corpus.render_filler(f"nearstop{index}", TALK_MINUTES * 60, cond, text)
    result = daemon_run.run("sandwich", audio=wav, mode="always", config=ARMED)
    truth = {"utterances": []}
    record = {
        "name": f"nearstop{index}",
        **asdict(cond),
        "audio_s": TALK_MINUTES * 60,
        "returncode": result.returncode,
        "false_stops": metrics.self_triggers(result.events, truth)["stops"],
        "spotted": sum(e["event"] == "spotted" for e in result.events),
        "stop_texts": [
            e["text"]
            for e in result.events
            if e["event"] in ("spotted", "utterance")
            and metrics.STOP_WORDS.search(e["text"].lower())
        ],
    }
    _show("talk", record)
    return record


def _show(what: str, record: dict[str, Any]) -> None:
    shown = {k: record[k] for k in _SHOWN if k in record}
    print(f"  {what}: {json.dumps(shown)}", file=sys.stderr, flush=True)


_SHOWN = (
    "session",
    "voice",
    "noise",
    "snr_db",
    "realtime",
    "said",
    "heard_stops",
    "spotted",
    "missed",
    "false_stops",
    "stop_s",
    "name",
    "wall_s",
)


def _recall(records: list[dict[str, Any]]) -> dict[str, Any]:
    said = sum(r["said"] for r in records)
    heard = sum(r["heard_stops"] for r in records)
    return {"heard": heard, "said": said, "recall": round(heard / said, 4) if said else None}


def figures(
    stops: list[dict[str, Any]], talk: list[dict[str, Any]], elapsed: float
) -> dict[str, Any]:
    fast = [r for r in stops if not r["realtime"]]

    def by(key: str) -> dict[str, Any]:
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in fast:
            groups.setdefault(str(r[key] if r[key] is not None else "clean"), []).append(r)
        return {k: _recall(v) for k, v in sorted(groups.items())}

    times = [t for r in stops if r["realtime"] for t in r["stop_s"]]
    hours = sum(r["audio_s"] for r in talk) / 3600
    return {
        "machine": machine_info(),
        "elapsed_s": round(elapsed, 1),
        "recall": _recall(fast),
        "recall_by_snr": by("snr_db"),
        "recall_by_noise": by("noise"),
        "recall_by_voice": by("voice"),
        "recall_by_noise_at": {
            f"{n}@{s:g}": _recall([r for r in fast if r["noise"] == n and r["snr_db"] == s])
            for n in corpus.NOISES
            for s in corpus.SNRS
            if any(r["noise"] == n and r["snr_db"] == s for r in fast)
        },
        "spotted_share": round(
            sum(r["spotted"] for r in fast) / max(1, sum(r["heard_stops"] for r in fast)), 3
        ),
        "stop_time_10db": {
            "samples": len(times),
            "p50_ms": _ms(metrics.quantile(times, 50)),
            "p95_ms": _ms(metrics.quantile(times, 95)),
            "max_ms": _ms(max(times) if times else None),
        },
        "false_stops": sum(r["false_stops"] for r in stops) + sum(r["false_stops"] for r in talk),
        "false_stops_in_talk": sum(r["false_stops"] for r in talk),
        "talk_hours": round(hours, 3),
        "failed_runs": sum(r["returncode"] != 0 for r in [*stops, *talk]),
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def markdown(fig: dict[str, Any]) -> str:
    def row(name: str, r: dict[str, Any]) -> str:
        pct = f"{100 * r['recall']:.1f} %" if r["recall"] is not None else "-"
        return f"| {name} | {r['heard']}/{r['said']} | {pct} |"

    lines = [
        "# Stop in noise",
        "",
        f"Machine: {fig['machine']}; {fig['elapsed_s']} s.",
        "",
        "| condition | heard | recall |",
        "|---|---|---|",
        row("all", fig["recall"]),
    ]
    for group in ("recall_by_snr", "recall_by_noise", "recall_by_voice", "recall_by_noise_at"):
        lines += [row(k, v) for k, v in fig[group].items()]
    t = fig["stop_time_10db"]
    lines += [
        "",
        f"Heard by the spotter (in the first pause): {100 * fig['spotted_share']:.0f} %.",
        f"End of the word to STOP on the wire at 10 dB (real-time pace, {t['samples']} "
        f"stops): p50 {t['p50_ms']} ms, p95 {t['p95_ms']} ms, max {t['max_ms']} ms.",
        f"False stops: {fig['false_stops_in_talk']} in {fig['talk_hours'] * 60:.0f} min "
        f"of near-word talk; {fig['false_stops']} in all runs.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = corpus_cli.parser(__doc__ or "").parse_args(argv)
    began = time.monotonic()
    runs, talk = plan(args.quick, args.dev)
    fast = [r for r in runs if not r.realtime]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        stops = list(pool.map(execute_stop, fast))
        talked = list(pool.map(lambda ci: execute_talk(*ci), [(c, i) for i, c in enumerate(talk)]))
    # Real-time runs one at a time with nothing else running: their wall clock is the figure.
    stops += [execute_stop(r) for r in runs if r.realtime]
    fig = figures(stops, talked, time.monotonic() - began)
    corpus_cli.write(args, "stops", markdown(fig), {"figures": fig, "stops": stops, "talk": talked})
    return 0


if __name__ == "__main__":
    sys.exit(main())
