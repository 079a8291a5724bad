"""A rearrangement plan written by someone else (the language model), checked by code.

`check_llm_plan` takes the plan only if it passes the seed's `enforce_plan_consistency`
(`plan_issues`), replays move by move under the planner's physical rules to the target
(`replay_plan`, `move_problem`), and compiles. Nothing here talks to a model: the prompts and
the client calls are voiced.llm.rearrange's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.rearrange.plan import (
    ActionPlan,
    PlanStep,
    alike_objects,
    location,
    plan_issues,
    plan_to_sequence,
)
from voiced.robot.rearrange.targets import TargetStructure
from voiced.robot.scene import Scene
from voiced.robot.view import state_view


def check_llm_plan(
    cell: Cell, scene: Scene, target: TargetStructure, data: Mapping[str, Any]
) -> ActionPlan | list[str]:
    """The model's plan as an ActionPlan if it is consistent, replays to the target and
    compiles; otherwise every problem found."""
    buffers = state_view_buffers(cell, scene)
    issues = plan_issues(data, target, cell.sites_of_kind("buffer"), buffers)
    if issues:
        return issues
    if data["status"] != "success":
        return ["the model answered blocked, but the target can be reached"]
    try:
        steps, stacks = replay_plan(cell, scene, target, data["plan"])
    except ReplayError as error:
        return [str(error)]
    if {s: stacks[s] for s in target.stacks if s in stacks} != dict(target.stacks):
        return ["the plan does not reach the target"]
    plan = ActionPlan(
        "success",
        tuple(steps),
        target.view(),
        source="llm",
        final_state=state_view(cell, scene.with_changes(stacks=stacks)),
    )
    compiled = compile_sequence(cell, scene, plan_to_sequence(cell, plan, alike_objects(scene)))
    if not compiled.ok:
        return [f"the robot cannot run it: {e.message}" for e in compiled.errors]
    return plan


def state_view_buffers(cell: Cell, scene: Scene) -> dict[str, str | None]:
    return {b: (scene.stacks.get(b) or (None,))[-1] for b in cell.sites_of_kind("buffer")}


class ReplayError(ValueError):
    """A step that cannot be carried out; `step` is its 1-based number."""

    def __init__(self, step: int, message: str) -> None:
        self.step = step
        """The step at fault."""
        super().__init__(f"step {step}: {message}")


def replay_plan(
    cell: Cell, scene: Scene, target: TargetStructure, steps: Sequence[Mapping[str, Any]]
) -> tuple[list[PlanStep], dict[str, tuple[str, ...]]]:
    """Seed-format steps resolved to cell sites and carried out one by one by the physical rules
    (voiced.robot.rearrange.planner's). Raises ReplayError at the first step that cannot run."""
    state = {site: tuple(scene.stacks.get(site, ())) for site in cell.sites}
    labels = {
        p.position: s
        for s, objs in target.stacks.items()
        for p in target.placements
        if p.object in objs and p.position
    }
    out: list[PlanStep] = []
    for number, step in enumerate(steps, 1):
        obj = str(step["object"])
        source = _site(cell, state, labels, step["from"], obj, "from")
        dest = _site(cell, state, labels, step["to"], obj, "to")
        problem = move_problem(cell, state, obj, source, dest)
        if problem is not None:
            raise ReplayError(number, problem)
        from_loc = location(cell, source, len(state[source]) - 1)
        state[source] = state[source][:-1]
        to_loc = location(cell, dest, len(state[dest]), step["to"].get("position"))
        state[dest] = (*state[dest], obj)
        out.append(
            PlanStep(number, str(step["action"]), from_loc, to_loc, obj, str(step["reason"]))
        )
    return out, state


def _site(
    cell: Cell,
    state: Mapping[str, tuple[str, ...]],
    labels: Mapping[str, str],
    loc: Mapping[str, Any],
    obj: str,
    end: str,
) -> str:
    """The cell site a seed location means (`site`, a slot, a site name, a target position
    label); for `from`, where the object is when nothing else says."""
    named = loc.get("site") or loc.get("slot") or loc.get("position")
    if isinstance(named, str) and named in cell.sites:
        return named
    kind, position = loc.get("type"), str(loc.get("position") or "").lower()
    if end == "from":
        return next((s for s, objs in state.items() if obj in objs), "?")
    if kind == "stack":
        return next(
            s.name for s in cell.sites.values() if s.kind == "arrangement" and s.capacity != 1
        )
    if kind == "scattered":
        return next((s for s in cell.sites_of_kind("scatter") if not state[s]), "?")
    aliases = {"middle": "center", "centre": "center"}
    return labels.get(position) or aliases.get(position, position.replace(" ", "_")) or "?"


def move_problem(
    cell: Cell, state: Mapping[str, tuple[str, ...]], obj: str, source: str, target: str
) -> str | None:
    """Why moving `obj` from `source` to `target` is not allowed, or None: only a top object
    moves, never from under a site resting on it; the target has room, its supports are
    occupied and nothing rests on it (before and after the lift)."""
    for site in (source, target):
        if site not in cell.sites:
            return f"no site '{site}' for the {obj}"
    if source == target:
        return f"the {obj} would go from {source} to {source} (redundant)"
    if not state[source] or state[source][-1] != obj:
        return f"the {obj} is not on top of {source} (it holds {list(state[source])})"
    on_it = [s.name for s in cell.sites.values() if source in s.supports and state[s.name]]
    if on_it:
        return f"the {obj} holds up {', '.join(on_it)}"
    lifted = {**state, source: state[source][:-1]}
    for view in (state, lifted):
        problem = _room_problem(cell, view, target)
        if problem is not None:
            return problem
    return None


def _room_problem(cell: Cell, state: Mapping[str, tuple[str, ...]], site: str) -> str | None:
    spec = cell.sites[site]
    if spec.capacity is not None and len(state[site]) >= spec.capacity:
        return f"{site} is full ({', '.join(state[site])})"
    empty = [s for s in spec.supports if not state[s]]
    if empty:
        return f"{site} rests on {', '.join(empty)}, which is empty"
    above = [s.name for s in cell.sites.values() if site in s.supports and state[s.name]]
    return f"{site} is pinned under {', '.join(above)}" if above else None
