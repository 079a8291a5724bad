"""What the clauses of one arrangement command say, and whether they can all hold at once.

"Put red on blue and blue on red" asks for a cycle; "put red on the left and red on the right"
for one cube in two places; "put red on the left and green on the left" for two cubes in one
place. Applied one after the other, the last clause would simply win and the operator would get
something they did not ask for, so the command is refused instead, with a reason that names the
clauses at odds. Alike cubes (two green cubes) are counted: "the green cube on the left and the
green cube on the right" is fine when there are two of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

SINGLE_SITES = frozenset({"left", "right", "front", "back", "pyramid_left", "pyramid_right",
                          "pyramid_top"})  # fmt: skip
"""Arrangement sites that hold one cube (center is a stack)."""
AXES = {"on": ("up", False), "under": ("up", True),
        "front_of": ("front", False), "behind": ("front", True),
        "left_of": ("left", False), "right_of": ("left", True)}  # fmt: skip
"""Relation -> (its axis, whether it points the other way): "x on y" is y below x, "x under y"
is x below y; one cycle along an axis cannot be built."""
SAID = {"on": "on", "under": "under", "front_of": "in front of", "behind": "behind",
        "left_of": "left of", "right_of": "right of"}  # fmt: skip
SITE_SAID = {"center": "in the middle", "top": "on top of the stack"}


@dataclass(frozen=True)
class Fact:
    """One clause: a cube at a site ("at"), or in a relation to another cube."""

    mover: str
    """The cube the clause places."""
    relation: str
    """"at", or a key of AXES."""
    where: str
    """The site (for "at"; "top" is the top of the stack), else the other cube."""

    def said(self) -> str:
        if self.relation == "at":
            site = SITE_SAID.get(self.where, f"on the {self.where.replace('_', ' ')}")
            return f"the {self.mover} {site}"
        return f"the {self.mover} {SAID[self.relation]} the {self.where}"


def contradiction(facts: Sequence[Fact], available: Mapping[str, int]) -> str | None:
    """Why `facts` cannot all hold (fit to speak), or None. `available`: how many of each cube
    the cell has; a cube with alike ones may stand in two places."""

    def unique(obj: str) -> bool:
        return available.get(obj, 0) <= 1

    for later, b in enumerate(facts):
        for a in facts[:later]:
            reason = _pair(a, b, unique)
            if reason is not None:
                return reason
    return _cycle(facts, unique)


Unique = Callable[[str], bool]
"""Whether the cell has just one of a cube."""


def _pair(a: Fact, b: Fact, unique: Unique) -> str | None:
    both = f"{a.said()} and {b.said()}"
    if a.relation == b.relation == "at":
        if a.mover == b.mover and a.where != b.where and unique(a.mover):
            return f"{both}: one cube cannot be in two places at once"
        if a.mover != b.mover and a.where == b.where and a.where in SINGLE_SITES:
            return f"{both}: that place holds one cube"
        return None
    if "at" in (a.relation, b.relation):
        return _stacked_on_single(a, b, both)
    stacked = ("on", "under")
    if a.relation in stacked and a.relation == b.relation:
        if a.where == b.where and a.mover != b.mover and unique(a.where):
            return f"{both}: only one cube fits right {SAID[a.relation]} the {a.where}"
        if a.mover == b.mover and a.where != b.where and unique(a.mover):
            return f"{both}: one cube cannot be in two places at once"
    return None


def _stacked_on_single(a: Fact, b: Fact, both: str) -> str | None:
    """A cube put on a one-cube place ("red on the left") that another clause stacks."""
    at, other = (a, b) if a.relation == "at" else (b, a)
    vertical = AXES[other.relation][0] == "up"
    if vertical and at.where in SINGLE_SITES and at.mover in (other.mover, other.where):
        where = at.where.replace("_", " ")
        return f"{both}: the {where} holds one cube, so nothing stacks there"
    return None


def _cycle(facts: Sequence[Fact], unique: Unique) -> str | None:
    """A cycle along one axis among cubes that have no alike ones ("red on blue, blue on
    green, green on red")."""
    for axis in ("up", "front", "left"):
        edges: dict[str, list[tuple[str, Fact]]] = {}
        for fact in facts:
            if fact.relation == "at" or AXES[fact.relation][0] != axis:
                continue
            if not (unique(fact.mover) and unique(fact.where)):
                continue
            low, high = fact.where, fact.mover
            if AXES[fact.relation][1]:
                low, high = high, low
            edges.setdefault(low, []).append((high, fact))
        found = _find_cycle(edges)
        if found:
            said = [f.said() for f in sorted(found, key=facts.index)]
            listed = ", ".join(said[:-1]) + f" and {said[-1]}"
            return f"{listed}: that goes round in a circle"
    return None


def _find_cycle(edges: Mapping[str, list[tuple[str, Fact]]]) -> list[Fact]:
    """The facts along one cycle of `edges`; [] when there is none."""

    def walk(node: str, path: list[tuple[str, Fact]], seen: set[str]) -> list[Fact]:
        for nxt, fact in edges.get(node, ()):
            at = next((i for i, (n, _) in enumerate(path) if n == nxt), None)
            if at is not None:
                return [f for _, f in path[at + 1 :]] + [fact]
            if nxt not in seen:
                seen.add(nxt)
                found = walk(nxt, [*path, (nxt, fact)], seen)
                if found:
                    return found
        return []

    for start in edges:
        found = walk(start, [(start, Fact(start, "at", ""))], {start})
        if found:
            return found
    return []
