"""Alike objects (two green cubes): they share a name and are interchangeable. The planner binds
them to target slots itself, and its plans are as short as a plain breadth-first search finds
(the independent checker, tests/rearrange/checker.py), over every start and target of small
scenes with alike objects and over random larger ones."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.rearrange import (
    alike_objects,
    plan_command,
    plan_rearrangement,
    plan_to_sequence,
)
from voiced.robot.rearrange.planner import _estimate, _Index, cell_problem
from voiced.robot.rearrange.targets import validate_target_structure_payload
from voiced.robot.sequence import SequenceStep
from voiced.robot.view import scene_from_view, state_view

from tests.rearrange.checker import Rules, Stacks, all_starts, all_targets

CELL = load_cell("blocks")
RULES = Rules(CELL)
TWO_GREEN = ("green cube", "green cube", "blue cube")
THREE_GREEN = ("green cube", "green cube", "green cube")
SEED_TARGET = {"target_structure": {"relationship": "stacked", "placements": [
    {"position": "bottom", "object 1": "blue cube"},
    {"position": "middle", "object 2": "green cube"},
    {"position": "top", "object 3": "red cube"}]}}  # fmt: skip
SEED_WRONG_TOP = {"target_structure": {"relationship": "stacked", "placements": [
    {"position": "bottom", "object 1": "blue cube"},
    {"position": "middle", "object 2": "green cube"},
    {"position": "top", "object 3": "green cube"}]}}  # fmt: skip
"""The seed's "complex reordering with buffer" example: the top is a second green cube."""


def moves(plan: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(s["action"], s["object"], s["from"]["site"], s["to"]["site"]) for s in plan["plan"]]


def test_the_seeds_wrong_top_object_is_swapped_out_through_the_buffer(tmp_path: Path) -> None:
    (tmp_path / "current.json").write_text(json.dumps(SEED_WRONG_TOP), encoding="utf-8")
    (tmp_path / "target.json").write_text(json.dumps(SEED_TARGET), encoding="utf-8")
    plan = plan_command(tmp_path / "current.json", tmp_path / "target.json")
    assert plan["status"] == "success", plan.get("reason")
    assert moves(plan) == [
        ("move_to_buffer", "green cube", "center", "B1"),
        ("move_to_position", "red cube", "S1", "center"),
    ]
    assert (
        plan["final_state"]["arrangement"] == validate_target_structure_payload(SEED_TARGET).view()
    )
    assert plan["final_state"]["buffers"]["B1"] == "green cube"


def test_alike_objects_compile_with_the_one_the_plan_means() -> None:
    """Two green cubes on top of two sites: the plan's move names which one (move_from), and
    the compiler's expected scene is the target."""
    view = {"arrangement": {"relationship": "none", "placements": [
        {"position": "center", "object": "blue cube"},
        {"position": "center", "object": "green cube"},
        {"position": "left", "object": "green cube"}]}, "scattered": ["red cube"]}  # fmt: skip
    scene = scene_from_view(CELL, view, "test")
    target = {"relationship": "stacked", "placements": [
        {"position": "bottom", "object 1": "blue cube"},
        {"position": "middle", "object 2": "green cube"},
        {"position": "top", "object 3": "green cube"}]}  # fmt: skip
    plan = plan_rearrangement(CELL, scene, target)
    assert [(s.object, s.source.site, s.target.site) for s in plan.steps] == [
        ("green cube", "left", "center")
    ]
    sequence = plan_to_sequence(CELL, plan, alike_objects(scene))
    assert [s.instruction for s in sequence] == ["move_from"]
    result = compile_sequence(CELL, scene, sequence)
    assert result.program is not None, result.errors
    expected = state_view(CELL, result.program.expected)
    assert expected["arrangement"] == validate_target_structure_payload(target).view()


def test_move_from_refuses_a_cube_that_is_not_the_one_named() -> None:
    step = SequenceStep("move_from", {"object": "green cube", "from": "S1", "to": "B1"})
    result = compile_sequence(CELL, CELL.initial_scene, [step])
    assert result.program is None
    assert any("holding the red cube, not the green cube" in e.message for e in result.errors)


@pytest.mark.parametrize(
    ("stacks", "target", "reason"),
    [
        ({"S1": ("green cube",), "S2": ("green cube",)},
         ["green cube", "green cube", "green cube"],
         "the target needs three green cubes, and there are only two in the cell"),
        ({"S1": ("red cube",)}, ["red cube", "red cube"],
         "there is only one red cube: it cannot be in two places at once"),
    ],
)  # fmt: skip
def test_more_alike_objects_than_there_are_is_refused(
    stacks: Stacks, target: list[str], reason: str
) -> None:
    scene = CELL.initial_scene.with_changes(stacks={s: () for s in CELL.sites} | stacks)
    names = ("bottom", "middle", "top") if len(target) == 3 else ("bottom", "top")
    placements = [{"position": p, "object": o} for p, o in zip(names, target, strict=False)]
    plan = plan_rearrangement(CELL, scene, {"relationship": "stacked", "placements": placements})
    assert plan.status == "blocked"
    assert plan.reason == reason


