"""The EXAMPLES section of the pass-1 prompt: seed 000's examples and their weld / blocks
counterparts, each shown only when every instruction and name in it exists in the live cell."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from voiced.robot.cell import Cell, ValueProblem


@dataclass(frozen=True)
class Example:
    """One command and the answer expected for it."""

    command: str
    """What the operator says."""
    steps: tuple[tuple[str, Mapping[str, Any]], ...]
    """(instruction, params) calls."""
    confidence: float = 0.95
    """The confidence to show."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Other answer fields (composite_name, user_feedback)."""


def _s(instruction: str, **params: Any) -> tuple[str, Mapping[str, Any]]:
    return instruction, params


_ALL = (
    Example(
        "make a cheese sandwich",
        (
            _s("add_layer", item="bread"),
            _s("add_layer", item="cheese"),
            _s("add_layer", item="bread"),
            _s("go_home"),
        ),
    ),
    Example(
        "put lettuce on the left stack",
        (
            _s("set_active_zone", zone="assembly_left"),
            _s("add_layer", item="lettuce"),
            _s("go_home"),
        ),
    ),
    Example(
        "slowly add two layers of tomato",
        (
            _s("set_speed", speed="slow"),
            _s("add_layer", item="tomato"),
            _s("add_layer", item="tomato"),
            _s("go_home"),
        ),
        0.9,
    ),
    Example(
        "bread and meat on the right, cheese in the middle",
        (
            _s("set_active_zone", zone="assembly_right"),
            _s("add_layer", item="bread"),
            _s("add_layer", item="meat"),
            _s("go_home"),
            _s("set_active_zone", zone="assembly_fixture"),
            _s("add_layer", item="cheese"),
            _s("go_home"),
        ),
        0.9,
    ),
    Example("start over", (_s("clear_assembly"), _s("go_home"))),
    Example("put it back", (_s("return_to_stack"),)),
    Example(
        "when I say lunch, make bread cheese bread",
        (
            _s("add_layer", item="bread"),
            _s("add_layer", item="cheese"),
            _s("add_layer", item="bread"),
        ),
        0.9,
        {
            "composite_name": "lunch",
            "user_feedback": "Mapping/composite noted — will be saved to memory system",
        },
    ),
    Example("move up a little", (_s("move_relative", direction="up", distance="a little"),)),
    Example(
        "weld at position 1 and 2",
        (
            _s("run_routine_at", routine="tack_weld", position="Pos_1"),
            _s("run_routine_at", routine="tack_weld", position="Pos_2"),
        ),
    ),
    Example(
        "inspect all positions",
        tuple(
            _s("run_routine_at", routine="camera_inspection", position=f"Pos_{n}")
            for n in (1, 2, 3)
        ),
        0.9,
    ),
    Example("put the tool back and go home", (_s("release_tool_and_home"),)),
    Example("put the red cube in buffer one", (_s("move_object", object="red cube", to="B1"),)),
    Example("go home quickly", (_s("set_speed", speed="fast"), _s("go_home"))),
)


def _fits(cell: Cell, example: Example) -> bool:
    for instruction, params in example.steps:
        composite = cell.composite(instruction)
        if composite is None:
            return False
        for name, value in params.items():
            spec = composite.param(name)
            if spec is None:
                return False
            try:
                cell.resolve(spec.type, value)
            except ValueProblem:
                return False
    return True


def _answer(example: Example) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "interpretation": f"The operator asked: {example.command}.",
        "sequence": [{"instruction": i, "params": dict(p)} for i, p in example.steps],
        "composite_name": None,
        "confidence": example.confidence,
        "user_feedback": None,
        "creative_reasoning": None,
    }
    answer.update(example.extra)
    return answer


def examples_section(cell: Cell) -> str:
    """The examples that fit the cell, plus an impossible command naming its real items."""
    lines = ["━━━ EXAMPLES ━━━"]
    for example in _ALL:
        if _fits(cell, example):
            lines += [
                f'Command: "{example.command}"',
                json.dumps(_answer(example), ensure_ascii=False),
            ]
    if cell.items():
        items = ", ".join(cell.items())
        impossible = Example(
            "add avocado",
            (),
            0.1,
            {"user_feedback": f"I don't have avocado — available ingredients are: {items}"},
        )
        lines += [
            f'Command: "{impossible.command}"',
            json.dumps(_answer(impossible), ensure_ascii=False),
        ]
    return "\n".join(lines)
