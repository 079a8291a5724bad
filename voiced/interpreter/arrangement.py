"""Arrangement commands (seed 004): speech -> a validated target_structure for the planner.

Two kinds of command. A *structure* replaces the whole arrangement: "build a tower: red, green,
blue" (listed bottom to top), "make a pyramid with green and red on the bottom and blue on top",
"line them up red green blue" (left to right; "front to back" for a row away from the operator).
A *placement* changes the current arrangement and keeps the rest: "stack the blue cube on the
red cube", "put red on the left and green on the right", "put the blue cube in front of the
green one". Where a placement displaces an object ("put red on the left" with green there), the
displaced object comes off the arrangement, and the meaning says so. The result is checked by
`validate_target_structure_payload`; the planner (voiced.robot.rearrange) finds the moves.

`parse_arrangement` returns None quickly for anything else (no arrangement area in the cell, or
no arrangement words), so the grammar can go first or second. Failures are the grammar's. The
words are voiced.interpreter.arrangement_words', placements voiced.interpreter.placing's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from voiced.interpreter.arrangement_words import (
    DOWNWARD,
    LEVELS,
    NOUNS,
    ROLE_WORDS,
    SEPARATORS,
    UPWARD,
    Refusal,
    Word,
    command_kind,
    lex,
)
from voiced.interpreter.grammar import Failure
from voiced.interpreter.placing import placements
from voiced.robot.arrangement import ARRANGEMENT_SITES
from voiced.robot.cell import Cell
from voiced.robot.rearrange.conflicts import shortage
from voiced.robot.rearrange.plan import object_counts
from voiced.robot.rearrange.targets import (
    TargetError,
    TargetStructure,
    structure_from_stacks,
)
from voiced.robot.rearrange.targets import validate_target_structure_payload as validate
from voiced.robot.scene import Scene


@dataclass(frozen=True)
class ArrangementParse:
    """What an arrangement command means."""

    target: dict[str, Any] | None
    """The seed's target_structure (new format), validated; None on failure."""
    failure: Failure | None = None
    """Why not (the grammar's structured failure)."""
    meaning: str = ""
    """One sentence: the arrangement understood, and what comes off to make room."""
    notes: tuple[str, ...] = field(default=())
    """Objects displaced by a placement ("the green cube comes off the left")."""


def parse_arrangement(text: str, cell: Cell, scene: Scene) -> ArrangementParse | None:
    """The target an arrangement command describes, a structured failure, or None when `text`
    is not an arrangement command (or the cell has no arrangement area)."""
    if any(site not in cell.sites for site in ARRANGEMENT_SITES):
        return None
    said, words = lex(text, cell)
    kind = command_kind(words)
    if kind is None:
        return None
    try:
        _check_objects(cell, scene, words)
        current = {s: list(scene.stacks.get(s, ())) for s in ARRANGEMENT_SITES}
        stacks, notes = _build(kind, words, current, scene, cell)
        structure = validate(structure_from_stacks(stacks).to_dict())
    except Refusal as fail:
        at = max(0, said.find(fail.token), said.find(fail.token.split()[0]))
        error = Failure(
            fail.kind, fail.token, at, fail.message, fail.suggestion, said, fail.fallback
        )
        return ArrangementParse(None, error, f"Could not arrange: {said}")
    except TargetError as error:  # a layout the cell cannot hold
        failure = Failure("semantic_failure", said, 0, str(error), "Say it another way", said)
        return ArrangementParse(None, failure, f"Could not arrange: {said}")
    meaning = describe_target(structure) + "".join(f"; {n}" for n in notes)
    return ArrangementParse(structure.to_dict(), None, meaning, tuple(notes))


def describe_target(structure: TargetStructure) -> str:
    """ "Arrange stacked: bottom red cube, top blue cube" """
    shown = ", ".join(f"{p.position} {p.object}" if p.position else p.object
                      for p in structure.placements) or "nothing"  # fmt: skip
    return f"Arrange {structure.relationship.replace('_', ' ')}: {shown}"


def _present(cell: Cell, scene: Scene) -> list[str]:
    on_sites = {o for objs in scene.stacks.values() for o in objs}
    return [o for o in cell.objects if o in on_sites or o == scene.holding]


def _available(cell: Cell, scene: Scene) -> Counter[str]:
    """How many of each cube the cell has (alike cubes: two green cubes count two)."""
    return Counter({o: n for o, n in object_counts(scene).items() if o in cell.objects})


def _check_objects(cell: Cell, scene: Scene, words: Sequence[Word]) -> None:
    here = _present(cell, scene)
    for word in words:
        if word.unknown is not None:
            name = word.unknown if word.unknown.split()[-1] in NOUNS else f"{word.unknown} cube"
            raise Refusal("semantic_failure", word.text, f"I don't have a {name}",
                          f"available cubes are: {', '.join(here)}")  # fmt: skip
        if word.obj is not None and word.obj not in here:
            raise Refusal("semantic_failure", word.text, f"The {word.obj} is not in the cell",
                          f"cubes here: {', '.join(here)}")  # fmt: skip


def _objects(words: Sequence[Word]) -> list[str]:
    return [w.obj for w in words if w.obj]