def _check_every_start(objects: tuple[str, ...], target: dict[str, Any], goal: Stacks) -> int:
    """Every start of `objects` to `target`: legal, reaching it, as short as BFS. Returns the
    number of starts checked."""
    dist = RULES.distances(goal, objects)
    starts = all_starts(CELL, objects)
    for start in starts:
        scene = CELL.initial_scene.with_changes(stacks=start)
        plan = plan_rearrangement(CELL, scene, {"target_structure": target}).to_dict()
        assert plan["status"] == "success", (start, plan)
        state = RULES.state(start)
        for step in plan["plan"]:
            state = RULES.apply(state, step["object"], step["from"]["site"], step["to"]["site"])
        assert RULES.arrangement(state) == goal, (start, plan["plan"])
        assert len(plan["plan"]) == dist[RULES.state(start)], (start, target, plan["plan"])
    return len(starts)


ALIKE_TARGETS = [(objs, t, g) for objs in (TWO_GREEN, THREE_GREEN) for t, g in all_targets(objs)]


@pytest.mark.parametrize(
    ("objects", "target", "goal"),
    ALIKE_TARGETS,
    ids=[f"{len(set(o))}-{i}" for i, (o, _, _) in enumerate(ALIKE_TARGETS)],
)
def test_alike_objects_reach_every_target_as_fast_as_bfs(
    objects: tuple[str, ...], target: dict[str, Any], goal: Stacks
) -> None:
    assert _check_every_start(objects, target, goal) > 10


@pytest.mark.parametrize("relationship", ["stacked", "pyramid", "separate_horizontal"])
def test_the_heuristic_stays_admissible_and_consistent_with_alike_objects(
    relationship: str,
) -> None:
    goal = next(g for t, g in all_targets(TWO_GREEN)
                if t["relationship"] == relationship and len(t["placements"]) == 3)  # fmt: skip
    dist = RULES.distances(goal, TWO_GREEN)
    estimate = {}
    for state in dist:
        problem = cell_problem(CELL, dict(zip(RULES.sites, state, strict=True)), goal)
        start = (tuple(problem.start[s.name] for s in problem.sites), problem.parked, ())
        estimate[state] = _estimate(_Index(problem), start)
        assert estimate[state] <= dist[state], (state, estimate[state], dist[state])
        assert (estimate[state] == 0) == (dist[state] == 0)
    for state in dist:
        for _, after in RULES.moves(state):
            assert estimate[state] <= 1 + estimate[after]


def _random_layout(rng: random.Random, objects: list[str]) -> Stacks:
    """`objects` at random on arrangement sites (center holds three, the pyramid top needs
    both bottoms), the rest of the cell empty."""
    room = {"left": 1, "center": 3, "right": 1, "front": 1, "back": 1,
            "pyramid_left": 1, "pyramid_right": 1, "pyramid_top": 1}  # fmt: skip
    stacks: dict[str, tuple[str, ...]] = {site: () for site in CELL.sites}
    for obj in objects:
        free = [s for s, n in room.items() if len(stacks[s]) < n]
        if not (stacks["pyramid_left"] and stacks["pyramid_right"]):
            free = [s for s in free if s != "pyramid_top"]
        site = rng.choice(free)
        stacks[site] = (*stacks[site], obj)
    return stacks


def test_random_four_cube_scenes_with_alike_cubes_are_optimal() -> None:
    """Four cubes, two of them alike, at random; the target a random arrangement of three or
    four of them. Each plan is exactly as long as the breadth-first optimum."""
    rng = random.Random(4)
    objects = ["green cube", "green cube", "red cube", "blue cube"]
    for _ in range(4):
        start = _random_layout(rng, objects)
        chosen = rng.sample(objects, rng.choice((3, 4)))
        arranged = _random_layout(rng, chosen)
        goal = {s: objs for s, objs in arranged.items() if objs}
        target = {"relationship": "none", "placements": [
            {"position": s, "object": o} for s, objs in goal.items() for o in objs]}  # fmt: skip
        scene = CELL.initial_scene.with_changes(stacks=start)
        plan = plan_rearrangement(CELL, scene, target)
        assert plan.status == "success", plan.reason
        dist = RULES.distances(goal, objects)
        assert len(plan.steps) == dist[RULES.state(start)], (start, goal)


def test_scenes_and_targets_may_name_a_cube_by_its_kind() -> None:
    """ "a green cube" is any green cube, in a scene file and in a target."""
    view = {"scattered": ["a green cube", "a green cube", "the red cube", "blue cube"]}
    scene = scene_from_view(CELL, view, "scene.json")
    assert [scene.stacks[s] for s in ("S1", "S2", "S3")] == [("green cube",)] * 2 + [("red cube",)]
    target = {"relationship": "stacked", "placements": [
        {"position": "bottom", "object 1": "a green cube"},
        {"position": "top", "object 2": "a green cube"}]}  # fmt: skip
    plan = plan_rearrangement(CELL, scene, target)
    assert [(s.object, s.source.site, s.target.site) for s in plan.steps] == [
        ("green cube", "S1", "center"), ("green cube", "S2", "center")
    ]  # fmt: skip
