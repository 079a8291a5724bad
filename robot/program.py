"""Step programs: the composites a cell declares, their parameters and their steps.

A composite is a named, typed step program over the tier-0 primitives (voiced.robot.primitives).
`robot.cellsteps` reads them from cell files; `robot.compiler` expands them against a scene.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from voiced.robot.exprsyntax import Expr

PARAM_TYPES = (
    "item",
    "object",
    "zone",
    "site",
    "position",
    "tool",
    "routine",
    "direction",
    "distance",
    "speed",
    "number",
    "text",
)
"""The types a composite parameter may declare."""

DIRECTIONS: Mapping[str, tuple[float, float, float]] = {
    "right": (1.0, 0.0, 0.0),
    "left": (-1.0, 0.0, 0.0),
    "up": (0.0, 0.0, 1.0),
    "down": (0.0, 0.0, -1.0),
    "forward": (0.0, 1.0, 0.0),
    "backward": (0.0, -1.0, 0.0),
}
"""`move_relative` directions as unit vectors in the base frame."""

TIER0_ARGS: Mapping[str, Mapping[str, tuple[str, bool]]] = {
    "move_to": {"at": ("pose", True), "above": ("distance", False), "speed": ("speed", False)},
    "move_relative": {"direction": ("direction", True), "distance": ("distance", True)},
    "gripper_set": {"width": ("width", True)},
    "wait": {"ms": ("number", False), "seconds": ("number", False)},
    "set_speed": {"speed": ("speed", True)},
    "tool_attach": {"tool": ("tool", True)},
    "tool_detach": {},
    "call_routine": {"routine": ("routine", True)},
}
"""Tier-0 primitive names usable in step programs: argument -> (expression kind, required).
`move_to` also takes `linear = true|false`; `wait` needs exactly one of `ms` and `seconds`."""


@dataclass(frozen=True)
class ParamSpec:
    """One typed parameter of a composite."""

    name: str
    """The key in the sequence step's `params`."""
    type: str
    """One of PARAM_TYPES."""
    description: str
    """What the parameter means (shown to the language model)."""
    default: str | float | None = None
    """The value when omitted; None makes the parameter required."""


@dataclass(frozen=True)
class OpStep:
    """Run one tier-0 primitive."""

    op: str
    """A key of TIER0_ARGS."""
    args: Mapping[str, Expr]
    """Argument name -> parsed expression."""
    linear: bool = True
    """For move_to: MoveL when true, MoveJ when false."""


@dataclass(frozen=True)
class CallStep:
    """Run another composite."""

    composite: str
    """The composite called."""
    args: Mapping[str, Expr]
    """Its parameters; omitted ones take their defaults."""


@dataclass(frozen=True)
class SetStep:
    """Change a logical scene field (only `active_zone` so far); no primitive is emitted."""

    target: str
    """The field set."""
    value: Expr
    """The new value."""


@dataclass(frozen=True)
class IfStep:
    """Run `then` when the condition holds at this point of the program, else `otherwise`."""

    cond: Expr
    """The condition."""
    then: tuple[Step, ...]
    """Steps when true."""
    otherwise: tuple[Step, ...] = ()
    """Steps when false."""


@dataclass(frozen=True)
class WhileStep:
    """Repeat `body` while the condition holds (bounded: see voiced.robot.compiler.MAX_LOOP)."""

    cond: Expr
    """The condition, re-evaluated before every round."""
    body: tuple[Step, ...]
    """The repeated steps."""


Step = OpStep | CallStep | SetStep | IfStep | WhileStep


@dataclass(frozen=True)
class Composite:
    """A named, parameterised step program: the unit the language model calls."""

    name: str
    """The instruction name in sequences."""
    description: str
    """What it does (shown to the language model)."""
    params: tuple[ParamSpec, ...]
    """Its parameters in declaration order."""
    requires: tuple[Expr, ...]
    """Conditions checked against the scene before expanding; each failure is explained."""
    steps: tuple[Step, ...]
    """The program."""
    tier: int = 1
    """1 from the cell file, 2 when learned at runtime."""
    internal: bool = False
    """A helper only other composites may call; hidden from sequences and the model."""
    confirm: bool = False
    """Destructive or surprising: the operator is asked yes/no before it runs."""
    say: str = ""
    """How a plan step is read back, with {param} placeholders ("tack weld at {position}");
    empty: the name and the values."""

    def param(self, name: str) -> ParamSpec | None:
        return next((p for p in self.params if p.name == name), None)