def _build(
    kind: str, words: list[Word], current: dict[str, list[str]], scene: Scene, cell: Cell
) -> tuple[dict[str, list[str]], list[str]]:
    if kind == "place":
        return placements(words, current, _available(cell, scene))
    if kind == "vague":
        raise Refusal("syntax_error", " ".join(w.text for w in words), "Which arrangement?",
                      "Say: build a tower red, green, blue", "interpret")  # fmt: skip
    named = _objects(words)
    available = _available(cell, scene)
    for obj, wanted in Counter(named).items():
        if wanted > available[obj]:
            reason = shortage(obj, wanted, available[obj]).capitalize()
            raise Refusal("semantic_failure", obj, reason, "Name each cube as often as there are")
    stacks: dict[str, list[str]] = {s: [] for s in ARRANGEMENT_SITES}
    if kind == "pyramid":
        left, right, top = _pyramid(words, _present(cell, scene))
        stacks.update(pyramid_left=[left], pyramid_right=[right], pyramid_top=[top])
    elif kind == "row":
        _row(words, named, stacks)
    else:
        stacks["center"] = _tower(words, named)
    gone = [
        o for objs in current.values() for o in objs if not any(o in s for s in stacks.values())
    ]
    return stacks, [f"the {o} comes off the arrangement" for o in gone]


def _roles(words: Sequence[Word]) -> tuple[dict[str, list[str]], list[str]]:
    """Objects by role word ("green and red on the bottom", "top: blue"), and the unmarked. A
    role word after objects marks those said since the last comma or "then" ("red at the
    bottom, then green, then blue on top": only blue is on top). "center" and "middle" are
    levels only beside "bottom" or "top"; otherwise they say where the structure goes."""
    texts = {w.text for w in words}
    levels = bool(texts & LEVELS)
    roles: dict[str, list[str]] = {}
    unmarked: list[str] = []
    group: list[str] = []
    prefix: str | None = None
    for i, word in enumerate(words):
        if word.obj is not None:
            (roles.setdefault(prefix, []) if prefix else group).append(word.obj)
        elif word.text in ROLE_WORDS and (levels or ROLE_WORDS[word.text] != "middle"):
            role = ROLE_WORDS[word.text]
            if role in ("left", "right") and i and words[i - 1].text == "bottom":
                roles.pop("bottom", None)
            if group:
                roles.setdefault(role, []).extend(group)
                group, prefix = [], None
            elif not (word.text == "center" and prefix):
                prefix = role
        elif word.text in SEPARATORS:
            unmarked, group, prefix = unmarked + group, [], None
    return roles, unmarked + group


def _pyramid(words: Sequence[Word], present: Sequence[str]) -> tuple[str, str, str]:
    roles, rest = _roles(words)
    bottom = roles.get("left", []) + roles.get("bottom", []) + roles.get("right", [])
    top = roles.get("top", [])
    for obj in rest:  # unmarked: the bottom fills first ("a pyramid: green, red, blue")
        (bottom if len(bottom) < 2 else top).append(obj)
    spare = [o for o in present if o not in bottom + top]
    if not top and len(bottom) == 2 and len(spare) == 1:
        top = spare
    if not bottom and len(top) == 1 and len(spare) == 2:
        bottom = spare
    if len(bottom) != 2 or len(top) != 1:
        raise Refusal("syntax_error", "pyramid",
                      "A pyramid needs two cubes at the bottom and one on top",
                      "Say: make a pyramid with green and red on the bottom and blue on top",
                      "interpret")  # fmt: skip
    return bottom[0], bottom[1], top[0]


def _tower(words: Sequence[Word], named: list[str]) -> list[str]:
    texts = " ".join(w.text for w in words)
    downward = next((d for d in DOWNWARD if d in texts), None)
    direction = downward or next((u for u in UPWARD if u in texts), None)
    if direction is not None:  # the direction's own words are not level markers
        start = len(texts[: texts.index(direction)].split())
        words = [*words[:start], *words[start + len(direction.split()) :]]
    roles, rest = _roles(words)
    rest = rest[::-1] if downward else rest
    if not 2 <= len(named) <= 3:
        said = "Which cubes?" if not named else "A tower here holds two or three cubes"
        raise Refusal("semantic_failure", texts, said, "Say: build a tower red, green, blue",
                      "none" if named else "interpret")  # fmt: skip
    levels: list[str | None] = [None] * len(named)
    for role, index in (("bottom", 0), ("middle", 1), ("top", len(named) - 1)):
        for obj in roles.get(role, [])[:1]:
            levels[index] = obj
    fill = iter(o for o in rest + [o for r in roles.values() for o in r] if o not in levels)
    return [lvl if lvl is not None else next(fill) for lvl in levels]


def _row(words: Sequence[Word], named: list[str], stacks: dict[str, list[str]]) -> None:
    texts = " ".join(w.text for w in words)
    deep = "front to back" in texts or "back to front" in texts or "away from" in texts
    order = named[::-1] if "right to left" in texts or "back to front" in texts else named
    if not 2 <= len(order) <= 3:
        said = "Which cubes?" if not order else "A row here holds two or three cubes"
        raise Refusal("semantic_failure", texts, said,
                      "Say: line them up red green blue",
                      "none" if named else "interpret")  # fmt: skip
    sites = ("front", "center", "back") if deep else ("left", "center", "right")
    chosen = sites if len(order) == 3 else (sites[0], sites[2])
    for site, obj in zip(chosen, order, strict=True):
        stacks[site] = [obj]
