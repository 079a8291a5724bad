"""Words the loose readings (the arrangement planner, a creative cue, a fuzzy phrase) read past:
a negation and a distance. Each moved the arm for what was not said; each is refused now, with
the grammar's reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interpreter.helpers import cell
from tests.interpreter.test_refusals_say_why import refusal
from voiced.interpreter.tiers import Interpreter
from voiced.llm.settings import LlmSettings
from voiced.paths import DataDir


@pytest.mark.parametrize(
    "said",
    [
        "don't put red on blue",
        "never put red on blue",
        "do not stack red on blue",
        "don't build a tower red green blue",
        # Other forms of taking it back (the review's; the planner had run each).
        "I didn't say put red on blue",
        "nope, put red on blue",
        "mustn't put red on blue",
        "isn't red on blue",
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
        ("blocks", "move the red cube an inch to the left"),
        ("blocks", "move the red cube more to the left"),
        ("blocks", "move the red cube left some"),  # "some" is a filler to the lexer
    ],
)
async def test_a_thing_is_never_moved_by_a_distance(cell: str, said: str, tmp_path: Path) -> None:
    # "a little to the left" had taken the red cube to the site named left: 220 mm to the
    # operator's right and 200 mm away.
    feedback, _, _ = await refusal(cell, said, tmp_path)
    assert feedback.startswith("I move things to places, not by a distance — "), feedback


@pytest.mark.parametrize(
    "said", ["add cheese to the back", "add bread on the back stack", "put cheese on the back"]
)
async def test_a_place_the_cell_lacks_is_named_not_taken_for_put_it_back(
    said: str, tmp_path: Path
) -> None:
    # "add cheese to the back" had put back what was held and never added the cheese.
    feedback, _, _ = await refusal("sandwich", said, tmp_path)
    assert feedback == "I don't have a back stack — Say where: on the left, right or center"


async def test_a_bare_number_with_a_thing_to_move_is_not_read_past(tmp_path: Path) -> None:
    # "move the red cube 5 to the left" had taken it to the site named left.
    feedback, _, _ = await refusal("blocks", "move the red cube 5 to the left", tmp_path)
    assert feedback.startswith("I don't know what 5 is for"), feedback


async def test_a_tool_is_not_put_back_for_a_place_the_cell_lacks(tmp_path: Path) -> None:
    # "put the camera to the front" had put back the tool that was held.
    feedback, _, _ = await refusal("weld", "put the camera to the front", tmp_path)
    assert feedback.startswith("I don't have a front place"), feedback


@pytest.mark.parametrize(
    ("cell_name", "said", "first"),
    [
        ("sandwich", "add two more cheese", "add_layer"),
        ("sandwich", "add more cheese on the left", "set_active_zone"),
        ("sandwich", "add some cheese", "add_layer"),
        ("blocks", "put red on blue", "move_object"),
    ],
)
async def test_amounts_of_things_are_still_read(
    cell_name: str, said: str, first: str, tmp_path: Path
) -> None:
    tiers = Interpreter(cell(cell_name), DataDir(tmp_path), None, LlmSettings(), lambda e: None)
    understood = await tiers.interpret(said, cell(cell_name).initial_scene, (), None)
    steps = understood.interpretation.sequence
    assert steps and steps[0].instruction == first, understood.interpretation
