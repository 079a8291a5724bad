"""Seed 004's target and state formats, read into site stacks, with the seed's validation names.

Three inputs describe an arrangement: the seed's new format (`{"target_structure":
{"relationship", "placements"}}`, objects under `object` or `object 1..3`), its legacy form
(`relationship`, `stack`, `placements`, `scattered`) and the blocks cell's state view
(`arrangement`, `scattered`, `buffers`, `holding`). All become a `Layout`: a validated
`TargetStructure` (the arrangement as site stacks, via robot.arrangement) plus, for a state, what
is loose, buffered or held. Every problem in a payload is reported at once, each saying which
placement and what was expected. The plan-level check, `enforce_plan_consistency`, is
robot.rearrange.plan's: plans build on this module.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voiced.robot import arrangement
from voiced.robot.arrangement import (
    ARRANGEMENT_SITES,
    LAYOUTS,
    OBJECT_KEYS,
    SUPPORTED_RELATIONSHIPS,
)
from voiced.rules.normalize import fold

from voiced.errors import VoicedError

OBJECT_FIELDS = OBJECT_KEYS
"""The keys a placement may carry its object under (seed: `object`, `object 1`...)."""

BUFFER_SLOTS: Mapping[str, tuple[float, float, float]] = {
    "B1": (180.0, 300.0, 150.0),
    "B2": (280.0, 300.0, 150.0),
    "B3": (180.0, 340.0, 150.0),
}
"""The seed's predefined buffer slots (the blocks cell's B1-B3 sites stand at these)."""

DESCRIPTIVE_PREFIXES = ("correct", "wrong", "target", "current", "new", "old")
"""Words the seed forbids in front of an object name ("correct_blue_cube")."""

SINGLE = frozenset(r for r, layout in LAYOUTS.items() if layout[0][0] is None)
"""Relationships of one object without a position (stacked_left/middle/right)."""


class TargetError(VoicedError, ValueError):
    """A payload that is not a valid arrangement; `problems` lists every fault found."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        """Each fault, naming the placement and what was expected."""
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class Placement:
    """One object at one position of a relationship."""

    position: str | None
    """The position label (`bottom`, `bottom left`, a site name for `none`); None for the
    single-object relationships."""
    object: str
    """The pure object name (`blue cube`)."""


@dataclass(frozen=True)
class TargetStructure:
    """A validated arrangement: the relationship, its placements and the site stacks they mean."""

    relationship: str
    """One of SUPPORTED_RELATIONSHIPS."""
    placements: tuple[Placement, ...]
    """In the order given (bottom to top where they share a site)."""
    stacks: Mapping[str, tuple[str, ...]]
    """Every arrangement site -> its objects, bottom to top."""

    def objects(self) -> tuple[str, ...]:
        return tuple(p.object for p in self.placements)

    def label_of(self, obj: str) -> str | None:
        """The position label `obj` takes in this structure (None: not in it, or single)."""
        return next((p.position for p in self.placements if p.object == obj), None)

    def label_at(self, site: str, level: int) -> str | None:
        """The position label of `level` on `site` (None: no such slot, or single)."""
        name = self.relationship
        if name == "none":
            return site if level < len(self.stacks.get(site, ())) else None
        layout = LAYOUTS["stacked_3" if name == "stacked" and len(self.placements) == 3 else name]
        on_site = [label for label, at in layout if at == site]
        return on_site[level] if level < len(on_site) else None

    def to_dict(self) -> dict[str, Any]:
        """The seed's new format: `object` for a lone object, `object 1..n` otherwise."""
        if len(self.placements) == 1 and self.placements[0].position is None:
            return {
                "relationship": self.relationship,
                "placements": [{"object": self.objects()[0]}],
            }
        placements = [
            {"position": p.position, f"object {i}": p.object}
            for i, p in enumerate(self.placements, 1)
        ]
        return {"relationship": self.relationship, "placements": placements}

    def view(self) -> dict[str, Any]:
        """The foundations schema (voiced.robot.view's `arrangement`): placements under `object`."""
        return arrangement.describe(self.stacks)


@dataclass(frozen=True)
class Layout:
    """A target or current state in any of the seed's formats."""

    structure: TargetStructure
    """The arrangement."""
    view: Mapping[str, Any]
    """The same as a state view (robot.view.scene_from_view builds the scene from it; keys the
    payload did not give are left out, so they keep the cell's initial values)."""


