"""What the daemon believes about its cell, shared by the parts of the pipeline.

Two scenes: `scene` is the cell after every primitive the controller reported done (corrected
by its report after every fault, see `voiced.commands.reconcile`); `planned` is the cell once
everything accepted has run, which new commands are interpreted against. Only the controller's
report or a finished run changes `scene`; a stop sets `planned` back to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from voiced.commands.pause_hold import Hold
from voiced.commands.reconcile import Interrupted
from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.compiler import Program, compile_sequence
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep
from voiced.words.undo import Placement

log = structlog.get_logger(__name__)


@dataclass
class Belief:
    cell: Cell
    """The cell with the composites learned so far."""
    scene: Scene
    planned: Scene
    last_goals: tuple[SequenceStep, ...] = ()
    """The goals of the last command accepted ("and cheese" continues them)."""
    last_creative: bool = False
    """`last_goals` are a creative build's (or a repeat of one): never learned as a phrase."""
    interrupted: Interrupted | None = None
    """The last command cut short, until the operator continues it or says something else."""
    hold: Hold | None = None
    """A pause in force: what it holds until "continue" or a stop."""
    placed: tuple[Placement, ...] = ()
    """What accepted commands put down, oldest first (what "undo" takes back)."""
    reconciled: bool = True
    """False from a lost link until the controller's report has corrected the scene."""


def scene_after_partial_run(
    cell: Cell, before: Scene, program: Program, completed: Sequence[int]
) -> Scene:
    """The scene after a stopped or failed run: the steps whose primitives all completed (logical
    ones like set_active_zone included), then the completed primitives of the step cut short."""
    done = set(completed)
    prefix = 0
    while prefix < len(program.steps) and all(
        i in done for i in range(program.steps[prefix].start, program.steps[prefix].end)
    ):
        prefix += 1
    calls = [step.call for step in program.steps]
    scene = before
    if prefix:
        compiled = compile_sequence(cell, before, calls[:prefix])
        if compiled.program is None:  # cannot happen: this prefix compiled a moment ago
            log.error("tracked scene diverged", issues=[e.message for e in compiled.errors])
            return before
        scene = compiled.program.expected
    if prefix < len(program.steps):
        cut = program.steps[prefix]
        for index in range(cut.start, cut.end):
            if index not in done:
                break
            scene = physics.apply(cell, scene, program.primitives[index])
    return scene
