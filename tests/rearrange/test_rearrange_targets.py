"""Seed 004's formats and validation functions: both formats read into the same stacks, and
every invalid payload gets an error that says exactly what is wrong."""

from __future__ import annotations

from typing import Any

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.rearrange.targets import (
    BUFFER_SLOTS,
    TargetError,
    build_position_object_map,
    collect_objects_list,
    extract_object_value,
    parse_layout,
    validate_target_structure_payload,
)

CELL = load_cell("blocks")
STACK3 = [
    {"position": "bottom", "object 1": "blue cube"},
    {"position": "middle", "object 2": "green cube"},
    {"position": "top", "object 3": "red cube"},
]


def test_the_seed_helpers() -> None:
    assert extract_object_value({"position": "bottom", "object 1": "blue cube"}) == "blue cube"
    assert extract_object_value({"object": " Red  Cube "}) == "red cube"
    assert build_position_object_map(STACK3) == {
        "bottom": "blue cube",
        "middle": "green cube",
        "top": "red cube",
    }
    assert build_position_object_map([{"object": "red cube"}]) == {None: "red cube"}
    assert collect_objects_list(STACK3) == ["blue cube", "green cube", "red cube"]


def test_buffer_slots_are_the_cells() -> None:
    for slot, (x, y, z) in BUFFER_SLOTS.items():
        site = CELL.sites[slot]
        assert (site.kind, site.x, site.y, site.z, site.capacity) == ("buffer", x, y, z, 1)


@pytest.mark.parametrize(
    ("payload", "stacks"),
    [
        ({"target_structure": {"relationship": "stacked", "placements": STACK3}},
         {"center": ("blue cube", "green cube", "red cube")}),
        ({"relationship": "stacked_left", "placements": [{"object": "red cube"}]},
         {"left": ("red cube",)}),
        ({"relationship": "pyramid", "placements": [
            {"position": "top", "object 3": "blue cube"},
            {"position": "Bottom_Left", "object 1": "green cube"},
            {"position": "bottom right", "object 2": "red cube"}]},
         {"pyramid_left": ("green cube",), "pyramid_right": ("red cube",),
          "pyramid_top": ("blue cube",)}),
        ({"relationship": "separate_vertical", "placements": [
            {"position": "bottom", "object 1": "a cube"}, {"position": "middle", "object 2": "b"},
            {"position": "top", "object 3": "c"}]},
         {"front": ("a cube",), "center": ("b",), "back": ("c",)}),
        ({"relationship": "stacked_and_separated_right", "placements": [
            {"position": "bottom", "object 1": "blue cube"},
            {"position": "top", "object 2": "red cube"},
            {"position": "right", "object 3": "green cube"}]},
         {"center": ("blue cube", "red cube"), "right": ("green cube",)}),
        ({"relationship": "none", "placements": [
            {"position": "front", "object": "red cube"}, {"position": "left", "object": "b"}]},
         {"front": ("red cube",), "left": ("b",)}),
        # The legacy form: stack bottom to top (in any order given), placements, scattered.
        ({"relationship": "stacked", "stack": [
            {"position": "top", "object": "red cube"},
            {"position": "bottom", "object": "blue cube"}],
          "scattered": [{"object": "green cube"}]},
         {"center": ("blue cube", "red cube")}),
        ({"relationship": "separated_left_right", "placements": [
            {"position": "left", "object": "red cube"},
            {"position": "right", "object": "green cube"}]},
         {"left": ("red cube",), "right": ("green cube",)}),
        ({"relationship": "stacked", "stack": [{"position": "bottom", "object": "blue cube"}]},
         {"center": ("blue cube",)}),
        ({"relationship": "none", "scattered": [{"object": "red cube"}, "green cube"]}, {}),
        # A blocks state view.
        ({"arrangement": {"relationship": "stacked_right", "placements": [{"object": "red cube"}]},
          "scattered": ["green cube"], "buffers": {"B1": "blue cube"}, "holding": None},
         {"right": ("red cube",)}),
    ],
)  # fmt: skip
def test_formats_read_into_stacks(payload: dict[str, Any], stacks: dict[str, Any]) -> None:
    layout = parse_layout(payload)
    assert {site: objs for site, objs in layout.structure.stacks.items() if objs} == stacks
    # The new format written back reads into the same stacks.
    again = validate_target_structure_payload(layout.structure.to_dict())
    assert again.stacks == layout.structure.stacks


def test_legacy_scattered_goes_into_the_view() -> None:
    layout = parse_layout({"relationship": "none", "scattered": [{"object": "green cube"}]})
    assert layout.view["scattered"] == ["green cube"]


def wrap(relationship: object, placements: object) -> dict[str, Any]:
    return {"target_structure": {"relationship": relationship, "placements": placements}}


