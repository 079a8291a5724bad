"""The instruction compiler: a sequence of composite calls in, tier-0 primitives out.

`compile_sequence` validates every step of a sequence (seed 000 format:
`[{"instruction": "add_layer", "params": {"item": "bread"}}, ...]`) against the cell's
instruction set, resolves spoken aliases, expands composites into primitives against the running
scene, checks each composite's preconditions, and runs every primitive through `robot.physics`
so that workspace, speed and gripper limits are enforced before anything moves. It never raises
for bad input: problems come back as `CompileIssue`s. Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from robot import expr as ex
from robot import physics
from robot.cell import (
    Cell,
    Value,
    ValueProblem,
)
from robot.primitives import (
    CallRoutine,
    Grip,
    MoveJ,
    MoveL,
    Pose,
    Primitive,
    Speed,
    ToolAttach,
    ToolDetach,
    Wait,
)
from robot.program import (
    DIRECTIONS,
    CallStep,
    Composite,
    IfStep,
    OpStep,
    SetStep,
    Step,
    WhileStep,
)
from robot.scene import Scene

MAX_LOOP = 100
"""Most rounds a `while` step may run before the program is refused."""

_PHYSICS_CODES = frozenset({"workspace", "speed"})


@dataclass(frozen=True)
class CompileIssue:
    """One reason a sequence cannot run."""

    step: int
    """Index (0-based) of the sequence step at fault; -1 for the sequence as a whole."""
    instruction: str
    """The step's instruction as given."""
    code: str
    """unknown_instruction, unknown_param, missing_param, bad_value, unknown_item, unknown_zone,
    unknown_site, unknown_position, unknown_tool, unknown_routine, precondition, workspace,
    speed, physics, loop or malformed."""
    message: str
    """Plain-English explanation, fit to show or speak."""
    param: str | None = None
    """The parameter at fault, if one is."""


@dataclass(frozen=True)
class CompiledStep:
    """One sequence step and the primitives it became."""

    instruction: str
    """The composite's name."""
    params: Mapping[str, Value]
    """Its parameters, resolved (aliases replaced, defaults filled in)."""
    start: int
    """Index of its first primitive in `Program.primitives`."""
    end: int
    """One past its last primitive (equal to `start` for a purely logical step)."""


@dataclass(frozen=True)
class Program:
    """A compiled sequence."""

    primitives: tuple[Primitive, ...]
    """Everything to send, in order, with absolute poses."""
    steps: tuple[CompiledStep, ...]
    """Which primitives each sequence step produced."""
    expected: Scene
    """The scene once every primitive has run."""


@dataclass(frozen=True)
class CompileResult:
    """A program, or every reason there is none."""

    program: Program | None
    """The program when compilation succeeded."""
    errors: tuple[CompileIssue, ...] = ()
    """The problems found (empty on success)."""

    @property
    def ok(self) -> bool:
        return self.program is not None and not self.errors


class _Fail(Exception):
    """Aborts the expansion of one sequence step."""

    def __init__(self, code: str, message: str, param: str | None = None) -> None:
        self.code, self.message, self.param = code, message, param
        super().__init__(message)


def compile_sequence(cell: Cell, scene: Scene, sequence: object) -> CompileResult:
    """Compile `sequence` starting from `scene`. Static problems (names, parameters) are
    reported for every step; expansion stops at the first step that cannot run, since what
    follows it would start from an unknown scene."""
    if not isinstance(sequence, Sequence) or isinstance(sequence, str | bytes):
        issue = CompileIssue(-1, "", "malformed", "a sequence must be a list of steps")
        return CompileResult(None, (issue,))
    runner = _Runner(cell, scene)
    errors: list[CompileIssue] = []
    compiled: list[CompiledStep] = []
    for index, raw in enumerate(sequence):
        name, bound = _bind(cell, index, raw, errors)
        if bound is None or errors:
            continue
        composite = cell.composites[name]
        start = len(runner.primitives)
        try:
            runner.composite(composite, bound)
        except _Fail as fail:
            errors.append(CompileIssue(index, name, fail.code, fail.message, fail.param))
            continue
        compiled.append(CompiledStep(name, bound, start, len(runner.primitives)))
    if errors:
        return CompileResult(None, tuple(errors))
    return CompileResult(Program(tuple(runner.primitives), tuple(compiled), runner.scene))


