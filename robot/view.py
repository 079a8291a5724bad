"""The cell's state in its own vocabulary, and back.

`state_view` reports the keys a cell declares (`[cell] state_view`) the way operators and the
language model talk about that cell: zones and the held item for the sandwich cell, position,
tool and routine log for the weld cell, arrangement, scattered objects and buffers for the blocks
cell. `scene_from_view` is its inverse and also reads `--scene` files: keys left out keep the
cell's initial values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from voiced.robot import arrangement, physics
from voiced.robot.cell import Cell, ValueProblem
from voiced.robot.primitives import Pose
from voiced.robot.scene import RoutineRun, Scene
from voiced.robot.tomlcheck import Problems, join, type_name

from voiced.errors import CellError, Problem, describe


def state_view(cell: Cell, scene: Scene) -> dict[str, Any]:
    """The scene as the cell's vocabulary: exactly the keys in `cell.state_view`."""
    return {key: _GETTERS[key](cell, scene) for key in cell.state_view}


def world(cell: Cell, scene: Scene) -> dict[str, Any]:
    """What is physically there, whatever the cell's view: every zone's stack (as `final_state`
    shows zones), the held object, what was let go away from any place, the pose and the
    gripper opening. The simulator writes it on exit (`voiced sim --world-out`)."""
    p = scene.pose
    return {
        "zones": _GETTERS["zones"](cell, scene),
        "holding": scene.holding,
        "dropped": list(scene.dropped),
        "pose": {"x": p.x, "y": p.y, "z": p.z, "q": list(p.q)},
        "gripper_mm": scene.gripper,
        "tool": scene.tool,
        "stacks": {site: list(objects) for site, objects in scene.stacks.items()},
    }


def _stack(scene: Scene, site: str) -> tuple[str, ...]:
    return tuple(scene.stacks.get(site, ()))


def _supplies(cell: Cell, scene: Scene) -> dict[str, int]:
    return {
        item: _stack(scene, cell.objects[item].supply or "").count(item) for item in cell.items()
    }


def _buffers(cell: Cell, scene: Scene) -> dict[str, str | None]:
    return {b: (_stack(scene, b) or (None,))[-1] for b in cell.sites_of_kind("buffer")}


_GETTERS: Mapping[str, Callable[[Cell, Scene], Any]] = {
    "zones": lambda cell, scene: {z: list(_stack(scene, z)) for z in cell.zones()},
    "supplies": _supplies,
    "active_zone": lambda cell, scene: scene.active_zone,
    "holding": lambda cell, scene: scene.holding,
    "position": lambda cell, scene: physics.position_name(cell, scene.pose),
    "tool": lambda cell, scene: scene.tool,
    "log": lambda cell, scene: [run.to_dict() for run in scene.log],
    "arrangement": lambda cell, scene: arrangement.describe(scene.stacks),
    "scattered": lambda cell, scene: [
        o for s in cell.sites_of_kind("scatter") for o in _stack(scene, s)
    ],
    "buffers": _buffers,
}


class _Builder:
    """A scene under construction from a view, with the problems found so far."""

    def __init__(self, cell: Cell, problems: Problems) -> None:
        start = cell.initial_scene
        self.cell = cell
        self.problems = problems
        self.stacks = {site: tuple(objects) for site, objects in start.stacks.items()}
        self.fields: dict[str, Any] = {}
        self.explicit_sites: set[str] = set()
        self.claims: dict[str, list[str]] = {}

    def name(self, kind: str, raw: object, path: str) -> str | None:
        try:
            return str(self.cell.resolve(kind, raw))
        except ValueProblem as problem:
            self.problems.add_value(path, kind, problem.message)
            return None

    def objects(self, kind: str, raw: object, path: str) -> list[str]:
        if not isinstance(raw, list):
            self.problems.add(path, f"expected an array of names, got {type_name(raw)}")
            return []
        found = [self.name(kind, value, f"{path}[{i}]") for i, value in enumerate(raw)]
        return [f for f in found if f is not None]

    def put(self, site: str, objects: list[str], path: str) -> None:
        self.stacks[site] = tuple(objects)
        self.explicit_sites.add(site)
        for obj in objects:
            self.claim(obj, path)

    def claim(self, obj: str, path: str) -> None:
        """Note where a unique object was placed; it may be placed as often as the cell has
        alike ones (`count`, usually once)."""
        spec = self.cell.objects[obj]
        if spec.supply is not None:
            return
        claims = self.claims.setdefault(obj, [])
        if len(claims) >= spec.count:
            more = "" if spec.count == 1 else f" (the cell has at most {spec.count})"
            self.problems.add(path, f"{obj} is also at {', '.join(claims)}{more}")
        claims.append(path)

    def scene(self) -> Scene:
        # A unique object placed by the view leaves wherever the initial scene had it.
        for site, objects in self.stacks.items():
            if site not in self.explicit_sites:
                self.stacks[site] = tuple(o for o in objects if o not in self.claims)
        start = self.cell.initial_scene
        if "holding" not in self.fields and start.holding in self.claims:
            self.fields["holding"] = None
            self.fields["gripper"] = self.cell.limits.gripper_max
        return start.with_changes(stacks=self.stacks, **self.fields)


