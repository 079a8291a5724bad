"""Finding the line of a dotted path in TOML text (for `file:line:` in the checks)."""

from __future__ import annotations

import pytest

from voiced.checks.tomlwhere import line_of_path, line_of_syntax_error, split_path

TEXT = """\
[cell]
name = "x"

[composites.add_layer]
description = "one layer"
params = { item = "object" }

[objects."red cube"]
size = 3
[[sites.shelf.slots]]
at = 1
"""

CASES = [
    ("cell.name", 2),
    ("composites.add_layer", 4),
    ("composites.add_layer.params.item", 6),
    ("composites.add_layer.steps", 4),  # missing: the table it belongs in
    ('objects."red cube".size', 9),
    ("sites.shelf.slots[0].at", 11),
    ("limits.reach", None),
]


@pytest.mark.parametrize(("path", "line"), CASES)
def test_line_of_path(path: str, line: int | None) -> None:
    assert line_of_path(TEXT, path) == line


def test_split_path_drops_list_positions_and_quotes() -> None:
    assert split_path('a."b c".d[2].e') == ["a", "b c", "d", "e"]


def test_line_of_syntax_error_reads_tomllib_and_json_messages() -> None:
    assert line_of_syntax_error("Illegal character '\\n' (at line 2, column 10)") == 2
    assert line_of_syntax_error("JSON syntax error at line 7, column 1: Expecting value") == 7
    assert line_of_syntax_error("no such cell file") is None
