"""Swapping two objects ("swap the red and blue cubes"): each goes where the other was.

Two places cannot be exchanged in one move: the first object waits in a free buffer slot while
the second takes its place. The moves are ordinary `move_object` calls, so the compiler checks
them against the scene like any other command.
"""

from __future__ import annotations

from voiced.interpreter.clauses import Clause
from voiced.interpreter.semantic import Context, Steps, Unparsed, example_hint, step

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