def _norm(text: str) -> str:
    """A name as targets compare it: "Top-Left", "top_left" and "top left" are one."""
    return fold(text, breaks="_-")


def _where(index: int | None) -> str:
    return "placement" if index is None else f"placement {index}"


def extract_object_value(placement: Mapping[str, Any], index: int | None = None) -> str:
    """The pure object name of one placement, under whichever of OBJECT_FIELDS it uses.
    Raises TargetError saying which placement (`index`, 1-based) and what is wrong."""
    where = _where(index)
    if not isinstance(placement, Mapping):
        raise TargetError([f"{where}: expected an object, got {type(placement).__name__}"])
    fields = [key for key in OBJECT_FIELDS if key in placement]
    if not fields:
        expected = ", ".join(OBJECT_FIELDS)
        raise TargetError([f"{where}: no object field (expected one of: {expected})"])
    if len(fields) > 1:
        raise TargetError([f"{where}: more than one object field ({', '.join(fields)})"])
    value = placement[fields[0]]
    if not isinstance(value, str) or not value.strip():
        raise TargetError([f"{where}: '{fields[0]}' must be a non-empty name, got {value!r}"])
    words = _norm(value).split()
    if words[0] in DESCRIPTIVE_PREFIXES and len(words) > 1:
        raise TargetError(
            [
                f"{where}: '{value}' has a descriptive prefix; use the pure object name "
                f"('{' '.join(words[1:])}')"
            ]
        )
    return " ".join(words)


def build_position_object_map(placements: Sequence[Mapping[str, Any]]) -> dict[str | None, str]:
    """Position label -> object (None for a placement without position). Raises TargetError
    for a missing object field or a position given twice."""
    found: dict[str | None, str] = {}
    problems: list[str] = []
    for index, placement in enumerate(placements, 1):
        try:
            obj = extract_object_value(placement, index)
        except TargetError as error:
            problems += error.problems
            continue
        raw = placement.get("position")
        position = _norm(raw) if isinstance(raw, str) else None
        if position in found:
            problems.append(f"placement {index}: position '{position}' is given twice")
        found[position] = obj
    if problems:
        raise TargetError(problems)
    return found


