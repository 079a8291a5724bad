"""Reading and checking a cell's sentence templates (robot.sentences, through the cell loader)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from voiced.robot.cell import Cell
from voiced.robot.cellfile import cell_path, check_cell, load_cell, parse_cell
from voiced.robot.sentencetypes import TemplateBlock

from voiced.errors import CellError

PACKAGED = ("sandwich", "weld", "blocks")


def bare(name: str) -> str:
    """A packaged cell file without its own templates, for a test to add some."""
    text = cell_path(name).read_text("utf-8")
    return re.split(r"^\[+sentences", text, maxsplit=1, flags=re.MULTILINE)[0]


def weld_with(templates: str) -> Cell:
    return parse_cell(bare("weld") + templates, "shop/weld.toml", "weld")


def problems(templates: str) -> list[str]:
    return [str(p) for p in weld_with(templates).sentences.problems]


@pytest.mark.parametrize("name", PACKAGED)
def test_every_packaged_cell_ships_templates_without_problems(name: str) -> None:
    cell = load_cell(name)
    assert cell.sentences.problems == ()
    assert len(cell.sentences.blocks) >= 3
    assert check_cell(name) == []


def test_a_cell_without_templates_has_none() -> None:
    cell = parse_cell(bare("weld"), "shop/weld.toml", "weld")
    assert cell.sentences.blocks == () and cell.sentences.problems == ()


def test_blocks_fixed_slots_lists_and_rules_are_read() -> None:
    cell = weld_with("""
[sentences.expansion_rules]
at = "(at|on)"

[sentences.lists.seam]
values = ["Pos_3", { in = "the (first|1st) seam", out = "Pos_1" }]

[[sentences.intents.run_routine_at]]
sentences = ["run a weld <at> {position}", "tack {seam:position}"]
slots = { routine = "tack_weld" }

[sentences.intents.attach_tool]
sentences = ["mount the {tool}"]
""")
    assert cell.sentences.problems == ()
    assert cell.sentences.blocks == (
        TemplateBlock("run_routine_at", ("run a weld <at> {position}", "tack {seam:position}"),
                      {"routine": "tack_weld"}),
        TemplateBlock("attach_tool", ("mount the {tool}",)),
    )  # fmt: skip
    assert cell.sentences.lists["seam"].values == (
        ("Pos_3", "Pos_3"), ("the (first|1st) seam", "Pos_1"),
    )  # fmt: skip
    assert cell.sentences.expansion_rules == {"at": "(at|on)"}


# One table per bad input: the template, what the one problem line must say, and the line of the
# template it names (the first line of the template is line 1).
BAD = [
    ("syntax", '[sentences.intents.attach_tool]\nsentences = ["mount (the {tool}"]\n',
     "sentences.intents.attach_tool.sentences[0]", "template syntax error", 2),
    ("empty", '[sentences.intents.go_home]\nsentences = [""]\n',
     "sentences.intents.go_home.sentences[0]", "the template is empty", 2),
    ("not a composite", '[sentences.intents.fly_away]\nsentences = ["fly away"]\n',
     "sentences.intents.fly_away", "'fly_away' is not a composite", 1),
    ("internal helper", '[sentences.intents.take]\nsentences = ["take it"]\n',
     "sentences.intents.take", "not a composite", 1),
    ("slot not a parameter",
     '[sentences.intents.release_tool]\nsentences = ["stow {tool:gadget}"]\n',
     "sentence 'stow {tool:gadget}'", "slot 'gadget' is not a parameter of release_tool", 2),
    ("fixed slot not a parameter",
     '[[sentences.intents.go_home]]\nsentences = ["home time"]\nslots = { colour = "red" }\n',
     "sentences.intents.go_home[0].slots", "slot 'colour' is not a parameter of go_home", 3),
    ("list value unknown",
     '[sentences.lists.seam]\nvalues = [{ in = "the fourth seam", out = "Pos_4" }]\n'
     '[[sentences.intents.move_to_position]]\nsentences = ["go to {seam:position}"]\n',
     "list {seam} ('the fourth seam' -> 'Pos_4')", "is not a position this cell knows", 4),
    ("fixed slot value unknown",
     '[[sentences.intents.run_routine_at]]\nsentences = ["braze {position}"]\n'
     'slots = { routine = "braze" }\n',
     "slots.routine", "'braze' is not a routine this cell knows", 3),
    ("unknown list", '[sentences.intents.attach_tool]\nsentences = ["mount the {gizmo:tool}"]\n',
     "no list {gizmo}", "lists: ", 2),
    ("unknown rule", '[sentences.intents.attach_tool]\nsentences = ["mount <the> {tool}"]\n',
     "no expansion rule <the>", "rules: none", 2),
    ("wrong list kind",
     '[sentences.intents.attach_tool]\nsentences = ["mount the {routine:tool}"]\n',
     "{routine} gives routine names", "tool is a tool", 2),
    ("required parameter never filled",
     '[sentences.intents.run_routine_at]\nsentences = ["weld {position}"]\n',
     "never fills routine", "run_routine_at needs", 2),
    ("no sentences", '[sentences.intents.go_home]\nslots = {}\n',
     "sentences.intents.go_home", "non-empty array of templates", 1),
    ("shadowing a cell list", '[sentences.lists.tool]\nvalues = ["Welder"]\n',
     "sentences.lists.tool", "comes from the cell", 1),
    ("closed not a boolean", '[sentences]\nclosed = "yes"\n',
     "sentences.closed", "expected true or false, got a string", 2),
]  # fmt: skip


@pytest.mark.parametrize(("case", "template", "where", "what", "line"), BAD,
                         ids=[b[0] for b in BAD])  # fmt: skip
def test_each_bad_template_is_one_problem_naming_file_line_and_sentence(
    case: str, template: str, where: str, what: str, line: int
) -> None:
    found = problems(template)
    assert len(found) == 1, found
    before = bare("weld").count("\n")
    assert found[0].startswith(f"shop/weld.toml:{before + line}: "), found[0]
    assert where in found[0] and what in found[0], found[0]


def test_a_cell_with_a_bad_template_loads_without_it_and_with_the_others() -> None:
    """One typo used to keep every template out (a barista cell lost all its orders)."""
    cell = weld_with("""
