"""Seed 004's Test 1 and Test 2, blocked targets, `voiced plan` files, and the seed's plan check
(`enforce_plan_consistency`) on plans that break each rule."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from voiced.robot.cell import Site
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange import plan_command, plan_rearrangement
from voiced.robot.rearrange.plan import PlanConsistencyError, enforce_plan_consistency, plan_issues
from voiced.robot.rearrange.targets import validate_target_structure_payload

CELL = load_cell("blocks")
TARGET = {"target_structure": {"relationship": "stacked", "placements": [
    {"position": "bottom", "object 1": "blue cube"},
    {"position": "middle", "object 2": "green cube"},
    {"position": "top", "object 3": "red cube"}]}}  # fmt: skip
STRUCTURE = validate_target_structure_payload(TARGET)


def current(*placements: tuple[str, str]) -> dict[str, Any]:
    rows = [{"position": p, f"object {i}": o} for i, (p, o) in enumerate(placements, 1)]
    return {"target_structure": {"relationship": "stacked", "placements": rows}}


def plan_for(tmp_path: Path, state: object, target: object = TARGET) -> dict[str, Any]:
    (tmp_path / "current.json").write_text(json.dumps(state), encoding="utf-8")
    (tmp_path / "target.json").write_text(json.dumps(target), encoding="utf-8")
    return plan_command(tmp_path / "current.json", tmp_path / "target.json")


def moves(plan: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(s["action"], s["object"], s["from"]["site"], s["to"]["site"]) for s in plan["plan"]]


def test_seed_test_1_as_written(tmp_path: Path) -> None:
    """Current bottom blue, top green. Physically that is a two-high stack whose second level is
    the target's middle, so only the red cube is missing: one move, and an optimal plan uses no
    buffer (the seed's "missing middle" reads positions as fixed slots with a gap)."""
    plan = plan_for(tmp_path, current(("bottom", "blue cube"), ("top", "green cube")))
    assert plan["status"] == "success"
    assert moves(plan) == [("move_to_position", "red cube", "S1", "center")]
    assert plan["plan"][0]["to"] == {"type": "stack", "position": "top", "site": "center"}
    assert plan["final_state"]["arrangement"] == STRUCTURE.view()


def test_seed_test_1_missing_middle_under_the_top(tmp_path: Path) -> None:
    """The challenge Test 1 describes: the middle is missing under the top (red): the top goes
    to a buffer, the middle goes on, the top comes back."""
    plan = plan_for(tmp_path, current(("bottom", "blue cube"), ("top", "red cube")))
    assert moves(plan) == [
        ("move_to_buffer", "red cube", "center", "B1"),
        ("move_to_position", "green cube", "S2", "center"),
        ("move_from_buffer", "red cube", "B1", "center"),
    ]
    assert plan["plan"][0]["to"] == {"type": "buffer", "slot": "B1", "site": "B1"}
    assert "until its target position (top) is ready" in plan["plan"][0]["reason"]
    assert plan["plan"][1]["to"]["position"] == "middle"
    enforce_plan_consistency(plan, STRUCTURE)


def test_seed_test_2_wrong_top(tmp_path: Path) -> None:
    """A complete stack with the green cube on top instead of the red one (red in the middle):
    both must come off, into buffers, and go back bottom-up."""
    state = current(("bottom", "blue cube"), ("middle", "red cube"), ("top", "green cube"))
    plan = plan_for(tmp_path, state)
    assert moves(plan) == [
        ("move_to_buffer", "green cube", "center", "B1"),
        ("move_to_buffer", "red cube", "center", "B2"),
        ("move_from_buffer", "green cube", "B1", "center"),
        ("move_from_buffer", "red cube", "B2", "center"),
    ]
    assert plan["final_expected"] == STRUCTURE.view()
    assert plan["final_state"]["buffers"] == {"B1": None, "B2": None, "B3": None}
    enforce_plan_consistency(plan, STRUCTURE)


def test_legacy_current_and_state_view_files(tmp_path: Path) -> None:
    legacy = {"relationship": "none", "scattered": [{"object": "red cube"},
              {"object": "green cube"}, {"object": "blue cube"}]}  # fmt: skip
    assert len(plan_for(tmp_path, legacy)["plan"]) == 3
    view = {"arrangement": {"relationship": "stacked", "placements": [
        {"position": "bottom", "object": "blue cube"}, {"position": "top", "object": "red cube"}]},
        "buffers": {"B1": "green cube"}}  # fmt: skip
    plan = plan_for(tmp_path, view)
    assert moves(plan) == [
        ("move_to_buffer", "red cube", "center", "B2"),
        ("move_from_buffer", "green cube", "B1", "center"),
        ("move_from_buffer", "red cube", "B2", "center"),
    ]


def test_objects_off_target_are_cleared_to_scatter_spots(tmp_path: Path) -> None:
    target = {"target_structure": {"relationship": "stacked_left",
                                   "placements": [{"object": "blue cube"}]}}  # fmt: skip
    plan = plan_for(tmp_path, current(("bottom", "blue cube"), ("top", "red cube")), target)
    assert moves(plan)[0] == ("move_to_position", "red cube", "center", "S1")
    assert "not part of the target" in plan["plan"][0]["reason"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"placements": [{"object": "yellow cube"}]}, "needs the yellow cube, which is not in "
         "the cell (and it has no supply)"),
        ({"placements": [{"object": "pink cube"}]}, "needs the pink cube, which this cell does "
         "not have"),
    ],
)  # fmt: skip
def test_missing_objects_are_blocked(change: dict[str, Any], reason: str) -> None:
    target = {"relationship": "stacked_left", **change}
    plan = plan_rearrangement(CELL, CELL.initial_scene, target).to_dict()
    assert plan["status"] == "blocked" and plan["plan"] == []
    assert reason in plan["reason"]


