"""Reading cell files: TOML in, a validated `Cell` out, every problem reported at once.

The format is documented in docs/CELLS.md. Reading goes section by section; each section reports
its problems and hands back what was usable, so that later checks (references, composites, the
initial scene) still run and the author sees everything wrong in one go.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from voiced.robot.arrangement import ARRANGEMENT_SITES
from voiced.robot.cell import (
    GOFA_REACH_MM,
    POSE_ROLES,
    SITE_KINDS,
    Cell,
    Limits,
    MotionParams,
    NamedPose,
    ObjectSpec,
    Routine,
    Site,
    Tool,
)
from voiced.robot.cellinit import read_initial
from voiced.robot.cellsteps import read_composites
from voiced.robot.primitives import DOWN, Pose
from voiced.robot.program import (
    TIER0_ARGS,
)
from voiced.robot.scene import Scene
from voiced.robot.sentences import read_sentences
from voiced.robot.tomlcheck import Problems, join, named_tables, table

from voiced.errors import CellError, Problem, describe, did_you_mean, unknown_name

VIEW_KEYS = (
    "zones",
    "supplies",
    "active_zone",
    "holding",
    "position",
    "tool",
    "log",
    "arrangement",
    "scattered",
    "buffers",
)
"""Keys a cell's state view may report (see voiced.robot.view)."""

TOP_FIELDS = {
    "cell": "table",
    "motion": "table",
    "limits": "table",
    "zone_aliases": "strings",
    "objects": "table",
    "sites": "table",
    "poses": "table",
    "tools": "table",
    "routines": "table",
    "composites": "table",
    "initial": "table",
    "sentences": "table",  # read apart (robot.sentences); listed for "did you mean sentences?"
}
CELL_FIELDS = {
    "name": "str",
    "description": "str",
    "primitives": "strs",
    "default_zone": "str",
    "state_view": "strs",
    "travel_via": "str",
    "examples": "strs",
}
MOTION_FIELDS = {
    "speeds": "numbers",
    "default_speed": "str",
    "distances": "numbers",
    "approach_mm": "number",
}
LIMIT_FIELDS = {
    "workspace_min": "xyz",
    "workspace_max": "xyz",
    "max_speed": "number",
    "gripper_min": "number",
    "gripper_max": "number",
    "reach_mm": "number",
}
OBJECT_FIELDS = {"height_mm": "number", "width_mm": "number", "supply": "str", "count": "int"}
SITE_FIELDS = {"kind": "str", "at": "xyz", "capacity": "int", "supports": "strs"}
POSE_FIELDS = {"at": "xyz", "q": "quat", "role": "str"}
TOOL_FIELDS = {"stand": "xyz", "q": "quat", "description": "str"}
ROUTINE_FIELDS = {"tool": "str", "duration_ms": "int", "description": "str", "say": "str"}

REACH_MAX_MM = 4000.0
"""The longest reach of any arm voiced may drive (IRB 6700 class), a sanity bound."""

_PLACEHOLDER = Scene(stacks={}, pose=Pose(0.0, 0.0, 0.0))