def collect_objects_list(placements: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every placement's object, in order. Raises TargetError for a placement without one."""
    problems: list[str] = []
    objects: list[str] = []
    for index, placement in enumerate(placements, 1):
        try:
            objects.append(extract_object_value(placement, index))
        except TargetError as error:
            problems += error.problems
    if problems:
        raise TargetError(problems)
    return objects


def validate_target_structure_payload(
    payload: object, known_objects: Collection[str] | None = None
) -> TargetStructure:
    """A target structure (wrapped in `target_structure` or not), checked completely: the
    relationship is supported, every placement has one object and a position the relationship
    has, every required position is filled once, and (when `known_objects` is given) every
    object exists. An object may be named more than once: alike objects share a name (whether
    the cell has that many is the planner's check). Raises TargetError listing every fault."""
    inner = payload.get("target_structure", payload) if isinstance(payload, Mapping) else payload
    if not isinstance(inner, Mapping):
        raise TargetError([f"expected a target_structure object, got {type(inner).__name__}"])
    problems = [
        f"unknown key '{key}' in target_structure (expected relationship, placements)"
        for key in inner
        if key not in ("relationship", "placements")
    ]
    relationship = inner.get("relationship")
    placements = inner.get("placements")
    if relationship is None:
        problems.append("target_structure.relationship is missing")
    elif not isinstance(relationship, str) or _norm(relationship).replace(" ", "_") not in (
        SUPPORTED_RELATIONSHIPS
    ):
        problems.append(
            f"unknown relationship {relationship!r} (expected one of: "
            f"{', '.join(SUPPORTED_RELATIONSHIPS)})"
        )
    if not isinstance(placements, list):
        problems.append("target_structure.placements must be an array of placements")
    if problems:
        raise TargetError(problems)
    assert isinstance(relationship, str) and isinstance(placements, list)
    name = _norm(relationship).replace(" ", "_")
    parsed = _placements(placements, problems)
    _check_positions(name, parsed, len(placements), problems)
    _check_objects(parsed, known_objects, problems)
    if problems:
        raise TargetError(problems)
    return _structure(name, [p for _, p in parsed])


def _placements(raw: list[Any], problems: list[str]) -> list[tuple[int, Placement]]:
    parsed: list[tuple[int, Placement]] = []
    for index, placement in enumerate(raw, 1):
        try:
            obj = extract_object_value(placement, index)
        except TargetError as error:
            problems += error.problems
            continue
        for key in placement:
            if key != "position" and key not in OBJECT_FIELDS:
                problems.append(
                    f"placement {index}: unknown key '{key}' (expected position and one of "
                    f"{', '.join(OBJECT_FIELDS)})"
                )
        raw_position = placement.get("position")
        if raw_position is not None and not isinstance(raw_position, str):
            problems.append(f"placement {index}: position must be a string, got {raw_position!r}")
            raw_position = None
        position = _norm(raw_position) if raw_position else None
        parsed.append((index, Placement(position, obj)))
    return parsed


def _check_positions(
    name: str, parsed: list[tuple[int, Placement]], count: int, problems: list[str]
) -> None:
    if name == "none":
        _check_site_positions(parsed, problems)
        return
    if name in SINGLE:
        if count != 1:
            problems.append(f"{name} takes exactly one placement, got {count}")
        for index, p in parsed:
            if p.position is not None:
                problems.append(
                    f"placement {index}: {name} has one object and no position, "
                    f"got position '{p.position}'"
                )
        return
    layout = LAYOUTS["stacked_3" if name == "stacked" and count >= 3 else name]
    expected = [str(position) for position, _ in layout]
    allowed = ["bottom", "middle", "top"] if name == "stacked" else expected
    seen: dict[str, int] = {}
    for index, p in parsed:
        if p.position is None:
            problems.append(f"placement {index}: no position ({name} needs {', '.join(allowed)})")
        elif p.position not in allowed:
            problems.append(
                f"placement {index}: '{p.position}' is not a position of {name} "
                f"({', '.join(allowed)})"
            )
        elif p.position in seen:
            problems.append(
                f"placement {index}: position '{p.position}' is already taken by "
                f"placement {seen[p.position]}"
            )
        else:
            seen[p.position] = index
    sizes = "2 or 3" if name == "stacked" else str(len(layout))
    if count not in ((2, 3) if name == "stacked" else (len(layout),)):
        problems.append(f"{name} needs {sizes} placements, got {count}")
    elif len(seen) == count:
        missing = [e for e in expected if e not in seen]
        if missing:
            problems.append(
                f"{name} with {count} objects needs the positions "
                f"{', '.join(expected)}; missing: {', '.join(missing)}"
            )


def _check_site_positions(parsed: list[tuple[int, Placement]], problems: list[str]) -> None:
    """Relationship none: each position is an arrangement site (voiced.robot.arrangement)."""
    counts: dict[str, int] = {}
    for index, p in parsed:
        site = (p.position or "").replace(" ", "_")
        if site not in ARRANGEMENT_SITES:
            problems.append(
                f"placement {index}: with relationship none, the position must be an "
                f"arrangement site ({', '.join(ARRANGEMENT_SITES)}), got "
                f"{p.position!r}"
            )
            continue
        counts[site] = counts.get(site, 0) + 1
        room = 3 if site == "center" else 1
        if counts[site] > room:
            problems.append(f"placement {index}: {site} holds at most {room} object(s)")
    if counts.get("pyramid_top") and not (
        counts.get("pyramid_left") and counts.get("pyramid_right")
    ):
        problems.append("pyramid_top rests on pyramid_left and pyramid_right: place both first")


def _check_objects(
    parsed: list[tuple[int, Placement]], known: Collection[str] | None, problems: list[str]
) -> None:
    # An object named twice is not a fault here: alike objects share a name (two green cubes).
    # Whether the cell has that many is the planner's question (it knows the scene).
    for index, p in parsed:
        if known is not None and p.object not in known:
            problems.append(
                f"placement {index}: unknown object '{p.object}' (known: {', '.join(known)})"
            )


def _structure(name: str, placements: list[Placement]) -> TargetStructure:
    """The site stacks, read back into the canonical structure: placements in the layout's
    order (bottom to top), relationship `none` named by the layout it happens to form."""
    raw: list[dict[str, str]] = []
    for p in placements:
        position = (p.position or "").replace(" ", "_") if name == "none" else p.position
        raw.append(
            {"object": p.object} if position is None else {"position": position, "object": p.object}
        )
    try:
        return structure_from_stacks(arrangement.sites_for(name, raw))
    except arrangement.ArrangementError as error:
        raise TargetError([str(error)]) from None


def structure_from_stacks(stacks: Mapping[str, Sequence[str]]) -> TargetStructure:
    """The structure that arrangement-site stacks make (voiced.robot.arrangement.describe)."""
    full = {site: tuple(stacks.get(site, ())) for site in ARRANGEMENT_SITES}
    described = arrangement.describe(full)
    placements = tuple(Placement(p.get("position"), p["object"]) for p in described["placements"])
    return TargetStructure(described["relationship"], placements, full)


def parse_layout(payload: object, known_objects: Collection[str] | None = None) -> Layout:
    """A target or state in any of the seed's formats (see the module docstring).
    Raises TargetError listing every fault."""
    if not isinstance(payload, Mapping):
        raise TargetError([f"expected a JSON object, got {type(payload).__name__}"])
    if {"arrangement", "buffers", "holding"} & payload.keys():
        return _view_layout(payload, known_objects)
    if "target_structure" not in payload and ("stack" in payload or "scattered" in payload):
        return _legacy_layout(payload, known_objects)
    structure = validate_target_structure_payload(payload, known_objects)
    return Layout(structure, {"arrangement": structure.view()})


def _view_layout(payload: Mapping[str, Any], known: Collection[str] | None) -> Layout:
    raw = payload.get("arrangement", {"relationship": "none", "placements": []})
    try:
        structure = validate_target_structure_payload(raw, known)
    except TargetError as error:
        raise TargetError([f"arrangement: {p}" for p in error.problems]) from None
    return Layout(structure, {**payload, "arrangement": structure.view()})


_LEGACY_SITES = {
    "left": "left",
    "right": "right",
    "front": "front",
    "back": "back",
    "middle": "center",
    "center": "center",
    "bottom left": "pyramid_left",
    "bottom right": "pyramid_right",
}
"""Legacy `placements` positions -> arrangement sites (site names are accepted too)."""
_LEVELS = {"bottom": 0, "middle": 1, "top": 2}


def _legacy_layout(payload: Mapping[str, Any], known: Collection[str] | None) -> Layout:
    problems = [
        f"unknown key '{key}' (the legacy form has relationship, stack, placements, scattered)"
        for key in payload
        if key not in ("relationship", "stack", "placements", "scattered")
    ]
    stack, placements = payload.get("stack", []), payload.get("placements", [])
    for key, value in (("stack", stack), ("placements", placements)):
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            problems.append(f"{key} must be an array of placements")
    scattered = payload.get("scattered", [])
    if not isinstance(scattered, list):
        problems.append("scattered must be an array")
    if problems:
        raise TargetError(problems)
    loose = [s if isinstance(s, Mapping) else {"object": s} for s in scattered]
    view: dict[str, Any] = {"scattered": collect_objects_list(loose)}
    relationship = payload.get("relationship", "none")
    if relationship != "none" and stack + placements:
        try:
            structure = validate_target_structure_payload(
                {"relationship": relationship, "placements": stack + placements}, known
            )
        except TargetError:
            structure = _legacy_sites(stack, placements, known)  # loose: read by position
    else:
        structure = _legacy_sites(stack, placements, known)
    return Layout(structure, {**view, "arrangement": structure.view()})


def _legacy_sites(
    stack: list[Mapping[str, Any]],
    placements: list[Mapping[str, Any]],
    known: Collection[str] | None,
) -> TargetStructure:
    """Legacy placements read by position: the stack bottom to top on center, the rest on the
    site their position names."""

    def level(entry: tuple[int, Mapping[str, Any]]) -> tuple[int, int]:
        return _LEVELS.get(_norm(str(entry[1].get("position", ""))), entry[0]), entry[0]

    stacks: dict[str, list[str]] = {site: [] for site in ARRANGEMENT_SITES}
    stacks["center"] = collect_objects_list([p for _, p in sorted(enumerate(stack), key=level)])
    problems: list[str] = []
    for index, placement in enumerate(placements, 1):
        position = _norm(str(placement.get("position", "")))
        site = _LEGACY_SITES.get(position, position.replace(" ", "_"))
        if site not in stacks:
            problems.append(f"placements: placement {index}: unknown position {position!r}")
        else:
            stacks[site].append(extract_object_value(placement, index))
    if problems:
        raise TargetError(problems)
    try:
        return validate_target_structure_payload(structure_from_stacks(stacks).to_dict(), known)
    except TargetError as error:
        raise TargetError([f"legacy state: {p}" for p in error.problems]) from None
