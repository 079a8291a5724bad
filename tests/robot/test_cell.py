"""Loading and validating cell files (robot.cell, robot.cellfile, robot.cellsteps)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from voiced.robot.cell import Cell, ValueProblem
from voiced.robot.cellfile import list_cells, load_cell
from voiced.robot.cellsteps import with_learned
from voiced.robot.compiler import compile_sequence
from voiced.robot.sequence import SequenceStep, steps_from_json

from voiced.errors import CellError

PACKAGED = ("sandwich", "weld", "blocks", "barista")

TINY = """
[cell]
description = "A tiny test cell"
primitives = ["move_to", "gripper_set", "wait"]
state_view = ["zones", "holding", "position"]

[motion]
default_speed = "normal"
speeds = { normal = 200 }

[limits]
workspace_min = [0, 0, -10]
workspace_max = [500, 500, 500]
max_speed = 400
gripper_min = 0
gripper_max = 100

[zone_aliases]
there = "table"

[objects.puck]
height_mm = 10
width_mm = 50
supply = "supply_puck"

[sites.supply_puck]
kind = "supply"
at = [100, 100, 0]

[sites.table]
kind = "zone"
at = [300, 100, 0]

[poses.home]
at = [250, 250, 300]
role = "home"

[composites.go_home]
description = "Go home."
steps = [{ op = "move_to", at = "pose(home)" }]

[composites.fetch]
description = "Hover over the top puck."
params.item = { type = "item", description = "What to fetch." }
steps = [{ op = "move_to", at = "grasp(supply($item))", above = 20 }]

