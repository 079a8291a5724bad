"""Arrangement commands that contradict themselves are refused with the reason, naming the
clauses at odds (they used to be obeyed clause by clause, the last one winning); alike cubes are
counted, so two green cubes may go to two places."""

from __future__ import annotations

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange.targets import validate_target_structure_payload
from voiced.robot.scene import Scene

from voiced.interpreter.arrangement import parse_arrangement
from voiced.interpreter.contradictions import Fact, contradiction

CELL = load_cell("blocks")
R, G, B = "red cube", "green cube", "blue cube"
ONE_EACH = {R: 1, G: 1, B: 1}


def scene(**stacks: tuple[str, ...]) -> Scene:
    return CELL.initial_scene.with_changes(stacks={s: () for s in CELL.sites} | stacks)


START = scene(S1=(R,), S2=(G,), S3=(B,))
TWO_GREEN = scene(S1=(R,), S2=(G,), S3=(B,), S4=(G,))

REFUSED = [
    ("put red on blue and blue on red",
     "the red cube on the blue cube and the blue cube on the red cube: that goes round in a "
     "circle"),
    ("stack red on blue, blue on green and green on red",
     "the red cube on the blue cube, the blue cube on the green cube and the green cube on the "
     "red cube: that goes round in a circle"),
    ("put red under blue and blue under red", "goes round in a circle"),
    ("put red in front of blue and blue in front of red", "goes round in a circle"),
    ("put red left of green and red right of green", "goes round in a circle"),
    ("put red on the left and red on the right",
     "the red cube on the left and the red cube on the right: one cube cannot be in two places "
     "at once"),
    ("put red on the left and green on the left",
     "the red cube on the left and the green cube on the left: that place holds one cube"),
    ("put red on blue and green on blue",
     "the red cube on the blue cube and the green cube on the blue cube: only one cube fits "
     "right on the blue cube"),
    ("put red on blue and red on green", "one cube cannot be in two places at once"),
    ("put red on top of blue and blue on the left",
     "the red cube on the blue cube and the blue cube on the left: the left holds one cube, so "
     "nothing stacks there"),
]  # fmt: skip


@pytest.mark.parametrize(("said", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_contradiction_is_refused_with_its_reason(said: str, reason: str) -> None:
    parsed = parse_arrangement(said, CELL, START)
    assert parsed is not None and parsed.target is None and parsed.failure is not None
    assert parsed.failure.error_type == "semantic_failure"
    assert parsed.failure.fallback == "none", "a contradiction is not the model's to guess at"
    assert reason in parsed.failure.message
    assert parsed.failure.feedback.startswith("That cannot all be done: ")


@pytest.mark.parametrize(
    "said",
    ["put red on blue and green on the left", "stack green on red and blue on green",
     "put red on the left and green on the right", "put red on the left and blue on top"],
)  # fmt: skip
def test_clauses_that_fit_together_are_not_contradictions(said: str) -> None:
    parsed = parse_arrangement(said, CELL, START)
    assert parsed is not None and parsed.failure is None, parsed.failure


def test_two_green_cubes_may_go_to_two_places() -> None:
    said = "put the green cube on the left and the green cube on the right"
    assert parse_arrangement(said, CELL, START).failure is not None  # type: ignore[union-attr]
    parsed = parse_arrangement(said, CELL, TWO_GREEN)
    assert parsed is not None and parsed.target is not None, parsed
    assert parsed.target["relationship"] == "separated_left_right"
    assert [p["object 1" if i == 0 else "object 2"] for i, p in
            enumerate(parsed.target["placements"])] == [G, G]  # fmt: skip


def test_a_tower_of_alike_cubes_counts_them() -> None:
    one = parse_arrangement("build a tower green green blue", CELL, START)
    assert one is not None and one.failure is not None
    assert one.failure.message == (
        "There is only one green cube: it cannot be in two places at once"
    )
    two = parse_arrangement("build a tower green green blue", CELL, TWO_GREEN)
    assert two is not None and two.target is not None
    assert [next(iter(p.values())) for p in two.target["placements"]] == [
        "bottom", "middle", "top"
    ]  # fmt: skip
    objects = [p[k] for p in two.target["placements"] for k in p if k != "position"]
    assert objects == [G, G, B]


def test_cycles_among_alike_cubes_are_not_cycles() -> None:
    """Green on blue on green is a tower when there are two green cubes."""
    facts = [Fact(G, "on", B), Fact(B, "on", G)]
    assert contradiction(facts, ONE_EACH) is not None
    assert contradiction(facts, {**ONE_EACH, G: 2}) is None


def test_the_first_contradiction_found_is_between_the_clauses_said() -> None:
    facts = [Fact(R, "at", "left"), Fact(B, "on", G), Fact(R, "at", "right")]
    reason = contradiction(facts, ONE_EACH)
    assert reason == (
        "the red cube on the left and the red cube on the right: one cube cannot be in two "
        "places at once"
    )
    assert contradiction(facts[:2], ONE_EACH) is None


def stacks_of(said: str) -> dict[str, list[str]]:
    parsed = parse_arrangement(said, CELL, START)
    assert parsed is not None and parsed.target is not None, parsed
    structure = validate_target_structure_payload(parsed.target)
    return {site: list(objs) for site, objs in structure.stacks.items() if objs}


@pytest.mark.parametrize(
    ("said", "stacks"),
    [
        ("stack red on blue and blue on green", {"center": [G, B, R]}),
        ("put red under blue and green under red", {"center": [G, R, B]}),
        ("put red in front of blue and green behind blue",
         {"front": [R], "center": [B], "back": [G]}),
        ("put red left of blue and green right of blue",
         {"left": [R], "center": [B], "right": [G]}),
    ],
)  # fmt: skip
def test_every_clause_is_kept_when_some_order_of_them_works(
    said: str, stacks: dict[str, list[str]]
) -> None:
    """Carried out in the order said, the second clause used to undo the first."""
    assert stacks_of(said) == stacks


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("put red on blue, blue on green and blue left of green",
         "the blue cube on the green cube and the blue cube left of the green cube"),
        ("put red on blue, red behind blue and green on red",
         "the red cube on the blue cube and the red cube behind the blue cube"),
    ],
)  # fmt: skip
def test_clauses_no_order_can_keep_are_named(said: str, reason: str) -> None:
    parsed = parse_arrangement(said, CELL, START)
    assert parsed is not None and parsed.failure is not None
    assert parsed.failure.message == f"That cannot all be done: {reason}"
