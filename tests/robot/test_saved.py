"""Saved scenes read back and checked against the cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.saved import read_saved_scene
from voiced.robot.sequence import SequenceStep

from voiced.errors import CellError


def test_a_saved_scene_round_trips(tmp_path: Path) -> None:
    cell = load_cell("sandwich")
    program = compile_sequence(
        cell, cell.initial_scene, [SequenceStep("add_layer", {"item": "bread"})]
    ).program
    assert program is not None
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(program.expected.to_dict()), encoding="utf-8")
    assert read_saved_scene(cell, path) == program.expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "JSON syntax error at line 1"),
        ("[]", "not a saved scene"),
        ('{"stacks": {}, "pose": {"x": 0, "y": 0, "z": 0}}', "missing sites"),
        ('{"stacks": {"nowhere": []}, "pose": {"x": 0, "y": 0, "z": 0}}', "unknown site"),
    ],
)
def test_bad_saved_scenes_are_named(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "scene.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CellError) as caught:
        read_saved_scene(load_cell("sandwich"), path)
    assert expected in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_scene_from_another_cell_is_refused(tmp_path: Path) -> None:
    weld = load_cell("weld")
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(weld.initial_scene.to_dict()), encoding="utf-8")
    with pytest.raises(CellError, match="missing sites"):
        read_saved_scene(load_cell("sandwich"), path)
