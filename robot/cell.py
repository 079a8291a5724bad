"""The cell model: what a robot cell contains and which instructions it understands.

Cells are data, not code. A cell file (TOML, see docs/CELLS.md) declares objects, sites, named
poses, tools, routines, motion parameters, limits, the composites the language model may call and
the initial scene; `robot.cellfile` reads and validates it into the frozen `Cell` below
(`load_cell`, `list_cells`). Everything here is immutable: learning a composite derives a new
`Cell` (`robot.cellsteps.with_learned`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from voiced.robot.primitives import Pose
from voiced.robot.program import (
    DIRECTIONS,
    PARAM_TYPES,
    TIER0_ARGS,
    CallStep,
    Composite,
    IfStep,
    OpStep,
    ParamSpec,
    SetStep,
    Step,
    WhileStep,
)
from voiced.robot.scene import Scene
from voiced.robot.sentencetypes import NO_SENTENCES, CellSentences
from voiced.rules.normalize import fold

__all__ = [
    "DIRECTIONS",
    "PARAM_TYPES",
    "POSE_ROLES",
    "SITE_KINDS",
    "TIER0_ARGS",
    "CallStep",
    "Cell",
    "Composite",
    "IfStep",
    "Limits",
    "MotionParams",
    "NamedPose",
    "ObjectSpec",
    "OpStep",
    "ParamSpec",
    "Routine",
    "SetStep",
    "Site",
    "Step",
    "Tool",
    "Value",
    "ValueProblem",
    "WhileStep",
    "norm",
]

Value = str | float
"""A resolved parameter value: a name (item, site, tool...) or a number (mm, mm/s, seconds)."""

SITE_KINDS = ("supply", "zone", "buffer", "arrangement", "scatter")
POSE_ROLES = ("home", "safe", "work", "other")


class ValueProblem(ValueError):
    """A word that does not name a value of the expected kind (unknown item, zone, speed...)."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        """Machine-readable kind of problem: unknown_item, unknown_zone, bad_value..."""
        self.message = message
        """Plain-English explanation naming what is available."""
        super().__init__(message)


def norm(word: str) -> str:
    """The comparison form of a spoken or written name: case, `_` and spacing do not matter."""
    return fold(word, breaks="_")


@dataclass(frozen=True)
class ObjectSpec:
    """Something the gripper can hold."""

    name: str
    """The object's name as spoken and shown (`bread`, `red cube`)."""
    height_mm: float
    """Height when lying on a stack."""
    width_mm: float
    """Width across the gripper jaws; closing below it grasps the object."""
    supply: str | None = None
    """The supply site it is taken from (countable items); None for unique objects."""
    count: int = 1
    """How many alike ones a scene may hold (two green cubes); they are interchangeable, and
    the name stands for any of them. Items (with a supply) are counted by their supply."""


@dataclass(frozen=True)
class Site:
    """A place on which objects stack."""

    name: str
    """The site's name (`supply_bread`, `assembly_left`, `B1`)."""
    kind: str
    """One of SITE_KINDS."""
    x: float
    """Base-frame x of the stack's axis, mm."""
    y: float
    """Base-frame y of the stack's axis, mm."""
    z: float
    """Height of the first object's bottom, mm (ignored when `supports` is set)."""
    capacity: int | None = None
    """Most objects the site holds; None means unlimited."""
    supports: tuple[str, ...] = ()
    """Sites that must be occupied first; the base is then the highest of their tops."""


@dataclass(frozen=True)
class NamedPose:
    """A taught pose with a name (`home`, `Pos_1`)."""

    name: str
    """The name the operator and the state view use."""
    pose: Pose
    """Where it is."""
    role: str
    """One of POSE_ROLES; `work` poses are what "all positions" means."""


@dataclass(frozen=True)
class Tool:
    """A tool that can be locked onto the flange."""

    name: str
    """The tool's name (`Welder`)."""
    stand: Pose
    """The flange pose at which the tool is attached and released."""
    description: str
    """What the tool does."""


@dataclass(frozen=True)
class Routine:
    """A routine stored on the controller."""

    name: str
    """The RAPID routine name (`tack_weld`)."""
    tool: str | None
    """The tool that must be on the flange, if any."""
    duration_ms: int
    """How long it runs (the simulator waits this long)."""
    description: str
    """What it does."""
    say: str = ""
    """How a read-back says it, as a verb phrase ("inspect with the camera"); empty: its
    name in words ("tack weld")."""


