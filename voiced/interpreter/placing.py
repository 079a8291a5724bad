"""Placement commands: each clause places one cube ("put red on the left", "stack blue on
green"), the rest of the arrangement stays. The clauses are read into facts first and refused
together when they contradict each other (voiced.interpreter.contradictions); then they are
carried out in order on the current arrangement, and a cube a placement displaces comes off it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations, islice, pairwise, permutations

from voiced.interpreter.arrangement_words import Refusal, Word, find_places, find_relations
from voiced.interpreter.contradictions import Fact, contradiction


def placements(
    words: list[Word], stacks: dict[str, list[str]], available: Mapping[str, int]
) -> tuple[dict[str, list[str]], list[str]]:
    """The arrangement-site stacks once the clauses in `words` are carried out on `stacks`,
    and what came off. `available`: how many of each cube there are. Raises Refusal when the
    clauses say no place, contradict each other, or cannot all be made to hold at once."""
    facts = [_clause_fact(clause) for clause in _clauses(words)]
    if not facts:  # "arrange red over blue": cubes, but no place the grammar knows
        said = " ".join(w.text for w in words)
        raise Refusal("syntax_error", said, "Where should the cubes go?",
                      "Say: put the red cube on the blue cube", "interpret")  # fmt: skip
    reason = contradiction(facts, available)
    if reason is not None:
        said = " ".join(w.text for w in words)
        raise Refusal("semantic_failure", said, f"That cannot all be done: {reason}",
                      "Say which one you want")  # fmt: skip
    # Carried out in the order said, a later clause can undo an earlier one ("red on blue and
    # blue on green" would take red off again): then another order is tried, and the command
    # is refused rather than obeyed in part when no order keeps every clause.
    settled = _settle(facts, stacks, available)
    if settled is not None:
        return settled
    as_said, _ = _carry_out(facts, stacks, available)  # raises the refusal it may meet
    clash = next((pair for pair in combinations(facts, 2)
                  if _settle(pair, stacks, available) is None), None)  # fmt: skip
    parts = list(clash or (fact for fact in facts if not _holds(fact, as_said)))
    said = " ".join(w.text for w in words)
    raise Refusal("semantic_failure", said,
                  f"That cannot all be done: {' and '.join(f.said() for f in parts)}",
                  "Say which one you want")  # fmt: skip


def _settle(
    facts: Sequence[Fact], stacks: Mapping[str, list[str]], available: Mapping[str, int]
) -> tuple[dict[str, list[str]], list[str]] | None:
    """The arrangement after the first order of `facts` (the order said first) that leaves
    every one of them holding, and what came off; None when no order does."""
    for order in islice(permutations(facts), MAX_ORDERS):
        try:
            trial = _carry_out(order, stacks, available)
        except Refusal:
            continue
        if all(_holds(fact, trial[0]) for fact in facts):
            return trial
    return None


MAX_ORDERS = 120
"""Orders of the clauses tried (all of them for up to five clauses)."""


def _carry_out(
    facts: Sequence[Fact], stacks: Mapping[str, list[str]], available: Mapping[str, int]
) -> tuple[dict[str, list[str]], list[str]]:
    """`facts` carried out in this order on a copy of `stacks`, and what came off."""
    trial = {site: list(objs) for site, objs in stacks.items()}
    notes: list[str] = []
    # A cube with an alike one off the arrangement (a second green cube on a scatter spot)
    # is brought in rather than taken from where the arrangement already has one.
    loose = Counter(available) - Counter(o for objs in stacks.values() for o in objs)
    for fact in facts:
        fresh = loose[fact.mover] > 0
        loose[fact.mover] -= fresh
        _apply(fact, trial, notes, fresh)
    if trial["pyramid_top"] and not (trial["pyramid_left"] and trial["pyramid_right"]):
        notes.append(f"the {trial['pyramid_top'][0]} comes off the pyramid")
        trial["pyramid_top"] = []
    return trial, notes


_ROWS = {"front_of": ({"front": 0, "center": 1, "back": 2}, 1),
         "behind": ({"front": 0, "center": 1, "back": 2}, -1),
         "left_of": ({"left": 0, "center": 1, "right": 2}, 1),
         "right_of": ({"left": 0, "center": 1, "right": 2}, -1)}  # fmt: skip
"""Side relations -> (the row's sites in order, which way the mover lies from the other)."""


def _holds(fact: Fact, stacks: Mapping[str, list[str]]) -> bool:
    """Whether the arrangement `stacks` does what `fact` asks (any of alike cubes will do)."""
    if fact.relation == "at":
        return fact.mover in stacks["center" if fact.where == "top" else fact.where]
    if fact.relation in ("on", "under"):
        low, high = (fact.where, fact.mover) if fact.relation == "on" else (fact.mover, fact.where)
        return any((a, b) == (low, high) for objs in stacks.values() for a, b in pairwise(objs))
    row, way = _ROWS[fact.relation]
    mine = [row[s] for s, objs in stacks.items() if s in row and fact.mover in objs]
    theirs = [row[s] for s, objs in stacks.items() if s in row and fact.where in objs]
    return any(way * (them - me) > 0 for me in mine for them in theirs)


def _clauses(words: list[Word]) -> list[list[Word]]:
    """Split at "and" / "then" / commas; a part with no place joins the next one."""
    parts: list[list[Word]] = [[]]
    for word in words:
        if word.text in ("and", "then", ",", ";"):
            parts.append([])
        else:
            parts[-1].append(word)
    out: list[list[Word]] = []
    carry: list[Word] = []
    for part in parts:
        if find_relations(part) or find_places(part):
            out.append(carry + part)
            carry = []
        else:
            carry += part
    if carry and out:
        out[-1] += carry
    return out


def _clause_fact(clause: list[Word]) -> Fact:
    """What one clause asks for. Raises Refusal when it does not say which cube goes where."""
    relations, places = find_relations(clause), find_places(clause)
    index, what = min(relations + places)
    before = [w.obj for w in clause[:index] if w.obj]
    after = [w.obj for w in clause[index + 1 :] if w.obj]
    if (index, what) in relations:
        movers, reference = before, after[0]
    else:
        movers, reference = before or after, None
    if len(movers) != 1:
        extra = [w.text for w in clause if w.obj == movers[-1]] if movers else []
        said = extra[-1] if len(movers) > 1 else clause[index].text
        raise Refusal("syntax_error", said,
                      "Which cube goes there?" if not movers else "One cube per place, please",
                      "Say: put the red cube on the left",
                      "interpret" if not movers else "none")  # fmt: skip
    mover = movers[0]
    if reference is None:
        return Fact(mover, "at", what)
    if mover == reference:
        raise Refusal("semantic_failure", mover,
                      f"The {mover} cannot go {what.replace('_', ' ')} itself",
                      "Name two different cubes")  # fmt: skip
    if what == "beside":
        raise Refusal("syntax_error", reference, f"Left or right of the {reference}?",
                      f"Say: put the {mover} to the left of the {reference}")  # fmt: skip
    return Fact(mover, what, reference)


def _apply(fact: Fact, stacks: dict[str, list[str]], notes: list[str], fresh: bool) -> None:
    """Carry out one clause; `fresh`: the mover comes from off the arrangement."""
    if fact.relation == "at":
        _put(fact.mover, fact.where, stacks, notes, fresh)
    else:
        _relate(fact.relation, fact.mover, fact.where, stacks, notes, fresh)


def _site_of(stacks: dict[str, list[str]], obj: str) -> str | None:
    return next((site for site, objs in stacks.items() if obj in objs), None)


def _take(stacks: dict[str, list[str]], obj: str) -> None:
    """Take one `obj` off the arrangement: of alike ones, one on top of its site if any."""
    holding = [objs for objs in stacks.values() if obj in objs]
    for objs in sorted(holding, key=lambda objs: objs[-1] != obj)[:1]:
        del objs[len(objs) - 1 - objs[::-1].index(obj)]


def _clear(stacks: dict[str, list[str]], site: str, notes: list[str]) -> None:
    notes += [f"the {o} comes off the {site}" for o in stacks[site]]
    stacks[site] = []


def _put(
    obj: str, site: str, stacks: dict[str, list[str]], notes: list[str], fresh: bool = False
) -> None:
    if not fresh:
        _take(stacks, obj)
    if site == "top":
        stacks["center"].append(obj)
        _check_height(stacks)
        return
    _clear(stacks, site, notes)
    stacks[site] = [obj]


def _check_height(stacks: dict[str, list[str]]) -> None:
    if len(stacks["center"]) > 3:
        raise Refusal("semantic_failure", stacks["center"][-1],
                      "The stack holds at most three cubes",
                      "Take one off first, or build a new tower")  # fmt: skip


_SIDES = {
    "front_of": ("front", "back", ("center", "back")),
    "behind": ("back", "front", ("center", "front")),
    "left_of": ("left", "right", ("center", "right")),
    "right_of": ("right", "left", ("center", "left")),
}
"""Relation -> (site for the mover, site for the reference if it must move, reference sites
from which the mover's site already is on the right side: the cell's rows cross at center)."""


def _relate(
    rel: str, x: str, y: str, stacks: dict[str, list[str]], notes: list[str], fresh: bool
) -> None:
    if rel in _SIDES:
        mine, theirs, fine = _SIDES[rel]
        if _site_of(stacks, y) not in fine:
            # Where the other cube's own spot is taken (by an earlier clause's cube), the
            # middle of the row keeps both sides: "red in front of blue, green behind blue".
            spot = "center" if stacks[theirs] and not stacks["center"] else theirs
            _put(y, spot, stacks, notes)
        _put(x, mine, stacks, notes, fresh)
        return
    if not fresh:
        _take(stacks, x)
    center = stacks["center"]
    if _site_of(stacks, y) == "center":
        at = center.index(y)
        if rel == "on":
            notes += [f"the {o} comes off the stack" for o in center[at + 1 :]]
            stacks["center"] = [*center[: at + 1], x]
        else:
            stacks["center"] = [*center[:at], x, *center[at:]]
    else:
        _take(stacks, y)
        _clear(stacks, "center", notes)
        stacks["center"] = [y, x] if rel == "on" else [x, y]
    _check_height(stacks)