def test_holding_is_blocked() -> None:
    scene = CELL.initial_scene.with_changes(holding="red cube")
    plan = plan_rearrangement(CELL, scene, TARGET)
    assert plan.status == "blocked" and "holding the red cube" in (plan.reason or "")


def test_not_enough_buffers_is_blocked() -> None:
    """A cell with only the stack and one buffer slot cannot swap the top two cubes."""
    cell = replace(CELL, sites={k: v for k, v in CELL.sites.items() if k in ("center", "B1")})
    stacks = {"center": ("blue cube", "red cube", "green cube"), "B1": ()}
    plan = plan_rearrangement(cell, CELL.initial_scene.with_changes(stacks=stacks), TARGET)
    assert plan.status == "blocked"
    assert "not enough free buffer slots or scatter spots" in (plan.reason or "")
    assert "(1 free: B1)" in (plan.reason or "")


def test_the_search_limit_blocks_with_a_reason() -> None:
    stacks = dict(CELL.initial_scene.stacks) | {"center": ("red cube", "green cube", "blue cube"),
                                               "S1": (), "S2": (), "S3": ()}  # fmt: skip
    plan = plan_rearrangement(CELL, CELL.initial_scene.with_changes(stacks=stacks), TARGET,
                              max_states=1)  # fmt: skip
    assert plan.status == "blocked" and "gave up" in (plan.reason or "")


def test_place_from_supply_when_the_cell_has_one() -> None:
    supply = Site("red_supply", "supply", 650.0, -100.0, 0.0)
    objects = dict(CELL.objects) | {
        "red cube": replace(CELL.objects["red cube"], supply="red_supply")
    }
    cell = replace(CELL, sites={**CELL.sites, "red_supply": supply}, objects=objects)
    stacks = {**{s: () for s in cell.sites}, "center": ("blue cube", "green cube"),
              "red_supply": ("red cube",)}  # fmt: skip
    plan = plan_rearrangement(cell, cell.initial_scene.with_changes(stacks=stacks), TARGET)
    step = plan.to_dict()["plan"][0]
    assert (step["action"], step["from"]["type"], step["to"]["site"]) == (
        "place_from_supply", "supply", "center")  # fmt: skip
    empty = cell.initial_scene.with_changes(stacks={**stacks, "red_supply": ()})
    assert "its supply red_supply is empty" in (
        plan_rearrangement(cell, empty, TARGET).reason or ""
    )


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "current.json").write_text("{", encoding="utf-8")
    (tmp_path / "target.json").write_text(json.dumps(TARGET), encoding="utf-8")
    with pytest.raises(ValueError, match=r"current\.json: JSON syntax error at line 1"):
        plan_command(tmp_path / "current.json", tmp_path / "target.json")
    with pytest.raises(ValueError, match=r"target\.json: unknown relationship 'heap'"):
        plan_for(tmp_path, current(("bottom", "blue cube"), ("top", "red cube")),
                 {"relationship": "heap", "placements": []})  # fmt: skip
    with pytest.raises(ValueError, match=r"nowhere\.json: cannot read"):
        plan_command(tmp_path / "nowhere.json", tmp_path / "target.json")


# -- enforce_plan_consistency: the Test 2 plan, broken one rule at a time --


