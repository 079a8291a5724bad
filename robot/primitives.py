"""Tier-0 primitives: the only things a controller is ever asked to do.

The compiler lowers every composite into a tuple of these; the wire protocol formats each one as
one line; the simulator and the scene model give each one its physical effect. Relative moves are
resolved to absolute targets by the compiler, so the controller only ever sees absolute poses and a
re-sent line always means the same motion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DOWN: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 0.0)
"""ABB quaternion (q1..q4) for a tool pointing straight down: the default orientation."""


@dataclass(frozen=True)
class Pose:
    """A tool-centre-point pose in the cell's base frame (millimetres, ABB quaternion)."""

    x: float
    y: float
    z: float
    q: tuple[float, float, float, float] = DOWN
    """Orientation as an ABB quaternion q1 (w), q2, q3, q4."""

    def distance_to(self, other: Pose) -> float:
        return math.dist((self.x, self.y, self.z), (other.x, other.y, other.z))

    def lerp(self, other: Pose, fraction: float) -> Pose:
        """The pose `fraction` (0..1) of the way to `other`, orientation taken from the target."""
        f = min(max(fraction, 0.0), 1.0)
        return Pose(
            self.x + (other.x - self.x) * f,
            self.y + (other.y - self.y) * f,
            self.z + (other.z - self.z) * f,
            other.q if f >= 1.0 else self.q,
        )

    def offset(self, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0) -> Pose:
        return Pose(self.x + dx, self.y + dy, self.z + dz, self.q)

    def rounded(self) -> Pose:
        """The pose as it travels on the wire (0.1 mm, 4-decimal quaternion)."""
        return Pose(
            round(self.x, 1),
            round(self.y, 1),
            round(self.z, 1),
            (round(self.q[0], 4), round(self.q[1], 4), round(self.q[2], 4), round(self.q[3], 4)),
        )


@dataclass(frozen=True)
class MoveL:
    """Linear move of the tool centre point to `target` at `speed` mm/s."""

    target: Pose
    speed: float


@dataclass(frozen=True)
class MoveJ:
    """Joint move to `target` at `speed` mm/s (the path between is not a straight line)."""

    target: Pose
    speed: float


@dataclass(frozen=True)
class Grip:
    """Set the gripper opening in millimetres (0 = fully closed)."""

    width: float


@dataclass(frozen=True)
class Wait:
    """Dwell for `ms` milliseconds."""

    ms: int


@dataclass(frozen=True)
class Speed:
    """Set the default speed (mm/s) for the moves that follow."""

    speed: float


@dataclass(frozen=True)
class ToolAttach:
    """Lock the tool standing at the current pose onto the flange."""

    tool: str


@dataclass(frozen=True)
class ToolDetach:
    """Release the tool on the flange into the stand at the current pose."""


@dataclass(frozen=True)
class CallRoutine:
    """Run a routine stored on the controller (e.g. `tack_weld`) at the current pose."""

    routine: str


Primitive = MoveL | MoveJ | Grip | Wait | Speed | ToolAttach | ToolDetach | CallRoutine
"""Everything a compiled program can contain."""

MOTIONS = (MoveL, MoveJ)


def describe(primitive: Primitive) -> str:
    """A short human-readable form for logs and traces."""
    match primitive:
        case MoveL(target=t, speed=v) | MoveJ(target=t, speed=v):
            kind = "move_l" if isinstance(primitive, MoveL) else "move_j"
            return f"{kind} ({t.x:.1f}, {t.y:.1f}, {t.z:.1f}) at {v:g} mm/s"
        case Grip(width=w):
            return f"gripper {w:g} mm"
        case Wait(ms=ms):
            return f"wait {ms} ms"
        case Speed(speed=v):
            return f"speed {v:g} mm/s"
        case ToolAttach(tool=name):
            return f"attach {name}"
        case ToolDetach():
            return "detach tool"
        case CallRoutine(routine=name):
            return f"run {name}"
