"""The instruction compiler: a sequence of composite calls in, tier-0 primitives out.

`compile_sequence` validates every step of a sequence (typed `SequenceStep`s: their JSON form
is read and checked where it enters, see `robot.sequence`) against the cell's instruction set,
resolves spoken aliases, expands composites into primitives against the running scene, checks
each composite's preconditions, and runs every primitive through `robot.physics` so that
workspace, speed and gripper limits are enforced before anything moves. It never raises for bad
input: problems come back as `CompileIssue`s. Pure and deterministic.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voiced.robot import expr as ex
from voiced.robot import physics
from voiced.robot.cell import (
    Cell,
    Value,
    ValueProblem,
)
from voiced.robot.exprsyntax import Expr, render
from voiced.robot.primitives import (
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
from voiced.robot.program import (
    DIRECTIONS,
    CallStep,
    Composite,
    IfStep,
    OpStep,
    ParamSpec,
    SetStep,
    Step,
    WhileStep,
)
from voiced.robot.scene import Scene
from voiced.robot.sequence import SequenceStep

MAX_LOOP = 100
"""Most rounds a `while` step may run before the program is refused."""

_PHYSICS_CODES = frozenset({"workspace", "speed"})


@dataclass(frozen=True)
class CompileIssue:
    """One reason a sequence cannot run."""

    step: int
    """Index (0-based) of the sequence step at fault."""
    instruction: str
    """The step's instruction as given."""
    code: str
    """unknown_instruction, unknown_param, missing_param, bad_value, unknown_item, unknown_zone,
    unknown_site, unknown_position, unknown_tool, unknown_routine, precondition, workspace,
    speed, physics or loop."""
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

    @property
    def call(self) -> SequenceStep:
        """The step as a call to compile again (from another scene, say)."""
        return SequenceStep(self.instruction, dict(self.params))


@dataclass(frozen=True)
class Program:
    """A compiled sequence."""

    primitives: tuple[Primitive, ...]
    """Everything to send, in order, with absolute poses."""
    steps: tuple[CompiledStep, ...]
    """Which primitives each sequence step produced."""
    expected: Scene
    """The scene once every primitive has run."""
    start: Scene
    """The scene it was compiled from: it runs as compiled only from there."""


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


def compile_sequence(cell: Cell, scene: Scene, sequence: Sequence[SequenceStep]) -> CompileResult:
    """Compile `sequence` starting from `scene`. Static problems (names, parameters) are
    reported for every step; expansion stops at the first step that cannot run, since what
    follows it would start from an unknown scene."""
    runner = _Runner(cell, scene)
    errors: list[CompileIssue] = []
    compiled: list[CompiledStep] = []
    for index, step in enumerate(sequence):
        name, bound = _bind(cell, index, step, errors)
        if bound is None or errors:
            continue
        start = len(runner.primitives)
        try:
            runner.composite(name, bound)
        except _Fail as fail:
            errors.append(CompileIssue(index, name, fail.code, fail.message, fail.param))
            continue
        compiled.append(CompiledStep(name, bound, start, len(runner.primitives)))
    if errors:
        return CompileResult(None, tuple(errors))
    program = Program(tuple(runner.primitives), tuple(compiled), runner.scene, scene)
    return CompileResult(program)


def _bind(
    cell: Cell, index: int, step: SequenceStep, errors: list[CompileIssue]
) -> tuple[str, dict[str, Value] | None]:
    """The composite a step calls and its resolved parameters; problems go to `errors`."""
    composite = cell.composite(step.instruction)
    if composite is None:
        message = (
            f"unknown instruction '{step.instruction}' "
            f"(available: {', '.join(cell.instructions())})"
        )
        errors.append(CompileIssue(index, step.instruction, "unknown_instruction", message))
        return step.instruction, None
    return composite.name, _bind_params(cell, index, composite, step.params, errors)


