"""Rearrangement (seed 004): from the cell's current arrangement to a target, in fewest moves.

    plan = plan_rearrangement(cell, scene, {"target_structure": {...}})
    sequence = plan_to_sequence(cell, plan, alike_objects(scene))  # composites to compile
    plan_command("current.json", "target.json")  # `voiced plan --current ... --target ...`

Targets and states are read in any of the seed's formats (robot.rearrange.targets), the search
is robot.rearrange.planner (A*, optimal), the plan schema robot.rearrange.plan. The language
model only ever turns speech into a target (voiced.llm.rearrange); see docs/REARRANGE.md.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voiced.robot.cell import Cell, ValueProblem
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange.conflicts import shortage
from voiced.robot.rearrange.plan import (
    ActionPlan,
    Location,
    PlanStep,
    alike_objects,
    concretize,
    final_view,
    plan_to_sequence,
)
from voiced.robot.rearrange.planner import DEFAULT_MAX_STATES, cell_problem, parking_sites, search
from voiced.robot.rearrange.targets import (
    TargetError,
    TargetStructure,
    parse_layout,
    structure_from_stacks,
    validate_target_structure_payload,
)
from voiced.robot.scene import Scene
from voiced.robot.view import scene_from_view

__all__ = [
    "ActionPlan",
    "Location",
    "PlanStep",
    "TargetError",
    "TargetStructure",
    "alike_objects",
    "plan_command",
    "plan_rearrangement",
    "plan_to_sequence",
    "validate_target_structure_payload",
]


def plan_rearrangement(
    cell: Cell, scene: Scene, target: TargetStructure | Mapping[str, Any],
    *, max_states: int = DEFAULT_MAX_STATES,
) -> ActionPlan:  # fmt: skip
    """The fewest-moves plan from `scene` to `target` (any of the seed's formats), or a blocked
    plan saying why there is none. Raises TargetError when `target` is not a valid payload."""
    given = target if isinstance(target, TargetStructure) else parse_layout(target).structure
    structure = _cell_names(cell, given)
    expected = structure.view()
    reason = _blocked_reason(cell, scene, structure)
    if reason is not None:
        return ActionPlan("blocked", final_expected=expected, reason=reason)
    result = search(
        cell_problem(cell, scene.stacks, structure.stacks, _from_supply(cell, scene, structure)),
        max_states,
    )
    if result.moves is None:
        return ActionPlan(
            "blocked", final_expected=expected, reason=_no_plan(cell, scene, result.gave_up)
        )
    steps, stacks = concretize(cell, scene, result.moves, structure)
    return ActionPlan("success", steps, expected, final_state=final_view(cell, scene, stacks))


def _cell_names(cell: Cell, structure: TargetStructure) -> TargetStructure:
    """The structure with each object under the cell's own name ("a green cube" is the green
    cube, any of alike ones); a name the cell does not know is kept, for the blocked reason."""

    def named(obj: str) -> str:
        try:
            return str(cell.resolve("object", obj))
        except ValueProblem:
            return obj

    stacks = {site: tuple(named(o) for o in objs) for site, objs in structure.stacks.items()}
    return structure if stacks == structure.stacks else structure_from_stacks(stacks)


def _placed(cell: Cell, scene: Scene) -> Counter[str]:
    """How many of each object stand on sites that are not supplies."""
    return Counter(
        obj
        for site, objs in scene.stacks.items()
        if cell.sites[site].kind != "supply"
        for obj in objs
    )


def _from_supply(cell: Cell, scene: Scene, structure: TargetStructure) -> list[str]:
    """The objects the target needs beyond those standing in the cell (from their supplies)."""
    placed = _placed(cell, scene)
    wanted = Counter(structure.objects())
    return sorted((wanted - placed).elements())


def _blocked_reason(cell: Cell, scene: Scene, structure: TargetStructure) -> str | None:
    missing_sites = [s for s, objs in structure.stacks.items() if objs and s not in cell.sites]
    if missing_sites:
        return f"this cell has no {', '.join(missing_sites)} to arrange on"
    if scene.holding is not None:
        return f"the gripper is holding the {scene.holding}: put it down first"
    placed = _placed(cell, scene)
    for obj, wanted in Counter(structure.objects()).items():
        if obj not in cell.objects:
            known = ", ".join(cell.objects)
            return f"the target needs the {obj}, which this cell does not have ({known})"
        short = wanted - placed[obj]
        if short <= 0:
            continue
        supply = cell.objects[obj].supply
        if supply is None:
            return shortage(obj, wanted, placed[obj])
        if scene.stacks.get(supply, ()).count(obj) < short:
            return f"the target needs the {obj}, and its supply {supply} is empty"
    return None


def _no_plan(cell: Cell, scene: Scene, gave_up: bool) -> str:
    if gave_up:
        return "the search gave up before finding a plan (too many objects to rearrange at once)"
    free = [s for s in parking_sites(cell) if not scene.stacks.get(s)]
    return (
        "no sequence of moves reaches the target: not enough free buffer slots or scatter "
        f"spots to set objects aside ({len(free)} free: {', '.join(free) or 'none'})"
    )


def _read(path: str | Path) -> object:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise TargetError([f"{path}: cannot read: {error.strerror}"]) from None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise TargetError([f"{path}: JSON syntax error at {where}: {error.msg}"]) from None


def plan_command(
    current_path: str | Path, target_path: str | Path, cell: Cell | str = "blocks"
) -> dict[str, Any]:
    """`voiced plan --current FILE --target FILE`: the plan as the seed's JSON. Either file may
    be in either seed format; the current one may also be a state view (voiced.robot.view). Objects
    the current file does not place keep the cell's initial places. Raises TargetError (bad
    payload, naming the file) or CellError (a state the cell cannot hold)."""
    loaded = load_cell(cell) if isinstance(cell, str) else cell
    current, target = _read(current_path), _read(target_path)
    try:
        view = parse_layout(current, loaded.objects).view
    except TargetError as error:
        raise TargetError([f"{current_path}: {p}" for p in error.problems]) from None
    try:
        structure = parse_layout(target).structure
    except TargetError as error:
        raise TargetError([f"{target_path}: {p}" for p in error.problems]) from None
    scene = scene_from_view(loaded, view, str(current_path))
    return plan_rearrangement(loaded, scene, structure).to_dict()