INVALID = [
    ("not an object", [], "expected a target_structure object, got list"),
    ("no relationship", {"target_structure": {"placements": []}},
     "target_structure.relationship is missing"),
    ("unknown relationship", wrap("tower", []), "unknown relationship 'tower' (expected one of: "
     "stacked, stacked_left"),
    ("placements not a list", wrap("stacked", {"a": 1}),
     "target_structure.placements must be an array of placements"),
    ("extra key", {"target_structure": {"relationship": "none", "placements": [], "why": 1}},
     "unknown key 'why' in target_structure"),
    ("no object field", wrap("stacked", [{"position": "bottom", "colour": "blue"}, STACK3[1]]),
     "placement 1: no object field (expected one of: object, object 1, object 2, object 3)"),
    ("two object fields", wrap("stacked", [{"position": "bottom", "object": "a", "object 1": "b"},
                                           STACK3[2]]),
     "placement 1: more than one object field (object, object 1)"),
    ("empty object", wrap("stacked_left", [{"object": " "}]),
     "placement 1: 'object' must be a non-empty name, got ' '"),
    ("object not a string", wrap("stacked_left", [{"object": 3}]),
     "placement 1: 'object' must be a non-empty name, got 3"),
    ("descriptive prefix", wrap("stacked_left", [{"object": "correct_blue_cube"}]),
     "placement 1: 'correct_blue_cube' has a descriptive prefix; use the pure object name "
     "('blue cube')"),
    ("unknown placement key", wrap("stacked_left", [{"object": "red cube", "colour": "red"}]),
     "placement 1: unknown key 'colour'"),
    ("position on a single", wrap("stacked_left", [{"position": "left", "object": "red cube"}]),
     "placement 1: stacked_left has one object and no position, got position 'left'"),
    ("two on a single", wrap("stacked_right", [{"object": "a"}, {"object": "b"}]),
     "stacked_right takes exactly one placement, got 2"),
    ("missing position", wrap("stacked", [{"object 1": "blue cube"}, STACK3[2]]),
     "placement 1: no position (stacked needs bottom, middle, top)"),
    ("wrong position", wrap("separated_left_right", [{"position": "left", "object 1": "a"},
                                                     {"position": "top", "object 2": "b"}]),
     "placement 2: 'top' is not a position of separated_left_right (left, right)"),
    ("position twice", wrap("stacked", [STACK3[0], {"position": "bottom", "object 2": "x"}]),
     "placement 2: position 'bottom' is already taken by placement 1"),
    ("too few", wrap("pyramid", STACK3[:1]), "pyramid needs 3 placements, got 1"),
    ("incomplete", wrap("stacked", [STACK3[0], STACK3[1]]),
     "stacked with 2 objects needs the positions bottom, top; missing: top"),
    ("none needs sites", wrap("none", [{"position": "bottom", "object": "a"}]),
     "placement 1: with relationship none, the position must be an arrangement site"),
    ("none over capacity", wrap("none", [{"position": "left", "object": "a"},
                                         {"position": "left", "object": "b"}]),
     "placement 2: left holds at most 1 object(s)"),
    ("pyramid top alone", wrap("none", [{"position": "pyramid_top", "object": "a"}]),
     "pyramid_top rests on pyramid_left and pyramid_right: place both first"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "payload", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_payloads_say_what_is_wrong(case: str, payload: object, message: str) -> None:
    with pytest.raises(TargetError) as caught:
        validate_target_structure_payload(payload)
    assert any(p.startswith(message) for p in caught.value.problems), caught.value.problems


def test_every_problem_is_reported_at_once() -> None:
    payload = wrap("stacked", [{"position": "up", "object 1": "a"}, {"object 2": "wrong_b"}])
    with pytest.raises(TargetError) as caught:
        validate_target_structure_payload(payload)
    problems = sorted(caught.value.problems)
    assert len(problems) == 2
    assert problems[0].startswith("placement 1: 'up' is not a position of stacked")
    assert problems[1].startswith("placement 2: 'wrong_b' has a descriptive prefix")


def test_unknown_objects_when_the_cell_is_given() -> None:
    with pytest.raises(TargetError, match="unknown object 'pink cube'"):
        validate_target_structure_payload(wrap("stacked_left", [{"object": "pink cube"}]),
                                          CELL.objects)  # fmt: skip


def test_the_seeds_duplicate_example_reads_as_two_alike_cubes() -> None:
    """The seed's "complex reordering" example names the green cube twice: two alike green
    cubes (whether the cell has two is the planner's question, which knows the scene)."""
    current = wrap("stacked", [STACK3[0], STACK3[1], {"position": "top", "object 3": "green cube"}])
    layout = parse_layout(current)
    assert layout.structure.stacks["center"] == ("blue cube", "green cube", "green cube")


def test_legacy_and_view_errors() -> None:
    with pytest.raises(TargetError, match="unknown key 'stacks'"):
        parse_layout({"relationship": "stacked", "stacks": [], "scattered": []})
    with pytest.raises(TargetError, match="stack must be an array of placements"):
        parse_layout({"relationship": "stacked", "stack": "blue", "scattered": []})
    with pytest.raises(TargetError, match="placements: placement 1: unknown position 'up'"):
        parse_layout({"stack": [], "placements": [{"position": "up", "object": "a"}]})
    with pytest.raises(TargetError, match="arrangement: unknown relationship"):
        parse_layout({"arrangement": {"relationship": "heap", "placements": []}})
    with pytest.raises(TargetError, match="expected a JSON object, got str"):
        parse_layout("stacked")
