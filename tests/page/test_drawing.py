"""The drawing of each packaged cell: its sites, stacks, poses, tool stands and the arm."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.primitives import Pose

from voiced.page.drawing import COLOURS, cell_svg, colour_of

SVG = "{http://www.w3.org/2000/svg}"


def objects(svg: str) -> list[tuple[str, str]]:
    root = ET.fromstring(svg)
    return [(r.get("data-object", ""), r.get("fill", "")) for r in root.iter(f"{SVG}rect")
            if r.get("data-object")]  # fmt: skip


@pytest.mark.parametrize("name", ["sandwich", "weld", "blocks", "barista"])
def test_every_cell_is_drawn_as_valid_svg(name: str) -> None:
    cell = load_cell(name)
    root = ET.fromstring(cell_svg(cell, cell.initial_scene))
    assert root.tag == f"{SVG}svg"
    drawn = {g.get("data-site") for g in root.iter(f"{SVG}g") if g.get("data-site")}
    assert drawn == set(cell.sites)
    poses = {g.get("data-pose") for g in root.iter(f"{SVG}g") if g.get("data-pose")}
    assert poses == set(cell.poses)
    tools = {g.get("data-tool") for g in root.iter(f"{SVG}g") if g.get("data-tool")}
    assert tools == set(cell.tools)


def test_stacks_are_drawn_bottom_to_top_in_their_colours() -> None:
    cell = load_cell("sandwich")
    scene = cell.initial_scene
    scene = scene.with_changes(stacks={**scene.stacks, "assembly_fixture": ("bread", "cheese")})
    drawn = objects(cell_svg(cell, scene))
    assert ("bread", COLOURS["bread"]) in drawn and ("cheese", COLOURS["cheese"]) in drawn


def test_the_arm_shows_what_it_holds_and_the_tool_leaves_its_stand() -> None:
    blocks = load_cell("blocks")
    held = blocks.initial_scene.with_changes(holding="red cube", pose=Pose(500, 0, 200))
    root = ET.fromstring(cell_svg(blocks, held))
    (rect,) = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "held"]
    assert (rect.get("data-object"), rect.get("fill")) == ("red cube", COLOURS["red"])
    weld = load_cell("weld")
    svg = cell_svg(weld, weld.initial_scene.with_changes(tool="Welder"))
    assert "Welder (on the arm)" in svg and "Camera (on the arm)" not in svg


def test_a_name_without_a_colour_word_gets_a_stable_one() -> None:
    assert colour_of("mystery part").startswith("hsl(")
    assert colour_of("mystery part") == colour_of("mystery part")
    assert colour_of("green_cube") == COLOURS["green"]


def test_the_top_of_a_pyramid_is_drawn_above_its_supports() -> None:
    cell = load_cell("blocks")
    stacks = {**cell.initial_scene.stacks, "S1": (), "S2": (), "S3": (),
              "pyramid_left": ("red cube",), "pyramid_right": ("green cube",),
              "pyramid_top": ("blue cube",)}  # fmt: skip
    root = ET.fromstring(cell_svg(cell, cell.initial_scene.with_changes(stacks=stacks)))
    top = {r.get("data-object"): float(r.get("y", "0")) for r in root.iter(f"{SVG}rect")
           if r.get("data-object")}  # fmt: skip
    assert top["blue cube"] < top["red cube"] == top["green cube"]


def test_site_names_are_drawn_over_the_arm() -> None:
    """The arm parked over the assembly fixture hid its name."""
    cell = load_cell("sandwich")
    fixture = cell.sites["assembly_fixture"]
    scene = cell.initial_scene.with_changes(pose=Pose(fixture.x, fixture.y, 200))
    root = ET.fromstring(cell_svg(cell, scene))
    order = [e.get("class") or e.get("data-site-name") for e in root if e.tag == f"{SVG}g"]
    assert order.index("site-names") > order.index("arm")
    names = {t.get("data-site-name") for t in root.iter(f"{SVG}text") if t.get("data-site-name")}
    assert "assembly_fixture" in names
