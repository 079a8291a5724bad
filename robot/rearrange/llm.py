"""The optional language-model pieces of rearrangement, both checked by code before anything runs.

`understand_target`: a spoken arrangement the grammar could not read -> a target_structure and
nothing else. Whatever else the model sends (a plan, moves) is ignored; the target is validated
by `validate_target_structure_payload` and against the objects in the cell, with one correction
round for a malformed one. The planner then plans.

`plan_with_llm` (optional, off unless the caller asks): the seed's mode where the model writes
the plan. Its plan runs only if it passes `enforce_plan_consistency`, a move-by-move replay
that reaches the target, and the compiler; otherwise the planner's plan is returned, with a note
saying why (LLMs checking their own plans do worse than a sound external check: FIELD-NOTES).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from voiced.robot.arrangement import LAYOUTS
from voiced.robot.cell import Cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.rearrange import plan_rearrangement
from voiced.robot.rearrange.kb import KnowledgeBase, rules_section
from voiced.robot.rearrange.plan import (
    ActionPlan,
    PlanStep,
    location,
    plan_issues,
    plan_to_sequence,
)
from voiced.robot.rearrange.targets import (
    TargetError,
    TargetStructure,
    validate_target_structure_payload,
)
from voiced.robot.scene import Scene
from voiced.robot.view import state_view

from voiced.errors import LlmError
from voiced.llm.client import PromptBlock
from voiced.llm.jsonparse import JsonParseError, parse_json_object

if TYPE_CHECKING:
    from voiced.llm.client import LlmClient

TARGET_TOKENS = 600
PLAN_TOKENS = 2500


@dataclass(frozen=True)
class TargetAnswer:
    """What the model understood a spoken arrangement to be."""

    structure: TargetStructure | None
    """The validated target; None when there is none."""
    feedback: str | None = None
    """Why there is none, fit to speak."""
    notes: tuple[str, ...] = ()
    """What was ignored or corrected on the way."""

    @property
    def target(self) -> dict[str, Any] | None:
        """The seed's target_structure (new format), or None."""
        return None if self.structure is None else self.structure.to_dict()


def _positions() -> str:
    lines = []
    for name, layout in LAYOUTS.items():
        shown = "stacked (3 objects)" if name == "stacked_3" else name
        labels = [p for p, _ in layout]
        lines.append(
            f"- {shown}: "
            + ("one object, no position" if labels == [None] else ", ".join(str(p) for p in labels))
        )
    return "\n".join(lines)


def target_system(kb: KnowledgeBase, text: str) -> str:
    """The static part: the task, the relationships, the format and the rules that match."""
    rules = kb.retrieve("none", text, k=2) + kb.retrieve_category("relationship_rules", text, k=3)
    return (
        "You turn an operator's spoken arrangement command for a robot cell into a TARGET "
        "STRUCTURE: which objects end where, by relationship. You never plan moves: a planner "
        "does that.\n\nRelationships and their positions:\n" + _positions() + "\n\n"
        'Answer with ONLY a JSON object: {"target_structure": {"relationship": "...", '
        '"placements": [{"position": "...", "object 1": "..."}, ...]}, "user_feedback": null}. '
        'A single-object relationship has one placement with only an "object". If the command '
        'cannot be an arrangement of the objects listed, answer {"target_structure": null, '
        '"user_feedback": "why, and what is available"}.\n\n' + rules_section(rules)
    )


def _scene_block(cell: Cell, scene: Scene) -> str:
    present = sorted({o for objs in scene.stacks.values() for o in objs} & set(cell.objects))
    view = json.dumps(state_view(cell, scene))
    return f"Objects in the cell: {', '.join(present)}\nCurrent state: {view}"


TARGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "target_structure": {"type": ["object", "null"]},
        "user_feedback": {"type": ["string", "null"]},
    },
    "required": ["target_structure", "user_feedback"],
}