[initial]
pose = "home"
supplies = { puck = 3 }
"""


def write(tmp_path: Path, text: str, name: str = "tiny.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(CellError) as caught:
        load_cell(write(tmp_path, text))
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize("name", PACKAGED)
def test_packaged_cells_load(name: str) -> None:
    cell = load_cell(name)
    assert cell.name == name
    assert cell.description
    assert cell.source.endswith(f"{name}.toml")
    assert cell.instructions()
    for composite in cell.composites.values():
        assert composite.description, composite.name
        assert all(p.description for p in composite.params), composite.name
    assert set(cell.initial_scene.stacks) == set(cell.sites)


def test_list_cells_lists_all_four_with_descriptions() -> None:
    listed = dict(list_cells())
    assert set(PACKAGED) <= set(listed)
    assert all(listed[name] for name in PACKAGED)


def test_tiny_cell_loads_by_path(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    cell = load_cell(str(path))
    assert cell.name == "tiny"
    assert cell.items() == ("puck",)
    assert cell.zones() == ("table",)
    assert cell.default_zone == "table"
    assert cell.initial_scene.stacks["supply_puck"] == ("puck",) * 3
    assert cell.initial_scene.gripper == 100.0
    assert load_cell(path) == cell


def test_unknown_packaged_cell_names_the_available_ones() -> None:
    with pytest.raises(CellError) as caught:
        load_cell("kitchen")
    assert "sandwich" in str(caught.value)


BAD_FILES = [
    (
        "unknown primitive in a composite",
        ('steps = [{ op = "move_to", at = "pose(home)" }]', 'steps = [{ op = "move_absolute" }]'),
        "composites.go_home.steps[0].op",
        "unknown primitive 'move_absolute' in composite 'go_home'",
    ),
    (
        "primitive not enabled in the cell",
        ('steps = [{ op = "move_to", at = "pose(home)" }]', 'steps = [{ op = "tool_detach" }]'),
        "composites.go_home.steps[0].op",
        "not enabled",
    ),
    (
        "unknown key",
        ("height_mm = 10", 'height_mm = 10\ncolour = "red"'),
        "objects.puck.colour",
        "unknown key 'colour'",
    ),
    (
        "unknown section",
        ("[zone_aliases]", "[robot]\nx = 1\n\n[zone_aliases]"),
        "robot",
        "unknown key 'robot'",
    ),
    (
        "wrong type names the expected type",
        ("height_mm = 10", 'height_mm = "ten"'),
        "objects.puck.height_mm",
        "expected a finite number, got a string",
    ),
    (
        "wrong array shape",
        ("at = [300, 100, 0]", "at = [300, 100]"),
        "sites.table.at",
        "an array of 3 finite numbers",
    ),
    (
        "a workspace without bounds",
        ("workspace_max = [500, 500, 500]", "workspace_max = [inf, inf, inf]"),
        "limits.workspace_max",
        "expected an array of 3 finite numbers [x, y, z], got an array holding inf",
    ),
    (
        "nan anywhere",
        ("height_mm = 10", "height_mm = nan"),
        "objects.puck.height_mm",
        "expected a finite number, got nan",
    ),
    (
        "one entry of a table of numbers",
        ("speeds = { normal = 200 }", "speeds = { normal = 200, slow = inf }"),
        "motion.speeds.slow",
        "expected a finite number, got inf",
    ),
    (
        "a workspace beyond the GoFa's reach",
        ("workspace_max = [500, 500, 500]", "workspace_max = [4000, 500, 500]"),
        "limits.workspace_max",
        "beyond the arm's reach (950 mm, limits.reach_mm)",
    ),
    (
        "a reach no arm has",
        ("max_speed = 400\n", "max_speed = 400\nreach_mm = -inf\n"),
        "limits.reach_mm",
        "expected a finite number, got -inf",
    ),
    (
        "missing required key",
        ("max_speed = 400\n", ""),
        "limits.max_speed",
        "missing required key",
    ),
    (
        "unknown parameter type",
        ('type = "item"', 'type = "itme"'),
        "composites.fetch.params.item.type",
        "unknown parameter type 'itme' (expected one of item, object",
    ),
    (
        "reference to an undefined pose",
        ('at = "pose(home)"', 'at = "pose(garage)"'),
        "composites.go_home.steps[0].at",
        "garage",
    ),
    (
        "reference to an undefined parameter",
        ("grasp(supply($item))", "grasp(supply($thing))"),
        "composites.fetch.steps[0].at",
        "unknown parameter '$thing'",
    ),
    (
        "unknown function",
        ('at = "pose(home)"', 'at = "teleport(home)"'),
        "composites.go_home.steps[0].at",
        "unknown function 'teleport'",
    ),
    (
        "expression of the wrong kind",
        ("grasp(supply($item))", "supply($item)"),
        "composites.fetch.steps[0].at",
        "gives a site but a pose is expected",
    ),
    (
        "expression syntax",
        ("grasp(supply($item))", "grasp(supply($item)"),
        "composites.fetch.steps[0].at",
        "cannot read",
    ),
    (
        "undefined supply site",
        ('supply = "supply_puck"', 'supply = "shelf"'),
        "objects.puck.supply",
        "unknown supply site 'shelf'",
    ),
    (
        "undefined composite called",
        ('steps = [{ op = "move_to", at = "pose(home)" }]', 'steps = [{ call = "fly" }]'),
        "composites.go_home.steps[0].call",
        "unknown composite 'fly'",
    ),
    (
        "zone alias to an undefined zone",
        ('there = "table"', 'there = "bench"'),
        "zone_aliases.there",
        "unknown zone 'bench'",
    ),
    (
        "unknown state view key",
        ('state_view = ["zones", "holding", "position"]', 'state_view = ["zones", "mood"]'),
        "cell.state_view[1]",
        "unknown state key 'mood'",
    ),
    (
        "initial pose undefined",
        ('pose = "home"\nsupplies', 'pose = "garage"\nsupplies'),
        "initial.pose",
        "unknown pose 'garage'",
    ),
    (
        "default of the wrong type",
        ('description = "What to fetch." }', 'description = "What to fetch.", default = "bolt" }'),
        "composites.fetch.params.item.default",
        "bolt",
    ),
    (
        "step with two heads",
        ('[{ op = "move_to", at = "pose(home)" }]', '[{ op = "wait", call = "fetch" }]'),
        "composites.go_home.steps[0]",
        "exactly one of op, call, set, if, while",
    ),
]


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [pytest.param(change, path, message, id=case) for case, change, path, message in BAD_FILES],
)
def test_bad_cell_files_are_rejected_with_path(
    tmp_path: Path, change: tuple[str, str], path: str, message: str
) -> None:
    old, new = change
    assert old in TINY
    found = problems_of(tmp_path, TINY.replace(old, new, 1))
    source = str(tmp_path / "tiny.toml")
    assert any(p.startswith(f"{source}: {path}: ") and message in p for p in found), found


def test_cycles_in_composite_calls_are_rejected(tmp_path: Path) -> None:
    text = TINY + (
        '\n[composites.ping]\ndescription = "a"\nsteps = [{ call = "pong" }]\n'
        '\n[composites.pong]\ndescription = "b"\nsteps = [{ call = "ping" }]\n'
    )
    found = problems_of(tmp_path, text)
    assert any("calls itself: ping -> pong -> ping" in p for p in found), found


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    found = problems_of(tmp_path, TINY.replace("height_mm = 10", "height_mm = = 10"))
    assert len(found) == 1
    assert str(tmp_path / "tiny.toml") in found[0]
    assert "line" in found[0]


def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    text = TINY.replace("height_mm = 10", 'height_mm = "ten"').replace(
        'steps = [{ op = "move_to", at = "pose(home)" }]', 'steps = [{ op = "move_absolute" }]'
    )
    found = problems_of(tmp_path, text.replace('type = "item"', 'type = "itme"'))
    assert len(found) >= 3
    joined = "\n".join(found)
    for path in ("objects.puck.height_mm", "composites.go_home.steps[0].op", "params.item.type"):
        assert path in joined


TABLES = ("cell", "motion", "limits", "zone_aliases", "objects", "sites", "poses", "tools",
          "routines", "composites", "initial", "sentences")  # fmt: skip
CELL_FILES = Path(__file__).parents[2] / "robot" / "cells"


def _misspelt(text: str, table: str) -> str:
    return re.sub(rf"^(\[\[?){table}(\]|\.)", rf"\g<1>{table}x\g<2>", text, flags=re.M)


MISSPELT = [
    (cell.stem, table)
    for cell in sorted(CELL_FILES.glob("*.toml"))
    for table in TABLES
    if _misspelt(text := cell.read_text(encoding="utf-8"), table) != text
]


@pytest.mark.parametrize(("cell", "table"), MISSPELT)
def test_a_misspelt_table_is_one_problem(tmp_path: Path, cell: str, table: str) -> None:
    """ "[limts]" also reported limits.max_speed and four more missing; "[moton]" every named
    speed; "[sites]" misspelt every zone, supply and condition that names a site."""
    text = (CELL_FILES / f"{cell}.toml").read_text(encoding="utf-8")
    found = problems_of(tmp_path, _misspelt(text, table))
    assert len(found) == 1, found
    assert f"did you mean {table}?" in found[0]


def test_learned_composites_are_tier_2_and_compile() -> None:
    cell = load_cell("sandwich")
    sequence = [
        {"instruction": "add_layer", "params": {"item": "Bread"}},
        {"instruction": "add_layer", "params": {"item": "cheese"}},
        {"instruction": "add_layer", "params": {"item": "bread"}},
    ]
    learned = with_learned(cell, "cheese_sandwich", "Bread, cheese, bread.", sequence)
    assert "cheese_sandwich" not in cell.composites
    assert learned.composites["cheese_sandwich"].tier == 2
    assert "cheese_sandwich" in learned.instructions()
    result = compile_sequence(learned, learned.initial_scene, [SequenceStep("cheese_sandwich")])
    assert result.program is not None, result.errors
    direct = compile_sequence(cell, cell.initial_scene, steps_from_json(sequence))
    assert direct.program is not None
    assert result.program.primitives == direct.program.primitives


@pytest.mark.parametrize(
    ("name", "sequence", "message"),
    [
        ("snack", [{"instruction": "move_absolute"}], "unknown instruction 'move_absolute'"),
        ("snack", [{"instruction": "add_layer", "params": {"item": "avocado"}}], "avocado"),
        ("snack", [{"instruction": "add_layer"}], "needs parameter 'item'"),
        ("go_home", [{"instruction": "go_home"}], "already exists"),
        ("snack", [], "at least one step"),
    ],
)
def test_bad_learned_composites_are_rejected(
    name: str, sequence: list[dict[str, object]], message: str
) -> None:
    cell = load_cell("sandwich")
    with pytest.raises(CellError, match=message):
        with_learned(cell, name, "test", sequence)


@pytest.fixture(scope="module")
def sandwich() -> Cell:
    return load_cell("sandwich")


@pytest.mark.parametrize(
    ("word", "zone"),
    [
        ("left", "assembly_left"),
        ("Right", "assembly_right"),
        ("over there", "assembly_fixture"),
        ("center", "assembly_fixture"),
        ("middle", "assembly_fixture"),
        ("assembly_left", "assembly_left"),
        ("Assembly Right", "assembly_right"),
    ],
)
def test_resolve_zone(sandwich: Cell, word: str, zone: str) -> None:
    assert sandwich.resolve_zone(word) == zone


@pytest.mark.parametrize(
    ("value", "speed"), [("slow", 100.0), ("FAST", 500.0), (300, 300.0), ("320 mm/s", 320.0)]
)
def test_resolve_speed(sandwich: Cell, value: object, speed: float) -> None:
    assert sandwich.resolve_speed(value) == speed


@pytest.mark.parametrize(
    ("value", "distance"), [("a little", 20.0), ("a  Bit", 50.0), ("a lot", 150.0), (35, 35.0)]
)
def test_resolve_distance(sandwich: Cell, value: object, distance: float) -> None:
    assert sandwich.resolve_distance(value) == distance


@pytest.mark.parametrize(
    ("kind", "value", "code"),
    [
        ("zone", "kitchen", "unknown_zone"),
        ("speed", "ludicrous", "bad_value"),
        ("distance", True, "bad_value"),
        ("item", "avocado", "unknown_item"),
        ("direction", "sideways", "bad_value"),
        ("site", "fridge", "unknown_site"),
    ],
)
def test_resolve_rejects_unknown_words(sandwich: Cell, kind: str, value: object, code: str) -> None:
    with pytest.raises(ValueProblem) as caught:
        sandwich.resolve(kind, value)
    assert caught.value.code == code


def test_cell_helpers() -> None:
    weld = load_cell("weld")
    assert weld.work_positions() == ("Pos_1", "Pos_2", "Pos_3")
    assert weld.resolve("position", "pos 1") == "Pos_1"
    assert weld.routines["tack_weld"].tool == "Welder"
    blocks = load_cell("blocks")
    assert blocks.items() == ()
    assert blocks.sites_of_kind("buffer") == ("B1", "B2", "B3")
    assert blocks.composite("take") is None  # internal helper
    assert blocks.composite("Move_Object") is blocks.composites["move_object"]


def test_a_read_back_template_may_only_name_parameters(tmp_path: Path) -> None:
    cells_dir = Path(__file__).resolve().parents[2] / "robot" / "cells"
    source = (cells_dir / "sandwich.toml").read_text(encoding="utf-8")
    broken = source.replace('say = "add {item}"', 'say = "add {thing}"')
    path = tmp_path / "broken.toml"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(CellError, match=r"composites.add_layer.say: unknown placeholder \{thing\}"):
        load_cell(str(path))
