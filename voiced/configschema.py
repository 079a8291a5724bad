"""Validate TOML tables against frozen dataclasses, and render such dataclasses back as TOML.

A settings dataclass is the single source of truth for its table: each field's type and default
say what is accepted and what applies when the key is missing, and its metadata (set through
`setting`) adds a `doc` and optional constraints: `min`, `max`, `choices`, `nonempty` and a `check`
callable. A field whose type is itself a dataclass is a sub-table; declare it with
`field(default_factory=TheSection, metadata=doc("..."))`.

Rules that span several fields of one table go in a method `cross_check(self) -> list[tuple[str,
str]]` returning (key, message) pairs; it runs only when every field of that table was valid, so
it may rely on the field types.

A leaf module: it imports nothing from the project but `voiced.errors`, so `audio` (whose
settings are declared with it) and every other package may use it without depending on the
daemon (`tests/test_imports.py`, LEAVES).

Supported field types: bool, int, float, str, tuple[<one of those>, ...] and settings dataclasses.
A bool never accepts an int (TOML keeps them apart, so `1` for a switch is a mistake), a float
accepts an int, NaN and infinities are refused.
"""

from __future__ import annotations

import dataclasses
import json
import math
import textwrap
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

from voiced.errors import ConfigError, Problem, did_you_mean

T = TypeVar("T")

DOC = "doc"
MIN = "min"
MAX = "max"
CHOICES = "choices"
NONEMPTY = "nonempty"
CHECK = "check"
INTERNAL = "internal"
"""Metadata flag of a field that is not read from the file (e.g. where the config came from)."""

_SCALARS: dict[type, str] = {
    bool: "true or false (bool)",
    int: "an integer (int)",
    float: "a number (float)",
    str: "a string (str)",
}
_PLURALS: dict[type, str] = {bool: "booleans", int: "integers", float: "numbers", str: "strings"}
_MAX_SHOWN = 60
_COMMENT_WIDTH = 98

Check: TypeAlias = Callable[[Any], str | None]
"""A field check: the converted value -> None when valid, else the whole message after the key."""


class _Invalid:
    """Marks a value that failed validation (None is not free: it could be a legitimate value)."""


_INVALID = _Invalid()


def setting(
    default: T,
    doc: str,
    *,
    min: float | None = None,
    max: float | None = None,
    choices: Sequence[Any] | None = None,
    nonempty: bool = False,
    check: Check | None = None,
) -> T:
    """A settings field: its default, the user-facing `doc` and the constraints on its value."""
    metadata: dict[str, Any] = {DOC: doc}
    if min is not None:
        metadata[MIN] = min
    if max is not None:
        metadata[MAX] = max
    if choices is not None:
        metadata[CHOICES] = tuple(choices)
    if nonempty:
        metadata[NONEMPTY] = True
    if check is not None:
        metadata[CHECK] = check
    return dataclasses.field(default=default, metadata=metadata)


def doc(text: str) -> dict[str, Any]:
    """The metadata of a sub-table field, whose default_factory is its settings dataclass:
    `daemon: DaemonConfig = field(default_factory=DaemonConfig, metadata=doc("..."))`."""
    return {DOC: text}


def describe(value: Any) -> str:
    """A value as a message shows it: `"fast" (str)`, `3 (int)`."""
    return f"{_show(value)} ({type(value).__name__})"


def parse(cls: type[T], table: Mapping[str, Any], source: str) -> T:
    """Build `cls` from a TOML table, raising ConfigError with every problem found."""
    problems: list[Problem] = []
    built = _build(cls, table, source, "", problems)
    if problems or isinstance(built, _Invalid):
        raise ConfigError(problems)
    return typing.cast(T, built)


def to_dict(instance: Any) -> dict[str, Any]:
    """A settings dataclass as plain TOML-able data (tables as dicts, tuples as lists)."""
    result: dict[str, Any] = {}
    for field, tp in _fields(type(instance)):
        result[field.name] = _plain(getattr(instance, field.name), tp)
    return result


def merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `overrides` laid over it, tables merged key by key rather than replaced."""
    merged = dict(base)
    for key, value in overrides.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[key] = merge(below, value)
        else:
            merged[key] = value
    return merged


def field_paths(cls: type[Any], prefix: str = "") -> list[str]:
    """Every leaf key of a settings dataclass as a dotted path, in declaration order."""
    paths: list[str] = []
    for field, tp in _fields(cls):
        if _is_settings(tp):
            paths.extend(field_paths(tp, f"{prefix}{field.name}."))
        else:
            paths.append(prefix + field.name)
    return paths


def render_toml(instance: Any, header: str = "") -> str:
    """`instance` as a commented TOML document: each key preceded by its doc and constraints."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    _render_table(instance, "", lines)
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines) + "\n"