def _test2_plan() -> dict[str, Any]:
    stacks = {**{s: () for s in CELL.sites}, "center": ("blue cube", "red cube", "green cube")}
    scene = CELL.initial_scene.with_changes(stacks=stacks)
    return plan_rearrangement(CELL, scene, TARGET).to_dict()


def broken(edit: Any, renumber: bool = False) -> dict[str, Any]:
    plan = copy.deepcopy(_test2_plan())
    edit(plan)
    for number, step in enumerate(plan["plan"], 1):
        if renumber:
            step["step"] = number
    return plan


def _swap(steps: list[Any], a: int, b: int) -> None:
    steps[a], steps[b] = steps[b], steps[a]


CASES = [
    ("numbering", lambda p: p["plan"][1].update(step=5), "step 2: numbered 5"),
    ("unknown action", lambda p: p["plan"][0].update(action="teleport"),
     "step 1: unknown action 'teleport'"),
    ("object inside to", lambda p: p["plan"][0]["to"].update(object="green cube"),
     "step 1: the object belongs at the top level, not inside 'to'"),
    ("no object", lambda p: p["plan"][0].pop("object"), "step 1: the object, named at the top"),
    ("prefixed object", lambda p: p["plan"][0].update(object="wrong_green_cube"),
     "step 1: the object, named at the top level of the step: placement: 'wrong_green_cube' has "
     "a descriptive prefix"),
    ("bad slot", lambda p: p["plan"][0]["to"].update(slot="B4"),
     "step 1: buffer slot 'B4' does not exist (B1, B2, B3)"),
    ("no slot", lambda p: p["plan"][0]["to"].pop("slot"),
     "step 1: 'to' is a buffer but names no slot"),
    ("bad type", lambda p: p["plan"][0]["to"].update(type="shelf"),
     "step 1: to.type must be one of"),
    ("no reason", lambda p: p["plan"][0].update(reason=""), "step 1: a reason is required"),
    ("wrong action for a buffer", lambda p: p["plan"][0].update(action="move_to_position"),
     "step 1: move_to_position cannot go from stack to buffer"),
    ("same place", lambda p: p["plan"][0].update(to=p["plan"][0]["from"]),
     "step 1: from and to are the same place (a redundant move)"),
    ("full slot", lambda p: p["plan"][1]["to"].update(slot="B1", site="B1"),
     "step 2: B1 already holds the green cube"),
    ("wrong slot out", lambda p: p["plan"][2]["from"].update(slot="B2", site="B2"),
     "step 3: B2 holds the red cube, not the green cube"),
    ("away and back", lambda p: p["plan"].insert(1, {**p["plan"][0], "action":
     "move_from_buffer", "from": p["plan"][0]["to"], "to": p["plan"][0]["from"]}),
     "steps 1-2 move the green cube away and straight back"),
    ("top before middle", lambda p: _swap(p["plan"], 2, 3),
     "step 3 places the top before the middle (step 4)"),
    ("two end together", lambda p: p["plan"][3]["to"].update(position="middle"),
     "the green cube and the red cube both end at middle"),
    ("final_expected wrong", lambda p: p["final_expected"]["placements"][2].update(
     object="yellow cube"),
     "final_expected ({'relationship': 'stacked'"),
    ("final_expected missing", lambda p: p.pop("final_expected"), "final_expected is missing"),
    ("blocked with steps", lambda p: p.update(status="blocked"), "a blocked plan has no steps"),
    ("bad status", lambda p: p.update(status="done"), "status must be success or blocked"),
]  # fmt: skip


def test_the_planners_plan_is_consistent() -> None:
    assert plan_issues(_test2_plan(), STRUCTURE) == []


@pytest.mark.parametrize(("case", "edit", "message"), CASES, ids=[c[0] for c in CASES])
def test_inconsistent_plans_are_refused(case: str, edit: Any, message: str) -> None:
    renumber = case in ("away and back", "top before middle")
    with pytest.raises(PlanConsistencyError) as caught:
        enforce_plan_consistency(broken(edit, renumber), STRUCTURE)
    assert any(p.startswith(message) for p in caught.value.problems), caught.value.problems


def test_taking_from_an_empty_slot_when_the_buffers_are_known() -> None:
    plan = broken(lambda p: p["plan"].__setitem__(slice(0, 2), []))
    for i, step in enumerate(plan["plan"], 1):
        step["step"] = i
    issues = plan_issues(plan, STRUCTURE, buffers={"B1": None, "B2": None, "B3": None})
    assert "step 1: B1 holds nothing, not the green cube" in issues
    assert plan_issues(plan, STRUCTURE) == []  # buffers unknown: nothing to say about them