@dataclass(frozen=True)
class MotionParams:
    """Speeds and distances, with the spoken aliases for them."""

    speeds: Mapping[str, float]
    """Speed profile name -> mm/s (`slow`, `normal`, `fast`)."""
    default_speed: str
    """The profile the initial scene starts with."""
    distances: Mapping[str, float]
    """Distance alias -> mm (`a little`, `a bit`, `a lot`)."""
    approach_mm: float
    """How far above a pick, place or stand the arm approaches from (`approach` in steps)."""


GOFA_REACH_MM = 950.0
"""ABB GoFa CRB 15000: 950 mm from axis 1 to the wrist centre."""


@dataclass(frozen=True)
class Limits:
    """What the cell physically allows; the compiler refuses anything beyond."""

    workspace_min: tuple[float, float, float]
    """Lowest x, y, z a move may target, mm."""
    workspace_max: tuple[float, float, float]
    """Highest x, y, z a move may target, mm."""
    max_speed: float
    """Fastest allowed move, mm/s."""
    gripper_min: float
    """Gripper fully closed, mm (`closed`)."""
    gripper_max: float
    """Gripper fully open, mm (`open`)."""
    reach_mm: float = GOFA_REACH_MM
    """How far from the base axis the arm reaches, mm: no workspace bound lies beyond it."""