def cell_path(name_or_path: str | Path) -> Path:
    """The file a cell name or path refers to (packaged cells live in robot/cells/)."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text or text.endswith(".toml"):
        return Path(name_or_path)
    return Path(str(resources.files("voiced.robot").joinpath("cells", f"{text}.toml")))


def load_cell(name_or_path: str | Path) -> Cell:
    """Load a packaged cell by name (`sandwich`) or any cell file by path (anything with a `/`
    or ending `.toml`). Raises CellError listing every problem found."""
    path = cell_path(name_or_path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if path.parent == cell_path("x").parent and path.name == f"{name_or_path}.toml":
            raise CellError([_no_packaged_cell(str(name_or_path))]) from None
        raise CellError([Problem(source, "", "no such cell file")]) from None
    except OSError as error:
        raise CellError([Problem(source, "", f"cannot read: {error.strerror}")]) from None
    except UnicodeDecodeError as error:
        raise CellError(
            [Problem(source, "", f"{describe(error)}: a cell file is TOML text")]
        ) from None
    return parse_cell(text, source, default_name=path.stem)


def _no_packaged_cell(name: str) -> Problem:
    """A bundled cell's name mistyped: named as given (not as a path inside the package), with
    the names there are and the nearest one."""
    names = [n for n, _ in list_cells()]
    message = f"no such bundled cell (bundled: {', '.join(names)}){did_you_mean(name, names)}"
    return Problem(f"cell {name}", "", message)


def check_cell(name_or_path: str | Path) -> list[Problem]:
    """Everything wrong with a cell file, its sentence templates included ([] when none).
    `load_cell` refuses a cell with problems but loads one whose templates have some (without
    them); a check reports both."""
    try:
        cell = load_cell(name_or_path)
    except CellError as error:
        return list(error.problems)
    return list(cell.sentences.problems)


def parse_cell(text: str, source: str, default_name: str) -> Cell:
    """Validate the text of a cell file; `source` names it in problems."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CellError([Problem(source, "", f"TOML syntax error: {error}")]) from None
    # Templates never refuse the cell: read apart, after it (robot.sentences says why).
    templates = data.pop("sentences", None)
    problems = Problems(source)
    top = table(problems, data, "", TOP_FIELDS, ("cell", "motion", "limits", "initial"))
    header = table(
        problems, top.get("cell", {}), "cell", CELL_FIELDS, ("description", "state_view")
    )
    limits = _limits(problems, top.get("limits"))
    cell = Cell(
        name=header.get("name", default_name),
        description=header.get("description", ""),
        source=source,
        primitives=_primitives(problems, header.get("primitives", list(TIER0_ARGS))),
        composites={},
        objects={},
        sites=_sites(problems, top.get("sites"), limits),
        poses=_poses(problems, top.get("poses"), limits),
        tools=_tools(problems, top.get("tools"), limits),
        routines={},
        motion=_motion(problems, top.get("motion"), limits),
        limits=limits,
        zone_aliases=top.get("zone_aliases", {}),
        default_zone=None,
        state_view=_state_view(problems, header.get("state_view", [])),
        initial_scene=_PLACEHOLDER,
    )
    cell = _with_references(problems, cell, top, header)
    cell = replace(cell, composites=read_composites(problems, top.get("composites"), cell))
    cell = replace(cell, initial_scene=read_initial(problems, top.get("initial"), cell))
    problems.raise_if_any()
    return replace(cell, sentences=read_sentences(templates, cell, text))


def _primitives(problems: Problems, names: list[str]) -> tuple[str, ...]:
    for index, name in enumerate(names):
        if name not in TIER0_ARGS:
            problems.add(
                f"cell.primitives[{index}]",
                f"unknown primitive '{name}' (expected one of {', '.join(TIER0_ARGS)})",
            )
    return tuple(n for n in names if n in TIER0_ARGS)


def _state_view(problems: Problems, keys: list[str]) -> tuple[str, ...]:
    for index, key in enumerate(keys):
        if key not in VIEW_KEYS:
            problems.add(
                f"cell.state_view[{index}]",
                f"unknown state key '{key}' (expected one of {', '.join(VIEW_KEYS)})",
            )
    return tuple(k for k in keys if k in VIEW_KEYS)


def _limits(problems: Problems, data: object) -> Limits:
    required = tuple(k for k in LIMIT_FIELDS if k != "reach_mm")
    good = table(problems, data or {}, "limits", LIMIT_FIELDS, required)
    low = tuple(float(v) for v in good.get("workspace_min", (-1e9, -1e9, -1e9)))
    high = tuple(float(v) for v in good.get("workspace_max", (1e9, 1e9, 1e9)))
    if any(lo >= hi for lo, hi in zip(low, high, strict=True)):
        problems.add("limits.workspace_max", "must be above workspace_min on every axis")
    limits = Limits(
        workspace_min=(low[0], low[1], low[2]),
        workspace_max=(high[0], high[1], high[2]),
        max_speed=float(good.get("max_speed", 1e9)),
        gripper_min=float(good.get("gripper_min", 0.0)),
        gripper_max=float(good.get("gripper_max", 1e9)),
        reach_mm=float(good.get("reach_mm", GOFA_REACH_MM)),
    )
    if not 0 < limits.reach_mm <= REACH_MAX_MM:
        problems.add("limits.reach_mm", f"must be above 0 and at most {REACH_MAX_MM:g} mm")
    for key, bounds in (("workspace_min", low), ("workspace_max", high)):
        if key in good and any(abs(v) > limits.reach_mm for v in bounds):
            problems.add(
                f"limits.{key}",
                f"is beyond the arm's reach ({limits.reach_mm:g} mm, limits.reach_mm) on an axis",
            )
    if limits.max_speed <= 0:
        problems.add("limits.max_speed", "must be above 0")
    if limits.gripper_min >= limits.gripper_max:
        problems.add("limits.gripper_max", "must be above gripper_min")
    return limits


