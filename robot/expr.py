"""The expression language of step programs: references to sites, poses, tools and conditions.

The syntax (the parse tree, `parse`, `render`) is voiced.robot.exprsyntax's; this module gives
expressions their meaning. Expressions are parsed and type-checked when the cell file is loaded
(so mistakes are reported with their path in the file) and evaluated by the compiler against the
running scene. Every function takes one argument; see FUNCTIONS and BUILTINS for what exists.
Kinds are the parameter types of robot.cell plus `pose`, `cond` and `width`; an `item` fits where
an `object` is expected and a `zone` where a `site` is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from voiced.robot import physics
from voiced.robot.cell import Cell, Value, ValueProblem
from voiced.robot.exprsyntax import Call, Expr, Not, Num, Param, Word, render
from voiced.robot.primitives import Pose
from voiced.robot.scene import Scene

EvalValue = Value | bool | Pose
"""What an expression evaluates to: a name, a number, a condition or a pose."""

FUNCTIONS: Mapping[str, tuple[str, str]] = {
    "supply": ("item", "site"),
    "zone": ("zone", "zone"),
    "site": ("site", "site"),
    "site_of": ("object", "site"),
    "pose": ("position", "pose"),
    "grasp": ("site", "pose"),
    "place": ("site", "pose"),
    "stand": ("tool", "pose"),
    "tool_for": ("routine", "tool"),
    "empty": ("site", "cond"),
    "has_room": ("site", "cond"),
    "on_top": ("object", "cond"),
    "holds": ("object", "cond"),
    "tool_is": ("tool", "cond"),
    "routine_tool_ready": ("routine", "cond"),
}
"""Function name -> (argument kind, result kind)."""

BUILTINS: Mapping[str, str] = {
    "active_zone": "zone",
    "held_supply": "site",
    "held_tool": "tool",
    "holding": "cond",
    "has_tool": "cond",
    "approach": "distance",
}
"""Bare words with a meaning of their own -> their kind."""

_KINDS = (
    "item",
    "object",
    "zone",
    "site",
    "position",
    "tool",
    "routine",
    "direction",
    "distance",
    "speed",
    "number",
    "text",
    "pose",
    "cond",
    "width",
)
NUMERIC = frozenset({"distance", "speed", "number", "width", "text"})
_SUBKINDS = {"item": "object", "zone": "site"}


class EvalError(Exception):
    """An expression that has no value in the current scene (e.g. `grasp` of an empty site)."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        """Compile-issue code: precondition, unknown_item, bad_value..."""
        self.message = message
        """Plain-English explanation."""
        super().__init__(message)


def fits(actual: str, expected: str) -> bool:
    """Whether a value of kind `actual` may stand where `expected` is wanted."""
    return actual == expected or _SUBKINDS.get(actual) == expected


_BUILTIN_FITS = frozenset(
    (word, kind) for word, own in BUILTINS.items() for kind in _KINDS if fits(own, kind)
)
"""(builtin word, kind) pairs where the word means its built-in value."""


def check(expr: Expr, expected: str, params: Mapping[str, str], cell: Cell) -> list[str]:
    """Problems with using `expr` where a value of kind `expected` is wanted. `params` maps the
    enclosing composite's parameter names to their types; literal words are resolved in `cell`."""
    match expr:
        case Num():
            return [] if expected in NUMERIC else [f"expected a {expected}, got a number"]
        case Param(name=name):
            if name not in params:
                known = ", ".join(f"${p}" for p in params) or "none"
                return [f"unknown parameter '${name}' (parameters: {known})"]
            if not fits(params[name], expected):
                return [f"${name} is a {params[name]} but a {expected} is expected here"]
            return []
        case Word(text=text):
            return _check_word(text, expected, cell)
        case Not(arg=arg):
            if expected != "cond":
                return [f"'not' makes a condition but a {expected} is expected here"]
            return check(arg, "cond", params, cell)
        case Call(func=func, arg=arg):
            signature = FUNCTIONS.get(func)
            if signature is None:
                return [f"unknown function '{func}' (expected one of {', '.join(FUNCTIONS)})"]
            if not fits(signature[1], expected):
                return [f"{func}(...) gives a {signature[1]} but a {expected} is expected here"]
            return check(arg, signature[0], params, cell)


def _check_word(text: str, expected: str, cell: Cell) -> list[str]:
    builtin = BUILTINS.get(text)
    if builtin is not None and fits(builtin, expected):
        return []
    if expected in ("pose", "cond"):
        words = [w for w, kind in BUILTINS.items() if kind == expected]
        hint = f" (bare {expected} words: {', '.join(words)})" if words else ""
        return [f"'{text}' is not a {expected}; use one of the functions{hint}"]
    try:
        cell.resolve(expected, text)
    except ValueProblem as problem:
        return [problem.message]
    return []


