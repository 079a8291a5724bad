"""Order words (issue 16): ranges of positions, stack levels in any order, one destination for a
list, swaps. Each row is read by structure, so other words in the same shapes work alike."""

from __future__ import annotations

from typing import Any

import pytest
from voiced.robot.compiler import compile_sequence

from tests.interpreter.helpers import cell, grammar, scene
from tests.interpreter.phrases import Step, at, layers, s

LEFT = s("set_active_zone", zone="assembly_left")
RIGHT = s("set_active_zone", zone="assembly_right")


def go(*numbers: int) -> tuple[Step, ...]:
    return tuple(s("move_to_position", position=f"Pos_{n}") for n in numbers)


CASES: list[tuple[str, str, tuple[Step, ...]]] = [
    ("weld", "inspect positions 1 through 3", at("camera_inspection", 1, 2, 3)),
    ("weld", "weld 2 thru 3", at("tack_weld", 2, 3)),
    ("weld", "weld from position 3 down to position 1", at("tack_weld", 3, 2, 1)),
    ("weld", "go to positions one until three", go(1, 2, 3)),
    ("weld", "go to position 1 to the safe spot", (*go(1), s("move_to_position",
                                                              position="Safe_Pos_1"))),
    ("weld", "go to the third position", go(3)),
    ("sandwich", "cheese at the bottom, tomato on top", layers("cheese", "tomato")),
    ("sandwich", "meat on top, bread underneath", layers("bread", "meat")),
    ("sandwich", "top bread, middle meat, bottom bread", layers("bread", "meat", "bread")),
    ("sandwich", "from the top down, cheese then tomato", layers("tomato", "cheese")),
    ("sandwich", "put tomato in the middle", (s("set_active_zone", zone="assembly_fixture"),
                                              *layers("tomato"))),
    ("sandwich", "bread, then meat, all on the left", (LEFT, *layers("bread", "meat"))),
    ("sandwich", "tomato and lettuce, put them on the right", (RIGHT,
                                                               *layers("tomato", "lettuce"))),
    ("sandwich", "add bread then cheese on the left", (*layers("bread"), LEFT,
                                                       *layers("cheese"))),
    ("sandwich", "build cheese meat cheese", layers("cheese", "meat", "cheese")),
    ("sandwich", "turkey on the left", (LEFT, *layers("meat"))),
    ("sandwich", "never mind, put it back", (s("return_to_stack"),)),
    ("weld", "finish up and go home", (s("release_tool_and_home"), s("go_home"))),
    ("weld", "we are done, put the tool away and go home", (s("release_tool_and_home"),)),
    ("blocks", "trade the blue cube and the green cube", (
        s("move_object", object="blue cube", to="B1"),
        s("move_object", object="green cube", to="S3"),
        s("move_object", object="blue cube", to="S2"))),
]  # fmt: skip
"""(cell, said, sequence). "add bread then cheese on the left" keeps its meaning: a list
without a collective word is not one list with one destination."""


@pytest.mark.parametrize(("cell_name", "said", "expected"), CASES, ids=[c[1] for c in CASES])
def test_order_words(cell_name: str, said: str, expected: tuple[Step, ...]) -> None:
    result = grammar(cell_name).parse(said, scene=scene(cell_name))
    assert result.success, result.error
    got = [(step.instruction, dict(step.params)) for step in result.sequence]
    assert got == [(name, dict(params)) for name, params in expected]
    assert compile_sequence(cell(cell_name), scene(cell_name), result.sequence).ok


@pytest.mark.parametrize(
    ("said", "view", "message"),
    [
        ("swap the red cube", {}, "Swap which two?"),
        ("swap the red and the blue cube", {"buffers": {"B1": "yellow cube", "B2": "orange cube",
                                                        "B3": "purple cube"}},
         "Every buffer slot is taken"),
    ],
)  # fmt: skip
def test_a_swap_that_cannot_be_done_says_why(said: str, view: dict[str, Any], message: str) -> None:
    result = grammar("blocks").parse(said, scene=scene("blocks", view))
    assert not result.success and result.error is not None
    assert result.error.message == message
