"""The weld cell's operator words: lining the torch up by a distance, which its `[motion]
distances` promised and every nudge was refused ("This cell cannot move the arm by a
distance")."""

from __future__ import annotations

import pytest

from tests.interpreter.helpers import cell, grammar


@pytest.mark.parametrize(
    ("said", "params"),
    [
        ("move a little to the left", {"direction": "left", "distance": "a little"}),
        ("move up 20 mm", {"direction": "up", "distance": 20.0}),
    ],
)
def test_the_arm_is_moved_a_short_way(said: str, params: dict[str, object]) -> None:
    weld = cell("weld")
    parsed = grammar("weld").parse(said, weld.initial_scene, ())
    assert parsed.success, parsed.error
    (nudge,) = parsed.sequence
    assert nudge.instruction == "move_relative" and dict(nudge.params) == params