def _bind_params(
    cell: Cell,
    index: int,
    composite: Composite,
    params: Mapping[str, Any],
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


# -- prepared composites -----------------------------------------------------------------------
#
# Compiling walks the same few composites over and over (a 20-step sandwich runs `take` and
# `put` 16 times each), so each composite is prepared once per cell: every expression becomes an
# `ex.Evaluator` with its literal words already resolved, and every op step a `_Lowerer` that only
# evaluates and builds its primitive. Nothing prepared refers to the cell (the cache below is
# keyed by it and must not keep it alive); the cell is passed in on every call instead.

_Lowerer = Callable[[Cell, Scene, Mapping[str, Value]], Primitive]
"""A prepared op step: the primitive it becomes in a scene. Raises _Fail or ex.EvalError."""

_Prepare = Callable[[Expr, str], ex.Evaluator]
"""`ex.prepare` bound to the cell being prepared for."""


@dataclass(frozen=True)
class _Op:
    lower: _Lowerer


@dataclass(frozen=True)
class _Call:
    callee: str
    """The key of the callee in `Cell.composites`."""
    args: tuple[tuple[ParamSpec, ex.Evaluator | None], ...]
    """Every parameter of the callee, in order, with the argument given for it (None if none)."""


@dataclass(frozen=True)
class _Set:
    zone: ex.Evaluator


@dataclass(frozen=True)
class _If:
    cond: ex.Evaluator
    then: tuple[_Step, ...]
    otherwise: tuple[_Step, ...]


@dataclass(frozen=True)
class _While:
    cond: ex.Evaluator
    source: Expr
    """The condition as written, for the message when the loop does not end."""
    body: tuple[_Step, ...]


_Step = _Op | _Call | _Set | _If | _While


@dataclass(frozen=True)
class _Plan:
    """A composite, prepared."""

    composite: Composite
    requires: tuple[tuple[Expr, ex.Evaluator], ...]
    """Each precondition as written (to explain it) and prepared."""
    steps: tuple[_Step, ...]


_PLANS: dict[int, dict[str, _Plan]] = {}
"""Per cell (by id; an entry goes when its cell does): composite key -> its plan."""


def _plans(cell: Cell) -> dict[str, _Plan]:
    found = _PLANS.get(id(cell))
    if found is None:
        found = _PLANS[id(cell)] = {}
        weakref.finalize(cell, _PLANS.pop, id(cell), None)
    return found


def _plan(cell: Cell, key: str) -> _Plan:
    composite = cell.composites[key]

    def prepare(expr: Expr, kind: str) -> ex.Evaluator:
        return ex.prepare(expr, kind, cell)

    requires = tuple((cond, prepare(cond, "cond")) for cond in composite.requires)
    return _Plan(composite, requires, _prepare_steps(cell, composite.steps, prepare))


def _prepare_steps(cell: Cell, steps: Sequence[Step], prepare: _Prepare) -> tuple[_Step, ...]:
    return tuple(_prepare_step(cell, step, prepare) for step in steps)


def _prepare_step(cell: Cell, step: Step, prepare: _Prepare) -> _Step:
    match step:
        case OpStep():
            return _Op(_LOWERERS.get(step.op, _unlowerable)(step, prepare))
        case CallStep():
            callee = cell.composites[step.composite]
            args = tuple(
                (spec, None if given is None else prepare(given, spec.type))
                for spec in callee.params
                for given in (step.args.get(spec.name),)
            )
            return _Call(step.composite, args)
        case SetStep():
            return _Set(prepare(step.value, "zone"))
        case IfStep():
            then = _prepare_steps(cell, step.then, prepare)
            return _If(
                prepare(step.cond, "cond"), then, _prepare_steps(cell, step.otherwise, prepare)
            )
        case WhileStep():
            body = _prepare_steps(cell, step.body, prepare)
            return _While(prepare(step.cond, "cond"), step.cond, body)


# -- lowering: one builder per tier-0 op, the argument kinds as in robot.program.TIER0_ARGS --------


def _move_to(step: OpStep, prepare: _Prepare) -> _Lowerer:
    args = step.args
    at = prepare(args["at"], "pose")
    above = prepare(args["above"], "distance") if "above" in args else None
    speed = prepare(args["speed"], "speed") if "speed" in args else None
    move = MoveL if step.linear else MoveJ

    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        target = _as_pose(at(cell, scene, params))
        if above is not None:
            target = target.offset(dz=_as_number(above(cell, scene, params)))
        if speed is None:
            return move(target, scene.speed)
        return move(target, _as_number(speed(cell, scene, params)))

    return lower


def _move_relative(step: OpStep, prepare: _Prepare) -> _Lowerer:
    direction = prepare(step.args["direction"], "direction")
    distance = prepare(step.args["distance"], "distance")

    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        dx, dy, dz = DIRECTIONS[str(direction(cell, scene, params))]
        mm = _as_number(distance(cell, scene, params))
        return MoveL(scene.pose.offset(dx * mm, dy * mm, dz * mm), scene.speed)

    return lower


def _gripper_set(step: OpStep, prepare: _Prepare) -> _Lowerer:
    width = prepare(step.args["width"], "width")

    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        return Grip(_as_number(width(cell, scene, params)))

    return lower


def _wait(step: OpStep, prepare: _Prepare) -> _Lowerer:
    in_ms = "ms" in step.args
    amount = prepare(step.args["ms" if in_ms else "seconds"], "number")

    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        value = _as_number(amount(cell, scene, params))
        ms = value if in_ms else 1000 * value
        if not 0 <= ms <= 3_600_000:
            raise _Fail("bad_value", f"cannot wait {ms / 1000:g} s (0 to 3600 s)")
        return Wait(round(ms))

    return lower


def _set_speed(step: OpStep, prepare: _Prepare) -> _Lowerer:
    speed = prepare(step.args["speed"], "speed")

    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        return Speed(_as_number(speed(cell, scene, params)))

    return lower


def _tool_attach(step: OpStep, prepare: _Prepare) -> _Lowerer:
    tool = prepare(step.args["tool"], "tool")

    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        return ToolAttach(str(tool(cell, scene, params)))

    return lower


def _tool_detach(step: OpStep, prepare: _Prepare) -> _Lowerer:
    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        return ToolDetach()

    return lower


def _call_routine(step: OpStep, prepare: _Prepare) -> _Lowerer:
    routine = prepare(step.args["routine"], "routine")

    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        return CallRoutine(str(routine(cell, scene, params)))

    return lower


def _unlowerable(step: OpStep, prepare: _Prepare) -> _Lowerer:
    def lower(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> Primitive:
        raise _Fail("physics", f"primitive {step.op} cannot be lowered")

    return lower


_LOWERERS: Mapping[str, Callable[[OpStep, _Prepare], _Lowerer]] = {
    "move_to": _move_to,
    "move_relative": _move_relative,
    "gripper_set": _gripper_set,
    "wait": _wait,
    "set_speed": _set_speed,
    "tool_attach": _tool_attach,
    "tool_detach": _tool_detach,
    "call_routine": _call_routine,
}


def _as_number(value: ex.EvalValue) -> float:
    if isinstance(value, Pose | str):
        raise _Fail("bad_value", f"expected a number, got {value!r}")
    return float(value)


def _as_pose(value: ex.EvalValue) -> Pose:
    if not isinstance(value, Pose):
        raise _Fail("bad_value", f"expected a pose, got {value!r}")
    return value


# -- running -------------------------------------------------------------------------------------


class _Runner:
    """Expands composites against a running scene, collecting primitives."""

    def __init__(self, cell: Cell, scene: Scene) -> None:
        self.cell = cell
        self.scene = scene
        self.start = scene
        self.primitives: list[Primitive] = []
        self._plans = _plans(cell)

    def composite(self, key: str, params: Mapping[str, Value]) -> None:
        """Run the composite `cell.composites[key]` with `params` bound."""
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = _plan(self.cell, key)
        for cond, holds in plan.requires:
            if not self._value(holds, params):
                reason = self._ran_out(ex.explain(cond, self.cell, self.scene, params))
                raise _Fail("precondition", f"{plan.composite.name}: {reason}")
        self._steps(plan.steps, plan.composite, params)

    def _ran_out(self, reason: str) -> str:
        """`reason` for an empty site that this plan emptied itself said as what it had: "add
        ten layers of cheese" with eight left said "the cheese supply is empty"."""
        for site, had in self.start.stacks.items():
            label = ex.site_label(self.cell, site)
            if had and reason == f"the {label} is empty" and not self.scene.stacks.get(site):
                return f"the {label} has only {len(had)}, not enough for all of this"
        return reason

    def _steps(
        self, steps: Sequence[_Step], composite: Composite, params: Mapping[str, Value]
    ) -> None:
        # isinstance rather than `match`: this runs once per step of every composite expanded.
        for step in steps:
            if isinstance(step, _Op):
                self._op(step, params)
            elif isinstance(step, _Call):
                self._call(step, params)
            elif isinstance(step, _Set):
                zone = str(self._value(step.zone, params))
                self.scene = self.scene.with_changes(active_zone=zone)
            elif isinstance(step, _If):
                branch = step.then if self._value(step.cond, params) else step.otherwise
                self._steps(branch, composite, params)
            else:
                self._loop(step, composite, params)

    def _call(self, step: _Call, params: Mapping[str, Value]) -> None:
        bound: dict[str, Value] = {}
        for spec, given in step.args:
            if given is not None:
                value = self._value(given, params)
                if isinstance(value, bool | Pose):
                    raise _Fail("bad_value", f"{spec.name} cannot be {value!r}", spec.name)
                bound[spec.name] = value
            elif spec.default is not None:
                try:
                    bound[spec.name] = self.cell.resolve(spec.type, spec.default)
                except ValueProblem as problem:
                    raise _Fail(problem.code, problem.message, spec.name) from None
        self.composite(step.callee, bound)

    def _loop(self, step: _While, composite: Composite, params: Mapping[str, Value]) -> None:
        for _ in range(MAX_LOOP):
            if not self._value(step.cond, params):
                return
            self._steps(step.body, composite, params)
        message = f"{composite.name}: still '{render(step.source)}' after {MAX_LOOP} rounds"
        raise _Fail("loop", message)

    def _value(self, evaluator: ex.Evaluator, params: Mapping[str, Value]) -> ex.EvalValue:
        try:
            return evaluator(self.cell, self.scene, params)
        except ex.EvalError as error:
            raise _Fail(error.code, error.message) from None

    def _op(self, step: _Op, params: Mapping[str, Value]) -> None:
        try:
            primitive = step.lower(self.cell, self.scene, params)
        except ex.EvalError as error:
            raise _Fail(error.code, error.message) from None
        try:
            scene = physics.apply(self.cell, self.scene, primitive)
        except physics.PhysicsError as error:
            code = error.code if error.code in _PHYSICS_CODES else "physics"
            raise _Fail(code, error.message) from None
        if len(scene.dropped) > len(self.scene.dropped):
            raise _Fail("physics", f"would let go of {scene.dropped[-1]} away from any site")
        self.primitives.append(primitive)
        self.scene = scene