def _motion(problems: Problems, data: object, limits: Limits) -> MotionParams:
    good = table(problems, data or {}, "motion", MOTION_FIELDS, ("speeds", "default_speed"))
    speeds = {k: float(v) for k, v in good.get("speeds", {}).items()}
    for name, speed in speeds.items():
        if speed <= 0:
            problems.add(join("motion.speeds", name), "must be above 0")
        elif limits.max_speed > 0 and speed > limits.max_speed:
            # A max_speed that is itself wrong is reported once, at its own line, not again
            # at every speed measured against it.
            problems.add(
                join("motion.speeds", name),
                f"{speed:g} mm/s is above limits.max_speed ({limits.max_speed:g})",
            )
    distances = {k: float(v) for k, v in good.get("distances", {}).items()}
    for name, distance in distances.items():
        if distance <= 0:
            problems.add(join("motion.distances", name), "must be above 0")
    default = good.get("default_speed", "")
    if "default_speed" in good and default not in speeds:
        problems.add(
            "motion.default_speed", f"unknown speed '{default}' (speeds: {', '.join(speeds)})"
        )
    approach = float(good.get("approach_mm", 50.0))
    if approach <= 0:
        problems.add("motion.approach_mm", "must be above 0")
    return MotionParams(speeds, default, distances, approach)


def _pose(at: list[float], q: list[float] | None) -> Pose:
    quat = (q[0], q[1], q[2], q[3]) if q is not None else DOWN
    return Pose(float(at[0]), float(at[1]), float(at[2]), quat)


def _inside(problems: Problems, path: str, pose: Pose, limits: Limits) -> None:
    if problems.at(path):
        return  # not a position to begin with: said once, there
    for value, lo, hi in zip(
        (pose.x, pose.y, pose.z), limits.workspace_min, limits.workspace_max, strict=True
    ):
        if not lo <= value <= hi:
            problems.add(path, "is outside the workspace (limits.workspace_min/max)")
            return


def _sites(problems: Problems, data: object, limits: Limits) -> dict[str, Site]:
    sites: dict[str, Site] = {}
    for name, body in named_tables(problems, data, "sites").items():
        path = join("sites", name)
        good = table(problems, body, path, SITE_FIELDS, ("kind", "at"))
        kind = good.get("kind", "zone")
        if kind not in SITE_KINDS:
            problems.add(
                join(path, "kind"),
                f"unknown site kind '{kind}' (expected one of {', '.join(SITE_KINDS)})",
            )
        capacity = good.get("capacity")
        if capacity is not None and capacity < 1:
            problems.add(join(path, "capacity"), "must be at least 1")
        at = good.get("at", [0.0, 0.0, 0.0])
        _inside(problems, join(path, "at"), _pose(at, None), limits)
        sites[name] = Site(
            name,
            kind,
            float(at[0]),
            float(at[1]),
            float(at[2]),
            capacity,
            tuple(good.get("supports", ())),
        )
    for site in sites.values():
        for index, support in enumerate(site.supports):
            if support not in sites or support == site.name:
                problems.add(
                    f"{join(join('sites', site.name), 'supports')}[{index}]",
                    f"unknown site '{support}' (sites: {', '.join(sites)})",
                )
    return sites


def _poses(problems: Problems, data: object, limits: Limits) -> dict[str, NamedPose]:
    poses: dict[str, NamedPose] = {}
    for name, body in named_tables(problems, data, "poses").items():
        path = join("poses", name)
        good = table(problems, body, path, POSE_FIELDS, ("at", "role"))
        role = good.get("role", "other")
        if role not in POSE_ROLES:
            problems.add(
                join(path, "role"),
                f"unknown role '{role}' (expected one of {', '.join(POSE_ROLES)})",
            )
        pose = _pose(good.get("at", [0.0, 0.0, 0.0]), good.get("q"))
        if "at" in good:
            _inside(problems, join(path, "at"), pose, limits)
        poses[name] = NamedPose(name, pose, role)
    return poses


def _tools(problems: Problems, data: object, limits: Limits) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    for name, body in named_tables(problems, data, "tools").items():
        path = join("tools", name)
        good = table(problems, body, path, TOOL_FIELDS, ("stand", "description"))
        stand = _pose(good.get("stand", [0.0, 0.0, 0.0]), good.get("q"))
        if "stand" in good:
            _inside(problems, join(path, "stand"), stand, limits)
        tools[name] = Tool(name, stand, good.get("description", ""))
    return tools


