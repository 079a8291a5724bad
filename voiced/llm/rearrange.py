"""The language model in rearrangement: a spoken arrangement to a target, and (optionally) a plan.

`understand_target`: a spoken arrangement the grammar could not read -> a target_structure and
nothing else. Whatever else the model sends (a plan, moves) is ignored; the target is validated
by `validate_target_structure_payload` and against the objects in the cell, with one correction
round for a malformed one. The planner then plans.

`plan_with_llm` (optional, off unless the caller asks): the seed's mode where the model writes
the plan. Its plan runs only if it passes `voiced.robot.rearrange.replay.check_llm_plan` (the
seed's `enforce_plan_consistency`, a move-by-move replay that reaches the target, and the
compiler); otherwise the planner's plan is returned, with a note saying why (LLMs checking their
own plans do worse than a sound external check: FIELD-NOTES). The checks are code, with no model
in them, so they live with the planner; the prompts and the client calls live here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from voiced.errors import LlmError
from voiced.llm.client import LlmClient, PromptBlock
from voiced.llm.jsonparse import JsonParseError, parse_json_object
from voiced.robot.arrangement import LAYOUTS
from voiced.robot.cell import Cell
from voiced.robot.rearrange import plan_rearrangement
from voiced.robot.rearrange.conflicts import target_contradictions
from voiced.robot.rearrange.kb import KnowledgeBase, rules_section
from voiced.robot.rearrange.plan import ActionPlan, object_counts
from voiced.robot.rearrange.replay import check_llm_plan
from voiced.robot.rearrange.targets import (
    TargetError,
    TargetStructure,
    validate_target_structure_payload,
)
from voiced.robot.scene import Scene
from voiced.robot.view import state_view

TARGET_TOKENS = 600
CONTRADICTS = "That cannot all be done: "
"""How a refused contradictory target begins (the grammar's refusals begin the same way)."""
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
        '"user_feedback": "why, and what is available"}. If it contradicts itself (a cycle '
        "such as red on blue and blue on red, one cube in two places, two cubes in one place, "
        'more cubes of a colour than there are), answer {"target_structure": null, '
        '"user_feedback": null, "contradiction": "the parts that contradict each other"}: never '
        "drop a part to make the rest fit.\n\n" + rules_section(rules)
    )


def _scene_block(cell: Cell, scene: Scene) -> str:
    """The objects (alike ones counted: "green cube x2") and the state, for the model."""
    counts = object_counts(scene)
    present = [f"{o} x{counts[o]}" if counts[o] > 1 else o
               for o in sorted(counts) if o in cell.objects]  # fmt: skip
    view = json.dumps(state_view(cell, scene))
    return f"Objects in the cell: {', '.join(present)}\nCurrent state: {view}"


TARGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "target_structure": {"type": ["object", "null"]},
        "user_feedback": {"type": ["string", "null"]},
        "contradiction": {"type": ["string", "null"]},
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
    """A final answer, or the problems to send back for one correction. A target that
    contradicts itself is refused with the reason and never sent back: corrected, the model
    would drop a part of what the operator said and the rest would run."""
    raw = data.get("target_structure")
    contradiction = data.get("contradiction")
    if raw is None and isinstance(contradiction, str) and contradiction.strip():
        return TargetAnswer(None, f"{CONTRADICTS}{contradiction.strip()}", notes)
    found = target_contradictions(raw, object_counts(scene))
    if found:
        return TargetAnswer(None, CONTRADICTS + "; ".join(found), notes)
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
