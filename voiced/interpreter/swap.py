"""Swapping two objects ("swap the red and blue cubes"): each goes where the other was.

Two places cannot be exchanged in one move: the first object waits in a free buffer slot while
the second takes its place. The moves are ordinary `move_object` calls, so the compiler checks
them against the scene like any other command. When something lies on one of them, the two
places are exchanged in the target arrangement and the optimal planner finds the moves (what is
on top is set aside and put back).
"""

from __future__ import annotations

from voiced.interpreter.clauses import Clause
from voiced.interpreter.semantic import Context, Steps, Unparsed, example_hint, step
from voiced.robot.arrangement import ARRANGEMENT_SITES
from voiced.robot.rearrange import alike_objects, plan_rearrangement, plan_to_sequence
from voiced.robot.rearrange.targets import structure_from_stacks
from voiced.robot.scene import Scene

SUGGESTION = "Say: swap the red cube and the blue cube"


def swap(c: Clause, ctx: Context) -> Steps:
    """Three moves: the first object to a free buffer, the second to the first's place, the
    first to the second's."""
    objects = list(dict.fromkeys(o.name for o in c.objects()))
    token = c.verb_token or c.tokens[0]
    if len(objects) != 2:
        raise Unparsed("syntax_error", token, "Swap which two?", SUGGESTION, "none")
    if not ctx.has("move_object") or ctx.scene is None:
        raise Unparsed("semantic_failure", token, "This cell cannot swap things",
                       example_hint(ctx.cell), "none")  # fmt: skip
    first, second = objects
    if _buried(ctx.scene, first) or _buried(ctx.scene, second):
        return _planned_swap(ctx, first, second)
    here, there = _top_site(ctx, first), _top_site(ctx, second)
    spare = next((name for name, site in ctx.cell.sites.items()
                  if site.kind == "buffer" and not ctx.scene.stacks.get(name)), None)  # fmt: skip
    if spare is None:
        raise Unparsed("semantic_failure", token, "Every buffer slot is taken",
                       "Clear a buffer slot first", "none")  # fmt: skip
    return [
        step("move_object", object=first, to=spare),
        step("move_object", object=second, to=here),
        step("move_object", object=first, to=there),
    ]


def _top_site(ctx: Context, obj: str) -> str:
    """Where `obj` lies, on top of its site (so it can be lifted off)."""
    assert ctx.scene is not None
    for site, stack in ctx.scene.stacks.items():
        if stack and obj in stack:
            if stack[-1] != obj:
                raise Unparsed("semantic_failure", None, f"Something is on top of the {obj}",
                               "Move what is on it first", "none")  # fmt: skip
            return site
    raise Unparsed("semantic_failure", None, f"The {obj} is not on the table", SUGGESTION, "none")


def _buried(scene: Scene, obj: str) -> bool:
    """Whether something lies on `obj`."""
    return any(obj in stack and stack[-1] != obj for stack in scene.stacks.values())


def _planned_swap(ctx: Context, first: str, second: str) -> Steps:
    """The two exchanged in the arrangement (one of them under something), planned."""
    assert ctx.scene is not None
    goal = {site: list(ctx.scene.stacks.get(site, ())) for site in ARRANGEMENT_SITES}
    places = {obj: [(s, i) for s, stack in goal.items() for i, o in enumerate(stack) if o == obj]
              for obj in (first, second)}  # fmt: skip
    for obj, other in ((first, second), (second, first)):
        for site, index in places[obj]:
            goal[site][index] = other
    plan = plan_rearrangement(ctx.cell, ctx.scene, structure_from_stacks(goal))
    if plan.status != "success":
        raise Unparsed("semantic_failure", None, f"I cannot swap them: {plan.reason}",
                       SUGGESTION, "none")  # fmt: skip
    return list(plan_to_sequence(ctx.cell, plan, alike_objects(ctx.scene)))