def scene_from_view(cell: Cell, view: object, source: str) -> Scene:
    """The scene a state view describes, starting from the cell's initial scene (keys left out
    keep their initial values). Raises CellError naming `source` and the path of each problem."""
    problems = Problems(source)
    if not isinstance(view, Mapping):
        raise CellError([Problem(source, "", f"expected an object, got {type_name(view)}")])
    builder = _Builder(cell, problems)
    for key, value in view.items():
        setter = _SETTERS.get(str(key))
        if setter is None:
            problems.add(str(key), f"unknown key '{key}' (expected one of {', '.join(_SETTERS)})")
        else:
            setter(builder, value, str(key))
    scene = builder.scene()
    problems.raise_if_any()
    return scene


def load_scene_file(cell: Cell, path: str | Path) -> Scene:
    """The scene in a JSON file written in the cell's view schema (`--scene PATH`); keys left out
    keep the cell's initial values. Raises CellError naming the file and the path inside it."""
    source = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise CellError(
            [Problem(source, "", f"cannot read the scene file: {error.strerror}")]
        ) from None
    except UnicodeDecodeError as error:
        raise CellError([Problem(source, "", f"{describe(error)}: a scene is JSON text")]) from None
    except json.JSONDecodeError as error:
        message = f"JSON syntax error at line {error.lineno}, column {error.colno}: {error.msg}"
        raise CellError([Problem(source, "", message)]) from None
    return scene_from_view(cell, data, source)


def _set_zones(builder: _Builder, value: object, path: str) -> None:
    if not isinstance(value, Mapping):
        builder.problems.add(path, f"expected an object of zone -> items, got {type_name(value)}")
        return
    for key, items in value.items():
        zone = builder.name("zone", key, join(path, str(key)))
        objects = builder.objects("object", items, join(path, str(key)))
        if zone is not None:
            builder.put(zone, objects, join(path, str(key)))


def _set_supplies(builder: _Builder, value: object, path: str) -> None:
    if not isinstance(value, Mapping):
        builder.problems.add(path, f"expected an object of item -> count, got {type_name(value)}")
        return
    for key, count in value.items():
        where = join(path, str(key))
        item = builder.name("item", key, where)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            builder.problems.add(where, f"expected a count (0 or more), got {count!r}")
        elif item is not None:
            builder.put(builder.cell.objects[item].supply or "", [item] * count, where)


def _set_active_zone(builder: _Builder, value: object, path: str) -> None:
    if value is None and not builder.cell.zones():
        builder.fields["active_zone"] = None
        return
    zone = builder.name("zone", value, path)
    if zone is not None:
        builder.fields["active_zone"] = zone


def _set_holding(builder: _Builder, value: object, path: str) -> None:
    limits = builder.cell.limits
    if value is None:
        builder.fields.update(holding=None, gripper=limits.gripper_max)
        return
    obj = builder.name("object", value, path)
    if obj is not None:
        builder.claim(obj, path)
        builder.fields.update(holding=obj, gripper=limits.gripper_min)


