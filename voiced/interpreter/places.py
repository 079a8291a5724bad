"""Where things go: zones, sites and positions a clause names, resolved against the cell.

"on every stack" is every zone, "both stacks" the two the scene has built on, "all positions"
every work pose (seed 001's precedence: positions named beat "all", which beats "it").
"""

from __future__ import annotations

from voiced.interpreter.clauses import Clause, Group
from voiced.interpreter.lexer import Token
from voiced.interpreter.semantic import Context, Steps, Unparsed, sites_hint, step


def on_zones(c: Clause, ctx: Context, group: Group | None, body: Steps) -> Steps:
    """`body` on each zone the group names (set_active_zone first); as is on the active zone."""
    zones = group_zones(c, ctx, group)
    if not zones:
        return body
    steps: Steps = []
    for zone in zones:
        steps += [step("set_active_zone", zone=zone), *body]
    return steps


def group_zones(c: Clause, ctx: Context, group: Group | None) -> list[str]:
    quant = group.quant if group is not None and group.quant else c.quant
    named = [t.text_value("zone") for t in (group.targets if group else ()) if t.has("zone")]
    if quant == "all" and not named:
        return list(ctx.cell.zones())
    if quant == "both" and len(named) != 2:
        return both_zones(c, ctx)
    return named


def both_zones(c: Clause, ctx: Context) -> list[str]:
    zones = ctx.cell.zones()
    if len(zones) == 2:
        return list(zones)
    if ctx.scene is not None:
        built = [z for z in zones if ctx.scene.stacks.get(z)]
        if len(built) == 2:
            ctx.guesses.append(f"both stacks: {built[0]} and {built[1]} (the two with layers)")
            return built
    raise Unparsed("semantic_failure", c.tokens[0], "Which two stacks?",
                   f"There are {len(zones)}: {', '.join(zones)}. Name them, or say every stack.",
                   "none")  # fmt: skip


def site_of(token: Token, ctx: Context) -> str:
    if token.has("item"):
        # Arrangements ("stack the blue cube on the red cube") are the planner's job.
        raise Unparsed("semantic_failure", token,
                       f"Stacking on the {token.text_value('item')} is an arrangement",
                       "Arrangements are not in the grammar yet; say where, e.g. put it on "
                       "center", "interpret")  # fmt: skip
    if not token.has("site"):
        raise Unparsed("semantic_failure", token, f"'{token.text}' is not a place here",
                       sites_hint(ctx.cell), "none")  # fmt: skip
    return token.text_value("site")


def clause_positions(c: Clause, ctx: Context) -> list[str]:
    """Seed 001's precedence: positions named > "all"/"full" (every work position) > "it"."""
    named = [name for name, _ in c.positions]
    if named:
        return named
    if c.quant == "all":
        return list(ctx.cell.work_positions())
    if c.pronoun and ctx.previous_positions:
        return list(ctx.previous_positions)
    return []
