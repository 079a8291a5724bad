"""State views and their inverse (voiced.robot.view), scene files, and the blocks arrangement
vocabulary (voiced.robot.arrangement)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from voiced.robot import arrangement
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.robot.view import load_scene_file, scene_from_view, state_view

from voiced.errors import CellError

CELLS = {name: load_cell(name) for name in ("sandwich", "weld", "blocks", "barista")}


def step(instruction: str, **params: Any) -> SequenceStep:
    return SequenceStep(instruction, params)


def after(cell: Cell, *sequence: SequenceStep) -> Scene:
    result = compile_sequence(cell, cell.initial_scene, list(sequence))
    assert result.program is not None, result.errors
    return result.program.expected


def test_initial_views() -> None:
    assert state_view(CELLS["sandwich"], CELLS["sandwich"].initial_scene) == {
        "zones": {"assembly_fixture": [], "assembly_left": [], "assembly_right": []},
        "active_zone": "assembly_fixture",
        "holding": None,
        "position": "home",
    }
    assert state_view(CELLS["weld"], CELLS["weld"].initial_scene) == {
        "position": "Home",
        "tool": None,
        "log": [],
    }
    assert state_view(CELLS["blocks"], CELLS["blocks"].initial_scene) == {
        "arrangement": {"relationship": "none", "placements": []},
        "scattered": ["red cube", "green cube", "blue cube"],
        "buffers": {"B1": None, "B2": None, "B3": None},
        "holding": None,
    }
    cups = ("small", "medium", "large", "8 ounce", "12 ounce", "16 ounce", "20 ounce")
    assert state_view(CELLS["barista"], CELLS["barista"].initial_scene) == {
        "zones": {"brew_tray": [], "pickup_1": [], "pickup_2": [], "pickup_3": [], "used_cups": []},
        "supplies": {f"{size} cup": 10 for size in cups},
        "holding": None,
        "position": "home",
        "log": [],
    }


SCENES: list[tuple[str, list[SequenceStep]]] = [
    ("sandwich", []),
    ("sandwich", [step("add_layer", item="bread"), step("add_layer", item="cheese")]),
    ("sandwich", [step("set_active_zone", zone="right"), step("pick_up", item="tomato")]),
    ("sandwich", [step("move_relative", direction="up", distance="a bit")]),
    ("weld", []),
    (
        "weld",
        [
            step("run_routine_at", routine="tack_weld", position="Pos_1"),
            step("run_routine_at", routine="camera_inspection", position="Pos_3"),
        ],
    ),
    ("weld", [step("attach_tool", tool="Camera")]),
    ("blocks", []),
    (
        "blocks",
        [
            step("move_object", object="red cube", to="center"),
            step("move_object", object="green cube", to="center"),
            step("move_object", object="blue cube", to="B3"),
        ],
    ),
    (
        "blocks",
        [
            step("move_object", object="red cube", to="pyramid_left"),
            step("move_object", object="green cube", to="pyramid_right"),
            step("move_object", object="blue cube", to="pyramid_top"),
        ],
    ),
    (
        "blocks",
        [step("move_object", object="green cube", to="front"), step("pick", object="blue cube")],
    ),
    ("barista", []),
    (
        "barista",
        [
            step("order_drink", drink="latte", cup="12 ounce cup"),
            step("order_drink_with_milk", drink="mocha", milk="cream", roast="dark_roast"),
        ],
    ),
]


@pytest.mark.parametrize(("cell_name", "sequence"), SCENES)
def test_view_round_trip(cell_name: str, sequence: list[SequenceStep]) -> None:
    cell = CELLS[cell_name]
    view = state_view(cell, after(cell, *sequence))
    rebuilt = scene_from_view(cell, json.loads(json.dumps(view)), "test")
    assert state_view(cell, rebuilt) == view


def test_partial_views_keep_initial_values() -> None:
    cell = CELLS["sandwich"]
    scene = scene_from_view(cell, {"zones": {"left": ["Bread"]}}, "test")
    assert scene.stacks["assembly_left"] == ("bread",)
    assert scene.active_zone == "assembly_fixture"
    assert scene.pose == cell.initial_scene.pose
    assert scene.stacks["supply_bread"] == cell.initial_scene.stacks["supply_bread"]


def test_holding_closes_the_gripper_and_position_moves_the_arm() -> None:
    cell = CELLS["sandwich"]
    scene = scene_from_view(cell, {"holding": "meat", "position": None}, "test")
    assert scene.holding == "meat" and scene.gripper == cell.limits.gripper_min
    assert state_view(cell, scene)["position"] is None
    weld = CELLS["weld"]
    assert scene_from_view(weld, {"position": "pos_2"}, "t").pose == weld.poses["Pos_2"].pose


def test_a_unique_object_placed_by_a_view_leaves_its_initial_site() -> None:
    cell = CELLS["blocks"]
    view = {"arrangement": {"relationship": "stacked_left", "placements": [{"object": "red cube"}]}}
    scene = scene_from_view(cell, view, "test")
    assert scene.stacks["left"] == ("red cube",)
    assert scene.stacks["S1"] == ()
    assert state_view(cell, scene)["scattered"] == ["green cube", "blue cube"]


@pytest.mark.parametrize(
    ("cell_name", "view", "path", "message"),
    [
        ("sandwich", {"mood": "happy"}, "mood", "unknown key 'mood'"),
        ("sandwich", {"zones": {"kitchen": []}}, "zones.kitchen", "unknown zone 'kitchen'"),
        ("sandwich", {"zones": {"left": ["avocado"]}}, "zones.left[0]", "avocado"),
        ("sandwich", {"active_zone": 3}, "active_zone", "expected a zone name"),
        ("sandwich", {"supplies": {"bread": -1}}, "supplies.bread", "expected a count"),
        ("weld", {"tool": "Laser"}, "tool", "Laser"),
        ("weld", {"log": [{"routine": "polish"}]}, "log[0].routine", "polish"),
        ("weld", {"position": "Pos_9"}, "position", "Pos_9"),
        ("blocks", {"buffers": {"B9": None}}, "buffers.B9", "unknown buffer slot"),
        (
            "blocks",
            {"arrangement": {"relationship": "tower", "placements": []}},
            "arrangement",
            "unknown relationship 'tower'",
        ),
        (
            "blocks",
            {"arrangement": {"relationship": "stacked", "placements": [{"object": "red cube"}]}},
            "arrangement",
            "needs 2 or 3 placements",
        ),
        (
            "blocks",
            {
                "holding": "red cube",
                "buffers": {"B1": "red cube", "B2": "red cube", "B3": "red cube"},
            },
            "buffers.B3",
            "also at holding, buffers.B1, buffers.B2 (the cell has at most 3)",
        ),
        ("blocks", {"scattered": ["red cube"] * 7}, "scattered", "only 6 scatter sites"),
    ],
)
def test_bad_views_name_source_and_path(
    cell_name: str, view: dict[str, Any], path: str, message: str
) -> None:
    with pytest.raises(CellError) as caught:
        scene_from_view(CELLS[cell_name], view, "scene.json")
    found = [str(p) for p in caught.value.problems]
    assert any(p.startswith(f"scene.json: {path}: ") and message in p for p in found), found


def test_load_scene_file(tmp_path: Path) -> None:
    cell = CELLS["sandwich"]
    path = tmp_path / "scene.json"
    path.write_text(
        json.dumps({"zones": {"assembly_right": ["bread", "meat"]}, "active_zone": "right"}),
        encoding="utf-8",
    )
    scene = load_scene_file(cell, path)
    assert scene.stacks["assembly_right"] == ("bread", "meat")
    assert scene.active_zone == "assembly_right"


def test_scene_file_errors_name_the_file(tmp_path: Path) -> None:
    cell = CELLS["sandwich"]
    path = tmp_path / "broken.json"
    path.write_text('{"zones": {\n  "left": [}\n}', encoding="utf-8")
    with pytest.raises(CellError, match=r"broken\.json: JSON syntax error at line 2"):
        load_scene_file(cell, path)
    with pytest.raises(CellError, match="cannot read"):
        load_scene_file(cell, tmp_path / "missing.json")
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(CellError, match="expected an object"):
        load_scene_file(cell, str(path))


# --- the arrangement vocabulary -------------------------------------------------------------

ARRANGEMENTS: list[tuple[dict[str, tuple[str, ...]], str, list[dict[str, str]]]] = [
    ({}, "none", []),
    ({"center": ("a",)}, "stacked_middle", [{"object": "a"}]),
    ({"left": ("a",)}, "stacked_left", [{"object": "a"}]),
    ({"right": ("a",)}, "stacked_right", [{"object": "a"}]),
    (
        {"center": ("a", "b")},
        "stacked",
        [{"position": "bottom", "object": "a"}, {"position": "top", "object": "b"}],
    ),
    (
        {"center": ("a", "b", "c")},
        "stacked",
        [
            {"position": "bottom", "object": "a"},
            {"position": "middle", "object": "b"},
            {"position": "top", "object": "c"},
        ],
    ),
    (
        {"left": ("a",), "right": ("b",)},
        "separated_left_right",
        [{"position": "left", "object": "a"}, {"position": "right", "object": "b"}],
    ),
    (
        {"front": ("a",), "back": ("b",)},
        "separated_front_back",
        [{"position": "front", "object": "a"}, {"position": "back", "object": "b"}],
    ),
    (
        {"left": ("a",), "center": ("b",), "right": ("c",)},
        "separate_horizontal",
        [
            {"position": "left", "object": "a"},
            {"position": "middle", "object": "b"},
            {"position": "right", "object": "c"},
        ],
    ),
    (
        {"front": ("a",), "center": ("b",), "back": ("c",)},
        "separate_vertical",
        [
            {"position": "bottom", "object": "a"},
            {"position": "middle", "object": "b"},
            {"position": "top", "object": "c"},
        ],
    ),
    (
        {"center": ("a", "b"), "left": ("c",)},
        "stacked_and_separated_left",
        [
            {"position": "bottom", "object": "a"},
            {"position": "top", "object": "b"},
            {"position": "left", "object": "c"},
        ],
    ),
    (
        {"center": ("a", "b"), "right": ("c",)},
        "stacked_and_separated_right",
        [
            {"position": "bottom", "object": "a"},
            {"position": "top", "object": "b"},
            {"position": "right", "object": "c"},
        ],
    ),
    (
        {"pyramid_left": ("a",), "pyramid_right": ("b",), "pyramid_top": ("c",)},
        "pyramid",
        [
            {"position": "bottom left", "object": "a"},
            {"position": "bottom right", "object": "b"},
            {"position": "top", "object": "c"},
        ],
    ),
    (
        {"center": ("a",), "front": ("b",)},
        "none",
        [{"position": "center", "object": "a"}, {"position": "front", "object": "b"}],
    ),
]


@pytest.mark.parametrize(("stacks", "relationship", "placements"), ARRANGEMENTS)
def test_arrangement_describe_and_inverse(
    stacks: dict[str, tuple[str, ...]], relationship: str, placements: list[dict[str, str]]
) -> None:
    assert arrangement.describe(stacks) == {
        "relationship": relationship,
        "placements": placements,
    }
    expected = {site: stacks.get(site, ()) for site in arrangement.ARRANGEMENT_SITES}
    assert arrangement.sites_for(relationship, placements) == expected


def test_every_relationship_is_described() -> None:
    described = {relationship for _, relationship, _ in ARRANGEMENTS}
    assert described == set(arrangement.SUPPORTED_RELATIONSHIPS)


def test_sites_for_accepts_numbered_object_keys_in_any_order() -> None:
    stacks = arrangement.sites_for(
        "stacked",
        [{"position": "top", "object 2": "red cube"}, {"position": "bottom", "object 1": "blue"}],
    )
    assert stacks["center"] == ("blue", "red cube")


@pytest.mark.parametrize(
    ("relationship", "placements", "message"),
    [
        (
            "stacked",
            [{"position": "bottom", "object": "a"}, {"position": "up", "object": "b"}],
            "positions bottom, top",
        ),
        ("pyramid", [{"object": "a"}], "needs 3 placements"),
        ("none", [{"position": "B1", "object": "a"}], "arrangement site"),
        ("stacked_left", [{"position": "left"}], "exactly one object field"),
    ],
)
def test_sites_for_rejects_misfits(
    relationship: str, placements: list[dict[str, str]], message: str
) -> None:
    with pytest.raises(arrangement.ArrangementError, match=message):
        arrangement.sites_for(relationship, placements)