def _set_position(builder: _Builder, value: object, path: str) -> None:
    cell = builder.cell
    if value is not None:
        name = builder.name("position", value, path)
        if name is not None:
            builder.fields["pose"] = cell.poses[name].pose
        return
    start = cell.initial_scene.pose
    # "At no named position": nudge the start pose off any named pose, staying inside the cell.
    for dz in (0.0, 25.0, -25.0, 50.0, -50.0):
        pose = start.offset(dz=dz)
        if physics.position_name(cell, pose) is None and _in_workspace(cell, pose):
            builder.fields["pose"] = pose
            return
    builder.problems.add(path, "cannot find a pose away from every named position")


def _in_workspace(cell: Cell, pose: Pose) -> bool:
    low, high = cell.limits.workspace_min, cell.limits.workspace_max
    values = (pose.x, pose.y, pose.z)
    return all(lo <= v <= hi for v, lo, hi in zip(values, low, high, strict=True))


def _set_tool(builder: _Builder, value: object, path: str) -> None:
    if value is None:
        builder.fields["tool"] = None
        return
    tool = builder.name("tool", value, path)
    if tool is not None:
        builder.fields["tool"] = tool


def _set_log(builder: _Builder, value: object, path: str) -> None:
    if not isinstance(value, list):
        builder.problems.add(path, f"expected an array of routine runs, got {type_name(value)}")
        return
    runs: list[RoutineRun] = []
    for index, entry in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(entry, Mapping) or set(entry) - {"routine", "position"}:
            builder.problems.add(where, 'expected {"routine": name, "position": name or null}')
            continue
        routine = builder.name("routine", entry.get("routine"), join(where, "routine"))
        position = entry.get("position")
        if position is not None:
            position = builder.name("position", position, join(where, "position"))
        if routine is not None:
            runs.append(RoutineRun(routine, position))
    builder.fields["log"] = tuple(runs)


def _set_arrangement(builder: _Builder, value: object, path: str) -> None:
    if not isinstance(value, Mapping) or set(value) - {"relationship", "placements"}:
        builder.problems.add(path, 'expected {"relationship": ..., "placements": [...]}')
        return
    relationship = value.get("relationship", "none")
    placements = value.get("placements", [])
    if not isinstance(placements, list) or not all(isinstance(p, Mapping) for p in placements):
        builder.problems.add(join(path, "placements"), "expected an array of objects")
        return
    try:
        stacks = arrangement.sites_for(str(relationship), placements)
    except arrangement.ArrangementError as error:
        builder.problems.add(path, str(error))
        return
    for site, objects in stacks.items():
        where = join(path, "placements")
        builder.put(site, builder.objects("object", list(objects), where), where)


def _set_scattered(builder: _Builder, value: object, path: str) -> None:
    if isinstance(value, list):
        # The seed's legacy form lists {"object": name} entries; plain names are accepted too.
        value = [v.get("object") if isinstance(v, Mapping) else v for v in value]
    objects = builder.objects("object", value, path)
    sites = builder.cell.sites_of_kind("scatter")
    if len(objects) > len(sites):
        builder.problems.add(path, f"only {len(sites)} scatter sites ({', '.join(sites)})")
        return
    for index, site in enumerate(sites):
        builder.put(site, objects[index : index + 1], path)


def _set_buffers(builder: _Builder, value: object, path: str) -> None:
    if not isinstance(value, Mapping):
        builder.problems.add(path, f"expected an object of slot -> object, got {type_name(value)}")
        return
    buffers = builder.cell.sites_of_kind("buffer")
    for key, obj in value.items():
        where = join(path, str(key))
        if key not in buffers:
            builder.problems.add(where, f"unknown buffer slot '{key}' ({', '.join(buffers)})")
            continue
        found = [] if obj is None else [builder.name("object", obj, where)]
        builder.put(str(key), [f for f in found if f is not None], where)


_SETTERS: Mapping[str, Callable[[_Builder, object, str], None]] = {
    "zones": _set_zones,
    "supplies": _set_supplies,
    "active_zone": _set_active_zone,
    "holding": _set_holding,
    "position": _set_position,
    "tool": _set_tool,
    "log": _set_log,
    "arrangement": _set_arrangement,
    "scattered": _set_scattered,
    "buffers": _set_buffers,
}