# --- Building -------------------------------------------------------------------------------


def _build(
    cls: type[Any], table: Mapping[str, Any], source: str, prefix: str, problems: list[Problem]
) -> Any:
    before = len(problems)
    fields = _fields(cls)
    known = [field.name for field, _ in fields]
    for key in table:
        if key not in known:
            message = _unknown_key_message(key, prefix, known, fields)
            problems.append(Problem(source, prefix + key, message))
    values: dict[str, Any] = {}
    for field, tp in fields:
        if field.name in table:
            path = prefix + field.name
            value = _convert(table[field.name], tp, field.metadata, source, path, problems)
            if not isinstance(value, _Invalid):
                values[field.name] = value
    if len(problems) > before:
        return _INVALID
    # Cross-field rules are checked on a draft first, so that a section which also validates
    # itself on construction (`__post_init__`) reports them here, with the file and the key,
    # instead of raising.
    cross_check = getattr(_draft(cls, values), "cross_check", None)
    if cross_check is not None:
        for key, message in cross_check():
            problems.append(Problem(source, prefix + key, message))
    return _INVALID if len(problems) > before else cls(**values)


def _draft(cls: type[Any], values: Mapping[str, Any]) -> Any:
    """An instance with these values and the defaults, built without running `__post_init__`."""
    draft = object.__new__(cls)
    for item in dataclasses.fields(cls):
        if item.name in values:
            value = values[item.name]
        elif item.default is not dataclasses.MISSING:
            value = item.default
        elif item.default_factory is not dataclasses.MISSING:
            value = item.default_factory()
        else:
            continue
        object.__setattr__(draft, item.name, value)
    return draft


def _unknown_key_message(
    key: str, prefix: str, known: list[str], fields: list[tuple[dataclasses.Field[Any], Any]]
) -> str:
    if not prefix and fields and all(_is_settings(tp) for _, tp in fields):
        message = f"unknown section (known sections: {', '.join(known)})"
    elif not prefix:
        message = f"unknown key (known top-level keys: {', '.join(known)})"
    else:
        message = f"unknown key (known keys in [{prefix[:-1]}]: {', '.join(known)})"
    return message + did_you_mean(key, known)


def _convert(
    value: Any,
    tp: Any,
    metadata: Mapping[str, Any],
    source: str,
    path: str,
    problems: list[Problem],
) -> Any:
    if _is_settings(tp):
        if not isinstance(value, dict):
            problems.append(Problem(source, path, f"expected a table, got {describe(value)}"))
            return _INVALID
        return _build(tp, value, source, path + ".", problems)
    if typing.get_origin(tp) is tuple:
        return _convert_tuple(value, tp, metadata, source, path, problems)
    converted, error = _convert_scalar(value, tp, metadata)
    if error is None:
        error = _run_check(converted, metadata)
    if error is not None:
        problems.append(Problem(source, path, error))
        return _INVALID
    return converted


def _convert_tuple(
    value: Any,
    tp: Any,
    metadata: Mapping[str, Any],
    source: str,
    path: str,
    problems: list[Problem],
) -> Any:
    item_type = typing.get_args(tp)[0]
    if not isinstance(value, list):
        expected = f"an array of {_PLURALS[item_type]} ({item_type.__name__})"
        message = f"expected {expected}, got {describe(value)}"
        problems.append(Problem(source, path, message))
        return _INVALID
    items: list[Any] = []
    failed = False
    # Constraints other than `check` apply to each item; `check` sees the whole tuple.
    for index, item in enumerate(value):
        converted, error = _convert_scalar(item, item_type, metadata)
        if error is not None:
            problems.append(Problem(source, f"{path}[{index}]", error))
            failed = True
        items.append(converted)
    if failed:
        return _INVALID
    error = _run_check(tuple(items), metadata)
    if error is not None:
        problems.append(Problem(source, path, error))
        return _INVALID
    return tuple(items)


