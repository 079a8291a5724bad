"""Spoken speed changes: "go a bit slower", "slow down", "faster please", "half speed", "full
speed", "normal speed" -> one `set_speed` step of the cell.

Relative changes move between the cell's speed profiles ([motion] speeds): "slower" from
normal is slow, "faster" from slow is normal. "Half speed" halves the speed the arm goes at, so
it always slows the arm down (after "slow down" it is half of slow, not half of the fastest).
They start from the speed the arm will have when the step runs (the planned scene), so
"slower, slower" said quickly goes down twice.

A speed change is a step like any other: it runs after what is already moving or queued (the
controller takes a new speed between moves, never in the middle of one). The operator hears
that when the arm is busy, and can pause first to have the rest of the work continue at the new
speed (see voiced/commands/pausing.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voiced.robot.cell import Cell
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.rules.normalize import normalize

_CHANGES = (
    ("slower", re.compile(r"\b(?:slower|slow (?:it |things )?down|more slowly|less fast)\b")),
    ("faster", re.compile(r"\b(?:faster|speed (?:it |things )?up|more quickly|quicker)\b")),
    ("half", re.compile(r"\bhalf (?:the )?speed\b")),
    ("full", re.compile(r"\b(?:full|top|maximum|max) speed\b|\bas fast as (?:you can|possible)\b")),
    ("normal", re.compile(r"\b(?:normal|regular|usual|default) speed\b")),
)
_FILLER = re.compile(
    r"\b(?:please|can you|could you|would you|now|go|move|run|a bit|a little|a lot|slightly|"
    r"much|little|bit|even|the robot|the arm|it|a|at|back to|to|ok|okay|computer|thanks|and|"
    r"just|bit of)\b"
)
SPEED_STEP = "set_speed"


@dataclass(frozen=True)
class SpeedChange:
    """What a speed phrase asks for, worked out against the cell and the planned speed."""

    step: SequenceStep | None
    """The set_speed step, or None when there is no faster or slower profile."""
    said: str
    """What the operator hears: the new speed, or why it stays."""


def speed_change(cell: Cell, text: str, planned: Scene) -> SpeedChange | None:
    """The speed change `text` asks for (None: `text` is not only a speed change)."""
    said = normalize(text)
    for change, pattern in _CHANGES:
        found = pattern.search(said)
        if found is None:
            continue
        rest = _FILLER.sub(" ", said[: found.start()] + " " + said[found.end() :])
        if rest.strip() or cell.composite(SPEED_STEP) is None:
            return None
        return _worked_out(cell, change, planned.speed)
    return None


def is_speed_change(text: str) -> bool:
    """Whether `text` is a whole speed phrase (whatever the cell makes of it)."""
    said = normalize(text)
    for _, pattern in _CHANGES:
        found = pattern.search(said)
        if found is not None:
            rest = _FILLER.sub(" ", said[: found.start()] + " " + said[found.end() :])
            return not rest.strip()
    return False


def _worked_out(cell: Cell, change: str, current: float) -> SpeedChange:
    profiles = sorted(cell.motion.speeds.items(), key=lambda item: item[1])
    fastest = min(profiles[-1][1], cell.limits.max_speed) if profiles else cell.limits.max_speed
    if change == "slower":
        lower = [p for p in profiles if p[1] < current - 1]
        if not lower:
            return SpeedChange(None, f"I am already at the slowest speed, {current:.0f} mm/s.")
        return _to(lower[-1][0], lower[-1][1])
    if change == "faster":
        higher = [p for p in profiles if current + 1 < p[1] <= cell.limits.max_speed]
        if not higher:
            return SpeedChange(None, f"I am already at full speed, {current:.0f} mm/s.")
        return _to(higher[0][0], higher[0][1])
    if change == "normal":
        name = cell.motion.default_speed
        return _to(name, cell.motion.speeds.get(name, current))
    target = min(current, fastest) / 2 if change == "half" else fastest
    named = [name for name, mm_s in profiles if abs(mm_s - target) < 1]
    return _to(named[0] if named else f"{target:.0f}", target)


def _to(value: str, mm_s: float) -> SpeedChange:
    """To a named profile ("Speed slow, 100 mm/s.") or a speed of its own ("Speed 125 mm/s.")."""
    if value.replace(".", "").isdigit():
        return SpeedChange(SequenceStep(SPEED_STEP, {"speed": mm_s}), f"Speed {mm_s:.0f} mm/s.")
    return SpeedChange(
        SequenceStep(SPEED_STEP, {"speed": value}), f"Speed {value}, {mm_s:.0f} mm/s."
    )
