"""Sequence steps and their JSON form (voiced.robot.sequence): the shape of a step is checked
where JSON is read, so the compiler only ever sees typed steps."""

from __future__ import annotations

import pytest
from voiced.robot.sequence import (
    SequenceStep,
    StepFormatError,
    steps,
    steps_from_json,
    steps_to_json,
)

SHAPE = 'a step must look like {"instruction": "name", "params": {...}}'


def test_a_step_round_trips_through_json() -> None:
    sequence = steps("go_home", ("add_layer", {"item": "bread"}))
    data = steps_to_json(sequence)
    assert data == [
        {"instruction": "go_home", "params": {}},
        {"instruction": "add_layer", "params": {"item": "bread"}},
    ]
    assert steps_from_json(data) == sequence


@pytest.mark.parametrize(
    "data", [{"instruction": "go_home"}, {"instruction": "go_home", "params": None}]
)
def test_missing_or_null_params_are_none(data: dict[str, object]) -> None:
    assert SequenceStep.from_dict(data) == SequenceStep("go_home")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("add_layer", SHAPE),
        ({"params": {}}, SHAPE),
        ({"instruction": 3}, SHAPE),
        (
            {"instruction": "go_home", "params": ["x"]},
            "params must be an object of parameter values",
        ),
    ],
)
def test_what_is_not_a_step_is_refused_by_name(raw: object, message: str) -> None:
    with pytest.raises(StepFormatError) as refused:
        SequenceStep.from_dict(raw)
    assert str(refused.value) == message


def test_the_step_at_fault_is_numbered() -> None:
    with pytest.raises(StepFormatError, match=r"^step 2: params must be an object"):
        steps_from_json([{"instruction": "go_home"}, {"instruction": "wait", "params": 1}])


@pytest.mark.parametrize("raw", [{"instruction": "go_home"}, "go_home", None])
def test_a_sequence_must_be_a_list(raw: object) -> None:
    with pytest.raises(StepFormatError, match=r"^a sequence must be a list of steps$"):
        steps_from_json(raw)
