"""An independent checker for rearrangement plans: its own move rules, its own position table and
a plain breadth-first search. It shares no code with robot.rearrange (only the cell's site data:
capacities and supports), so that a planner bug cannot hide behind the same bug here."""

from __future__ import annotations

import itertools
from collections import Counter, deque
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from voiced.robot.cell import Cell

COLOURS = ("red cube", "green cube", "blue cube")
ARRANGEMENT = ("left", "center", "right", "front", "back", "pyramid_left", "pyramid_right",
               "pyramid_top")  # fmt: skip

POSITIONS: dict[str, tuple[tuple[str | None, str], ...]] = {
    "stacked_left": ((None, "left"),),
    "stacked_middle": ((None, "center"),),
    "stacked_right": ((None, "right"),),
    "stacked": (("bottom", "center"), ("top", "center")),
    "stacked3": (("bottom", "center"), ("middle", "center"), ("top", "center")),
    "separated_left_right": (("left", "left"), ("right", "right")),
    "separated_front_back": (("front", "front"), ("back", "back")),
    "separate_horizontal": (("left", "left"), ("middle", "center"), ("right", "right")),
    "separate_vertical": (("bottom", "front"), ("middle", "center"), ("top", "back")),
    "stacked_and_separated_left": (("bottom", "center"), ("top", "center"), ("left", "left")),
    "stacked_and_separated_right": (("bottom", "center"), ("top", "center"), ("right", "right")),
    "pyramid": (("bottom left", "pyramid_left"), ("bottom right", "pyramid_right"),
                ("top", "pyramid_top")),
}  # fmt: skip
"""The foundations table of docs/CELLS.md, typed in again: relationship -> (position, site)."""

Stacks = dict[str, tuple[str, ...]]


def all_targets(objects: Sequence[str] = COLOURS) -> list[tuple[dict[str, Any], Stacks]]:
    """Every placement of `objects` into every relationship's positions (plus the empty
    arrangement): (seed new-format target_structure, the arrangement stacks it means)."""
    out: list[tuple[dict[str, Any], Stacks]] = [({"relationship": "none", "placements": []}, {})]
    for name, layout in POSITIONS.items():
        relationship = "stacked" if name == "stacked3" else name
        # Alike objects (two green cubes) give the same target more than once: keep one.
        for chosen in dict.fromkeys(itertools.permutations(objects, len(layout))):
            stacks: Stacks = {}
            placements = []
            for k, ((position, site), obj) in enumerate(zip(layout, chosen, strict=True), 1):
                stacks[site] = (*stacks.get(site, ()), obj)
                if position is None:
                    placements.append({"object": obj})
                else:
                    placements.append({"position": position, f"object {k}": obj})
            out.append(({"relationship": relationship, "placements": placements}, stacks))
    return out


def all_starts(cell: Cell, objects: Sequence[str] = COLOURS) -> list[Stacks]:
    """Every relationship arrangement, with the objects it leaves out on scatter spots, in
    buffers, or split between a buffer and a scatter spot."""
    scatter = [s for s, spec in cell.sites.items() if spec.kind == "scatter"]
    buffers = [s for s, spec in cell.sites.items() if spec.kind == "buffer"]
    starts: list[Stacks] = []
    seen: set[tuple[tuple[str, tuple[str, ...]], ...]] = set()
    for _, arranged in all_targets(objects):
        rest = _rest(objects, arranged)
        for slots in (scatter, buffers, buffers[:1] + scatter[1:]):
            full = {site: () for site in cell.sites} | dict(arranged)
            for obj, slot in zip(rest, slots, strict=False):
                full[slot] = (obj,)
            key = tuple(sorted(full.items()))
            if key not in seen:
                seen.add(key)
                starts.append(full)
    return starts


def _rest(objects: Sequence[str], arranged: Mapping[str, Sequence[str]]) -> list[str]:
    """The objects `arranged` leaves out, alike ones counted (two green cubes, one placed)."""
    left = Counter(objects) - Counter(o for stack in arranged.values() for o in stack)
    return sorted(left.elements())


class Rules:
    """The physical rules, written out plainly: only a top object moves, never from under a
    site resting on it; a site takes one more object only below its capacity, with its supports
    occupied and nothing resting on it (checked before and after the lift)."""

    def __init__(self, cell: Cell) -> None:
        self.sites = tuple(cell.sites)
        self.capacity = [cell.sites[s].capacity for s in self.sites]
        self.supports = [[self.sites.index(x) for x in cell.sites[s].supports] for s in self.sites]
        self.resting = [[j for j, sup in enumerate(self.supports) if i in sup]
                        for i in range(len(self.sites))]  # fmt: skip

    def state(self, stacks: Mapping[str, Sequence[str]]) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(stacks.get(s, ())) for s in self.sites)

    def _room(self, state: tuple[tuple[str, ...], ...], j: int) -> bool:
        cap = self.capacity[j]
        return ((cap is None or len(state[j]) < cap)
                and all(state[k] for k in self.supports[j])
                and not any(state[k] for k in self.resting[j]))  # fmt: skip

    def moves(
        self, state: tuple[tuple[str, ...], ...]
    ) -> Iterator[tuple[tuple[str, int, int], tuple[tuple[str, ...], ...]]]:
        sites = range(len(state))
        before = [self._room(state, j) for j in sites]
        for i, stack in enumerate(state):
            if not stack or any(state[k] for k in self.resting[i]):
                continue
            lifted = (*state[:i], stack[:-1], *state[i + 1 :])
            for j in sites:
                if j != i and before[j] and self._room(lifted, j):
                    after = (*lifted[:j], (*lifted[j], stack[-1]), *lifted[j + 1 :])
                    yield (stack[-1], i, j), after

    def apply(
        self, state: tuple[tuple[str, ...], ...], obj: str, source: str, target: str
    ) -> tuple[tuple[str, ...], ...]:
        """One move, or AssertionError saying why it is not allowed."""
        i, j = self.sites.index(source), self.sites.index(target)
        for (moved, a, b), after in self.moves(state):
            if (moved, a, b) == (obj, i, j):
                return after
        raise AssertionError(f"illegal move of {obj} from {source} to {target}: {state}")

    def arrangement(self, state: tuple[tuple[str, ...], ...]) -> Stacks:
        return {s: state[i] for i, s in enumerate(self.sites) if s in ARRANGEMENT and state[i]}

    def distances(self, target: Stacks, objects: Sequence[str]) -> dict[Any, int]:
        """Plain BFS from every goal state (the target arrangement, the other objects on any
        other one-object sites); the move relation is symmetric (test_rules_are_symmetric), so
        these are the distances *to* the goal from every state that can reach it."""
        rest = _rest(objects, target)
        free = [s for i, s in enumerate(self.sites)
                if s not in ARRANGEMENT and self.capacity[i] == 1
                and not self.supports[i]]  # fmt: skip
        frontier: deque[tuple[tuple[str, ...], ...]] = deque()
        dist: dict[Any, int] = {}
        for slots in itertools.permutations(free, len(rest)):
            goal = self.state(dict(target) | {s: (o,) for s, o in zip(slots, rest, strict=True)})
            dist[goal] = 0
            frontier.append(goal)
        while frontier:
            state = frontier.popleft()
            for _, nxt in self.moves(state):
                if nxt not in dist:
                    dist[nxt] = dist[state] + 1
                    frontier.append(nxt)
        return dist