def _bind(
    cell: Cell, index: int, raw: object, errors: list[CompileIssue]
) -> tuple[str, dict[str, Value] | None]:
    """The composite a step calls and its resolved parameters; problems go to `errors`."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("instruction"), str):
        shown = "" if not isinstance(raw, Mapping) else str(raw.get("instruction", ""))
        message = 'a step must look like {"instruction": "name", "params": {...}}'
        errors.append(CompileIssue(index, shown, "malformed", message))
        return shown, None
    given_name: str = raw["instruction"]
    composite = cell.composite(given_name)
    if composite is None:
        message = (
            f"unknown instruction '{given_name}' (available: {', '.join(cell.instructions())})"
        )
        errors.append(CompileIssue(index, given_name, "unknown_instruction", message))
        return given_name, None
    params = raw.get("params") or {}
    if not isinstance(params, Mapping):
        message = "params must be an object of parameter values"
        errors.append(CompileIssue(index, composite.name, "malformed", message))
        return composite.name, None
    return composite.name, _bind_params(cell, index, composite, params, errors)


def _bind_params(
    cell: Cell,
    index: int,
    composite: Composite,
    params: Mapping[Any, Any],
    errors: list[CompileIssue],
) -> dict[str, Value] | None:
    before = len(errors)
    bound: dict[str, Value] = {}
    for key in params:
        if composite.param(str(key)) is None:
            known = ", ".join(p.name for p in composite.params) or "none"
            message = f"{composite.name} has no parameter '{key}' (parameters: {known})"
            errors.append(CompileIssue(index, composite.name, "unknown_param", message, str(key)))
    for spec in composite.params:
        raw = params.get(spec.name)
        if raw is None:  # omitted or null: the default, if there is one
            raw = spec.default
        if raw is None:
            message = f"{composite.name} needs '{spec.name}': {spec.description}"
            errors.append(CompileIssue(index, composite.name, "missing_param", message, spec.name))
            continue
        try:
            bound[spec.name] = cell.resolve(spec.type, raw)
        except ValueProblem as problem:
            errors.append(
                CompileIssue(index, composite.name, problem.code, problem.message, spec.name)
            )
    return bound if len(errors) == before else None


class _Runner:
    """Expands composites against a running scene, collecting primitives."""

    def __init__(self, cell: Cell, scene: Scene) -> None:
        self.cell = cell
        self.scene = scene
        self.primitives: list[Primitive] = []

    def composite(self, composite: Composite, params: Mapping[str, Value]) -> None:
        for cond in composite.requires:
            if not self._cond(cond, params):
                reason = ex.explain(cond, self.cell, self.scene, params)
                raise _Fail("precondition", f"{composite.name}: {reason}")
        self._steps(composite.steps, composite, params)

    def _steps(
        self, steps: Sequence[Step], composite: Composite, params: Mapping[str, Value]
    ) -> None:
        for step in steps:
            match step:
                case OpStep():
                    self._emit(self._lower(step, params))
                case CallStep():
                    self._call(step, params)
                case SetStep():
                    zone = str(self._eval(step.value, "zone", params))
                    self.scene = self.scene.with_changes(active_zone=zone)
                case IfStep():
                    branch = step.then if self._cond(step.cond, params) else step.otherwise
                    self._steps(branch, composite, params)
                case WhileStep():
                    self._loop(step, composite, params)

    def _call(self, step: CallStep, params: Mapping[str, Value]) -> None:
        callee = self.cell.composites[step.composite]
        bound: dict[str, Value] = {}
        for spec in callee.params:
            given = step.args.get(spec.name)
            if given is not None:
                value = self._eval(given, spec.type, params)
                if isinstance(value, bool | Pose):
                    raise _Fail("bad_value", f"{spec.name} cannot be {value!r}", spec.name)
                bound[spec.name] = value
            elif spec.default is not None:
                try:
                    bound[spec.name] = self.cell.resolve(spec.type, spec.default)
                except ValueProblem as problem:
                    raise _Fail(problem.code, problem.message, spec.name) from None
        self.composite(callee, bound)

    def _loop(self, step: WhileStep, composite: Composite, params: Mapping[str, Value]) -> None:
        for _ in range(MAX_LOOP):
            if not self._cond(step.cond, params):
                return
            self._steps(step.body, composite, params)
        message = f"{composite.name}: still '{ex.render(step.cond)}' after {MAX_LOOP} rounds"
        raise _Fail("loop", message)

    def _eval(self, expr: ex.Expr, kind: str, params: Mapping[str, Value]) -> ex.EvalValue:
        try:
            return ex.evaluate(expr, kind, self.cell, self.scene, params)
        except ex.EvalError as error:
            raise _Fail(error.code, error.message) from None

    def _cond(self, expr: ex.Expr, params: Mapping[str, Value]) -> bool:
        return bool(self._eval(expr, "cond", params))

    def _number(self, expr: ex.Expr, kind: str, params: Mapping[str, Value]) -> float:
        value = self._eval(expr, kind, params)
        if isinstance(value, Pose | str):
            raise _Fail("bad_value", f"expected a number, got {value!r}")
        return float(value)

    def _pose(self, expr: ex.Expr, params: Mapping[str, Value]) -> Pose:
        value = self._eval(expr, "pose", params)
        if not isinstance(value, Pose):
            raise _Fail("bad_value", f"expected a pose, got {value!r}")
        return value

    def _lower(self, step: OpStep, params: Mapping[str, Value]) -> Primitive:
        args = step.args
        match step.op:
            case "move_to":
                target = self._pose(args["at"], params)
                if "above" in args:
                    target = target.offset(dz=self._number(args["above"], "distance", params))
                speed = self.scene.speed
                if "speed" in args:
                    speed = self._number(args["speed"], "speed", params)
                return MoveL(target, speed) if step.linear else MoveJ(target, speed)
            case "move_relative":
                direction = DIRECTIONS[str(self._eval(args["direction"], "direction", params))]
                distance = self._number(args["distance"], "distance", params)
                dx, dy, dz = (c * distance for c in direction)
                return MoveL(self.scene.pose.offset(dx, dy, dz), self.scene.speed)
            case "gripper_set":
                return Grip(self._number(args["width"], "width", params))
            case "wait":
                return Wait(self._wait_ms(args, params))
            case "set_speed":
                return Speed(self._number(args["speed"], "speed", params))
            case "tool_attach":
                return ToolAttach(str(self._eval(args["tool"], "tool", params)))
            case "tool_detach":
                return ToolDetach()
            case "call_routine":
                return CallRoutine(str(self._eval(args["routine"], "routine", params)))
        raise _Fail("physics", f"primitive {step.op} cannot be lowered")

    def _wait_ms(self, args: Mapping[str, ex.Expr], params: Mapping[str, Value]) -> int:
        if "ms" in args:
            ms = self._number(args["ms"], "number", params)
        else:
            ms = 1000 * self._number(args["seconds"], "number", params)
        if not 0 <= ms <= 3_600_000:
            raise _Fail("bad_value", f"cannot wait {ms / 1000:g} s (0 to 3600 s)")
        return round(ms)

    def _emit(self, primitive: Primitive) -> None:
        try:
            scene = physics.apply(self.cell, self.scene, primitive)
        except physics.PhysicsError as error:
            code = error.code if error.code in _PHYSICS_CODES else "physics"
            raise _Fail(code, error.message) from None
        if len(scene.dropped) > len(self.scene.dropped):
            raise _Fail("physics", f"would let go of {scene.dropped[-1]} away from any site")
        self.primitives.append(primitive)
        self.scene = scene
