"""The arrangement grammar: phrasings -> the seed's target_structure, structured failures, and
no match for everything else."""

from __future__ import annotations

from typing import Any

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange import plan_rearrangement

from voiced.interpreter.arrangement import parse_arrangement

CELL = load_cell("blocks")
START = CELL.initial_scene  # red, green, blue on S1-S3
R, G, B = "red cube", "green cube", "blue cube"


def ts(relationship: str, *placements: tuple[str | None, str]) -> dict[str, Any]:
    if len(placements) == 1 and placements[0][0] is None:
        return {"relationship": relationship, "placements": [{"object": placements[0][1]}]}
    rows = [{"position": p, f"object {i}": o} for i, (p, o) in enumerate(placements, 1)]
    return {"relationship": relationship, "placements": rows}


STACK = ts("stacked", ("bottom", R), ("middle", G), ("top", B))
TABLE = [
    ("stack the blue cube on the red cube", ts("stacked", ("bottom", R), ("top", B))),
    ("Stack the blue cube on top of the red one.", ts("stacked", ("bottom", R), ("top", B))),
    ("put the blue block onto red", ts("stacked", ("bottom", R), ("top", B))),
    ("put the red block under the blue one", ts("stacked", ("bottom", R), ("top", B))),
    ("stack the green cube on the red cube and the blue cube on the green one", STACK),
    ("put red on the left and green on the right",
     ts("separated_left_right", ("left", R), ("right", G))),
    ("put red on the left, blue in the middle and green on the right",
     ts("separate_horizontal", ("left", R), ("middle", B), ("right", G))),
    ("put the red cube on the right", ts("stacked_right", (None, R))),
    ("move the green cube to the center", ts("stacked_middle", (None, G))),
    ("put the blue cube in front of the green one",
     ts("separated_front_back", ("front", B), ("back", G))),
    ("put the red cube behind the blue cube",
     ts("separated_front_back", ("front", B), ("back", R))),
    ("put red to the left of green", ts("separated_left_right", ("left", R), ("right", G))),
    ("put red to the right of green", ts("separated_left_right", ("left", G), ("right", R))),
    ("make a pyramid with green and red on the bottom and blue on top",
     ts("pyramid", ("bottom left", G), ("bottom right", R), ("top", B))),
    ("build a pyramid: blue on top, red on the left and green on the right",
     ts("pyramid", ("bottom left", R), ("bottom right", G), ("top", B))),
    ("make a pyramid: green, red, blue",
     ts("pyramid", ("bottom left", G), ("bottom right", R), ("top", B))),
    ("make a pyramid with blue on top", ts("pyramid", ("bottom left", R), ("bottom right", G),
                                           ("top", B))),
    ("build a tower: red, green, blue", STACK),
    ("build a tower with red at the bottom, green in the middle and blue on top", STACK),
    ("build a tower with blue on top, green in the middle and red at the bottom", STACK),
    ("stack red, green and blue", STACK),
    ("stack blue, green and red from the top", STACK),
    ("make a tower of red and blue", ts("stacked", ("bottom", R), ("top", B))),
    ("line them up red green blue", ts("separate_horizontal", ("left", R), ("middle", G),
                                       ("right", B))),
    ("line up red, green and blue from right to left",
     ts("separate_horizontal", ("left", B), ("middle", G), ("right", R))),
    ("put them in a row from front to back: red, green, blue",
     ts("separate_vertical", ("bottom", R), ("middle", G), ("top", B))),
    ("line up blue and red", ts("separated_left_right", ("left", B), ("right", R))),
    ("attack the blew cube on the read cube", ts("stacked", ("bottom", R), ("top", B))),
]  # fmt: skip


@pytest.mark.parametrize(("text", "target"), TABLE, ids=[t for t, _ in TABLE])
def test_phrasings(text: str, target: dict[str, Any]) -> None:
    parsed = parse_arrangement(text, CELL, START)
    assert parsed is not None and parsed.failure is None, parsed
    assert parsed.target == target
    assert parsed.meaning.startswith("Arrange ")
    assert plan_rearrangement(CELL, START, parsed.target).status == "success"


def scene(**stacks: tuple[str, ...]) -> Any:
    full = {s: () for s in CELL.sites} | stacks
    return CELL.initial_scene.with_changes(stacks=full)


