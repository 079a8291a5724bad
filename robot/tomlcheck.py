"""Shape checks for parsed TOML (and JSON) documents that collect every problem with its path.

A checker never raises: it records a Problem (file, dotted path, message) and hands back what
was usable, so one pass over a file reports everything wrong with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from voiced.errors import CellError, Problem, did_you_mean, nearest

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

FIELD_KINDS: Mapping[str, str] = {
    "str": "a string",
    "int": "an integer",
    "number": "a finite number",
    "bool": "true or false",
    "xyz": "an array of 3 finite numbers [x, y, z]",
    "quat": "an array of 4 finite numbers [q1, q2, q3, q4]",
    "strs": "an array of strings",
    "table": "a table",
    "tables": "an array of tables",
    "value": "a string or a number",
    "numbers": "a table of finite numbers",
    "strings": "a table of strings",
}
"""Field kind -> how it is described in messages."""


NAMES_FROM = {
    "speed": ("motion",), "distance": ("motion",), "width": ("limits",),
    "item": ("objects", "sites"), "object": ("objects",), "site": ("sites",),
    "zone": ("sites", "zone_aliases"), "position": ("poses",), "pose": ("poses", "sites"),
    "tool": ("tools",),
    "routine": ("routines",), "composite": ("composites",),
    "cond": ("sites", "objects", "poses", "tools"),
}  # fmt: skip
"""The top-level tables a kind of value is named in."""


class Problems:
    """The problems found so far in one source."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[Problem] = []
        self.covered: set[str] = set()
        """Paths left unusable by a problem reported elsewhere (an object's supply whose site
        has a misspelt kind)."""

    def add(self, path: str, message: str) -> None:
        self.items.append(Problem(self.source, path, message))

    def at(self, path: str) -> bool:
        """Whether a problem was found at `path` already (a later one it causes is not
        reported again: one mistake, one line)."""
        return path in self.covered or any(problem.path == path for problem in self.items)

    def add_value(self, path: str, kind: str, message: str) -> None:
        """A value of `kind` that is not one the cell names (`Cell.resolve`), unless the table
        that names them is itself misspelt ("[moton]": every named speed is unknown then)."""
        if not any(self.at(source) for source in NAMES_FROM.get(kind, ())):
            self.add(path, message)

    def raise_if_any(self) -> None:
        if self.items:
            raise CellError(self.items)


def join(path: str, key: str) -> str:
    """`path.key`, quoting keys that are not bare TOML keys (`objects."red cube"`)."""
    shown = key if _BARE_KEY.fullmatch(key) else f'"{key}"'
    return f"{path}.{shown}" if path else shown


def type_name(value: object) -> str:
    """A TOML-ish name for the type of `value`, for messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else f"{value}"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        odd = [type_name(v) for v in value if isinstance(v, float) and not math.isfinite(v)]
        if odd:
            return f"an array holding {odd[0]}"
        return "an empty array" if not value else f"an array of {len(value)}"
    if isinstance(value, dict):
        return "a table"
    return "null" if value is None else type(value).__name__


def is_kind(value: object, kind: str) -> bool:
    """Whether `value` has field kind `kind` (a key of FIELD_KINDS)."""
    # TOML has nan and inf: no length, speed or pose is either.
    number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    match kind:
        case "str":
            return isinstance(value, str)
        case "int":
            return isinstance(value, int) and not isinstance(value, bool)
        case "number":
            return number
        case "bool":
            return isinstance(value, bool)
        case "xyz" | "quat":
            size = 3 if kind == "xyz" else 4
            return (
                isinstance(value, list)
                and len(value) == size
                and all(is_kind(v, "number") for v in value)
            )
        case "strs":
            return isinstance(value, list) and all(isinstance(v, str) for v in value)
        case "table":
            return isinstance(value, dict)
        case "tables":
            return isinstance(value, list) and all(isinstance(v, dict) for v in value)
        case "value":
            return isinstance(value, str) or number
        case "numbers" | "strings":
            inner = "number" if kind == "numbers" else "str"
            return isinstance(value, dict) and all(is_kind(v, inner) for v in value.values())
    raise ValueError(f"unknown field kind {kind!r}")


def table(
    problems: Problems,
    data: object,
    path: str,
    fields: Mapping[str, str],
    required: Collection[str] = (),
) -> dict[str, Any]:
    """The entries of `data` (which must be a table) whose keys are in `fields` and whose values
    have the declared kinds; everything else is recorded as a problem."""
    if not isinstance(data, dict):
        problems.add(path, f"expected a table, got {type_name(data)}")
        return {}
    good: dict[str, Any] = {}
    meant: set[str] = set()
    """Known keys an unknown one is near: misspelt, not missing (one mistake, one line)."""
    for key, value in data.items():
        kind = fields.get(key)
        if kind is None:
            expected = ", ".join(fields) or "no keys"
            if (near := nearest(key, fields)) is not None:
                meant.add(near)
                # What is missing inside the table it meant ("[limts]": limits.max_speed, ...)
                # follows from the same mistake.
                problems.covered.add(join(path, near))
            problems.add(
                join(path, key),
                f"unknown key '{key}' (expected one of {expected}){did_you_mean(key, fields)}",
            )
        elif is_kind(value, kind):
            good[key] = value
        elif kind in ("numbers", "strings") and isinstance(value, dict):
            # Name the entry that is wrong and keep the others (no problems that follow from
            # a whole table thrown away).
            inner = "number" if kind == "numbers" else "str"
            good[key] = {k: v for k, v in value.items() if is_kind(v, inner)}
            for entry, bad in value.items():
                if entry not in good[key]:
                    problems.add(
                        join(join(path, key), entry),
                        f"expected {FIELD_KINDS[inner]}, got {type_name(bad)}",
                    )
        else:
            problems.add(join(path, key), f"expected {FIELD_KINDS[kind]}, got {type_name(value)}")
    for key in required:
        if key not in data and key not in meant and path not in problems.covered:
            problems.add(join(path, key), "missing required key")
    return good


def named_tables(problems: Problems, data: object, path: str) -> dict[str, dict[str, Any]]:
    """A table of tables (`[objects.bread]`, `[sites.B1]`...): name -> its table."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.add(path, f"expected a table, got {type_name(data)}")
        return {}
    good: dict[str, dict[str, Any]] = {}
    for name, value in data.items():
        if isinstance(value, dict):
            good[name] = value
        else:
            problems.add(join(path, name), f"expected a table, got {type_name(value)}")
    return good
