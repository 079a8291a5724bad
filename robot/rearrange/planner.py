"""The optimal rearrangement search: A* over site stacks, fewest moves first.

The state is the cell's own: every site is a stack (bottom to top) with its capacity, and a site
with `supports` (the pyramid top) needs them all occupied and pins them while it is occupied.
One move takes the top object of a site and puts it on top of another. The arrangement sites
must end exactly as the target says; every other site is free. The one-object buffer slots and
scatter spots are interchangeable for that goal, so the search keeps only *which* objects are
parked there and how many slots there are (plan.py assigns the slots afterwards: a parking
move between two such slots can never shorten a plan, so this loses no optimal plan).

Objects are compared by name, and alike objects share a name (two "green cube"s): the states
are over names, parked objects and the supply are multisets (sorted tuples), so two states that
differ only in which green cube is where are one state. Which instance ends in which target slot
is therefore never a choice the search has to make; it falls out of the moves, and the plan is
optimal over every binding of instances to slots at once.

Admissibility of the heuristic (h counts moves; see `_estimate`). Call an object well placed
when it sits on a goal-constrained site at a level whose goal name is its own, everything below
it is well placed, and (at level 0 of a site with supports) every support site already holds
exactly its goal stack, all well placed. Call a goal slot (site, level) satisfied when a well
placed object fills it. For one name T, let L be the objects named T that stand on constrained
sites and are not well placed, U the unsatisfied goal slots that want a T, and for each site s,
l_s and u_s those of L and U on s. Count only moves of T objects:
- each of the L objects must leave its position at least once (something below it, a support,
  or the object itself is wrong, and nothing under it can change while it stays): L distinct
  moves, the first move of each;
- each of the U slots must receive its final object by a move that ends there: U distinct moves;
- one move can be both only if it takes a T from site s straight to a slot on another site t;
  on a site s, the l_s objects' first moves and the u_s slots' final moves are all distinct.
So the moves of T objects number at least max(L, U, max over s of l_s + u_s), and h is the sum
over names. With unique names this is the classic bound: 0 well placed, 1 to move elsewhere, 2
to leave a site and come back to it. h is also consistent: a move changes the status of the
moved object and of the two slots at its ends only, all for one name, and each term of the max
by at most 1 (nothing rests on either end above the moved object: it was the top, and a site
resting on either end must be empty for the move to be allowed).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from voiced.robot.arrangement import ARRANGEMENT_SITES
from voiced.robot.cell import Cell

PARK = "@park"
"""Move end meaning "one of the interchangeable one-object slots" (buffers, scatter spots)."""
SUPPLY = "@supply"
"""Move source meaning "from the cell's supply" (objects not yet in the cell)."""
PARKING_KINDS = ("buffer", "scatter")
"""Site kinds whose one-object sites are interchangeable parking."""
UNIT = 1000
"""The cost of one move. A move onto a site that is not the object's goal costs UNIT + 1:
among the plans with fewest moves, those that set objects aside on buffers rather than on
arrangement positions win, and the move count (cost // UNIT) stays the optimum."""
DEFAULT_MAX_STATES = 400_000
"""States expanded before the search gives up (6 objects need a few thousand)."""

Stacks = tuple[tuple[str, ...], ...]
Bag = tuple[str, ...]
"""A multiset of object names, kept sorted so that equal bags are equal tuples."""
State = tuple[Stacks, Bag, Bag]
"""(stacks of the explicit sites, parked objects, objects still in the supply)."""


@dataclass(frozen=True)
class SiteSpec:
    """One site whose stack the search keeps."""

    name: str
    """The cell's site name."""
    capacity: int | None
    """Most objects it holds; None for unlimited."""
    supports: tuple[str, ...] = ()
    """Sites that must be occupied before anything goes here (and stay pinned meanwhile)."""


@dataclass(frozen=True)
class Move:
    """One object from one site to another (PARK / SUPPLY stand for the pooled ends)."""

    object: str
    """The object moved."""
    source: str
    """Site name, PARK or SUPPLY."""
    target: str
    """Site name or PARK."""


@dataclass(frozen=True)
class Problem:
    """A search problem: sites, where everything starts, what the constrained sites must hold."""

    sites: tuple[SiteSpec, ...]
    """The sites whose stacks are kept (arrangement sites and any site that is not parking)."""
    start: Mapping[str, tuple[str, ...]]
    """Site name -> objects, bottom to top (sites of `sites` only)."""
    goal: Mapping[str, tuple[str, ...]]
    """Constrained site -> the exact stack it must end with; sites not named are free."""
    parked: Bag = ()
    """Objects on parking slots at the start (sorted; alike objects repeat)."""
    parking_slots: int = 0
    """How many parking slots there are (occupied ones included)."""
    supply: Bag = ()
    """Goal objects that are not in the cell yet but can be brought from its supply (sorted)."""


@dataclass(frozen=True)
class SearchResult:
    """What the search found."""

    moves: tuple[Move, ...] | None
    """An optimal plan, or None when there is none (or the search gave up)."""
    expanded: int
    """States expanded."""
    gave_up: bool = False
    """True when `max_states` ran out before the search was complete."""


class _Index:
    """The problem with sites as integers, for speed."""

    def __init__(self, problem: Problem) -> None:
        self.names = tuple(s.name for s in problem.sites)
        at = {name: i for i, name in enumerate(self.names)}
        self.capacity = tuple(s.capacity for s in problem.sites)
        self.supports = tuple(tuple(at[x] for x in s.supports) for s in problem.sites)
        self.dependents = tuple(
            tuple(j for j, s in enumerate(problem.sites) if name in s.supports)
            for name in self.names
        )
        self.goal = tuple(problem.goal.get(name) for name in self.names)
        self.goal_sites: dict[str, frozenset[int]] = {}
        for site, stack in problem.goal.items():
            for obj in stack:
                self.goal_sites[obj] = self.goal_sites.get(obj, frozenset()) | {at[site]}
        self.order = _support_order(self.supports)
        self.constrained = tuple(
            (i, goal, self.supports[i]) for i in self.order if (goal := self.goal[i]) is not None
        )
        """(site, its goal stack, its supports) for the goal-constrained sites, supports first."""
        self.slots = problem.parking_slots

    def room(self, stacks: Stacks, j: int) -> bool:
        cap = self.capacity[j]
        if cap is not None and len(stacks[j]) >= cap:
            return False
        if not all(stacks[k] for k in self.supports[j]):
            return False
        return not any(stacks[d] for d in self.dependents[j])

    def takeable(self, stacks: Stacks, i: int) -> bool:
        return bool(stacks[i]) and not any(stacks[d] for d in self.dependents[i])


def _support_order(supports: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Site indices with every site after its supports."""
    done: list[int] = []
    while len(done) < len(supports):
        for i, needs in enumerate(supports):
            if i not in done and all(k in done for k in needs):
                done.append(i)
    return tuple(done)


def _estimate(ix: _Index, state: State) -> int:
    """A lower bound on the moves left (module docstring). 0 exactly at a goal state."""
    stacks = state[0]
    leaving: dict[str, int] = {}
    arriving: dict[str, int] = {}
    busiest: dict[str, int] = {}
    complete = [True] * len(stacks)
    for i, goal, supports in ix.constrained:
        stack = stacks[i]
        placed = 0
        if not supports or all(complete[k] for k in supports):
            for obj, wanted in zip(stack, goal, strict=False):
                if obj != wanted:
                    break
                placed += 1
        if placed == len(goal) == len(stack):
            continue
        complete[i] = False
        here: dict[str, int] = {}
        for obj in stack[placed:]:
            leaving[obj] = leaving.get(obj, 0) + 1
            here[obj] = here.get(obj, 0) + 1
        for obj in goal[placed:]:
            arriving[obj] = arriving.get(obj, 0) + 1
            here[obj] = here.get(obj, 0) + 1
        for obj, count in here.items():
            if count > busiest.get(obj, 0):
                busiest[obj] = count
    bound = 0
    for obj, count in busiest.items():
        bound += max(leaving.get(obj, 0), arriving.get(obj, 0), count)
    return bound


def _take_one(bag: Bag, obj: str) -> Bag:
    at = bag.index(obj)
    return bag[:at] + bag[at + 1 :]


def _add_one(bag: Bag, obj: str) -> Bag:
    return tuple(sorted((*bag, obj)))


def _with(stacks: Stacks, i: int, stack: tuple[str, ...]) -> Stacks:
    return (*stacks[:i], stack, *stacks[i + 1 :])


def _successors(ix: _Index, state: State) -> Iterator[tuple[Move, State, int]]:
    """(move, next state, extra cost) for every allowed move."""
    stacks, parked, supply = state
    names = ix.names
    for i in range(len(stacks)):
        if not ix.takeable(stacks, i):
            continue
        obj = stacks[i][-1]
        lifted = _with(stacks, i, stacks[i][:-1])
        for j in range(len(stacks)):
            # Room is checked before and after the lift, as the composite checks it (the lift
            # may free a support or unpin one).
            if j != i and ix.room(stacks, j) and ix.room(lifted, j):
                after = _with(lifted, j, (*lifted[j], obj))
                yield Move(obj, names[i], names[j]), (after, parked, supply), _penalty(ix, obj, j)
        if len(parked) < ix.slots:
            yield Move(obj, names[i], PARK), (lifted, _add_one(parked, obj), supply), 0
    for pool, source in ((parked, PARK), (supply, SUPPLY)):
        for obj in sorted(set(pool)):
            rest = _take_one(pool, obj)
            for j in range(len(stacks)):
                if ix.room(stacks, j):
                    after = _with(stacks, j, (*stacks[j], obj))
                    nxt = (after, rest, supply) if source == PARK else (after, parked, rest)
                    yield Move(obj, source, names[j]), nxt, _penalty(ix, obj, j)


def _penalty(ix: _Index, obj: str, j: int) -> int:
    return 0 if j in ix.goal_sites.get(obj, ()) else 1


def search(problem: Problem, max_states: int = DEFAULT_MAX_STATES) -> SearchResult:
    """A* from `problem.start` to the goal: a plan with the fewest moves (module docstring),
    None when the goal cannot be reached."""
    ix = _Index(problem)
    start: State = (
        tuple(tuple(problem.start.get(name, ())) for name in ix.names),
        problem.parked,
        problem.supply,
    )
    best = {start: 0}
    parent: dict[State, tuple[State, Move]] = {}
    tie = itertools.count()
    heap = [(UNIT * _estimate(ix, start), 0, next(tie), start)]
    expanded = 0
    while heap:
        _, neg_g, _, state = heapq.heappop(heap)
        cost = -neg_g
        if cost > best[state]:
            continue  # a stale entry: the state was reached more cheaply since
        if _estimate(ix, state) == 0:
            return SearchResult(_path(parent, state), expanded)
        expanded += 1
        if expanded > max_states:
            return SearchResult(None, expanded, gave_up=True)
        for move, child, extra in _successors(ix, state):
            g = cost + UNIT + extra
            if g < best.get(child, g + 1):
                best[child] = g
                parent[child] = (state, move)
                # Deeper first among equal f (-g): reaches a goal without widening the frontier.
                heapq.heappush(heap, (g + UNIT * _estimate(ix, child), -g, next(tie), child))
    return SearchResult(None, expanded)


def _path(parent: Mapping[State, tuple[State, Move]], state: State) -> tuple[Move, ...]:
    moves: list[Move] = []
    while state in parent:
        state, move = parent[state]
        moves.append(move)
    return tuple(reversed(moves))


def parking_sites(cell: Cell) -> tuple[str, ...]:
    """The cell's interchangeable one-object slots: buffers first (they are what temporary
    storage is for), then scatter spots; none supports or rests on another site."""
    supporting = {s for site in cell.sites.values() for s in site.supports}
    return tuple(
        site.name
        for kind in PARKING_KINDS
        for site in cell.sites.values()
        if site.kind == kind
        and site.capacity == 1
        and not site.supports
        and site.name not in supporting
        and site.name not in ARRANGEMENT_SITES
    )


def cell_problem(
    cell: Cell,
    stacks: Mapping[str, Sequence[str]],
    goal: Mapping[str, Sequence[str]],
    supply: Sequence[str] = (),
) -> Problem:
    """The search problem for `cell` from scene `stacks` to arrangement `goal` (every
    arrangement site constrained). Supply sites are sources only, never stacks to plan on."""
    parking = parking_sites(cell)
    kept = tuple(
        SiteSpec(site.name, site.capacity, site.supports)
        for site in cell.sites.values()
        if site.name not in parking and site.kind != "supply"
    )
    return Problem(
        sites=kept,
        start={s.name: tuple(stacks.get(s.name, ())) for s in kept},
        goal={site: tuple(goal.get(site, ())) for site in ARRANGEMENT_SITES if site in cell.sites},
        parked=tuple(sorted(obj for site in parking for obj in stacks.get(site, ()))),
        parking_slots=len(parking),
        supply=tuple(sorted(supply)),
    )