Evaluator = Callable[[Cell, Scene, Mapping[str, Value]], EvalValue]
"""A prepared expression: its value given the cell, the scene and the bound parameters."""


def evaluate(
    expr: Expr, kind: str, cell: Cell, scene: Scene, params: Mapping[str, Value]
) -> EvalValue:
    """The value of a checked expression in `scene`. Raises EvalError."""
    return prepare(expr, kind, cell)(cell, scene, params)


def prepare(expr: Expr, kind: str, cell: Cell) -> Evaluator:
    """`expr`, used where a `kind` is wanted, as a function that gives what `evaluate` gives
    (and raises the same EvalError). Its literal words are resolved in `cell` once, here, so it
    must be called with that same cell; the compiler prepares each expression once per cell."""
    if isinstance(expr, Param):
        return _param(expr.name)
    if isinstance(expr, Call):
        return _call(expr.func, prepare(expr.arg, FUNCTIONS[expr.func][0], cell))
    if isinstance(expr, Word):
        return _word(expr.text, kind, cell)
    if isinstance(expr, Not):
        return _negation(prepare(expr.arg, "cond", cell))
    return _constant(expr.value)


def _param(name: str) -> Evaluator:
    def value(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> EvalValue:
        return params[name]

    return value


def _call(func: str, arg: Evaluator) -> Evaluator:
    impl = _FUNCTION_IMPL[func]

    def value(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> EvalValue:
        return impl(cell, scene, str(arg(cell, scene, params)))

    return value


def _word(text: str, kind: str, cell: Cell) -> Evaluator:
    if (text, kind) in _BUILTIN_FITS:
        builtin = _BUILTIN_IMPL[text]

        def value(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> EvalValue:
            return builtin(cell, scene)

        return value
    try:
        literal = cell.resolve_literal(kind, text)
    except ValueProblem as problem:
        return _failure(problem.code, problem.message)
    return _constant(literal)


def _negation(arg: Evaluator) -> Evaluator:
    def value(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> EvalValue:
        return not arg(cell, scene, params)

    return value


def _constant(constant: EvalValue) -> Evaluator:
    def value(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> EvalValue:
        return constant

    return value


def _failure(code: str, message: str) -> Evaluator:
    def value(cell: Cell, scene: Scene, params: Mapping[str, Value]) -> EvalValue:
        raise EvalError(code, message)

    return value


def site_label(cell: Cell, site: str) -> str:
    """How a site is named in messages: `cheese supply` for a supply site, else its name."""
    spec = cell.sites.get(site)
    if spec is not None and spec.kind == "supply":
        item = next((o.name for o in cell.objects.values() if o.supply == site), None)
        if item is not None:
            return f"{item} supply"
    return site


def explain(expr: Expr, cell: Cell, scene: Scene, params: Mapping[str, Value]) -> str:
    """Why condition `expr` is false in `scene`, in plain English."""
    negated = isinstance(expr, Not)
    inner = expr.arg if isinstance(expr, Not) else expr
    if isinstance(inner, Word) and inner.text in ("holding", "has_tool"):
        return _explain_builtin(inner.text, negated, scene)
    if isinstance(inner, Call) and inner.func in _EXPLAIN:
        try:
            arg = str(evaluate(inner.arg, FUNCTIONS[inner.func][0], cell, scene, params))
        except EvalError as error:
            return error.message
        return _EXPLAIN[inner.func](cell, scene, arg, negated)
    return f"condition '{render(expr)}' does not hold"


def _explain_builtin(word: str, negated: bool, scene: Scene) -> str:
    if word == "holding":
        return f"already holding {scene.holding}" if negated else "not holding anything"
    return f"the {scene.tool} is already attached" if negated else "no tool is attached"


def _explain_empty(cell: Cell, scene: Scene, site: str, negated: bool) -> str:
    stack = scene.stacks.get(site, ())
    if negated:
        return f"the {site_label(cell, site)} is empty"
    return f"the {site_label(cell, site)} is not empty ({stack[-1] if stack else '?'} on top)"


def _explain_room(cell: Cell, scene: Scene, site: str, negated: bool) -> str:
    if negated:
        return f"{site_label(cell, site)} still has room"
    missing = [s for s in cell.sites[site].supports if not scene.stacks.get(s)]
    if missing:
        return f"{site} needs {' and '.join(missing)} occupied first"
    return f"{site_label(cell, site)} is full"


def _explain_on_top(cell: Cell, scene: Scene, obj: str, negated: bool) -> str:
    if negated:
        return f"{obj} is free to pick up"
    if scene.holding == obj:
        return f"{obj} is already in the gripper"
    site = scene.site_of(obj)
    if site is None:
        return f"{obj} is not in the cell"
    stack = scene.stacks[site]
    if stack[-1] != obj:
        return f"{obj} is under {stack[-1]} at {site}"
    return f"{obj} at {site} is holding up {', '.join(physics.supported_by(cell, scene, site))}"


def _explain_holds(cell: Cell, scene: Scene, obj: str, negated: bool) -> str:
    if negated:
        return f"already holding the {obj}"
    if scene.holding is None:
        return f"not holding the {obj} (nothing was picked up)"
    return f"holding the {scene.holding}, not the {obj}"


def _explain_tool_is(cell: Cell, scene: Scene, tool: str, negated: bool) -> str:
    if negated:
        return f"the {tool} is attached"
    return f"the {tool} is not attached" + (f" (the {scene.tool} is)" if scene.tool else "")


def _explain_routine(cell: Cell, scene: Scene, routine: str, negated: bool) -> str:
    if negated:
        return f"{routine} is ready to run"
    need = cell.routines[routine].tool
    have = f"the {scene.tool} is attached" if scene.tool else "no tool is attached"
    return f"{routine} needs the {need} ({have})"


_EXPLAIN: Mapping[str, Callable[[Cell, Scene, str, bool], str]] = {
    "empty": _explain_empty,
    "has_room": _explain_room,
    "on_top": _explain_on_top,
    "holds": _explain_holds,
    "tool_is": _explain_tool_is,
    "routine_tool_ready": _explain_routine,
}


def _fail(message: str) -> EvalError:
    return EvalError("precondition", message)


def _supply(cell: Cell, scene: Scene, item: str) -> str:
    supply = cell.objects[item].supply
    if supply is None:
        raise _fail(f"{item} has no supply site")
    return supply


def _reachable_site(cell: Cell, scene: Scene, obj: str) -> str | None:
    """Where `obj` can be taken from: with alike ones (two green cubes), one on top of a stack
    that holds nothing up is the one meant; else wherever it stands."""
    for site, stack in scene.stacks.items():
        if stack and stack[-1] == obj and not physics.supported_by(cell, scene, site):
            return site
    return scene.site_of(obj)


def _site_of(cell: Cell, scene: Scene, obj: str) -> str:
    site = _reachable_site(cell, scene, obj)
    if site is None:
        where = "already in the gripper" if scene.holding == obj else "not on any site"
        raise _fail(f"{obj} is {where}")
    return site


def _grasp(cell: Cell, scene: Scene, site: str) -> Pose:
    pose = physics.grasp_pose(cell, scene, site)
    if pose is None:
        raise _fail(f"there is nothing to pick up at {site_label(cell, site)}")
    return pose


def _place(cell: Cell, scene: Scene, site: str) -> Pose:
    if scene.holding is None:
        raise _fail("not holding anything to put down")
    return physics.place_pose(cell, scene, site, scene.holding)


def _tool_for(cell: Cell, scene: Scene, routine: str) -> str:
    tool = cell.routines[routine].tool
    if tool is None:
        raise _fail(f"{routine} needs no tool")
    return tool


def _on_top(cell: Cell, scene: Scene, obj: str) -> bool:
    site = _reachable_site(cell, scene, obj)
    return (
        site is not None
        and scene.stacks[site][-1] == obj
        and not physics.supported_by(cell, scene, site)
    )


_FUNCTION_IMPL: Mapping[str, Callable[[Cell, Scene, str], EvalValue]] = {
    "supply": _supply,
    "zone": lambda cell, scene, zone: zone,
    "site": lambda cell, scene, site: site,
    "site_of": _site_of,
    "pose": lambda cell, scene, name: cell.poses[name].pose,
    "grasp": _grasp,
    "place": _place,
    "stand": lambda cell, scene, tool: cell.tools[tool].stand,
    "tool_for": _tool_for,
    "empty": lambda cell, scene, site: not scene.stacks.get(site),
    "has_room": lambda cell, scene, site: physics.has_room(cell, scene, site),
    "on_top": _on_top,
    "holds": lambda cell, scene, obj: scene.holding == obj,
    "tool_is": lambda cell, scene, tool: scene.tool == tool,
    "routine_tool_ready": lambda cell, scene, r: cell.routines[r].tool in (None, scene.tool),
}


def _active_zone(cell: Cell, scene: Scene) -> str:
    if scene.active_zone is None:
        raise _fail("no zone is active")
    return scene.active_zone


def _held_supply(cell: Cell, scene: Scene) -> str:
    if scene.holding is None:
        raise _fail("not holding anything")
    return _supply(cell, scene, scene.holding)


def _held_tool(cell: Cell, scene: Scene) -> str:
    if scene.tool is None:
        raise _fail("no tool is attached")
    return scene.tool


_BUILTIN_IMPL: Mapping[str, Callable[[Cell, Scene], EvalValue]] = {
    "active_zone": _active_zone,
    "held_supply": _held_supply,
    "held_tool": _held_tool,
    "holding": lambda cell, scene: scene.holding is not None,
    "has_tool": lambda cell, scene: scene.tool is not None,
    "approach": lambda cell, scene: cell.motion.approach_mm,
}