[sentences.lists.seam]
values = ["Pos_3", { in = "the first seam", out = "Pos_1" }, { in = "the moon", out = "Moon" }]

[sentences.intents.attach_tool]
sentences = ["mount the {tool}"]

[[sentences.intents.run_routine_at]]
sentences = ["tack {seam:position}", "weld {position} now (please"]
slots = { routine = "tack_weld" }

[[sentences.intents.run_routine_at]]
sentences = ["zap {position}"]
slots = { routine = "zap_weld" }

[sentences.intents.go_home]
sentences = ["home (time"]
""")
    assert len(cell.sentences.problems) == 4, cell.sentences.problems
    shown = {b.intent: (b.sentences, dict(b.slots)) for b in cell.sentences.blocks}
    assert shown == {
        "attach_tool": (("mount the {tool}",), {}),
        "run_routine_at": (("tack {seam:position}",), {"routine": "tack_weld"}),
    }, "the sentence with a syntax error, the block with a wrong fixed value and go_home out"
    seam = cell.sentences.lists["seam"]
    assert [said for said, _ in seam.values] == ["Pos_3", "the first seam"], "Moon left out"
    assert cell.composite("attach_tool") is not None  # the cell itself is whole


def test_check_cell_reports_template_problems_and_cell_problems(tmp_path: Path) -> None:
    templated = tmp_path / "weld.toml"
    templated.write_text(bare("weld") + '[sentences.intents.fly]\nsentences = ["fly"]\n', "utf-8")
    assert [p.path for p in check_cell(templated)] == ["sentences.intents.fly"]
    broken = tmp_path / "broken.toml"
    broken.write_text(bare("weld").replace('pose = "Home"', 'pose = "Nowhere"'), "utf-8")
    with pytest.raises(CellError):
        load_cell(broken)
    assert check_cell(broken) and all("sentences" not in p.path for p in check_cell(broken))
