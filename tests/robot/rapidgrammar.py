"""The shipped RAPID read by an independent grammar: rapidchecker's (PyPI, pyparsing).

`tests/robot/test_rapid.py` reads the modules with our own small lexer; this reads them with a
grammar someone else wrote from ABB's RAPID manual, so a syntax error our lexer is blind to (a
missing ENDIF, a statement without its `;`, a lower-case keyword, an argument list that does not
parse) fails a test here.

rapidchecker 0.1.5 rejects some valid RAPID that the modules use. Each gap is bridged by one
narrow rewrite of the text before it is checked, never by changing the shipped modules:

- `""` inside a string literal (a quote) is written `\\22`, RAPID's other spelling of it;
- `LOCAL` before PROC, FUNC or TRAP is dropped (the grammar knows LOCAL only on data);
- a subscript that is not a plain name or number (`qArg{i,k}`, `vTok{k+2}`, a two-dimensional
  declaration) becomes one name, and its indexes are checked alone as expressions;
- a FUNC with an ERROR handler is read as a PROC (the grammar's FUNC has no ERROR section), its
  return type checked alone as a data type name;
- a CASE with several labels keeps its first label, and each other label is checked alone as
  the grammar's CASE label (a term).

What is set aside is still checked by the grammar's own rules (expression, term, data type), and
every rewrite keeps line numbers, so an error points at the shipped file's line.
`tests/robot/test_rapid_grammar.py` proves each rewrite keeps the meaning and is still needed.
docs/RAPID.md says what neither check can see.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import pyparsing as pp

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # the grammar is built with old names
    from rapidchecker.check import check_format
    from rapidchecker.config import CONFIG
    from rapidchecker.parser import grammar, identifiers
    from rapidchecker.whitespace_checks import check_whitespace

INDENT = 4
"""Our modules indent by four spaces (rapidchecker's default is two)."""

Rule = Literal["indexes", "term", "datatype"]
RULES: dict[Rule, pp.ParserElement] = {
    "indexes": pp.DelimitedList(grammar.expression),
    "term": grammar.term,
    "datatype": identifiers.datatype,
}

PLACEHOLDER = "vdIndex"
"""The one name a compound subscript becomes (not used in the modules)."""


@dataclass(frozen=True)
class SetAside:
    """A piece of RAPID a rewrite took out of the text, checked alone by one grammar rule."""

    line: int
    text: str
    rule: Rule


@dataclass(frozen=True)
class Rewritten:
    text: str
    set_aside: tuple[SetAside, ...] = ()


Rewrite = Callable[[str], Rewritten]


# -- where code is: string literals and comments blanked out, positions kept ---------------------


def blank(line: str) -> str:
    """The line with every string literal's content as `_` and the comment as spaces.

    Same length as the line, so a match found in the blanked line is at the same place in the
    real one, and nothing inside a string or a comment can look like code.
    """
    out: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "!":
            out.append(" " * (len(line) - i))
            break
        if ch != '"':
            out.append(ch)
            i += 1
            continue
        end = string_end(line, i)
        out.append('"' + "_" * (end - i - 2) + '"')
        i = end
    return "".join(out)


def string_end(line: str, start: int) -> int:
    """The index just after the string literal opening at `start` (`""` inside is a quote)."""
    j = start + 1
    while j < len(line):
        if line[j] == '"':
            if line[j + 1 : j + 2] != '"':
                return j + 1
            j += 1
        j += 1
    return len(line)  # unterminated: the grammar reports it


def splice(line: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """The line with each (start, end) span replaced, spans in order and not overlapping."""
    out, at = [], 0
    for start, end, new in edits:
        out.append(line[at:start])
        out.append(new)
        at = end
    out.append(line[at:])
    return "".join(out)


def split_outside_strings(text: str, blanked: str, sep: str) -> Iterator[tuple[int, str]]:
    """(offset, piece) of `text` split at `sep` where `blanked` (its blanked form) has it."""
    start = 0
    for i, ch in enumerate(blanked):
        if ch == sep:
            yield start, text[start:i]
            start = i + 1
    yield start, text[start:]


# -- the rewrites --------------------------------------------------------------------------------


def doubled_quotes(source: str) -> Rewritten:
    """`""` inside a literal -> `\\22`: the same character; the grammar's strings end at `"`."""
    lines = []
    for line in source.split("\n"):
        edits = []
        i = 0
        while i < len(line) and line[i] != "!":
            if line[i] != '"':
                i += 1
                continue
            end = string_end(line, i)
            inner = line[i + 1 : end - 1]
            if '""' in inner:
                edits.append((i + 1, end - 1, inner.replace('""', "\\22")))
            i = end
        lines.append(splice(line, edits))
    return Rewritten("\n".join(lines))


_LOCAL_ROUTINE = re.compile(r"^(\s*)LOCAL\s+(?=(?:PROC|FUNC|TRAP)\b)")


def local_routines(source: str) -> Rewritten:
    """`LOCAL PROC` -> `PROC` (same for FUNC, TRAP): LOCAL only limits the routine's scope."""
    return Rewritten("\n".join(_LOCAL_ROUTINE.sub(r"\1", line) for line in source.split("\n")))


_SUBSCRIPT = re.compile(r"(?<=[A-Za-z0-9_])\{([^{}]*)\}")
_PLAIN_INDEX = re.compile(r"\s*(?:[A-Za-z][A-Za-z0-9_]*|\d+|\*)\s*")


def compound_subscripts(source: str) -> Rewritten:
    """`a{i,k}`, `a{k+2}` -> `a{vdIndex}`; the indexes are checked alone (expressions)."""
    lines, pieces = [], []
    for lineno, line in enumerate(source.split("\n"), 1):
        blanked = blank(line)
        edits = []
        for match in _SUBSCRIPT.finditer(blanked):
            if _PLAIN_INDEX.fullmatch(match.group(1)):
                continue
            pieces.append(SetAside(lineno, line[match.start(1) : match.end(1)], "indexes"))
            edits.append((match.start(1), match.end(1), PLACEHOLDER))
        lines.append(splice(line, edits))
    return Rewritten("\n".join(lines), tuple(pieces))


_FUNC = re.compile(r"^(\s*)(?:LOCAL\s+)?FUNC\s+([A-Za-z][A-Za-z0-9_]*)\s+(?=[A-Za-z])")
_ERROR = re.compile(r"^\s*ERROR\s*$")
_ENDFUNC = re.compile(r"^(\s*)ENDFUNC\b")


def func_error_handlers(source: str) -> Rewritten:
    """A FUNC with an ERROR section -> a PROC (RETURN with a value parses in a PROC too)."""
    lines = source.split("\n")
    pieces = []
    for head, line in enumerate(lines):
        func = _FUNC.match(blank(line))
        if func is None:
            continue
        end = next((i for i in range(head, len(lines)) if _ENDFUNC.match(blank(lines[i]))), None)
        if end is None or not any(_ERROR.match(blank(body)) for body in lines[head + 1 : end]):
            continue
        pieces.append(SetAside(head + 1, func.group(2), "datatype"))
        lines[head] = func.group(1) + "PROC " + line[func.end() :]
        lines[end] = _ENDFUNC.sub(r"\1ENDPROC", lines[end], count=1)
    return Rewritten("\n".join(lines), tuple(pieces))


_CASE = re.compile(r"^\s*CASE\s+")


def case_lists(source: str) -> Rewritten:
    """`CASE a, b, c:` -> `CASE a:`; b and c are checked alone as CASE labels (terms)."""
    lines, pieces = [], []
    for lineno, line in enumerate(source.split("\n"), 1):
        blanked = blank(line)
        case = _CASE.match(blanked)
        colon = blanked.find(":", case.end()) if case else -1
        if case is None or colon == -1:
            lines.append(line)
            continue
        labels = list(
            split_outside_strings(line[case.end() : colon], blanked[case.end() : colon], ",")
        )
        if len(labels) == 1:
            lines.append(line)
            continue
        for _, label in labels[1:]:
            pieces.append(SetAside(lineno, label.strip(), "term"))
        first_end = case.end() + len(labels[0][1])
        lines.append(line[:first_end] + line[colon:])
    return Rewritten("\n".join(lines), tuple(pieces))


REWRITES: tuple[Rewrite, ...] = (
    doubled_quotes,
    local_routines,
    compound_subscripts,
    func_error_handlers,
    case_lists,
)
"""In this order: the later ones rely on LOCAL gone and on literals without `""`."""


def rewrite(source: str, rewrites: Sequence[Rewrite] = REWRITES) -> Rewritten:
    text, pieces = source, []
    for step in rewrites:
        done = step(text)
        text = done.text
        pieces.extend(done.set_aside)
    return Rewritten(text, tuple(pieces))


# -- checking --------------------------------------------------------------------------------------


@contextmanager
def _our_indentation() -> Iterator[None]:
    """rapidchecker reads its settings once, from a file in the working directory; set ours."""
    saved = CONFIG.indentation_size
    CONFIG.indentation_size = INDENT
    try:
        yield
    finally:
        CONFIG.indentation_size = saved


@lru_cache(maxsize=64)
def syntax_problems(text: str) -> tuple[str, ...]:
    """The grammar's verdict on a whole module (the slow part: seconds; kept for equal texts)."""
    with _our_indentation(), warnings.catch_warnings():
        # rapidchecker calls pyparsing's old camelCase names, each call a deprecation warning.
        warnings.simplefilter("ignore", DeprecationWarning)
        return tuple(str(error) for error in check_format(text))


def problems(source: str, rewrites: Sequence[Rewrite] = REWRITES) -> list[str]:
    """What the grammar finds wrong, as "line:column message"; empty when the module is clean.

    The grammar stops at its first syntax error; the format checks (trailing spaces, empty
    lines, the final newline) and the pieces set aside are reported in full.
    """
    done = rewrite(source, rewrites)
    found = list(syntax_problems(done.text))
    found += [str(error) for error in check_whitespace(done.text)]
    for piece in done.set_aside:
        try:
            RULES[piece.rule].parse_string(piece.text, parse_all=True)
        except pp.ParseBaseException as error:
            found.append(f"{piece.line}: {piece.text!r} is not a {piece.rule}: {error.msg}")
    return found
