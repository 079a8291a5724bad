"""Scenes saved by the daemon (Scene.to_dict) read back and checked against the cell.

A restarted daemon that drives a real controller plans from this scene, so a file that does not
fit the cell is refused with every problem named, never silently replaced by the initial scene.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.scene import Scene

from voiced.errors import CellError, Problem


def read_saved_scene(cell: Cell, path: Path) -> Scene:
    """The scene saved at `path`. Raises CellError naming the file and what does not fit."""
    source = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        scene = Scene.from_dict(data)
    except OSError as error:
        raise CellError([Problem(source, "", f"cannot read: {error.strerror}")]) from None
    except json.JSONDecodeError as error:
        message = f"JSON syntax error at line {error.lineno}, column {error.colno}: {error.msg}"
        raise CellError([Problem(source, "", message)]) from None
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CellError([Problem(source, "", f"not a saved scene: {error!r}")]) from None
    problems = check_scene(cell, scene, source)
    if problems:
        raise CellError(problems)
    return scene


def check_scene(cell: Cell, scene: Scene, source: str) -> list[Problem]:
    """Everything in `scene` that the cell does not know."""
    problems: list[Problem] = []
    missing = sorted(set(cell.sites) - set(scene.stacks))
    if missing:
        problems.append(Problem(source, "stacks", f"missing sites: {', '.join(missing)}"))
    for site, objects in scene.stacks.items():
        if site not in cell.sites:
            problems.append(Problem(source, f"stacks.{site}", f"unknown site '{site}'"))
        problems += _unknown_objects(cell, objects, source, f"stacks.{site}")
    problems += _unknown_objects(cell, [scene.holding] if scene.holding else [], source, "holding")
    if scene.tool is not None and scene.tool not in cell.tools:
        problems.append(Problem(source, "tool", f"unknown tool '{scene.tool}'"))
    if scene.active_zone is not None and scene.active_zone not in cell.zones():
        problems.append(Problem(source, "active_zone", f"unknown zone '{scene.active_zone}'"))
    return problems


def _unknown_objects(cell: Cell, objects: Any, source: str, path: str) -> list[Problem]:
    known: Mapping[str, object] = cell.objects
    return [Problem(source, path, f"unknown object '{obj}'") for obj in objects if obj not in known]
