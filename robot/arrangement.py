"""The blocks cell's arrangement vocabulary (seed 004): relationship + placements <-> site stacks.

The arrangement area has eight sites: `left`, `center`, `right`, `front`, `back` and the pyramid's
`pyramid_left`, `pyramid_right` and `pyramid_top` (which rests on the other two). Each supported
relationship is a fixed layout of positions on those sites (LAYOUTS); anything that matches no
layout is reported as relationship `none` with one placement per object, its position being the
site name, so that nothing on the table is hidden from the planner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ARRANGEMENT_SITES = (
    "left",
    "center",
    "right",
    "front",
    "back",
    "pyramid_left",
    "pyramid_right",
    "pyramid_top",
)
"""The sites an arrangement is built on, in reporting order."""

SUPPORTED_RELATIONSHIPS = (
    "stacked",
    "stacked_left",
    "stacked_middle",
    "stacked_right",
    "separated_left_right",
    "separated_front_back",
    "separate_horizontal",
    "separate_vertical",
    "stacked_and_separated_left",
    "stacked_and_separated_right",
    "pyramid",
    "none",
)

LAYOUTS: Mapping[str, tuple[tuple[str | None, str], ...]] = {
    "stacked_left": ((None, "left"),),
    "stacked_middle": ((None, "center"),),
    "stacked_right": ((None, "right"),),
    "stacked": (("bottom", "center"), ("top", "center")),
    "stacked_3": (("bottom", "center"), ("middle", "center"), ("top", "center")),
    "separated_left_right": (("left", "left"), ("right", "right")),
    "separated_front_back": (("front", "front"), ("back", "back")),
    "separate_horizontal": (("left", "left"), ("middle", "center"), ("right", "right")),
    "separate_vertical": (("bottom", "front"), ("middle", "center"), ("top", "back")),
    "stacked_and_separated_left": (("bottom", "center"), ("top", "center"), ("left", "left")),
    "stacked_and_separated_right": (("bottom", "center"), ("top", "center"), ("right", "right")),
    "pyramid": (
        ("bottom left", "pyramid_left"),
        ("bottom right", "pyramid_right"),
        ("top", "pyramid_top"),
    ),
}
"""Relationship -> (position label, site) in placement order, bottom to top on shared sites.
Single-object relationships have no position label (as in the seed). `stacked_3` is the
three-high variant of `stacked` and is reported as `stacked`."""

OBJECT_KEYS = ("object", "object 1", "object 2", "object 3")
"""Keys a placement may carry its object under (the seed's flexible naming)."""


class ArrangementError(ValueError):
    """Placements that do not fit the named relationship."""


def _occupancy(layout: Sequence[tuple[str | None, str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, site in layout:
        counts[site] = counts.get(site, 0) + 1
    return counts


_BY_OCCUPANCY = {
    tuple(sorted(_occupancy(layout).items())): name for name, layout in LAYOUTS.items()
}


def describe(stacks: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """`{"relationship", "placements"}` for the objects on the arrangement sites."""
    used = {s: tuple(stacks.get(s, ())) for s in ARRANGEMENT_SITES if stacks.get(s)}
    if not used:
        return {"relationship": "none", "placements": []}
    name = _BY_OCCUPANCY.get(tuple(sorted((s, len(o)) for s, o in used.items())))
    if name is None:
        placements = [
            {"position": site, "object": obj} for site, objects in used.items() for obj in objects
        ]
        return {"relationship": "none", "placements": placements}
    taken = dict.fromkeys(used, 0)
    placements = []
    for position, site in LAYOUTS[name]:
        obj = used[site][taken[site]]
        taken[site] += 1
        placements.append(
            {"object": obj} if position is None else {"position": position, "object": obj}
        )
    return {"relationship": "stacked" if name == "stacked_3" else name, "placements": placements}


def placement_object(placement: Mapping[str, Any]) -> str:
    """The object of one placement, whichever of OBJECT_KEYS it uses."""
    found = [placement[k] for k in OBJECT_KEYS if k in placement]
    if len(found) != 1 or not isinstance(found[0], str):
        raise ArrangementError(
            f"a placement needs exactly one object field ({', '.join(OBJECT_KEYS)})"
        )
    return found[0]


def sites_for(
    relationship: str, placements: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[str, ...]]:
    """The arrangement-site stacks (every arrangement site, bottom to top) that realise
    `relationship` with `placements`. Raises ArrangementError when they do not fit."""
    stacks: dict[str, list[str]] = {s: [] for s in ARRANGEMENT_SITES}
    if relationship == "none":
        for placement in placements:
            site = placement.get("position")
            if site not in stacks:
                raise ArrangementError(
                    f"with relationship none, a position must be an arrangement site "
                    f"({', '.join(ARRANGEMENT_SITES)}), got {site!r}"
                )
            stacks[str(site)].append(placement_object(placement))
        return {s: tuple(o) for s, o in stacks.items()}
    layout = _layout(relationship, len(placements))
    by_position = _by_position(relationship, layout, placements)
    for position, site in layout:
        stacks[site].append(by_position[position])
    return {s: tuple(o) for s, o in stacks.items()}


def _layout(relationship: str, count: int) -> tuple[tuple[str | None, str], ...]:
    if relationship not in SUPPORTED_RELATIONSHIPS:
        raise ArrangementError(
            f"unknown relationship '{relationship}' (expected one of "
            f"{', '.join(SUPPORTED_RELATIONSHIPS)})"
        )
    name = "stacked_3" if relationship == "stacked" and count == 3 else relationship
    layout = LAYOUTS[name]
    if count != len(layout):
        sizes = "2 or 3" if relationship == "stacked" else str(len(layout))
        raise ArrangementError(f"{relationship} needs {sizes} placements, got {count}")
    return layout


def _by_position(
    relationship: str,
    layout: Sequence[tuple[str | None, str]],
    placements: Sequence[Mapping[str, Any]],
) -> dict[str | None, str]:
    if layout[0][0] is None:
        return {None: placement_object(placements[0])}
    expected = [p for p, _ in layout]
    found: dict[str | None, str] = {}
    for placement in placements:
        position = placement.get("position")
        if position not in expected or position in found:
            raise ArrangementError(
                f"{relationship} needs the positions {', '.join(str(p) for p in expected)} "
                f"once each, got {position!r}"
            )
        found[position] = placement_object(placement)
    return found