def test_placements_keep_the_rest_of_the_arrangement() -> None:
    now = scene(center=(R, G), left=(B,))
    parsed = parse_arrangement("put the red cube on the right", CELL, now)
    assert parsed is not None
    assert parsed.target == ts("separate_horizontal", ("left", B), ("middle", G), ("right", R))


def test_stacking_on_a_stacked_cube_keeps_what_is_under_it() -> None:
    now = scene(center=(R, G), S1=(B,))
    parsed = parse_arrangement("stack the blue cube on the green cube", CELL, now)
    assert parsed is not None and parsed.target == ts("stacked", ("bottom", R), ("middle", G),
                                                      ("top", B))  # fmt: skip


def test_displaced_cubes_are_said() -> None:
    now = scene(left=(G,), S1=(R,), S3=(B,))
    parsed = parse_arrangement("put red on the left", CELL, now)
    assert parsed is not None and parsed.target == ts("stacked_left", (None, R))
    assert parsed.notes == ("the green cube comes off the left",)
    assert parsed.meaning.endswith("; the green cube comes off the left")
    rebuilt = parse_arrangement(
        "build a tower: blue, red", CELL, scene(left=(G,), S1=(R,), S2=(B,))
    )
    assert rebuilt is not None and rebuilt.notes == ("the green cube comes off the arrangement",)


def test_in_front_of_a_stacked_cube_leaves_it_there() -> None:
    now = scene(center=(G,), S1=(R,), S3=(B,))
    parsed = parse_arrangement("put the blue cube in front of the green one", CELL, now)
    assert parsed is not None
    assert parsed.target == ts("none", ("center", G), ("front", B))


FAILURES = [
    ("stack the pink cube on the red cube", "semantic_failure", "pink cube",
     "I don't have a pink cube", "none"),
    ("stack the yellow cube on the red cube", "semantic_failure", "yellow cube",
     "The yellow cube is not in the cell", "none"),
    ("stack red on red", "semantic_failure", "red cube", "The red cube cannot go on itself",
     "none"),
    ("put red next to green", "syntax_error", "green cube", "Left or right of the green cube?",
     "none"),
    # No cube named: which ones, not how many a tower holds ("build a tower of three").
    ("build a tower", "semantic_failure", "build a tower", "Which cubes?", "interpret"),
    ("build a tower of three", "semantic_failure", "build a tower of three", "Which cubes?",
     "interpret"),
    ("stack them up", "semantic_failure", "stack them up", "Which cubes?", "interpret"),
    ("build a tower with red", "semantic_failure", "build a tower with red",
     "A tower here holds two or three cubes", "none"),
    ("build a tower red green red", "semantic_failure", "red cube",
     "There is only one red cube: it cannot be in two places at once", "none"),
    ("make a pyramid with red", "syntax_error", "pyramid",
     "A pyramid needs two cubes at the bottom and one on top", "interpret"),
    ("arrange the cubes nicely", "syntax_error", "arrange the cubes nicely", "Which arrangement?",
     "interpret"),
    ("put red and green on the left", "syntax_error", "green",
     "One cube per place, please", "none"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind", "token", "message", "fallback"), FAILURES,
                         ids=[f[0] for f in FAILURES])  # fmt: skip
def test_failures(text: str, kind: str, token: str, message: str, fallback: str) -> None:
    parsed = parse_arrangement(text, CELL, START)
    assert parsed is not None and parsed.target is None and parsed.failure is not None
    failure = parsed.failure
    assert (failure.error_type, failure.message, failure.fallback) == (kind, message, fallback)
    assert failure.token == token and failure.suggestion
    assert failure.context[failure.position :].startswith(token.split()[0])


def test_four_high_is_refused() -> None:
    now = scene(center=(R, G, B), S1=("yellow cube",))
    parsed = parse_arrangement("put the yellow cube on top of the blue cube", CELL, now)
    assert parsed is not None and parsed.failure is not None
    assert parsed.failure.message == "The stack holds at most three cubes"


@pytest.mark.parametrize(
    "text",
    ["move the red cube to B1", "pick up the red cube", "go home", "put it on the left",
     "put the red cube back", "move left a bit", "place it on S4", "go slow", "what is on B1"],
)  # fmt: skip
def test_other_commands_are_not_arrangements(text: str) -> None:
    assert parse_arrangement(text, CELL, START) is None


def test_cells_without_an_arrangement_area_never_match() -> None:
    sandwich = load_cell("sandwich")
    assert (
        parse_arrangement("stack the bread on the cheese", sandwich, sandwich.initial_scene) is None
    )
