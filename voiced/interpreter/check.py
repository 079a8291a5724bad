"""The deterministic validator every interpretation passes through (seed 000's pass 2, done by the
compiler instead of a model): names, parameters, preconditions against the scene, limits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from voiced.interpreter.result import Interpretation
from voiced.robot.cell import Cell
from voiced.robot.compiler import CompileResult, Program, compile_sequence
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep


@dataclass(frozen=True)
class Checked:
    """An interpretation and, when it had a sequence, what the compiler made of it."""

    interpretation: Interpretation
    compiled: CompileResult | None

    @property
    def runnable(self) -> bool:
        return self.compiled is not None and self.compiled.ok


def validate(result: Interpretation, cell: Cell, scene: Scene) -> Checked:
    """Compile the sequence against the scene; failures become validation issues and feedback."""
    if not result.sequence:
        return Checked(result, None)
    compiled = compile_sequence(cell, scene, result.sequence)
    if compiled.ok:
        return Checked(result, compiled)
    issues = tuple(issue.message for issue in compiled.errors)
    failed = result.with_changes(
        validated=False,
        validation_issues=result.validation_issues + issues,
        user_feedback=result.user_feedback or issues[0],
    )
    return Checked(failed, compiled)


def program_from(
    cell: Cell, scene: Scene, accepted: Program, sequence: Sequence[SequenceStep]
) -> CompileResult:
    """What runs from `scene`: the program accepted, when it was compiled from this very scene
    (compiling is pure, so doing it again would only repeat it), else `sequence` compiled again
    from `scene`, where it may no longer fit."""
    if accepted.start == scene:
        return CompileResult(accepted)
    return compile_sequence(cell, scene, sequence)
