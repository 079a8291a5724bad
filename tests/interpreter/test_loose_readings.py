"""Words the loose readings (the arrangement planner, a creative cue, a fuzzy phrase) read past:
a negation and a distance. Each moved the arm for what was not said; each is refused now, with
the grammar's reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interpreter.test_refusals_say_why import refusal


@pytest.mark.parametrize(
    "said",
    [
        "don't put red on blue",
        "never put red on blue",
        "do not stack red on blue",
        "don't build a tower red green blue",
    ],
)
async def test_a_negated_arrangement_is_never_planned(said: str, tmp_path: Path) -> None:
    # The planner had built the tower and stacked red on blue: 18 primitives.
    feedback, _, _ = await refusal("blocks", said, tmp_path)
    assert feedback.startswith("I can't act on "), feedback


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        ("blocks", "move the red cube a little to the left"),
        ("blocks", "move the red cube 2 cm left"),
        ("blocks", "lift the red cube by 5 cm"),
        ("sandwich", "add bread a bit to the left"),
    ],
)
async def test_a_thing_is_never_moved_by_a_distance(cell: str, said: str, tmp_path: Path) -> None:
    # "a little to the left" had taken the red cube to the site named left: 220 mm to the
    # operator's right and 200 mm away.
    feedback, _, _ = await refusal(cell, said, tmp_path)
    assert feedback.startswith("I move things to places, not by a distance — Say where"), feedback


@pytest.mark.parametrize(
    "said", ["add cheese to the back", "add bread on the back stack", "put cheese on the back"]
)
async def test_a_place_the_cell_lacks_is_named_not_taken_for_put_it_back(
    said: str, tmp_path: Path
) -> None:
    # "add cheese to the back" had put back what was held and never added the cheese.
    feedback, _, _ = await refusal("sandwich", said, tmp_path)
    assert feedback == "I don't have a back stack — Say where: on the left, right or center"
