"""Rearrangement planning time against the number of objects (3 to 8), on random instances.

    python -m bench.planner_time [--quick] [--json PATH]

Each instance puts n objects at random on the blocks cell's arrangement sites (a random valid
layout: center holds three, the pyramid top needs both bottoms) or its parking slots, and asks
for another random arrangement of all of them. Two worlds: the blocks cell as it is (three
buffer slots and six scatter spots to set objects aside) and a tight one with the three buffer
slots only. The cell has six cubes; 7 and 8 use made-up names on the same sites. A third
world, "alike cubes", is the blocks cell with cubes of three colours only (two or three of each
colour, interchangeable: the planner binds them to target slots). Figures only:
nothing is asserted (the issue's target is 6 objects within 1 s).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from voiced.robot.arrangement import ARRANGEMENT_SITES
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange.planner import cell_problem, parking_sites, search

from bench.machine import machine_info
from bench.stats import percentile

SIZES = (3, 4, 5, 6, 7, 8)
COLOURS = ("red cube", "green cube", "blue cube")
ROOM = {site: 3 if site == "center" else 1 for site in ARRANGEMENT_SITES}


def _arrange(rng: random.Random, objects: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """A random valid arrangement of `objects` on the arrangement sites."""
    stacks: dict[str, list[str]] = {site: [] for site in ARRANGEMENT_SITES}
    for obj in objects:
        free = [s for s in ARRANGEMENT_SITES if len(stacks[s]) < ROOM[s]]
        if stacks["pyramid_top"] == [] and not (stacks["pyramid_left"] and stacks["pyramid_right"]):
            free = [s for s in free if s != "pyramid_top"]
        stacks[rng.choice(free)].append(obj)
    return {site: tuple(objs) for site, objs in stacks.items()}


def _start(rng: random.Random, cell: Cell, objects: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Some objects arranged, the rest on random parking slots."""
    slots = list(parking_sites(cell))
    loose = rng.randint(max(0, len(objects) - 10), min(len(objects), len(slots)))
    stacks = dict(_arrange(rng, objects[loose:]))
    for obj, slot in zip(objects[:loose], rng.sample(slots, loose), strict=True):
        stacks[slot] = (obj,)
    return stacks


def measure(cell: Cell, size: int, count: int, seed: int, alike: bool = False) -> dict[str, Any]:
    """`alike`: the cubes come in three colours (two or three green cubes...), interchangeable."""
    rng = random.Random(seed)
    names = [*cell.objects, *(f"cube {i}" for i in range(size))][:size]
    if alike:
        names = [COLOURS[i % len(COLOURS)] for i in range(size)]
    times: list[int] = []
    moves: list[int] = []
    expanded: list[int] = []
    failed = 0
    for _ in range(count):
        objects = rng.sample(names, size)
        problem = cell_problem(cell, _start(rng, cell, objects), _arrange(rng, objects))
        began = time.perf_counter_ns()
        result = search(problem)
        times.append(time.perf_counter_ns() - began)
        expanded.append(result.expanded)
        if result.moves is None:
            failed += 1
        else:
            moves.append(len(result.moves))
    ordered = sorted(times)
    return {
        "objects": size,
        "instances": count,
        "p50_ms": percentile(ordered, 50) / 1e6,
        "p95_ms": percentile(ordered, 95) / 1e6,
        "max_ms": ordered[-1] / 1e6,
        "mean_moves": sum(moves) / max(1, len(moves)),
        "max_expanded": max(expanded),
        "no_plan": failed,
    }


def worlds() -> dict[str, tuple[Cell, bool]]:
    """World name -> (cell, whether the cubes come in alike colours)."""
    cell = load_cell("blocks")
    tight = {k: v for k, v in cell.sites.items() if v.kind != "scatter"}
    return {
        "blocks cell": (cell, False),
        "buffers only": (replace(cell, sites=tight), False),
        "alike cubes": (cell, True),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 instances per size, not 200")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    count = 20 if args.quick else 200
    rows: list[dict[str, Any]] = []
    print(f"{'world':<13} {'n':>2} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9} {'moves':>6} "
          f"{'expanded':>9}")  # fmt: skip
    for name, (cell, alike) in worlds().items():
        for size in SIZES:
            row = {"world": name, **measure(cell, size, count, seed=size, alike=alike)}
            rows.append(row)
            print(f"{name:<13} {size:>2} {row['p50_ms']:>9.2f} {row['p95_ms']:>9.2f} "
                  f"{row['max_ms']:>9.2f} {row['mean_moves']:>6.1f} {row['max_expanded']:>9}"
                  + (f"  ({row['no_plan']} without a plan)" if row["no_plan"] else ""))  # fmt: skip
    if args.json:
        figures = {"mode": "quick" if args.quick else "full", "machine": machine_info(),
                   "planner": rows}  # fmt: skip
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
