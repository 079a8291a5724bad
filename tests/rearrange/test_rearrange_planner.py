"""The search itself: the heuristic never overestimates (checked against breadth-first distances
over every state of three cubes) and is consistent; small hand-made problems."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange.planner import (
    PARK,
    Move,
    Problem,
    SiteSpec,
    _estimate,
    _Index,
    cell_problem,
    parking_sites,
    search,
)

from bench import planner_time
from tests.rearrange.checker import COLOURS, Rules, all_targets

CELL = load_cell("blocks")
RULES = Rules(CELL)
TARGETS = {t["relationship"] + str(len(t["placements"])): s for t, s in all_targets()}


@pytest.mark.parametrize("name", ["stacked3", "pyramid3", "separate_vertical3", "stacked2"])
def test_the_heuristic_is_admissible_and_consistent(name: str) -> None:
    goal = TARGETS[name]
    dist = RULES.distances(goal, COLOURS)
    estimate = {}
    for state in dist:
        problem = cell_problem(CELL, dict(zip(RULES.sites, state, strict=True)), goal)
        index = _Index(problem)
        start = (
            tuple(problem.start[s.name] for s in problem.sites),
            problem.parked,
            problem.supply,
        )
        estimate[state] = _estimate(index, start)
        assert estimate[state] <= dist[state], (state, estimate[state], dist[state])
        assert (estimate[state] == 0) == (dist[state] == 0)
    for state in dist:
        for _, after in RULES.moves(state):
            assert estimate[state] <= 1 + estimate[after]


def test_parking_is_buffers_then_scatter_spots() -> None:
    assert parking_sites(CELL) == ("B1", "B2", "B3", "S1", "S2", "S3", "S4", "S5", "S6")


def tower(capacity: int | None = 3) -> SiteSpec:
    return SiteSpec("tower", capacity)


def test_already_there_is_no_move() -> None:
    problem = Problem((tower(),), {"tower": ("a", "b")}, {"tower": ("a", "b")})
    assert search(problem).moves == ()


def test_reversing_a_tower_needs_three_slots() -> None:
    start, goal = {"tower": ("a", "b", "c")}, {"tower": ("c", "b", "a")}
    assert search(Problem((tower(),), start, goal, parking_slots=2)).moves is None
    result = search(Problem((tower(),), start, goal, parking_slots=3))
    assert result.moves == (Move("c", "tower", PARK), Move("b", "tower", PARK),
                            Move("a", "tower", PARK), Move("c", PARK, "tower"),
                            Move("b", PARK, "tower"), Move("a", PARK, "tower"))  # fmt: skip


def test_no_room_means_no_plan() -> None:
    problem = Problem((tower(),), {"tower": ("a", "b", "c")}, {"tower": ("a", "c", "b")},
                      parking_slots=1)  # fmt: skip
    result = search(problem)
    assert result.moves is None and not result.gave_up and result.expanded > 0


def test_supports_pin_and_are_needed() -> None:
    sites = (SiteSpec("l", 1), SiteSpec("r", 1), SiteSpec("top", 1, ("l", "r")))
    problem = Problem(sites, {"l": ("a",), "r": ("b",), "top": ("c",)},
                      {"l": ("b",), "r": ("a",), "top": ("c",)}, parking_slots=2)  # fmt: skip
    moves = search(problem).moves
    assert moves is not None and len(moves) == 5  # c off, a off, b across, a across, c back
    assert moves[0] == Move("c", "top", PARK)


def test_classic_blocks_world_eight_blocks_is_quick() -> None:
    """Three unlimited table stacks and no parking: a harder world than the blocks cell's."""
    sites = (tower(None), SiteSpec("t2", None), SiteSpec("t3", None))
    start = {"tower": tuple("abcd"), "t2": tuple("efgh"), "t3": ()}
    goal = {"tower": tuple("hgfe"), "t2": (), "t3": tuple("dcba")}
    began = time.perf_counter()
    result = search(Problem(sites, start, goal))
    assert result.moves is not None and len(result.moves) == 8
    assert time.perf_counter() - began < 5.0


def test_the_benchmark_runs(tmp_path: Path) -> None:
    out = tmp_path / "planner.json"
    assert planner_time.main(["--quick", "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    rows = figures["planner"]
    assert [r["objects"] for r in rows if r["world"] == "blocks cell"] == [3, 4, 5, 6, 7, 8]
    assert all(r["p50_ms"] > 0 and r["max_ms"] >= r["p95_ms"] for r in rows)
