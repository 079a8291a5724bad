"""Helpers for the interpreter tests: one loaded cell and grammar per packaged cell."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.scene import Scene
from voiced.robot.view import scene_from_view

from voiced.interpreter.grammar import Grammar


@cache
def cell(name: str) -> Cell:
    return load_cell(name)


@cache
def grammar(name: str) -> Grammar:
    """The packaged cell's grammar (shared: tests that teach it something build their own)."""
    return Grammar(cell(name))


def scene(name: str, view: Mapping[str, Any] | None = None) -> Scene:
    """The cell's initial scene with `view` (state-view keys) applied."""
    if not view:
        return cell(name).initial_scene
    return scene_from_view(cell(name), dict(view), "test scene")
