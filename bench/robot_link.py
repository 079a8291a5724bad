"""The robot-link benchmark: compile time, loopback round trip and sustained line rate.

    python -m bench.robot_link [--quick] [--json PATH]

Prints a table and, with --json, writes every figure as JSON. Figures only: nothing here passes
or fails a build (the PASS/MISS against the compile target is information). See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence

from bench import compile_time, loopback
from bench.machine import machine_info
from voiced.logs import configure_logging

WINDOWS = (1, 4, 16)


@dataclass(frozen=True)
class Plan:
    """How much to measure."""

    compile_reps: int
    round_trips: int
    stream_lines: int
    stream_repeats: int


QUICK = Plan(compile_reps=1000, round_trips=1000, stream_lines=1000, stream_repeats=1)
FULL = Plan(compile_reps=3000, round_trips=3000, stream_lines=2000, stream_repeats=3)


@dataclass(frozen=True)
class LinkFigures:
    round_trip: loopback.RoundTrip
    rates: tuple[loopback.Rate, ...]
    program: loopback.Rate


async def measure_link(cell: Cell, plan: Plan) -> LinkFigures:
    program = compile_sequence(cell, cell.initial_scene, compile_time.TWENTY_STEP).program
    assert program is not None
    round_trip = await loopback.round_trip(cell, plan.round_trips)
    rates = [
        await loopback.rate(cell, window, plan.stream_lines, plan.stream_repeats)
        for window in WINDOWS
    ]
    sandwich = await loopback.program_rate(cell, program.primitives, 4, plan.stream_repeats)
    return LinkFigures(round_trip, tuple(rates), sandwich)


def report(
    plan: Plan, compiled: compile_time.CompileReport, link: LinkFigures, seconds: float
) -> dict[str, Any]:
    return {
        "mode": "quick" if plan is QUICK else "full",
        "machine": machine_info(),
        "compile": compiled.to_dict(),
        "round_trip": link.round_trip.to_dict(),
        "throughput": {f"window_{r.window}": r.to_dict() for r in link.rates},
        "program_stream": link.program.to_dict(),
        "time_scale": loopback.TIME_SCALE,
        "elapsed_s": round(seconds, 2),
    }


def render(plan: Plan, compiled: compile_time.CompileReport, link: LinkFigures) -> str:
    """The human-readable table."""
    info = machine_info()
    header = (
        f"machine: {info['cpu_model']}, {info['cores']} cores, {info['implementation']} "
        f"{info['python']} ({'quick' if plan is QUICK else 'full'} run)"
    )
    sections = [
        [header],
        _compile_rows(compiled),
        _round_trip_rows(link.round_trip),
        _rate_rows((*link.rates, link.program)),
    ]
    return "\n\n".join("\n".join(rows) for rows in sections)


def _compile_rows(compiled: compile_time.CompileReport) -> list[str]:
    rows = [
        f"{'compile (sandwich cell)':<34} {'p50 us':>9} {'p95 us':>9} {'prims':>6} {'us/prim':>8}"
    ]
    for figures in (compiled.twenty_step, compiled.four_step, *compiled.single_steps.values()):
        s = figures.summary
        rows.append(
            f"  {figures.name:<32} {s.p50_us:9.1f} {s.p95_us:9.1f} {figures.primitives:6d} "
            f"{figures.per_primitive_us:8.2f}"
        )
    verdict = "PASS" if compiled.meets_target else "MISS"
    p50 = compiled.twenty_step.summary.p50_us
    rows.append(f"  target: 20-step p50 <= {compile_time.TARGET_US:g} us: {verdict} ({p50:.0f} us)")
    return rows


def _round_trip_rows(rt: loopback.RoundTrip) -> list[str]:
    done = rt.done
    return [
        f"loopback round trip, WAIT 0, window 1 ({done.samples} lines, "
        f"time_scale {loopback.TIME_SCALE:g})",
        f"  send->DONE  p50 {done.p50_us:7.1f} us   p95 {done.p95_us:7.1f} us   "
        f"p99 {done.p99_us:7.1f} us",
        f"  send->ACK   p50 {rt.ack.p50_us:7.1f} us",
        f"  run() wall time per line {rt.per_line_us:.1f} us",
    ]


def _rate_rows(rates: Sequence[loopback.Rate]) -> list[str]:
    head = f"{'sustained rate':<34} {'window':>6} {'best/s':>9} {'median/s':>9} {'in flight':>9}"
    rows = [head]
    for r in rates:
        rows.append(
            f"  {r.label:<32} {r.window:6d} {r.best:9.0f} {r.median:9.0f} {r.max_in_flight:9d}"
        )
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.robot_link", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 10 s)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(level="warning", stream=sys.stderr)
    plan = QUICK if args.quick else FULL
    began = time.perf_counter()
    cell = load_cell("sandwich")
    compiled = compile_time.run_all(cell, plan.compile_reps)
    link = asyncio.run(measure_link(cell, plan))
    print(render(plan, compiled, link))
    if args.json is not None:
        data = report(plan, compiled, link, time.perf_counter() - began)
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
