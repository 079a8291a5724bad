"""Issue acceptance: every (start, target) pair over three objects gets a plan that the independent
checker (tests/rearrange/checker.py) accepts move by move, reaching the target, with exactly the
number of moves of the breadth-first optimum."""

from __future__ import annotations

from typing import Any

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange import plan_rearrangement
from voiced.robot.rearrange.plan import enforce_plan_consistency
from voiced.robot.rearrange.targets import validate_target_structure_payload

from tests.rearrange.checker import COLOURS, Rules, all_starts, all_targets

CELL = load_cell("blocks")
RULES = Rules(CELL)
TARGETS = all_targets()
STARTS = all_starts(CELL)
KINDS = {name: spec.kind for name, spec in CELL.sites.items()}


def test_the_instance_set_covers_every_relationship() -> None:
    relationships = {t["relationship"] for t, _ in TARGETS}
    assert len(TARGETS) == 64 and len(relationships) == 12
    assert len(STARTS) > 100
    assert any(stacks["B1"] for stacks in STARTS) and any(stacks["S1"] for stacks in STARTS)


def test_rules_are_symmetric() -> None:
    """Every move can be undone at once, which lets the BFS run from the goal states."""
    dist = RULES.distances({}, COLOURS)
    for state in dist:
        for (obj, i, j), after in RULES.moves(state):
            assert state in {s for _, s in RULES.moves(after)}, (obj, i, j)


def _expected_action(step: dict[str, Any]) -> str:
    source, target = KINDS[step["from"]["site"]], KINDS[step["to"]["site"]]
    if target == "buffer":
        return "move_to_buffer"
    return "move_from_buffer" if source == "buffer" else "move_to_position"


@pytest.mark.parametrize(("target", "stacks"), TARGETS, ids=[str(i) for i in range(len(TARGETS))])
def test_every_start_reaches_the_target_optimally(target: dict[str, Any], stacks: Any) -> None:
    dist = RULES.distances(stacks, COLOURS)
    structure = validate_target_structure_payload(target)
    for start in STARTS:
        scene = CELL.initial_scene.with_changes(stacks=start)
        plan = plan_rearrangement(CELL, scene, {"target_structure": target}).to_dict()
        assert plan["status"] == "success", (start, plan)
        state = RULES.state(start)
        for number, step in enumerate(plan["plan"], 1):
            assert step["step"] == number
            assert step["action"] == _expected_action(step), step
            state = RULES.apply(state, step["object"], step["from"]["site"], step["to"]["site"])
        assert RULES.arrangement(state) == stacks, (start, plan["plan"])
        buffers = {slot: (start[slot] or (None,))[-1] for slot in ("B1", "B2", "B3")}
        enforce_plan_consistency(plan, structure, buffers=buffers)
        assert len(plan["plan"]) == dist[RULES.state(start)], (start, target, plan["plan"])
