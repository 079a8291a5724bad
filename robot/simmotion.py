"""The simulator's timing model: how long each primitive takes and where a move is part-way.

Moves follow a trapezoidal speed profile (accelerate at `accel`, cruise at the line's speed,
decelerate), or a triangle when the distance is too short to reach that speed. The path is the
straight line for MOVEL and, as a simplification, for MOVEJ too (a real joint move curves).
Everything here is pure; durations are in simulated seconds (the simulator scales them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from voiced.robot.primitives import (
    CallRoutine,
    Grip,
    MoveJ,
    MoveL,
    Pose,
    Primitive,
    Speed,
    ToolAttach,
    ToolDetach,
    Wait,
)

GRIP_S = 0.3
TOOL_CHANGE_S = 0.8
DEFAULT_ROUTINE_MS = 1000
"""For a routine the cell does not list (physics refuses those; a fake physics may not)."""


@dataclass(frozen=True)
class Profile:
    """A trapezoidal move of `distance` mm at up to `speed` mm/s with acceleration `accel`."""

    distance: float
    """Path length, mm."""
    speed: float
    """Cruise speed, mm/s (> 0)."""
    accel: float
    """Acceleration and deceleration, mm/s² (> 0)."""

    @property
    def ramp_s(self) -> float:
        """Time to reach the peak speed (cruise speed, or less for a short move)."""
        return min(self.speed / self.accel, math.sqrt(self.distance / self.accel))

    @property
    def duration(self) -> float:
        """Seconds from start to stop."""
        ramp = self.ramp_s
        ramp_distance = self.accel * ramp * ramp  # both ramps together
        cruise = (self.distance - ramp_distance) / self.speed if self.speed > 0 else 0.0
        return 2 * ramp + max(cruise, 0.0)

    def covered(self, t: float) -> float:
        """Distance covered after `t` seconds (clamped to 0..distance)."""
        ramp, total = self.ramp_s, self.duration
        if t <= 0 or self.distance <= 0:
            return 0.0
        if t >= total:
            return self.distance
        peak = self.accel * ramp
        if t <= ramp:
            return 0.5 * self.accel * t * t
        if t <= total - ramp:
            return 0.5 * self.accel * ramp * ramp + peak * (t - ramp)
        left = total - t
        return self.distance - 0.5 * self.accel * left * left

    def fraction(self, t: float) -> float:
        """Fraction of the path covered after `t` seconds, 0..1."""
        return 1.0 if self.distance <= 0 else self.covered(t) / self.distance


@dataclass(frozen=True)
class Motion:
    """A move in progress: where it started, where it goes, and when (event-loop time)."""

    start: Pose
    target: Pose
    profile: Profile
    started_at: float
    """Event-loop time at the start."""
    time_scale: float
    """Real seconds per simulated second."""

    def pose_at(self, now: float) -> Pose:
        """Where the tool centre point is at event-loop time `now`."""
        elapsed = (now - self.started_at) / self.time_scale
        return self.start.lerp(self.target, self.profile.fraction(elapsed))

    @property
    def real_duration(self) -> float:
        return self.profile.duration * self.time_scale


def move_profile(start: Pose, primitive: MoveL | MoveJ, accel: float) -> Profile:
    return Profile(start.distance_to(primitive.target), primitive.speed, accel)


def dwell_seconds(primitive: Primitive, routine_ms: dict[str, int]) -> float:
    """Simulated seconds a non-motion primitive takes (0 for SPEED, which only sets a value)."""
    match primitive:
        case Grip():
            return GRIP_S
        case ToolAttach() | ToolDetach():
            return TOOL_CHANGE_S
        case CallRoutine(routine=name):
            return routine_ms.get(name, DEFAULT_ROUTINE_MS) / 1000.0
        case Wait(ms=ms):
            return ms / 1000.0
        case Speed() | MoveL() | MoveJ():
            return 0.0
