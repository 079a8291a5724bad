"""What a primitive does to a scene: the one model of cause and effect, shared by the compiler
(to predict a program's outcome and refuse unsafe ones) and the simulator (to act it out).

Pure functions, no I/O. Geometry: a site is a vertical stack axis at (x, y); its first object's
bottom is at the site's z (or, for a site with `supports`, on the highest top among them). The
gripper grasps the top object when it closes below the object's width with the tool centre point
at the object's middle; it puts the held object on a site when it opens at the height where the
object's middle would be once resting on top. Letting go anywhere else drops the object.
"""

from __future__ import annotations

from voiced.robot.cell import Cell, Site
from voiced.robot.primitives import (
    MOTIONS,
    CallRoutine,
    Grip,
    Pose,
    Primitive,
    Speed,
    ToolAttach,
    ToolDetach,
)
from voiced.robot.scene import RoutineRun, Scene

from voiced.errors import VoicedError

SITE_XY_MM = 15.0
"""How close (horizontally) the tool centre point must be to a site's axis to act on it."""
GRASP_Z_MM = 10.0
"""How close (vertically) to the grasp or place height the tool centre point must be."""
STAND_XY_MM = 15.0
STAND_Z_MM = 10.0
POSITION_MM = 5.0
"""A pose within this distance of a named pose is "at" it."""


class PhysicsError(VoicedError):
    """A primitive the cell cannot perform (outside the workspace, too fast, wrong tool...)."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        """workspace, speed, gripper, support, tool or routine."""
        self.message = message
        """Plain-English explanation."""
        super().__init__(message)


def apply(cell: Cell, scene: Scene, primitive: Primitive) -> Scene:
    """The scene after `primitive`. Raises PhysicsError if the cell cannot do it; letting go of
    an object away from a site is not an error here (it lands in `scene.dropped`)."""
    # isinstance rather than `match` with class patterns: the compiler calls this per primitive
    # (and with a tuple: `MoveL | MoveJ` would build a union object on every call).
    if isinstance(primitive, MOTIONS):
        _check_speed(cell, primitive.speed)
        _check_workspace(cell, primitive.target)
        return scene.with_changes(pose=primitive.target)
    if isinstance(primitive, Grip):
        return _grip(cell, scene, primitive.width)
    if isinstance(primitive, Speed):
        _check_speed(cell, primitive.speed)
        return scene.with_changes(speed=primitive.speed)
    if isinstance(primitive, ToolAttach):
        return _attach(cell, scene, primitive.tool)
    if isinstance(primitive, ToolDetach):
        return _detach(cell, scene)
    if isinstance(primitive, CallRoutine):
        return _routine(cell, scene, primitive.routine)
    return scene  # Wait


def position_name(cell: Cell, pose: Pose) -> str | None:
    """The named pose within POSITION_MM of `pose`, if any (the nearest one)."""
    best: tuple[float, str] | None = None
    for named in cell.poses.values():
        distance = named.pose.distance_to(pose)
        if distance <= POSITION_MM and (best is None or distance < best[0]):
            best = (distance, named.name)
    return None if best is None else best[1]


def base_z(cell: Cell, scene: Scene, site: str) -> float:
    """Height of the bottom of the first object on `site`."""
    spec = cell.sites[site]
    if not spec.supports:
        return spec.z
    return max(top_z(cell, scene, s) for s in spec.supports)


def top_z(cell: Cell, scene: Scene, site: str) -> float:
    """Height of the top surface of `site`'s stack (its base when empty)."""
    objects = cell.objects
    # A list for sum rather than a generator (a frame resumed per object): a sandwich stack is
    # 15 high and the compiler asks three times per pick and per place. sum rather than a loop:
    # from Python 3.12 sum adds floats with compensation, and heights must not change with it.
    return base_z(cell, scene, site) + sum([objects[o].height_mm for o in scene.stacks[site]])


def grasp_pose(cell: Cell, scene: Scene, site: str) -> Pose | None:
    """Where to close the gripper on `site`'s top object; None when the site is empty."""
    stack = scene.stacks.get(site)
    if not stack:
        return None
    spec = cell.sites[site]
    return Pose(spec.x, spec.y, _grasp_z(cell, scene, site, stack[-1]))


def place_pose(cell: Cell, scene: Scene, site: str, obj: str) -> Pose:
    """Where to open the gripper so that `obj` ends up resting on top of `site`'s stack."""
    spec = cell.sites[site]
    return Pose(spec.x, spec.y, _place_z(cell, scene, site, obj))


def has_room(cell: Cell, scene: Scene, site: str) -> bool:
    """Whether one more object may go on `site` (capacity left, supports occupied)."""
    spec = cell.sites[site]
    if spec.capacity is not None and len(scene.stacks.get(site, ())) >= spec.capacity:
        return False
    return all(scene.stacks.get(s) for s in spec.supports)


def supported_by(cell: Cell, scene: Scene, site: str) -> list[str]:
    """Occupied sites that rest on `site` (taking from `site` would bring them down)."""
    return [
        other.name
        for other in cell.sites.values()
        if site in other.supports and scene.stacks.get(other.name)
    ]


def site_at(cell: Cell, pose: Pose) -> Site | None:
    """The site whose axis is nearest `pose` horizontally, if within SITE_XY_MM."""
    best: tuple[float, Site] | None = None
    x, y = pose.x, pose.y
    for spec in cell.sites.values():
        if abs(spec.x - x) > _SITE_BOX_MM or abs(spec.y - y) > _SITE_BOX_MM:
            continue  # clearly too far: skip the square root
        distance = ((spec.x - x) ** 2 + (spec.y - y) ** 2) ** 0.5
        if distance <= SITE_XY_MM and (best is None or distance < best[0]):
            best = (distance, spec)
    return None if best is None else best[1]


