"""Reading the `[initial]` table of a cell file: the scene the cell starts in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voiced.robot.cell import Cell, ValueProblem
from voiced.robot.primitives import Pose
from voiced.robot.scene import Scene
from voiced.robot.tomlcheck import Problems, join, table

from voiced.errors import unknown_name

INITIAL_FIELDS = {
    "pose": "str",
    "gripper": "value",
    "speed": "value",
    "active_zone": "str",
    "tool": "str",
    "holding": "str",
    "stacks": "table",
    "supplies": "table",
}


def read_initial(problems: Problems, data: object, cell: Cell) -> Scene:
    """The scene a cell file's `[initial]` table describes, checked against `cell`."""
    good = table(problems, data or {}, "initial", INITIAL_FIELDS, ("pose",))
    stacks = _initial_stacks(problems, good, cell)
    pose_name = good.get("pose")
    pose = Pose(0.0, 0.0, 0.0)
    if pose_name is not None and pose_name not in cell.poses:
        problems.add_value(
            "initial.pose", "position", unknown_name("pose", pose_name, list(cell.poses))
        )
    elif pose_name is not None:
        pose = cell.poses[pose_name].pose
    values: dict[str, Any] = {}
    for key, kind in (
        ("gripper", "width"),
        ("speed", "speed"),
        ("active_zone", "zone"),
        ("tool", "tool"),
        ("holding", "object"),
    ):
        if key in good:
            try:
                values[key] = cell.resolve(kind, good[key])
            except ValueProblem as problem:
                problems.add_value(join("initial", key), kind, problem.message)
    gripper = values.get("gripper", cell.limits.gripper_max)
    if "holding" in values:
        gripper = cell.limits.gripper_min
    return Scene(
        stacks=stacks,
        pose=pose,
        gripper=float(gripper),
        holding=values.get("holding"),
        tool=values.get("tool"),
        speed=float(values.get("speed", cell.motion.speeds.get(cell.motion.default_speed, 100.0))),
        active_zone=values.get("active_zone", cell.default_zone),
    )


def _initial_stacks(
    problems: Problems, good: Mapping[str, Any], cell: Cell
) -> dict[str, tuple[str, ...]]:
    stacks: dict[str, tuple[str, ...]] = {name: () for name in cell.sites}
    for site, objects in good.get("stacks", {}).items():
        path = join("initial.stacks", site)
        if site not in cell.sites:
            problems.add_value(path, "site", unknown_name("site", site, list(cell.sites)))
        elif not isinstance(objects, list) or not all(o in cell.objects for o in objects):
            problems.add_value(
                path, "object", f"expected an array of objects ({', '.join(cell.objects)})"
            )
        else:
            stacks[site] = tuple(objects)
    for item, count in good.get("supplies", {}).items():
        path = join("initial.supplies", item)
        spec = cell.objects.get(item)
        if spec is not None and problems.at(join(join("objects", item), "supply")):
            continue  # its supply is misspelt: said once, there
        if spec is None or spec.supply is None:
            problems.add_value(path, "item", unknown_name("item", item, list(cell.items())))
        elif not isinstance(count, int) or isinstance(count, bool) or count < 0:
            problems.add(path, "expected a count (an integer, 0 or more)")
        elif stacks[spec.supply]:
            problems.add(path, f"{spec.supply} is also given in initial.stacks")
        else:
            stacks[spec.supply] = (item,) * count
    _check_stacks(problems, stacks, good.get("holding"), cell)
    return stacks


def _check_stacks(
    problems: Problems, stacks: Mapping[str, tuple[str, ...]], holding: object, cell: Cell
) -> None:
    for site, objects in stacks.items():
        spec = cell.sites[site]
        if spec.capacity is not None and len(objects) > spec.capacity:
            problems.add(join("initial.stacks", site), f"holds at most {spec.capacity} objects")
        if objects and not all(stacks.get(s) for s in spec.supports):
            problems.add(
                join("initial.stacks", site), f"needs {', '.join(spec.supports)} occupied first"
            )
    placed = [o for objects in stacks.values() for o in objects]
    if isinstance(holding, str):
        placed.append(holding)
    for name, obj in cell.objects.items():
        if obj.supply is None and placed.count(name) > 1:
            problems.add("initial", f"{name} is in more than one place (it is a unique object)")
