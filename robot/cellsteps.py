"""Reading the `[composites]` of a cell file: parameters, preconditions and step programs.

Every expression is parsed and type-checked here, so that a mistake is reported with its path in
the file (`composites.add_layer.steps[2].at`) rather than when a command is compiled. Also builds
the tier-2 composites learned at runtime (`with_learned`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from voiced.robot import expr as ex
from voiced.robot.cell import (
    Cell,
    ValueProblem,
)
from voiced.robot.exprsyntax import Expr, ExprSyntaxError, Num, Word, parse
from voiced.robot.program import (
    PARAM_TYPES,
    TIER0_ARGS,
    CallStep,
    Composite,
    IfStep,
    OpStep,
    ParamSpec,
    SetStep,
    Step,
    WhileStep,
)
from voiced.robot.tomlcheck import Problems, join, named_tables, table

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""Composite and parameter names: identifiers, so that `$name` can refer to them."""

COMPOSITE_FIELDS = {
    "description": "str",
    "params": "table",
    "requires": "strs",
    "steps": "tables",
    "internal": "bool",
    "confirm": "bool",
    "say": "str",
}
PARAM_FIELDS = {"type": "str", "description": "str", "default": "value"}
_HEADS = ("op", "call", "set", "if", "while")


@dataclass(frozen=True)
class _Scope:
    """What a step is checked against."""

    problems: Problems
    """Where problems go."""
    cell: Cell
    """The cell (everything but composites) for resolving literal names."""
    composite: str
    """The composite being read."""
    params: Mapping[str, str]
    """Its parameter names -> types."""
    signatures: Mapping[str, tuple[ParamSpec, ...]]
    """Every composite of the file -> its parameters."""


def read_composites(problems: Problems, data: object, cell: Cell) -> dict[str, Composite]:
    """The composites of a cell file's `[composites]` table, checked against `cell`."""
    raw = named_tables(problems, data, "composites")
    tables: dict[str, dict[str, Any]] = {}
    signatures: dict[str, tuple[ParamSpec, ...]] = {}
    for name, body in raw.items():
        path = join("composites", name)
        if not NAME.fullmatch(name):
            problems.add(path, "a composite name must be an identifier (letters, digits, _)")
        tables[name] = table(problems, body, path, COMPOSITE_FIELDS, ("description", "steps"))
        signatures[name] = _params(problems, tables[name].get("params"), join(path, "params"), cell)
    composites: dict[str, Composite] = {}
    for name, body in tables.items():
        path = join("composites", name)
        scope = _Scope(problems, cell, name, {p.name: p.type for p in signatures[name]}, signatures)
        requires = [
            _expr(scope, text, "cond", f"{join(path, 'requires')}[{i}]")
            for i, text in enumerate(body.get("requires", ()))
        ]
        _check_say(problems, body.get("say", ""), signatures[name], join(path, "say"))
        composites[name] = Composite(
            name=name,
            description=body.get("description", ""),
            params=signatures[name],
            requires=tuple(r for r in requires if r is not None),
            steps=_steps(scope, body.get("steps", []), join(path, "steps")),
            internal=body.get("internal", False),
            confirm=body.get("confirm", False),
            say=body.get("say", ""),
        )
    _report_cycles(problems, composites)
    return composites


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _check_say(problems: Problems, say: object, params: tuple[ParamSpec, ...], path: str) -> None:
    """Every {placeholder} of a read-back template must be one of the composite's parameters."""
    if not isinstance(say, str):
        return  # the field check already reported the type
    names = {p.name for p in params}
    for placeholder in _PLACEHOLDER.findall(say):
        if placeholder not in names:
            known = ", ".join(sorted(names)) or "none"
            problems.add(path, f"unknown placeholder {{{placeholder}}} (parameters: {known})")


def _params(problems: Problems, data: object, path: str, cell: Cell) -> tuple[ParamSpec, ...]:
    params: list[ParamSpec] = []
    for name, body in named_tables(problems, data, path).items():
        where = join(path, name)
        if not NAME.fullmatch(name):
            problems.add(where, "a parameter name must be an identifier (letters, digits, _)")
        fields = table(problems, body, where, PARAM_FIELDS, ("type", "description"))
        kind = fields.get("type")
        if kind is not None and kind not in PARAM_TYPES:
            problems.add(
                join(where, "type"),
                f"unknown parameter type '{kind}' (expected one of {', '.join(PARAM_TYPES)})",
            )
            kind = None
        default = fields.get("default")
        if kind is not None and default is not None:
            try:
                cell.resolve(kind, default)
            except ValueProblem as problem:
                problems.add_value(join(where, "default"), kind, problem.message)
        params.append(ParamSpec(name, kind or "text", fields.get("description", ""), default))
    return tuple(params)