async def understand_target(
    client: LlmClient, cell: Cell, scene: Scene, text: str, kb: KnowledgeBase | None = None
) -> TargetAnswer:
    """The target a spoken command describes (module docstring). Raises LlmError when the model
    cannot be reached or its answers stay unusable."""
    kb = kb or KnowledgeBase.load()
    system = [
        PromptBlock(target_system(kb, text), cache=True),
        PromptBlock(_scene_block(cell, scene)),
    ]
    user = f'Command: "{text}"'
    notes: list[str] = []
    for _ in range(2):
        reply = await client.complete(
            system,
            user,
            temperature=0.0,
            max_tokens=TARGET_TOKENS,
            json_schema=TARGET_SCHEMA,
            purpose="arrangement_target",
        )
        try:
            data = parse_json_object(reply.text).data
        except JsonParseError as error:
            raise LlmError("the language model's target was not JSON") from error
        if set(data) & {"plan", "steps", "sequence"}:
            notes.append("the model also sent moves; ignored (the planner plans)")
        answer = _answer(cell, scene, data, tuple(notes))
        if isinstance(answer, TargetAnswer):
            return answer
        notes.append("corrected: " + "; ".join(answer))
        user = (
            f'Command: "{text}"\nYour previous target_structure was invalid: '
            + "; ".join(answer)
            + "\nAnswer again, fixing exactly these problems."
        )
    raise LlmError("the language model's target stayed invalid: " + notes[-1])


def _answer(
    cell: Cell, scene: Scene, data: Mapping[str, Any], notes: tuple[str, ...]
) -> TargetAnswer | list[str]:
    """A final answer, or the problems to send back for one correction."""
    raw = data.get("target_structure")
    if raw is None:
        feedback = data.get("user_feedback")
        return TargetAnswer(
            None, feedback if isinstance(feedback, str) else "no arrangement", notes
        )
    try:
        structure = validate_target_structure_payload(raw)
    except TargetError as error:
        return list(error.problems)
    present = {o for objs in scene.stacks.values() for o in objs}
    for obj in structure.objects():
        if obj not in cell.objects:
            return TargetAnswer(None, f"I don't have a {obj}", notes)
        if obj not in present:
            return TargetAnswer(None, f"The {obj} is not in the cell", notes)
    return TargetAnswer(structure, None, notes)


def plan_system(kb: KnowledgeBase, cell: Cell, target: TargetStructure) -> str:
    slots = ", ".join(cell.sites_of_kind("buffer"))
    rules = kb.retrieve(target.relationship, "buffer order", k=6)
    return (
        "You write a rearrangement plan for a robot cell: the moves, one object each, from the "
        "current state to the target structure, with as few moves as possible. Buffer slots: "
        f"{slots}. Scatter spots: {', '.join(cell.sites_of_kind('scatter'))}.\n"
        "Answer with ONLY the JSON object of the unified output format (status, plan, "
        "final_expected).\n\n" + rules_section(rules)
    )


async def plan_with_llm(
    client: LlmClient | None,
    cell: Cell,
    scene: Scene,
    target: TargetStructure,
    kb: KnowledgeBase | None = None,
) -> ActionPlan:
    """The model's plan when it passes every check, else the planner's (module docstring)."""
    planned = plan_rearrangement(cell, scene, target)
    if client is None or planned.status != "success":
        return planned
    kb = kb or KnowledgeBase.load()
    user = (
        f"Current state: {json.dumps(state_view(cell, scene))}\n"
        f"Target: {json.dumps({'target_structure': target.to_dict()})}"
    )
    try:
        reply = await client.complete(
            [PromptBlock(plan_system(kb, cell, target), cache=True)],
            user,
            temperature=0.0,
            max_tokens=PLAN_TOKENS,
            purpose="arrangement_plan",
        )
        data = parse_json_object(reply.text).data
    except (LlmError, JsonParseError) as error:
        return replace(planned, notes=(f"the language model's plan was not used: {error}",))
    checked = check_llm_plan(cell, scene, target, data)
    if isinstance(checked, ActionPlan):
        optimal = len(checked.steps) == len(planned.steps)
        extra = (
            () if optimal else (f"{len(checked.steps)} moves; the optimum is {len(planned.steps)}",)
        )
        return replace(checked, optimal=optimal, notes=checked.notes + extra)
    note = "the language model's plan was rejected: " + "; ".join(checked)
    return replace(planned, notes=(note,))


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
    compiled = compile_sequence(cell, scene, plan_to_sequence(cell, plan))
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
