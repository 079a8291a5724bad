"""A sequence step: one call of a cell's composite, the unit the compiler compiles.

Steps are typed everywhere inside the daemon. Seed 000's JSON form,
`{"instruction": "add_layer", "params": {"item": "bread"}}`, is only read and written where
steps cross an edge: model replies, the history, learned files, events and CLI output. Reading
JSON checks its shape here, once (`steps_from_json`); whether the names and values fit a cell is
the compiler's business.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_SHAPE = 'a step must look like {"instruction": "name", "params": {...}}'


class StepFormatError(ValueError):
    """JSON that is not a step, or not a list of steps; the message says what is wrong."""


@dataclass(frozen=True)
class SequenceStep:
    """One composite call."""

    instruction: str
    """The composite's name (or a spoken alias of it) as given."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """Its arguments by parameter name, as given; the compiler resolves and checks them."""

    def to_dict(self) -> dict[str, Any]:
        return {"instruction": self.instruction, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: object) -> SequenceStep:
        """The step `data` describes (a missing or null `params` is none). Raises
        StepFormatError when it has not the shape of a step."""
        if not isinstance(data, Mapping) or not isinstance(data.get("instruction"), str):
            raise StepFormatError(_SHAPE)
        params = data.get("params") or {}
        if not isinstance(params, Mapping):
            raise StepFormatError("params must be an object of parameter values")
        return cls(data["instruction"], {str(key): value for key, value in params.items()})


def steps_from_json(data: object) -> tuple[SequenceStep, ...]:
    """A JSON list of steps, typed. Raises StepFormatError naming the first step at fault."""
    if not isinstance(data, Sequence) or isinstance(data, str | bytes):
        raise StepFormatError("a sequence must be a list of steps")
    steps = []
    for index, raw in enumerate(data):
        try:
            steps.append(SequenceStep.from_dict(raw))
        except StepFormatError as error:
            raise StepFormatError(f"step {index + 1}: {error}") from None
    return tuple(steps)


def steps_to_json(steps: Iterable[SequenceStep]) -> list[dict[str, Any]]:
    """Steps in seed 000's JSON form."""
    return [step.to_dict() for step in steps]


def steps(*calls: tuple[str, Mapping[str, Any]] | str) -> tuple[SequenceStep, ...]:
    """Shorthand: steps("go_home", ("add_layer", {"item": "bread"}))."""
    return tuple(
        SequenceStep(call) if isinstance(call, str) else SequenceStep(call[0], dict(call[1]))
        for call in calls
    )
