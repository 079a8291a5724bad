"""The spoken-command benchmark: end-state accuracy, word error rate, end of speech to
first primitive, stop time, false activations, idle CPU, peak RSS, transcription real-time factor.

    python -m bench.evaluate [--quick | --medium] [--json PATH] [--out DIR] [--jobs N]
    python -m bench.evaluate --dev [--set SECTION.KEY=VALUE ...]   # tuning corpus, accuracy only
    python -m bench.evaluate --accuracy [--json PATH]             # test corpus, accuracy only

Runs the real daemon (`voiced run --audio FILE --controller sim`) on a rendered corpus
(bench/corpus.py) and writes bench/results/latest.{md,json} (+ PNG plots when matplotlib is
installed; --quick writes only what --json/--out ask for). Figures only: nothing asserts a target.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from bench import corpus, daemon_run, metrics, report
from bench.corpus import Condition, Item
from bench.sessions import COMMANDS, COMMANDS_DEV, STOPS, Session
from bench.stats import percentile

RESULTS = corpus.ROOT / "results"


@dataclass(frozen=True)
class Filler:
    """Non-command audio for false activations (voice "silence" = no speech)."""

    name: str
    seconds: float
    condition: Condition


@dataclass(frozen=True)
class Plan:
    mode: str
    accuracy: tuple[tuple[Session, Condition], ...]
    latency: tuple[tuple[Session, Condition], ...]
    stops: tuple[tuple[Session, Condition], ...]
    fillers: tuple[Filler, ...]
    idle_s: float
    idle_skip_s: float


def _by_name(cell: str, name: str) -> Session:
    return next(s for s in COMMANDS + STOPS if s.cell == cell and s.name == name)


def _rotating(
    sessions: Iterable[Session],
    conditions: list[tuple[str | None, float | None]],
    voices: tuple[str, ...] = corpus.VOICES,
):
    """Every session under every noise condition; voice and rate rotate so that each voice and
    rate meets every cell and noise level (a full cross product would take hours here)."""
    out = []
    for j, session in enumerate(sessions):
        for i, (kind, snr) in enumerate(conditions):
            voice = voices[(i + j) % len(voices)]
            rate = corpus.RATES[(i // 2 + j) % len(corpus.RATES)]
            out.append((session, Condition(voice, rate, kind, snr)))
    return tuple(out)


def quick_plan() -> Plan:
    cond = Condition("en-us", 160, "pink", 20)
    picks = [_by_name("sandwich", "every"), _by_name("weld", "goto"), _by_name("blocks", "stack")]
    return Plan("quick", tuple((s, cond) for s in picks),
                ((_by_name("weld", "goto"), Condition()),),
                ((_by_name("weld", "stop"), Condition()),), (), 30.0, 8.0)  # fmt: skip


def full_plan(medium: bool = False) -> Plan:
    """Full: every session clean and under every noise at every SNR, 30 min of filler.
    Medium (what fits in about 15 minutes here): the two SNRs with targets, two noises, six
    latency sessions and 12 min of filler."""
    snrs = (20, 10) if medium else corpus.SNRS
    noises = ("pink", "babble") if medium else corpus.NOISES
    conditions: list[tuple[str | None, float | None]] = [] if medium else [(None, None)]
    conditions += [(n, float(s)) for s in snrs for n in noises]
    lat_sessions = COMMANDS[::2] if medium else COMMANDS
    latency = tuple((s, Condition(corpus.VOICES[j % 6], 160)) for j, s in enumerate(lat_sessions))
    voices = ("en-us",) if medium else ("en-us", "en+f3")
    stops = tuple((s, Condition(v, 160)) for s in STOPS for v in voices)
    fill_s = 120.0 if medium else 300.0
    fill = FILL[:3] if medium else FILL
    fillers = tuple(
        Filler(f"prose{i}", fill_s, Condition(v, 165, n, float(snr)))
        for i, (v, n, snr) in enumerate(fill)
    )
    mode = "medium" if medium else "full"
    return Plan(mode, _rotating(COMMANDS, conditions), latency, stops, fillers, 70.0, 10.0)


def dev_plan() -> Plan:
    """The development corpus (other sentences, voices and noise seeds): accuracy only, clean
    and four noises at 20 and 10 dB. For tuning; its figures are never reported as results."""
    conditions: list[tuple[str | None, float | None]] = [(None, None)]
    conditions += [(n, float(s)) for s in (20, 10) for n in corpus.NOISES]
    return Plan("dev", _rotating(COMMANDS_DEV, conditions, corpus.DEV_VOICES), (), (), (), 0, 0)


FILL = (
    ("en-us", "pink", 10),
    ("en-gb", "babble", 10),
    ("en+f3", "white", 20),
    ("en-us+Alex", "brown", 5),
    ("en-gb-x-rp", "babble", 5),
    ("en+m3", "pink", 20),
)
"""Filler voices and noises: each file is read prose under one noise, in both modes."""


def expected_state(session: Session) -> dict[str, Any] | None:
    """Ground truth: the final state of the text version of the session (cached)."""
    path = corpus.CACHE / f"expected-{session.cell}-{corpus.key('v1', session.lines)}.json"
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    run = daemon_run.run(session.cell, text=session.text)
    state = daemon_run.final_state(run.events)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state), encoding="utf-8")
    return state


def score(item: Item, run: daemon_run.Run, realtime: bool) -> dict[str, Any]:
    """Everything one run yields, as a flat record."""
    truth, ev = item.truth, run.events
    edits, words = metrics.word_errors([u["text"] for u in truth["utterances"]],
                                       metrics.transcripts(ev))  # fmt: skip
    origin = metrics.audio_origin(ev) if realtime else None
    final = daemon_run.final_state(ev)
    return {
        "cell": item.session.cell, "session": item.session.name, "kind": item.session.kind,
        **asdict(item.condition), "realtime": realtime, "returncode": run.returncode,
        "correct": final is not None and final == truth["expected_state"],
        "edits": edits, "ref_words": words, "heard": metrics.transcripts(ev),
        "latencies_s": metrics.command_latencies(ev, origin) if origin is not None else [],
        "latency_parts_s": metrics.latency_parts(ev, origin) if origin is not None else [],
        "stop_s": metrics.stop_times(ev, origin, truth) if origin is not None else [],
        "transcribe_s": metrics.transcribe_seconds(ev),
        "speech_s": sum(u["speech_end"] - u["start"] for u in truth["utterances"]),
        "audio_s": truth["seconds"], "wall_s": round(run.wall_s, 2),
        "max_rss_kb": run.max_rss_kb,
    }  # fmt: skip


SETTINGS: list[str] = []
"""`--set` settings for every daemon run (A/B of a lever)."""


def run_session(session: Session, cond: Condition, realtime: bool) -> dict[str, Any]:
    expected = expected_state(session) if session.kind == "command" else None
    item = corpus.render(session, cond, expected)
    config = daemon_run.FAST_SIM if session.kind == "command" else ""
    config += daemon_run.settings_toml(tuple(SETTINGS))
    run = daemon_run.run(session.cell, audio=item.wav, fast=not realtime, config=config)
    record = score(item, run, realtime)
    if run.returncode != 0:
        record["stderr_tail"] = run.stderr_tail
    return record


def run_filler(filler: Filler, mode: str) -> dict[str, Any]:
    wav = corpus.render_filler(filler.name, filler.seconds, filler.condition)
    run = daemon_run.run(
        "sandwich",
        audio=wav,
        mode=mode,
        config=daemon_run.FAST_SIM + daemon_run.settings_toml(tuple(SETTINGS)),
    )
    return _activations(filler.name, filler.seconds, filler.condition, mode, run)


def _activations(name: str, seconds: float, cond: Condition, mode: str,
                 run: daemon_run.Run) -> dict[str, Any]:  # fmt: skip
    count = {k: sum(e["event"] == k for e in run.events)
             for k in ("utterance", "submit", "primitive")}  # fmt: skip
    return {"name": name, "mode": mode, **asdict(cond), "audio_s": seconds,
            "utterances": count["utterance"], "submits": count["submit"],
            "primitives": count["primitive"], "returncode": run.returncode,
            "heard": metrics.transcripts(run.events)[:20],
            "max_rss_kb": run.max_rss_kb}  # fmt: skip


def run_idle(plan: Plan) -> dict[str, Any]:
    """Real-time silence in always-listen mode: CPU between model load and the end of the
    file, plus its activations (it is non-command audio too)."""
    cond = Condition("silence", 0)
    wav = corpus.render_filler("silence", plan.idle_s, cond)
    run = daemon_run.run("sandwich", audio=wav, fast=False, mode="always", sample_cpu=True)
    record = _activations("silence", plan.idle_s, cond, "always", run)
    record["idle_cpu_percent"] = metrics.idle_cpu_percent(run.cpu, plan.idle_skip_s)
    record["cpu_window_s"] = round(run.cpu[-1][0] - plan.idle_skip_s, 1) if run.cpu else 0.0
    return record


def _progress(label: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def note(record: dict[str, Any]) -> dict[str, Any]:
        print(f"  {label}: {json.dumps({k: record.get(k) for k in _SHOWN if k in record})}",
              file=sys.stderr, flush=True)  # fmt: skip
        return record

    return note


_SHOWN = ("cell", "session", "voice", "noise", "snr_db", "correct", "latencies_s", "stop_s",
          "name", "mode", "submits", "primitives", "idle_cpu_percent", "wall_s")  # fmt: skip


def execute(plan: Plan, jobs: int) -> dict[str, list[dict[str, Any]]]:
    """Fast-paced runs in parallel; real-time runs one at a time with nothing else running, so
    their wall-clock figures are not inflated by the benchmark itself."""
    for session in {s for s, _ in plan.accuracy}:
        expected_state(session)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        acc = list(pool.map(lambda sc: _progress("accuracy")(run_session(*sc, False)),
                            plan.accuracy))  # fmt: skip
        pairs = [(f, m) for f in plan.fillers for m in ("always", "wake")]
        fills = list(pool.map(lambda fm: _progress("false")(run_filler(*fm)), pairs))
    lat = [_progress("latency")(run_session(s, c, True)) for s, c in plan.latency]
    stops = [_progress("stop")(run_session(s, c, True)) for s, c in plan.stops]
    if not plan.idle_s:
        return {"accuracy": acc, "latency": lat, "stops": stops, "false": fills, "idle": []}
    idle = _progress("idle")(run_idle(plan))
    return {"accuracy": acc, "latency": lat, "stops": stops, "false": [*fills, idle],
            "idle": [idle]}  # fmt: skip


def latency_summary(runs: list[dict[str, Any]]) -> str:
    """End of speech to first primitive over the timed commands: p50, p95, max."""
    ms = sorted(round(s * 1000) for r in runs for s in r["latencies_s"])
    if not ms:
        return "no timed command reached the arm"
    return (f"{len(ms)} commands: p50 {percentile(ms, 50)} ms, p95 {percentile(ms, 95)} ms, "
            f"max {ms[-1]} ms")  # fmt: skip


def dev_summary(runs: list[dict[str, Any]]) -> str:
    """Correct runs per SNR and noise, and what was heard in the wrong ones."""
    lines = [f"{sum(r['correct'] for r in runs)}/{len(runs)} correct"]
    for field in ("snr_db", "noise", "cell"):
        groups: dict[str, list[bool]] = {}
        for r in runs:
            groups.setdefault(str(r[field] or "clean"), []).append(r["correct"])
        lines.append(f"  {field}: " + ", ".join(f"{k} {sum(v)}/{len(v)}"
                                                for k, v in sorted(groups.items())))  # fmt: skip
    lines += [f"  wrong: {r['session']} {r['voice']} {r['noise']}@{r['snr_db']}: {r['heard']}"
              for r in runs if not r["correct"]]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="CI smoke run, under 2 minutes")
    size.add_argument("--medium", action="store_true", help="fewer noises and shorter filler")
    size.add_argument("--dev", action="store_true", help="the development corpus, accuracy only")
    size.add_argument("--accuracy", action="store_true",
                      help="the full test corpus, accuracy runs only")  # fmt: skip
    size.add_argument("--latency", action="store_true",
                      help="the full plan's timed commands only (real-time pace)")  # fmt: skip
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help='a setting for every run, e.g. "stt.hypotheses=1"')  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--out", type=Path, help="report directory (default: bench/results, "
                        "none for --quick)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2, help="parallel fast-paced runs")
    args = parser.parse_args(argv)
    SETTINGS[:] = args.set
    plan = quick_plan() if args.quick else dev_plan() if args.dev else full_plan(args.medium)
    if args.accuracy:
        plan = replace(plan, latency=(), stops=(), fillers=(), idle_s=0)
    if args.latency:
        plan = replace(plan, accuracy=(), stops=(), fillers=(), idle_s=0)
    began = time.monotonic()
    records = execute(plan, max(1, args.jobs))
    if args.latency:
        print(latency_summary(records["latency"]))
    if args.dev or args.accuracy:
        print(dev_summary(records["accuracy"]))
    if args.dev or args.accuracy or args.latency:
        if args.json is not None:
            args.json.write_text(json.dumps(records, indent=1), encoding="utf-8")
        return 0
    # Kept before the report is built, so a report bug never costs a 30-minute run.
    corpus.CACHE.mkdir(parents=True, exist_ok=True)
    (corpus.CACHE / f"records-{plan.mode}.json").write_text(json.dumps(records), "utf-8")
    figures = report.figures(plan.mode, records, time.monotonic() - began)
    print(report.markdown(figures))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    out = args.out if args.out is not None else (None if args.quick else RESULTS)
    if out is not None:
        report.write(figures, records, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
