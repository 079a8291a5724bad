"""The grammar benchmark: parse time per utterance over every phrasing of the grammar table.

    python -m bench.grammar_parse [--quick] [--json PATH]

Each phrasing of tests/interpreter/phrases.py is parsed by its cell's grammar (built once per
cell, as the daemon does) repeatedly after a warm-up; the table shows p50/p95/p99 over all
samples, the slowest phrasing, and the full interpreter (`interpret`: phrase bank, then grammar).
Figures only: the target (p95 <= 5 ms) is printed as PASS/MISS, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voiced.robot.cellfile import load_cell
from voiced.robot.view import scene_from_view

from bench.machine import machine_info
from bench.stats import Summary, summarise
from tests.interpreter.phrases import CASES
from voiced.interpreter.grammar import Grammar, interpret
from voiced.logs import configure_logging

TARGET_P95_US = 5000.0
"""Parse time per utterance, p95: a spoken command must feel instant."""
CELLS = ("sandwich", "weld", "blocks")


@dataclass(frozen=True)
class Figures:
    """Timings of one way of parsing the table."""

    name: str
    summary: Summary
    slowest: str
    """The phrasing with the highest median."""
    slowest_p50_us: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary.to_dict(), "slowest": self.slowest,
                "slowest_p50_us": round(self.slowest_p50_us, 3)}  # fmt: skip


def measure(name: str, calls: Sequence[tuple[str, Callable[[], object]]], reps: int) -> Figures:
    """Each call `reps` times (after a warm-up), interleaved so caches stay realistic."""
    for _, call in calls:
        call()
    gc.collect()
    clock = time.perf_counter_ns
    per_call: dict[str, list[int]] = {label: [] for label, _ in calls}
    for _ in range(reps):
        for label, call in calls:
            began = clock()
            call()
            per_call[label].append(clock() - began)
    samples = [t for times in per_call.values() for t in times]
    medians = {label: sorted(t)[len(t) // 2] for label, t in per_call.items()}
    slowest = max(medians, key=lambda label: medians[label])
    return Figures(name, summarise(samples), slowest, medians[slowest] / 1e3)


def build_times() -> dict[str, float]:
    """Milliseconds to build each cell's grammar (vocabulary, lexer, packaged phrase bank): paid
    at start-up and again whenever a learned composite changes the cell."""
    times: dict[str, float] = {}
    for name in CELLS:
        cell = load_cell(name)
        began = time.perf_counter_ns()
        for _ in range(10):
            Grammar(cell)
        times[name] = round((time.perf_counter_ns() - began) / 10 / 1e6, 3)
    return times


def run(reps: int) -> tuple[Figures, Figures]:
    grammars = {name: Grammar(load_cell(name)) for name in CELLS}
    parses: list[tuple[str, Callable[[], object]]] = []
    interprets: list[tuple[str, Callable[[], object]]] = []
    for case in CASES:
        g = grammars[case.cell]
        scene = scene_from_view(g.cell, dict(case.scene), "bench") if case.scene else None
        label = f"{case.cell}: {case.said}"
        parses.append((label, lambda g=g, t=case.said, s=scene: g.parse(t, scene=s)))
        interprets.append((label, lambda g=g, t=case.said, s=scene: interpret(g, t, scene=s)))
    return measure("Grammar.parse", parses, reps), measure("interpret", interprets, reps)


def render(figures: Sequence[Figures], phrasings: int, reps: int, builds: dict[str, float]) -> str:
    info = machine_info()
    lines = [
        f"grammar parse time: {phrasings} phrasings x {reps} reps, "
        f"{info['cpu_model']}, {info['cores']} cores, Python {info['python']}",
        f"{'':16}{'p50 us':>10}{'p95 us':>10}{'p99 us':>10}{'max med us':>12}  target p95",
    ]
    for f in figures:
        verdict = "PASS" if f.summary.p95_us <= TARGET_P95_US else "MISS"
        lines.append(
            f"{f.name:16}{f.summary.p50_us:10.1f}{f.summary.p95_us:10.1f}"
            f"{f.summary.p99_us:10.1f}{f.slowest_p50_us:12.1f}  <= {TARGET_P95_US:.0f}: {verdict}"
        )
        lines.append(f"{'':16}slowest: {f.slowest}")
    built = ", ".join(f"{name} {ms:.1f} ms" for name, ms in builds.items())
    lines.append(f"grammar build per cell: {built}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.grammar_parse")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about 1 s)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    configure_logging("warning", "auto")
    reps = 20 if args.quick else 200
    parse, full = run(reps)
    builds = build_times()
    print(render((parse, full), len(CASES), reps, builds))
    if args.json:
        data = {"mode": "quick" if args.quick else "full", "machine": machine_info(),
                "phrasings": len(CASES), "reps": reps, "target_p95_us": TARGET_P95_US,
                "parse": parse.to_dict(), "interpret": full.to_dict(),
                "build_ms": builds}  # fmt: skip
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