def _expr(scope: _Scope, source: object, kind: str, path: str) -> Expr | None:
    try:
        parsed = parse(source)
    except ExprSyntaxError as error:
        scope.problems.add(path, f"cannot read {source!r}: {error}")
        return None
    messages = ex.check(parsed, kind, scope.params, scope.cell)
    for message in messages:
        scope.problems.add_value(path, kind, message)
    return None if messages else parsed


def _steps(scope: _Scope, data: object, path: str) -> tuple[Step, ...]:
    if not isinstance(data, list):
        return ()
    steps: list[Step] = []
    for index, raw in enumerate(data):
        where = f"{path}[{index}]"
        if not isinstance(raw, dict):
            scope.problems.add(where, "expected a step table ({ op = ... }, { call = ... }, ...)")
            continue
        heads = [h for h in _HEADS if h in raw]
        if len(heads) != 1:
            got = f" (got {', '.join(heads)})" if heads else ""
            scope.problems.add(where, f"a step needs exactly one of {', '.join(_HEADS)}{got}")
            continue
        step = _READERS[heads[0]](scope, raw, where)
        if step is not None:
            steps.append(step)
    return tuple(steps)


def _op_step(scope: _Scope, raw: dict[str, Any], path: str) -> Step | None:
    op, cell = raw["op"], scope.cell
    enabled = ", ".join(cell.primitives)
    if not isinstance(op, str) or op not in TIER0_ARGS:
        scope.problems.add(
            join(path, "op"),
            f"unknown primitive {op!r} in composite '{scope.composite}' (allowed: {enabled})",
        )
        return None
    if op not in cell.primitives:
        scope.problems.add(
            join(path, "op"),
            f"primitive '{op}' in composite '{scope.composite}' is not enabled in "
            f"[cell] primitives (allowed: {enabled})",
        )
        return None
    spec = TIER0_ARGS[op]
    fields = {"op": "str", **dict.fromkeys(spec, "value")}
    if op == "move_to":
        fields["linear"] = "bool"
    required = [a for a, (_, needed) in spec.items() if needed]
    good = table(scope.problems, raw, path, fields, required)
    if op == "wait" and ("ms" in raw) == ("seconds" in raw):
        scope.problems.add(path, "wait needs exactly one of ms and seconds")
    args: dict[str, Expr] = {}
    for arg, (kind, _) in spec.items():
        if arg in good:
            parsed = _expr(scope, good[arg], kind, join(path, arg))
            if parsed is not None:
                args[arg] = parsed
    return OpStep(op, args, good.get("linear", True))


def _call_step(scope: _Scope, raw: dict[str, Any], path: str) -> Step | None:
    good = table(scope.problems, raw, path, {"call": "str", "args": "table"}, ("call",))
    callee = good.get("call")
    if callee is None:
        return None
    params = scope.signatures.get(callee)
    if params is None:
        scope.problems.add(
            join(path, "call"),
            f"unknown composite '{callee}' called from '{scope.composite}' "
            f"(defined: {', '.join(scope.signatures)})",
        )
        return None
    given: dict[str, Any] = good.get("args", {})
    args: dict[str, Expr] = {}
    for name, source in given.items():
        spec = next((p for p in params if p.name == name), None)
        where = join(join(path, "args"), name)
        if spec is None:
            known = ", ".join(p.name for p in params) or "none"
            scope.problems.add(where, f"{callee} has no parameter '{name}' (parameters: {known})")
            continue
        parsed = _expr(scope, source, spec.type, where)
        if parsed is not None:
            args[name] = parsed
    for spec in params:
        if spec.default is None and spec.name not in given:
            scope.problems.add(join(path, "args"), f"{callee} needs parameter '{spec.name}'")
    return CallStep(callee, args)


def _set_step(scope: _Scope, raw: dict[str, Any], path: str) -> Step | None:
    good = table(scope.problems, raw, path, {"set": "str", "to": "value"}, ("set", "to"))
    if "set" in good and good["set"] != "active_zone":
        scope.problems.add(join(path, "set"), f"cannot set '{good['set']}' (only active_zone)")
        return None
    value = _expr(scope, good["to"], "zone", join(path, "to")) if "to" in good else None
    return None if value is None or "set" not in good else SetStep("active_zone", value)


def _if_step(scope: _Scope, raw: dict[str, Any], path: str) -> Step | None:
    fields = {"if": "str", "then": "tables", "else": "tables"}
    good = table(scope.problems, raw, path, fields, ("if", "then"))
    cond = _expr(scope, good["if"], "cond", join(path, "if")) if "if" in good else None
    then = _steps(scope, good.get("then", []), join(path, "then"))
    otherwise = _steps(scope, good.get("else", []), join(path, "else"))
    return None if cond is None else IfStep(cond, then, otherwise)