def _with_references(
    problems: Problems, cell: Cell, top: Mapping[str, Any], header: Mapping[str, Any]
) -> Cell:
    """Objects, routines, aliases and the default zone: the parts that name other parts."""
    objects = _objects(problems, top.get("objects"), cell)
    routines = _routines(problems, top.get("routines"), cell)
    zones = [s.name for s in cell.sites.values() if s.kind == "zone"]
    for alias, zone in cell.zone_aliases.items():
        if zone not in zones:
            problems.add_value(
                join("zone_aliases", alias), "site", unknown_name("zone", zone, zones)
            )
    default_zone = header.get("default_zone", zones[0] if zones else None)
    if default_zone is not None and default_zone not in zones:
        problems.add_value("cell.default_zone", "site", unknown_name("zone", default_zone, zones))
    if "arrangement" in cell.state_view:
        missing = [s for s in ARRANGEMENT_SITES if cell.sites.get(s) is None]
        if missing:
            problems.add_value(
                "cell.state_view", "site", f"'arrangement' needs the sites {', '.join(missing)}"
            )
    travel_via = header.get("travel_via")
    if travel_via is not None and travel_via not in cell.poses:
        problems.add_value(
            "cell.travel_via", "position", unknown_name("pose", travel_via, list(cell.poses))
        )
    return replace(
        cell,
        objects=objects,
        routines=routines,
        default_zone=default_zone,
        travel_via=travel_via,
        examples=tuple(" ".join(e.split()) for e in header.get("examples", ()) if e.strip()),
    )


def _objects(problems: Problems, data: object, cell: Cell) -> dict[str, ObjectSpec]:
    objects: dict[str, ObjectSpec] = {}
    for name, body in named_tables(problems, data, "objects").items():
        path = join("objects", name)
        good = table(problems, body, path, OBJECT_FIELDS, ("height_mm", "width_mm"))
        height, width = float(good.get("height_mm", 1.0)), float(good.get("width_mm", 1.0))
        if height <= 0:
            problems.add(join(path, "height_mm"), "must be above 0")
        if not cell.limits.gripper_min < width < cell.limits.gripper_max:
            problems.add(
                join(path, "width_mm"),
                "must lie between limits.gripper_min and gripper_max "
                "(else the gripper cannot hold it)",
            )
        supply = good.get("supply")
        if supply is not None and problems.at(join(join("sites", supply), "kind")):
            # The site is there, its kind misspelt: said once, at the site.
            problems.covered.add(join(path, "supply"))
            supply = None
        elif supply is not None and getattr(cell.sites.get(supply), "kind", None) != "supply":
            supplies = list(cell.sites_of_kind("supply"))
            problems.add_value(
                join(path, "supply"), "site", unknown_name("supply site", supply, supplies)
            )
            supply = None
        count = int(good.get("count", 1))
        if count < 1:
            problems.add(join(path, "count"), "must be 1 or more")
        objects[name] = ObjectSpec(name, height, width, supply, max(count, 1))
    return objects


def _routines(problems: Problems, data: object, cell: Cell) -> dict[str, Routine]:
    routines: dict[str, Routine] = {}
    for name, body in named_tables(problems, data, "routines").items():
        path = join("routines", name)
        good = table(problems, body, path, ROUTINE_FIELDS, ("duration_ms", "description"))
        tool = good.get("tool")
        if tool is not None and tool not in cell.tools:
            problems.add_value(
                join(path, "tool"),
                "tool",
                f"unknown tool '{tool}' (tools: {', '.join(cell.tools) or 'none'})",
            )
        duration = good.get("duration_ms", 0)
        if duration < 0:
            problems.add(join(path, "duration_ms"), "must not be negative")
        routines[name] = Routine(
            name, tool, duration, good.get("description", ""), good.get("say", "")
        )  # fmt: skip
    return routines


def list_cells() -> list[tuple[str, str]]:
    """(name, description) of every cell file shipped in robot/cells/, sorted by name."""
    found: list[tuple[str, str]] = []
    folder = resources.files("voiced.robot").joinpath("cells")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        try:
            header = tomllib.loads(entry.read_text(encoding="utf-8")).get("cell", {})
            description = str(header.get("description", ""))
        except (tomllib.TOMLDecodeError, OSError) as error:
            description = f"(unreadable: {error})"
        found.append((entry.name[: -len(".toml")], description))
    return found
