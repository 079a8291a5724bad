"""Lenient JSON parsing of model replies (seed 000's `_parse_json_response`, seed 001's fences).

Models sometimes wrap the JSON in a markdown fence, put prose around it, or write a multi-line
string value with literal newlines (invalid JSON). The three repairs are tried in the seed's
order; `parse_json_object` reports which one worked, so tests and logs can tell them apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

Repair = Literal["direct", "block", "newlines"]
"""How the object was obtained: parsed as is, cut out from first { to last }, or after escaping
bare newlines inside strings."""

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)\r?\n?```\s*$", re.DOTALL)


class JsonParseError(ValueError):
    """No JSON object could be read from a reply. Carries the raw text for `raw_response`."""

    def __init__(self, raw: str, reason: str) -> None:
        self.raw = raw
        """The reply exactly as received."""
        self.reason = reason
        """Why the last attempt failed."""
        super().__init__(f"no JSON object in the reply ({reason})")


@dataclass(frozen=True)
class Parsed:
    """A JSON object read from a reply."""

    data: dict[str, Any]
    """The object."""
    repair: Repair
    """Which of the three steps produced it."""


def strip_fence(text: str) -> str:
    """The inside of a ```json ... ``` fence around the whole text; the text itself otherwise."""
    found = _FENCE.match(text)
    return found.group(1) if found else text


def collapse_unescaped_newlines(text: str) -> str:
    """Escape raw CR/LF/tab characters that occur inside JSON string literals.

    Walks the text keeping track of whether it is inside a string (and whether the previous
    character was a backslash), so newlines between tokens, which JSON allows, are kept.
    """
    out: list[str] = []
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char in "\n\r\t":
                out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
                continue
        elif char == '"':
            in_string = True
        out.append(char)
    return "".join(out)


def parse_json_object(text: str) -> Parsed:
    """The JSON object in a model reply. Raises JsonParseError carrying the raw text."""
    body = strip_fence(text).strip()
    attempts: list[tuple[Repair, str]] = [("direct", body)]
    start, end = body.find("{"), body.rfind("}")
    block = body[start : end + 1] if 0 <= start < end else ""
    if block:
        attempts.append(("block", block))
    attempts.append(("newlines", collapse_unescaped_newlines(block or body)))
    reason = "empty reply" if not body else "not JSON"
    for repair, candidate in attempts:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as error:
            reason = f"{error.msg} at line {error.lineno}, column {error.colno}"
            continue
        if isinstance(data, dict):
            return Parsed(data, repair)
        reason = f"expected a JSON object, got {type(data).__name__}"
    raise JsonParseError(text, reason)
