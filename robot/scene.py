"""Scene state: what is where in the cell. Pure, immutable and serialisable.

A scene is changed only by applying primitives to it (`robot.physics.apply`), by the compiler when
it predicts the outcome of a program, by the simulator while it executes one, and by the executor
as DONE replies arrive. `active_zone` is the one purely logical field: a composite sets it, nothing
moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from voiced.robot.primitives import Pose


@dataclass(frozen=True)
class RoutineRun:
    """One routine that ran: its name and the named position the arm was at (None if at none)."""

    routine: str
    position: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"routine": self.routine, "position": self.position}


@dataclass(frozen=True)
class Scene:
    """The whole cell state. Never mutate: derive a new one with `with_changes`."""

    stacks: Mapping[str, tuple[str, ...]]
    """Site name -> objects on it, bottom to top. Every site of the cell has an entry."""
    pose: Pose
    """Where the tool centre point is."""
    gripper: float = 0.0
    """Gripper opening in millimetres."""
    holding: str | None = None
    """The object in the gripper, if any."""
    tool: str | None = None
    """The tool on the flange, if any."""
    speed: float = 100.0
    """The default speed for moves, mm/s."""
    active_zone: str | None = None
    """The zone `add_layer` builds on (sandwich cell); None where the cell has no zones."""
    log: tuple[RoutineRun, ...] = ()
    """Routines run so far, in order."""
    dropped: tuple[str, ...] = field(default=())
    """Objects let go of away from any site (only a faulty program does this)."""

    def with_changes(self, **changes: Any) -> Scene:
        # Neither dataclasses.replace nor __init__: the compiler derives a scene per primitive,
        # and replace's introspection, then the frozen __init__'s object.__setattr__ per field,
        # were most of its cost. The fields are plain instance attributes (no slots, no
        # __post_init__, no init=False fields), so the new scene gets a merged copy of __dict__;
        # unchanged values (the stacks mapping among them) are shared, as they always were.
        if not changes.keys() <= _FIELDS:
            unknown = ", ".join(sorted(changes.keys() - _FIELDS))
            raise TypeError(f"Scene has no field {unknown}")
        scene = _new_object(Scene)
        _set_attribute(scene, "__dict__", self.__dict__ | changes)
        return scene

    def with_stack(self, site: str, objects: tuple[str, ...]) -> Scene:
        stacks = dict(self.stacks)
        stacks[site] = objects
        return self.with_changes(stacks=stacks)

    def site_of(self, obj: str) -> str | None:
        """The site an object stands on, or None (held, dropped or absent)."""
        for site, objects in self.stacks.items():
            if obj in objects:
                return site
        return None

    def to_dict(self) -> dict[str, Any]:
        """The full internal form, for persistence (see `from_dict`)."""
        p = self.pose
        return {
            "stacks": {site: list(objs) for site, objs in self.stacks.items()},
            "pose": {"x": p.x, "y": p.y, "z": p.z, "q": list(p.q)},
            "gripper": self.gripper,
            "holding": self.holding,
            "tool": self.tool,
            "speed": self.speed,
            "active_zone": self.active_zone,
            "log": [run.to_dict() for run in self.log],
            "dropped": list(self.dropped),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scene:
        """Inverse of `to_dict`. Raises KeyError/TypeError/ValueError on malformed input;
        `voiced.robot.cell` wraps these into a CellError that names the file."""
        pose = data["pose"]
        q = tuple(float(v) for v in pose.get("q", (0.0, 1.0, 0.0, 0.0)))
        if len(q) != 4:
            raise ValueError("pose.q must have four numbers")
        quat = (q[0], q[1], q[2], q[3])
        return cls(
            stacks={str(s): tuple(str(o) for o in objs) for s, objs in data["stacks"].items()},
            pose=Pose(float(pose["x"]), float(pose["y"]), float(pose["z"]), quat),
            gripper=float(data.get("gripper", 0.0)),
            holding=data.get("holding"),
            tool=data.get("tool"),
            speed=float(data.get("speed", 100.0)),
            active_zone=data.get("active_zone"),
            log=tuple(RoutineRun(r["routine"], r.get("position")) for r in data.get("log", ())),
            dropped=tuple(data.get("dropped", ())),
        )


_FIELDS = frozenset(f.name for f in fields(Scene))
_new_object = object.__new__
_set_attribute = object.__setattr__