@dataclass(frozen=True)
class Cell:
    """A whole cell, as loaded from its file (plus any composites learned since)."""

    name: str
    """Short name (`sandwich`); the file stem for packaged cells."""
    description: str
    """One line for listings."""
    source: str
    """The file it was loaded from."""
    primitives: tuple[str, ...]
    """Tier-0 primitive names the cell's composites may use."""
    composites: Mapping[str, Composite]
    """Name -> composite, tier 1 then tier 2, in declaration order."""
    objects: Mapping[str, ObjectSpec]
    """Name -> object."""
    sites: Mapping[str, Site]
    """Name -> site."""
    poses: Mapping[str, NamedPose]
    """Name -> named pose."""
    tools: Mapping[str, Tool]
    """Name -> tool."""
    routines: Mapping[str, Routine]
    """Name -> routine."""
    motion: MotionParams
    """Speeds and distances."""
    limits: Limits
    """Workspace, speed and gripper limits."""
    zone_aliases: Mapping[str, str]
    """Spoken word -> zone site (`left` -> `assembly_left`)."""
    default_zone: str | None
    """The zone that is active at start; None when the cell has no zones."""
    state_view: tuple[str, ...]
    """The keys `voiced.robot.view.state_view` reports for this cell."""
    initial_scene: Scene
    """The scene at start-up."""
    travel_via: str | None = None
    """A named pose every move between different areas (home, work positions, tool stands)
    passes through, e.g. the weld cell's Safe_Pos_1; None where moves go straight."""
    sentences: CellSentences = NO_SENTENCES
    """The integrator's sentence templates (`[sentences]`); one with a problem is left out."""
    examples: tuple[str, ...] = ()
    """Commands as an operator of this cell says them (`[cell] examples`), for help and for
    what to try after a word the cell does not know ("a large cappuccino")."""

    def composite(self, name: str) -> Composite | None:
        """The composite a sequence may call by `name` (internal helpers excluded)."""
        found = self.composites.get(name)
        if found is None:
            found = self.composites.get(self._lookup["composite"].get(norm(name), ""))
        return None if found is None or found.internal else found

    def instructions(self) -> tuple[str, ...]:
        """Names a sequence may use, tier 1 then tier 2."""
        return tuple(c.name for c in self.composites.values() if not c.internal)

    def items(self) -> tuple[str, ...]:
        """Countable items, i.e. objects that come from a supply site."""
        return tuple(o.name for o in self.objects.values() if o.supply is not None)

    def zones(self) -> tuple[str, ...]:
        return self.sites_of_kind("zone")

    def sites_of_kind(self, kind: str) -> tuple[str, ...]:
        return tuple(s.name for s in self.sites.values() if s.kind == kind)

    def work_positions(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.poses.values() if p.role == "work")

    def home(self) -> NamedPose | None:
        return next((p for p in self.poses.values() if p.role == "home"), None)

    def resolve_zone(self, word: str) -> str:
        """The zone site a spoken word names (`left`, `over there`, `assembly_right`)."""
        key = norm(word)
        found = self._lookup["zone"].get(key)
        if found is None:
            raise ValueProblem("unknown_zone", f"unknown zone '{word}' ({self._zone_choices()})")
        return found

    def resolve_speed(self, value: object) -> float:
        """mm/s for a number, a numeric string (`300`, `300 mm/s`) or a profile (`slow`)."""
        return self._measure(value, self.motion.speeds, "mm/s", "speed")

    def resolve_distance(self, value: object) -> float:
        """mm for a number, a numeric string (`30`, `30 mm`) or an alias (`a little`)."""
        return self._measure(value, self.motion.distances, "mm", "distance")

    def resolve(self, kind: str, raw: object) -> Value:
        """The value a word (from a sequence or a cell file) stands for, as a parameter of
        type `kind` (a PARAM_TYPES entry or `width`). Raises ValueProblem."""
        if kind in ("distance", "speed", "number", "width"):
            return self._number(kind, raw)
        if not isinstance(raw, str):
            raise ValueProblem("bad_value", f"expected a {kind} name, got {_shown(raw)}")
        match kind:
            case "zone":
                return self.resolve_zone(raw)
            case "direction":
                if norm(raw) in DIRECTIONS:
                    return norm(raw)
                raise ValueProblem(
                    "bad_value", f"unknown direction '{raw}' (expected one of {_list(DIRECTIONS)})"
                )
            case "text":
                return raw
        return self._name(kind, raw)

    def resolve_literal(self, kind: str, word: str) -> Value:
        """`resolve` memoised, for the fixed words of step programs (a Cell never changes)."""
        key = (kind, word)
        cache = self._literals
        if key not in cache:
            cache[key] = self.resolve(kind, word)
        return cache[key]

    @cached_property
    def _literals(self) -> dict[tuple[str, str], Value]:
        return {}

    @cached_property
    def _lookup(self) -> dict[str, dict[str, str]]:
        """Comparison form -> canonical name, per kind of name."""
        zones = {norm(z): z for z in self.zones()}
        zones.update({norm(alias): zone for alias, zone in self.zone_aliases.items()})
        return {
            "item": {norm(n): n for n in self.items()},
            "object": {norm(n): n for n in self.objects},
            "site": {norm(n): n for n in self.sites},
            "position": {norm(n): n for n in self.poses},
            "tool": {norm(n): n for n in self.tools},
            "routine": {norm(n): n for n in self.routines},
            "composite": {norm(n): n for n in self.composites},
            "zone": zones,
        }

    def _name(self, kind: str, raw: str) -> str:
        table = self._lookup.get(kind)
        if table is None:
            raise ValueProblem("bad_value", f"'{raw}' is not a {kind}")
        found = table.get(norm(raw)) or table.get(_without_article(norm(raw)))
        if found is not None:
            return found
        if kind == "item" and norm(raw) in self._lookup["object"]:
            raise ValueProblem("unknown_item", f"{raw} has no supply in this cell")
        code = "unknown_item" if kind in ("item", "object") else f"unknown_{kind}"
        plural = "positions" if kind == "position" else kind + "s"
        shown = _list(table.values()) or "none"
        raise ValueProblem(code, f"I don't have {raw} — available {plural} are: {shown}")

    def _number(self, kind: str, raw: object) -> float:
        if kind == "speed":
            return self.resolve_speed(raw)
        if kind == "distance":
            return self.resolve_distance(raw)
        if kind == "width" and isinstance(raw, str) and norm(raw) in ("open", "closed"):
            return self.limits.gripper_max if norm(raw) == "open" else self.limits.gripper_min
        number = _as_number(raw, "")
        if number is None:
            allowed = "a number of mm, open or closed" if kind == "width" else "a number"
            raise ValueProblem("bad_value", f"expected {allowed}, got {_shown(raw)}")
        return number

    def _measure(self, value: object, names: Mapping[str, float], unit: str, what: str) -> float:
        number = _as_number(value, unit)
        if number is not None:
            return number
        if isinstance(value, str):
            for alias, amount in names.items():
                if norm(alias) == norm(value):
                    return amount
        raise ValueProblem(
            "bad_value",
            f"unknown {what} {_shown(value)} (expected a number in {unit} or one of "
            f"{_list(names)})",
        )

    def _zone_choices(self) -> str:
        zones = _list(self.zones()) or "this cell has no zones"
        aliases = _list(self.zone_aliases)
        return f"zones: {zones}" + (f"; also: {aliases}" if aliases else "")


ARTICLES = ("a ", "an ", "the ")
"""Words that may stand before a name: "a green cube" is the green cube (any of alike ones)."""


def _without_article(name: str) -> str:
    return next((name[len(a) :] for a in ARTICLES if name.startswith(a)), name)


def _as_number(value: object, unit: str) -> float | None:
    """A number, or a string holding one (optionally followed by `unit`); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if unit and text.endswith(unit):
        text = text[: -len(unit)].strip()
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _list(names: Any) -> str:
    return ", ".join(str(n) for n in names)


def _shown(value: object) -> str:
    return repr(value) if isinstance(value, str) else f"{type(value).__name__} {value!r}"
