"""Where in a TOML file a dotted path (`composites.add_layer.params.item`) is written.

The loaders name a problem by its path inside the parsed data; an integrator fixing the file
wants the line. tomllib keeps no positions, so the text is scanned: table headers set the
table a line is in, and the line whose key comes closest to the path is the one meant.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_NAME = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_KEY = re.compile(rf"\s*({_NAME}(?:\s*\.\s*{_NAME})*)\s*=")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"([^"]*)"|'([^']*)'""")
_INDEX = re.compile(r"\[\d+\]")
_TOML_AT = re.compile(r"\(at line (\d+), column \d+\)")
_JSON_AT = re.compile(r"at line (\d+), column \d+")


def split_path(path: str) -> list[str]:
    """`a."b c".d[2]` -> ["a", "b c", "d"]: list positions are not keys and are dropped."""
    parts: list[str] = []
    for found in _PART.finditer(_INDEX.sub("", path)):
        parts.append(found.group(1) or found.group(2) or found.group(0))
    return parts


def line_of_path(text: str, path: str) -> int | None:
    """The 1-based line that writes `path` or, failing that, its nearest enclosing table or
    key; None when nothing of it is in the text."""
    wanted = split_path(path)
    if not wanted:
        return None
    table: list[str] = []
    best, best_line = 0, None
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header is not None and not line.lstrip().startswith("#"):
            table = split_path(header.group(1))
            here = table
        else:
            key = _KEY.match(line)
            if key is None:
                continue
            here = [*table, *split_path(key.group(1))]
        shared = _shared(here, wanted)
        if shared > best and shared == min(len(here), len(wanted)):
            best, best_line = shared, number
    return best_line


def line_of_syntax_error(message: str) -> int | None:
    """The line a tomllib or json syntax error gives in its message."""
    found = _TOML_AT.search(message) or _JSON_AT.search(message)
    return int(found.group(1)) if found else None


def _shared(here: list[str], wanted: list[str]) -> int:
    count = 0
    for mine, theirs in zip(here, wanted, strict=False):
        if mine != theirs:
            break
        count += 1
    return count
