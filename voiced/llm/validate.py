"""Seed 000's pass 2, done deterministically: rules 1-6 fix or remove bad steps, then the compiler
checks what is left against the scene (preconditions, supplies, limits).

The model's own validation pass is optional and never trusted alone (an external checker beats
self-verification: arXiv 2310.08118); this one always runs, on every sequence a model proposes,
including the corrections a model validator suggests.

What is fixed rather than only reported: steps calling unknown instructions, items, zones,
locations or directions are removed (rules 1-4, 6); `transfer` / `place_at` with an item become
`add_layer` (rule 5); unknown parameters are dropped; names are rewritten in canonical form
("left" -> "assembly_left"). Compiler problems (a precondition, an empty supply, a limit) cannot
be fixed here: they are reported, and pass 3 asks the model again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voiced.robot.cell import Cell, ValueProblem
from voiced.robot.compiler import compile_sequence
from voiced.robot.program import Composite
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep

ASSEMBLY_IMPOSTORS = frozenset({"transfer", "place_at"})
"""Rule 5: instructions models use for assembly that the sandwich cell spells add_layer."""

_CANONICAL = frozenset(
    {"item", "object", "zone", "site", "position", "tool", "routine", "direction"}
)
"""Parameter types whose values are rewritten in canonical form (speeds and distances keep the
words the model used: the compiler resolves those, and "a bit" reads better than 50.0)."""


@dataclass(frozen=True)
class Checked:
    """A sequence after the deterministic validator."""

    sequence: tuple[SequenceStep, ...]
    """The steps kept, fixed and in canonical form."""
    issues: tuple[str, ...]
    """Everything found, fixed or not, as short sentences."""
    compiles: bool
    """True when the compiler accepts `sequence` from the scene."""

    @property
    def clean(self) -> bool:
        return not self.issues and self.compiles


def validate_steps(cell: Cell, scene: Scene, raw: object) -> Checked:
    """Apply rules 1-6 to `raw` (a model's "sequence" value), then compile the result."""
    if not isinstance(raw, list):
        return Checked((), ("the sequence is not a list of steps",), False)
    kept: list[SequenceStep] = []
    issues: list[str] = []
    for index, step in enumerate(raw):
        fixed, problems = _fix_step(cell, index, step)
        issues += problems
        if fixed is not None:
            kept.append(fixed)
    compiled = compile_sequence(cell, scene, kept)
    for error in compiled.errors:
        where = f"step {error.step + 1} ({error.instruction})" if error.step >= 0 else "sequence"
        issues.append(f"{where}: {error.message}")
    return Checked(tuple(kept), tuple(issues), compiled.ok)


def _fix_step(cell: Cell, index: int, raw: object) -> tuple[SequenceStep | None, list[str]]:
    where = f"step {index + 1}"
    if not isinstance(raw, Mapping) or not isinstance(raw.get("instruction"), str):
        return None, [f'{where} is not {{"instruction": name, "params": {{...}}}} (removed)']
    name: str = raw["instruction"]
    params = raw.get("params") or {}
    if not isinstance(params, Mapping):
        return None, [f"{where} ({name}): params is not an object (removed)"]
    composite = cell.composite(name)
    if composite is None and name in ASSEMBLY_IMPOSTORS and "item" in params:
        replacement = cell.composite("add_layer")
        if replacement is not None:
            step, problems = _bind(cell, where, replacement, {"item": params["item"]})
            message = f"{name} used for the assembly zone — should be add_layer"
            return step, [message, *problems]
    if composite is None:
        return None, [f"{name} is not a valid instruction (removed)"]
    return _bind(cell, where, composite, params)


def _bind(
    cell: Cell, where: str, composite: Composite, params: Mapping[Any, Any]
) -> tuple[SequenceStep | None, list[str]]:
    problems: list[str] = []
    bound: dict[str, Any] = {}
    for key, value in params.items():
        spec = composite.param(str(key))
        if spec is None:
            problems.append(f"{composite.name} has no parameter '{key}' (dropped)")
        elif value is not None:
            bound[spec.name] = value
    for spec in composite.params:
        if spec.name not in bound:
            if spec.default is None:
                message = f"{composite.name} needs '{spec.name}': {spec.description} (removed)"
                return None, [*problems, message]
            continue
        try:
            resolved = cell.resolve(spec.type, bound[spec.name])
        except ValueProblem as problem:
            return None, [*problems, f"{where} ({composite.name}): {problem.message} (removed)"]
        if spec.type in _CANONICAL:
            bound[spec.name] = resolved
    return SequenceStep(composite.name, bound), problems


def steps_of(raw: object) -> tuple[SequenceStep, ...]:
    """The well-formed steps of a model's sequence, unchanged (for `pass1_sequence`)."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return ()
    out: list[SequenceStep] = []
    for step in raw:
        if isinstance(step, Mapping) and isinstance(step.get("instruction"), str):
            params = step.get("params") or {}
            out.append(
                SequenceStep(
                    step["instruction"], dict(params) if isinstance(params, Mapping) else {}
                )
            )
    return tuple(out)