_SITE_BOX_MM = SITE_XY_MM + 1.0
"""Half the side of a square around a site's axis that holds its SITE_XY_MM circle with room to
spare, so that the cheap test never rejects what the exact one would accept."""


def _grasp_z(cell: Cell, scene: Scene, site: str, top: str) -> float:
    """The z of `grasp_pose` when `top` is the top object on `site`."""
    return top_z(cell, scene, site) - cell.objects[top].height_mm / 2


def _place_z(cell: Cell, scene: Scene, site: str, obj: str) -> float:
    """The z of `place_pose`."""
    return top_z(cell, scene, site) + cell.objects[obj].height_mm / 2


def _check_speed(cell: Cell, speed: float) -> None:
    if not 0 < speed <= cell.limits.max_speed:
        raise PhysicsError(
            "speed", f"speed {speed:g} mm/s is outside (0, {cell.limits.max_speed:g}] mm/s"
        )


def _check_workspace(cell: Cell, target: Pose) -> None:
    low, high = cell.limits.workspace_min, cell.limits.workspace_max
    x, y, z = target.x, target.y, target.z
    if low[0] <= x <= high[0] and low[1] <= y <= high[1] and low[2] <= z <= high[2]:
        return
    for axis, value, lo, hi in zip("xyz", (target.x, target.y, target.z), low, high, strict=True):
        if not lo <= value <= hi:
            raise PhysicsError(
                "workspace",
                f"target {axis} = {value:.1f} mm is outside the workspace ({lo:g} to {hi:g} mm)",
            )


def _grip(cell: Cell, scene: Scene, width: float) -> Scene:
    limits = cell.limits
    if not limits.gripper_min <= width <= limits.gripper_max:
        raise PhysicsError(
            "gripper",
            f"gripper width {width:g} mm is outside {limits.gripper_min:g} to "
            f"{limits.gripper_max:g} mm",
        )
    if scene.holding is None:
        return _maybe_grasp(cell, scene, width)
    if width > cell.objects[scene.holding].width_mm:
        return _release(cell, scene, width, scene.holding)
    return scene.with_changes(gripper=width)


def _maybe_grasp(cell: Cell, scene: Scene, width: float) -> Scene:
    site = site_at(cell, scene.pose)
    stack = scene.stacks.get(site.name, ()) if site is not None else ()
    if site is None or not stack:
        return scene.with_changes(gripper=width)
    top = cell.objects[stack[-1]]
    off_by = abs(scene.pose.z - _grasp_z(cell, scene, site.name, stack[-1]))
    if width >= top.width_mm or off_by > GRASP_Z_MM:
        return scene.with_changes(gripper=width)
    above = supported_by(cell, scene, site.name)
    if above:
        raise PhysicsError("support", f"{top.name} at {site.name} is holding up {', '.join(above)}")
    stacks = _restacked(scene, site.name, stack[:-1])
    return scene.with_changes(stacks=stacks, gripper=width, holding=top.name)


def _release(cell: Cell, scene: Scene, width: float, held: str) -> Scene:
    site = site_at(cell, scene.pose)
    if (
        site is not None
        and has_room(cell, scene, site.name)
        and abs(scene.pose.z - _place_z(cell, scene, site.name, held)) <= GRASP_Z_MM
    ):
        stacks = _restacked(scene, site.name, (*scene.stacks.get(site.name, ()), held))
        return scene.with_changes(stacks=stacks, gripper=width, holding=None)
    return scene.with_changes(gripper=width, holding=None, dropped=(*scene.dropped, held))


def _restacked(scene: Scene, site: str, objects: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """`scene.stacks` with `site`'s stack replaced (as `Scene.with_stack` does, minus the scene
    in between: grasping and releasing change the gripper in the same step)."""
    return {**scene.stacks, site: objects}


def _near(a: Pose, b: Pose) -> bool:
    horizontal = ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5
    return horizontal <= STAND_XY_MM and abs(a.z - b.z) <= STAND_Z_MM


def _attach(cell: Cell, scene: Scene, tool: str) -> Scene:
    spec = cell.tools.get(tool)
    if spec is None:
        raise PhysicsError("tool", f"there is no tool called {tool}")
    if scene.tool is not None:
        raise PhysicsError("tool", f"cannot attach the {tool}: the {scene.tool} is attached")
    if not _near(scene.pose, spec.stand):
        raise PhysicsError("tool", f"cannot attach the {tool}: the arm is not at its stand")
    return scene.with_changes(tool=tool)


def _detach(cell: Cell, scene: Scene) -> Scene:
    if scene.tool is None:
        raise PhysicsError("tool", "cannot release a tool: none is attached")
    spec = cell.tools.get(scene.tool)
    if spec is None or not _near(scene.pose, spec.stand):
        raise PhysicsError("tool", f"cannot release the {scene.tool}: not at its stand")
    return scene.with_changes(tool=None)


def _routine(cell: Cell, scene: Scene, routine: str) -> Scene:
    spec = cell.routines.get(routine)
    if spec is None:
        raise PhysicsError("routine", f"there is no routine called {routine}")
    if spec.tool is not None and scene.tool != spec.tool:
        have = f"the {scene.tool} is attached" if scene.tool else "no tool is attached"
        raise PhysicsError("routine", f"{routine} needs the {spec.tool} ({have})")
    run = RoutineRun(routine, position_name(cell, scene.pose))
    return scene.with_changes(log=(*scene.log, run))
