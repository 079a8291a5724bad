"""What the model is told about the cell, rendered from the live `Cell` and `Scene`.

`catalogue` is the static part (tier-1 composites with descriptions and parameters, items,
zones, sites, positions, tools, routines, speed profiles, distance aliases): it changes only
with the cell file, so it heads the cached prompt block. Learned (tier-2) composites are listed
by name only, and with the scene they form the dynamic part.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from voiced.robot.cell import DIRECTIONS, Cell, Composite
from voiced.robot.scene import Scene
from voiced.robot.view import state_view


def _names(names: Iterable[str]) -> str:
    return ", ".join(names) or "none"


def _signature(composite: Composite) -> str:
    params = []
    for spec in composite.params:
        default = "" if spec.default is None else f" = {spec.default}"
        params.append(f"{spec.name}: {spec.type}{default}")
    return f"{composite.name}({', '.join(params)})"


def composite_lines(cell: Cell) -> list[str]:
    """One line per tier-1 composite: signature, description, then each parameter's meaning."""
    lines: list[str] = []
    for composite in cell.composites.values():
        if composite.internal or composite.tier != 1:
            continue
        confirm = " (asks the operator to confirm first)" if composite.confirm else ""
        lines.append(f"- {_signature(composite)}: {composite.description}{confirm}")
        lines += [f"    {spec.name}: {spec.description}" for spec in composite.params]
    return lines


def catalogue(cell: Cell) -> str:
    """The cell's static vocabulary as prompt text."""
    lines = [
        "━━━ AVAILABLE COMPOSITE INSTRUCTIONS ━━━",
        *composite_lines(cell),
        "",
        "━━━ ITEMS AND OBJECTS ━━━",
    ]
    if cell.items():
        lines.append(f"Items (countable, each from its supply): {_names(cell.items())}")
    others = [name for name in cell.objects if name not in cell.items()]
    if others:
        lines.append(f"Objects: {_names(others)}")
    lines += ["", "━━━ LOCATIONS ━━━", *_location_lines(cell), "", "━━━ MOTION ━━━"]
    speeds = ", ".join(f"{name} = {mm:g} mm/s" for name, mm in cell.motion.speeds.items())
    distances = ", ".join(f"{name} = {mm:g} mm" for name, mm in cell.motion.distances.items())
    lines += [
        f"Speed profiles: {speeds} (limit {cell.limits.max_speed:g} mm/s)",
        f"Distance aliases: {distances}",
        f"Directions: {_names(DIRECTIONS)}",
    ]
    return "\n".join(lines)


def _location_lines(cell: Cell) -> list[str]:
    lines: list[str] = []
    if cell.zones():
        lines.append(f"Zones: {_names(cell.zones())} (default: {cell.default_zone})")
    if cell.zone_aliases:
        words = ", ".join(f'"{word}" → {zone}' for word, zone in cell.zone_aliases.items())
        lines.append(f"Zone words: {words}")
    for kind in ("supply", "buffer", "arrangement", "scatter"):
        sites = cell.sites_of_kind(kind)
        if sites:
            lines.append(f"{kind.capitalize()} sites: {_names(sites)}")
    if cell.poses:
        poses = ", ".join(f"{p.name} ({p.role})" for p in cell.poses.values())
        lines.append(f"Named positions: {poses}")
    if cell.tools:
        tools = "; ".join(f"{t.name}: {t.description}" for t in cell.tools.values())
        lines.append(f"Tools: {tools}")
    if cell.routines:
        routines = "; ".join(
            f"{r.name} (needs {r.tool or 'no tool'}): {r.description}"
            for r in cell.routines.values()
        )
        lines.append(f"Routines: {routines}")
    return lines


def learned_names(cell: Cell) -> tuple[str, ...]:
    """Tier-2 composite names (learned at runtime); their sequences stay hidden."""
    return tuple(c.name for c in cell.composites.values() if c.tier == 2 and not c.internal)


def learned_section(cell: Cell) -> str:
    names = learned_names(cell)
    listed = _names(names) if names else "none yet"
    return (
        "━━━ LEARNED COMPOSITES (tier 2: call by name, no parameters) ━━━\n"
        f"{listed}\nUse one when the command asks for it by name."
    )


def supplies(cell: Cell, scene: Scene) -> dict[str, int]:
    """Items left in each supply."""
    counts: dict[str, int] = {}
    for item in cell.items():
        supply = cell.objects[item].supply or ""
        counts[item] = scene.stacks.get(supply, ()).count(item)
    return counts


def scene_section(cell: Cell, scene: Scene) -> str:
    """The current scene in the cell's vocabulary (voiced.robot.view.state_view), plus supplies."""
    view: dict[str, Any] = state_view(cell, scene)
    if cell.items() and "supplies" not in view:
        view["supplies left"] = supplies(cell, scene)
    return "━━━ CURRENT SCENE ━━━\n" + json.dumps(view, ensure_ascii=False)


def capabilities(cell: Cell) -> str:
    """Seed 001's SYSTEM CAPABILITIES lines for this cell."""
    lines = [f"Available instructions: {_names(cell.instructions())}"]
    if cell.items():
        lines.append(f"Available items: {_names(cell.items())}")
    if cell.zones():
        lines.append(f"Available zones: {_names(cell.zones())}")
    if cell.routines:
        lines.append(f"Available routines: {_names(cell.routines)}")
    if cell.tools:
        lines.append(f"Available tools: {_names(cell.tools)}")
    if cell.poses:
        lines.append(f"Available positions: {_names(cell.poses)}")
    others = [name for name in cell.objects if name not in cell.items()]
    if others:
        lines.append(f"Available objects: {_names(others)}")
    return "\n".join(lines)


def step_schema(cell: Cell) -> dict[str, Any]:
    """JSON schema of one sequence step: an instruction the cell has (tier 1 and 2) and the
    parameters any composite takes (all optional, no others)."""
    params: dict[str, Any] = {}
    for composite in cell.composites.values():
        if composite.internal:
            continue
        for spec in composite.params:
            # Names, or numbers for distances and speeds ("a bit", 30); anyOf rather than a
            # list of types, which the API's schema subset does not take.
            either = {"anyOf": [{"type": "string"}, {"type": "number"}]}
            params[spec.name] = {"type": "number"} if spec.type == "number" else either
    return {
        "type": "object",
        "properties": {
            "instruction": {"type": "string", "enum": list(cell.instructions())},
            "params": {"type": "object", "properties": params, "additionalProperties": False},
        },
        "required": ["instruction", "params"],
        "additionalProperties": False,
    }


def sequence_schema(cell: Cell) -> dict[str, Any]:
    """JSON schema of the pass-1 answer, for structured output."""
    nullable = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    return {
        "type": "object",
        "properties": {
            "interpretation": {"type": "string"},
            "sequence": {"type": "array", "items": step_schema(cell)},
            "composite_name": nullable,
            "confidence": {"type": "number"},
            "user_feedback": nullable,
            "creative_reasoning": nullable,
        },
        "required": [
            "interpretation",
            "sequence",
            "composite_name",
            "confidence",
            "user_feedback",
            "creative_reasoning",
        ],
        "additionalProperties": False,
    }


def validator_schema(cell: Cell) -> dict[str, Any]:
    """JSON schema of the optional LLM validator's answer (seed 000's pass 2)."""
    return {
        "type": "object",
        "properties": {
            "valid": {"type": "boolean"},
            "issues": {"type": "array", "items": {"type": "string"}},
            "sequence": {"type": "array", "items": step_schema(cell)},
        },
        "required": ["valid", "issues", "sequence"],
        "additionalProperties": False,
    }