def _convert_scalar(value: Any, tp: type, metadata: Mapping[str, Any]) -> tuple[Any, str | None]:
    choices: tuple[Any, ...] | None = metadata.get(CHOICES)
    if not _has_type(value, tp) or (choices is not None and value not in choices):
        expected = _choices_text(choices) if choices is not None else _SCALARS[tp]
        return _INVALID, f"expected {expected}, got {describe(value)}"
    if tp is float:
        value = float(value)
        if not math.isfinite(value):
            return _INVALID, f"expected a finite number (float), got {describe(value)}"
    error = _range_error(value, tp, metadata)
    if error is None and metadata.get(NONEMPTY) and not value.strip():
        error = "must not be empty"
    return value, error


def _run_check(value: Any, metadata: Mapping[str, Any]) -> str | None:
    check: Check | None = metadata.get(CHECK)
    return check(value) if check is not None else None


def _has_type(value: Any, tp: type) -> bool:
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, tp)


def _range_error(value: Any, tp: type, metadata: Mapping[str, Any]) -> str | None:
    low, high = metadata.get(MIN), metadata.get(MAX)
    if (low is None or value >= low) and (high is None or value <= high):
        return None
    return f"{_show(value)} is out of range, expected {_range_text(tp, low, high)}"


def _range_text(tp: type, low: Any, high: Any) -> str:
    # Bounds are shown in the field's type so that a float range reads "0.3 to 10.0", not "10".
    if low is not None and high is not None:
        return f"{tp(low)} to {tp(high)}"
    if low is not None:
        return f"at least {tp(low)}"
    return f"at most {tp(high)}"


def _choices_text(choices: tuple[Any, ...]) -> str:
    return "one of " + ", ".join(_show(choice) for choice in choices)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 4] + '..."'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    return str(value)


# --- Schema ---------------------------------------------------------------------------------


def _is_settings(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _fields(cls: type[Any]) -> list[tuple[dataclasses.Field[Any], Any]]:
    """The file-facing fields of a settings dataclass with their resolved types."""
    hints = typing.get_type_hints(cls)
    fields: list[tuple[dataclasses.Field[Any], Any]] = []
    for field in dataclasses.fields(cls):
        if field.metadata.get(INTERNAL):
            continue
        tp = hints[field.name]
        _check_supported(cls, field.name, tp)
        fields.append((field, tp))
    return fields


def _check_supported(cls: type[Any], name: str, tp: Any) -> None:
    # A schema mistake is a programming error: fail loudly the first time the class is used.
    if _is_settings(tp) or tp in _SCALARS:
        return
    args = typing.get_args(tp)
    is_tuple = typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis
    if is_tuple and args[0] in _SCALARS:
        return
    raise TypeError(f"{cls.__name__}.{name}: unsupported settings type {tp!r}")


# --- Rendering ------------------------------------------------------------------------------


def _plain(value: Any, tp: Any) -> Any:
    if _is_settings(tp):
        return to_dict(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def _render_table(instance: Any, prefix: str, lines: list[str]) -> None:
    fields = _fields(type(instance))
    # Plain keys first: in TOML, keys after a [header] belong to that header's table.
    for field, tp in fields:
        if not _is_settings(tp):
            lines.extend(_comment(field.metadata.get(DOC, "")))
            lines.extend(_constraint_comment(tp, field.metadata))
            lines.append(f"{field.name} = {_toml_value(getattr(instance, field.name))}")
            lines.append("")
    for field, tp in fields:
        if _is_settings(tp):
            lines.append("")
            lines.extend(_comment(field.metadata.get(DOC, "")))
            lines.append(f"[{prefix}{field.name}]")
            lines.append("")
            _render_table(getattr(instance, field.name), f"{prefix}{field.name}.", lines)
    while lines and not lines[-1]:
        lines.pop()


def _comment(text: str) -> list[str]:
    return [f"# {line}" for line in textwrap.wrap(text, _COMMENT_WIDTH - 2)]


def _constraint_comment(tp: Any, metadata: Mapping[str, Any]) -> list[str]:
    item_type = typing.get_args(tp)[0] if typing.get_origin(tp) is tuple else tp
    parts: list[str] = []
    if CHOICES in metadata:
        text = _choices_text(metadata[CHOICES])
        parts.append(text[0].upper() + text[1:] + ".")
    if MIN in metadata or MAX in metadata:
        text = _range_text(item_type, metadata.get(MIN), metadata.get(MAX))
        parts.append(f"Range: {text}.")
    if metadata.get(NONEMPTY):
        parts.append("Must not be empty.")
    return _comment(" ".join(parts)) if parts else []


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # JSON string escapes are valid TOML basic-string escapes; DEL is the one extra TOML needs.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return repr(value)