def _while_step(scope: _Scope, raw: dict[str, Any], path: str) -> Step | None:
    good = table(scope.problems, raw, path, {"while": "str", "do": "tables"}, ("while", "do"))
    cond = _expr(scope, good["while"], "cond", join(path, "while")) if "while" in good else None
    body = _steps(scope, good.get("do", []), join(path, "do"))
    return None if cond is None else WhileStep(cond, body)


_READERS: Mapping[str, Callable[[_Scope, dict[str, Any], str], Step | None]] = {
    "op": _op_step,
    "call": _call_step,
    "set": _set_step,
    "if": _if_step,
    "while": _while_step,
}


def callees(steps: Sequence[Step]) -> set[str]:
    """Every composite called anywhere in `steps`."""
    found: set[str] = set()
    for step in steps:
        match step:
            case CallStep(composite=name):
                found.add(name)
            case IfStep(then=then, otherwise=otherwise):
                found |= callees(then) | callees(otherwise)
            case WhileStep(body=body):
                found |= callees(body)
    return found


def _report_cycles(problems: Problems, composites: Mapping[str, Composite]) -> None:
    graph = {name: sorted(callees(c.steps)) for name, c in composites.items()}
    state: dict[str, str] = {}
    reported: set[frozenset[str]] = set()

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for callee in graph.get(name, ()):
            if state.get(callee) == "open":
                cycle = [*trail[trail.index(callee) :], callee]
                if frozenset(cycle) not in reported:
                    reported.add(frozenset(cycle))
                    problems.add(
                        join(join("composites", callee), "steps"),
                        f"composite '{callee}' calls itself: {' -> '.join(cycle)}",
                    )
            elif callee not in state:
                visit(callee, [*trail, callee])
        state[name] = "done"

    for name in graph:
        if name not in state:
            visit(name, [name])


def with_learned(
    cell: Cell, name: str, description: str, sequence: Sequence[Mapping[str, Any]]
) -> Cell:
    """A copy of `cell` with a tier-2 composite that runs `sequence` (seed format:
    `{"instruction", "params"}` calls of existing composites). Raises CellError."""
    composite = learned_composite(cell, name, description, sequence)
    return replace(cell, composites={**cell.composites, name: composite})


def learned_composite(
    cell: Cell, name: str, description: str, sequence: Sequence[Mapping[str, Any]]
) -> Composite:
    """A tier-2 composite running `sequence` (a list of `{"instruction", "params"}` calls).
    Raises CellError naming every bad step."""
    problems = Problems(f"learned composite '{name}'")
    if not NAME.fullmatch(name):
        problems.add("name", "a composite name must be an identifier (letters, digits, _)")
    if name in cell.composites:
        problems.add("name", f"a composite called '{name}' already exists")
    if not sequence:
        problems.add("sequence", "a learned composite needs at least one step")
    steps = [_learned_step(problems, cell, raw, f"sequence[{i}]") for i, raw in enumerate(sequence)]
    problems.raise_if_any()
    return Composite(
        name=name,
        description=description,
        params=(),
        requires=(),
        steps=tuple(s for s in steps if s is not None),
        tier=2,
    )


def _learned_step(problems: Problems, cell: Cell, raw: object, path: str) -> CallStep | None:
    if not isinstance(raw, Mapping):
        problems.add(path, 'expected {"instruction": ..., "params": {...}}')
        return None
    instruction = raw.get("instruction")
    target = cell.composite(instruction) if isinstance(instruction, str) else None
    if target is None:
        available = ", ".join(cell.instructions())
        problems.add(
            join(path, "instruction"),
            f"unknown instruction {instruction!r} (available: {available})",
        )
        return None
    params = raw.get("params") or {}
    if not isinstance(params, Mapping):
        problems.add(join(path, "params"), "expected an object of parameter values")
        return None
    args: dict[str, Expr] = {}
    for key, value in params.items():
        spec = target.param(str(key))
        if spec is None:
            where = join(join(path, "params"), str(key))
            problems.add(where, f"{target.name} has no parameter '{key}'")
            continue
        try:
            resolved = cell.resolve(spec.type, value)
        except ValueProblem as problem:
            problems.add_value(join(join(path, "params"), str(key)), spec.type, problem.message)
            continue
        args[spec.name] = Num(resolved) if isinstance(resolved, float) else Word(resolved)
    for spec in target.params:
        if spec.default is None and spec.name not in args and spec.name not in params:
            problems.add(join(path, "params"), f"{target.name} needs parameter '{spec.name}'")
    return CallStep(target.name, args)
