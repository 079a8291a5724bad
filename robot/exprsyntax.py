"""The syntax of the expression language of step programs: its parse tree, parse and render.

Grammar (one expression per string):

    expr := "not" expr | NAME "(" expr ")" | "$" PARAM | NUMBER | WORDS

The tree is plain data that step programs (voiced.robot.program) hold; what an expression means
in a cell and a scene (kinds, type checks, evaluation) is voiced.robot.expr's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    """A bare word: a built-in (`holding`, `active_zone`) or a literal name (`bread`, `a bit`)."""

    text: str
    """The words, whitespace collapsed."""


@dataclass(frozen=True)
class Num:
    """A number literal."""

    value: float
    """Its value."""


@dataclass(frozen=True)
class Param:
    """`$name`: the bound value of a parameter of the enclosing composite."""

    name: str
    """The parameter name, without `$`."""


@dataclass(frozen=True)
class Call:
    """`func(arg)`."""

    func: str
    """A key of FUNCTIONS."""
    arg: Expr
    """The single argument."""


@dataclass(frozen=True)
class Not:
    """`not cond`."""

    arg: Expr
    """The negated condition."""


Expr = Word | Num | Param | Call | Not

_CALL = re.compile(r"([a-z_][a-z0-9_]*)\s*\((.*)\)", re.DOTALL)
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)")


class ExprSyntaxError(ValueError):
    """An expression string that does not follow the grammar."""


def parse(source: object) -> Expr:
    """Parse a cell-file value (string or number) into an expression."""
    if isinstance(source, bool) or not isinstance(source, str | int | float):
        raise ExprSyntaxError(f"expected a string or a number, got {type(source).__name__}")
    if not isinstance(source, str):
        return Num(float(source))
    text = source.strip()
    if not text:
        raise ExprSyntaxError("empty expression")
    if text.startswith("not "):
        return Not(parse(text[4:]))
    if text.startswith("$"):
        if not _PARAM.fullmatch(text):
            raise ExprSyntaxError(f"bad parameter reference {text!r}")
        return Param(text[1:])
    call = _CALL.fullmatch(text)
    if call:
        return Call(call[1], parse(call[2]))
    if any(c in text for c in "()$"):
        raise ExprSyntaxError(f"misplaced '(', ')' or '$' in {text!r}")
    if _NUMBER.fullmatch(text):
        return Num(float(text))
    return Word(" ".join(text.split()))


def render(expr: Expr) -> str:
    """The expression as it would be written in a cell file."""
    match expr:
        case Word(text=text):
            return text
        case Num(value=value):
            return f"{value:g}"
        case Param(name=name):
            return f"${name}"
        case Call(func=func, arg=arg):
            return f"{func}({render(arg)})"
        case Not(arg=arg):
            return f"not {render(arg)}"
