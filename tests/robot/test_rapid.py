"""Static checks that keep the RAPID server (robot/rapid/*.mod) honest against the Python protocol.

RAPID cannot run here, so these tests read the sources: blocks balance, identifiers and string
literals fit RAPID's limits, and everything the Python side defines (keywords, error codes,
reasons the daemon relies on, field ranges, default ports and timeouts, the cell's limits) appears
in the RAPID code where it must. The lists come from `voiced.robot.protocol`, the simulator and the
physics, not from this file, so a change on the Python side that the RAPID side misses fails here.
"""

from __future__ import annotations

import ast
import inspect
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

import pytest
from voiced.robot import physics, simcontrol, simcore, simulator
from voiced.robot.link import ControllerLink
from voiced.robot.protocol import (
    ERROR_CODES,
    MAX_LINE_BYTES,
    MAX_SEQ,
    MESSAGE_TYPES,
    NO_TOOL,
    PRIMITIVE_KEYWORDS,
    STATUSES,
    LineError,
    codec,
    parse_line,
    wire,
)
from voiced.robot.protocol.messages import SPECS
from voiced.robot.simulator import Simulator

from voiced import cli
from voiced.config import ControllerConfig

ROOT = Path(__file__).resolve().parents[2]
RAPID = ROOT / "robot" / "rapid"
MOTION = RAPID / "VoicedMotion.mod"
CONTROL = RAPID / "VoicedControl.mod"
MODULES = {"motion": MOTION, "control": CONTROL}

NOT_ON_CONTROLLER = {"SUPPORT": "physics' support rule needs the scene, which only the daemon has"}
"""ERR codes the simulator sends that a real controller cannot: the RAPID side never sends them."""

MAX_IDENTIFIER = 32
"""RAPID identifiers (RAPID kernel manual); the protocol's names are [A-Za-z0-9_]{1,32} too."""
MAX_STRING = 80
"""A RAPID `string` holds 80 characters, a literal included."""
MAX_SOURCE_LINE = 100
"""No RAPID limit on source lines was found documented; this is the repository's own line length,
kept so the modules read on a FlexPendant and in RobotStudio without wrapping."""

BLOCKS = {
    "MODULE": "ENDMODULE",
    "PROC": "ENDPROC",
    "FUNC": "ENDFUNC",
    "TRAP": "ENDTRAP",
    "IF": "ENDIF",
    "WHILE": "ENDWHILE",
    "FOR": "ENDFOR",
    "TEST": "ENDTEST",
}


# -- reading RAPID -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    kind: Literal["word", "string", "number", "symbol"]
    text: str
    """The identifier, number or symbol; for a string literal its value (escapes resolved)."""
    line: int


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_SYMBOLS = (":=", "<>", "<=", ">=")


def _string_at(line: str, start: int, lineno: int) -> tuple[str, int]:
    """The value of the string literal opening at `start` and the index just after it."""
    value: list[str] = []
    j = start + 1
    while True:
        if j >= len(line):
            raise AssertionError(f"line {lineno}: unterminated string literal")
        ch = line[j]
        if ch == '"':
            if line[j + 1 : j + 2] == '"':  # "" is a quote
                value.append('"')
                j += 2
                continue
            return "".join(value), j + 1
        if ch == "\\":  # \\ is a backslash, \hh a character code
            if line[j + 1 : j + 2] == "\\":
                value.append("\\")
                j += 2
                continue
            code = line[j + 1 : j + 3]
            if not re.fullmatch(r"[0-9A-Fa-f]{2}", code):
                raise AssertionError(f"line {lineno}: bad escape in a string literal")
            value.append(chr(int(code, 16)))
            j += 3
            continue
        value.append(ch)
        j += 1


def lex(source: str) -> list[Token]:
    """RAPID tokens without comments (`!` to the end of the line, outside strings)."""
    tokens: list[Token] = []
    for lineno, line in enumerate(source.splitlines(), 1):
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "!":
                break
            if ch.isspace():
                i += 1
            elif ch == '"':
                value, i = _string_at(line, i, lineno)
                tokens.append(Token("string", value, lineno))
            elif word := _WORD.match(line, i):
                tokens.append(Token("word", word.group(), lineno))
                i = word.end()
            elif number := _NUMBER.match(line, i):
                tokens.append(Token("number", number.group(), lineno))
                i = number.end()
            else:
                symbol = next((s for s in _SYMBOLS if line.startswith(s, i)), ch)
                tokens.append(Token("symbol", symbol, lineno))
                i += len(symbol)
    return tokens


def strip_comments(source: str) -> str:
    """The source without comments, string literals kept as they are written."""
    out: list[str] = []
    for lineno, line in enumerate(source.splitlines(), 1):
        i, kept = 0, []
        while i < len(line) and line[i] != "!":
            if line[i] == '"':
                _, end = _string_at(line, i, lineno)
                kept.append(line[i:end])
                i = end
            else:
                kept.append(line[i])
                i += 1
        out.append("".join(kept))
    return "\n".join(out)


@cache
def source(kind: str) -> str:
    return MODULES[kind].read_text(encoding="ascii")


@cache
def tokens(kind: str) -> tuple[Token, ...]:
    return tuple(lex(source(kind)))


@cache
def code(kind: str) -> str:
    """Comment-free source with runs of whitespace made one space (for regexes over calls)."""
    return re.sub(r"\s+", " ", strip_comments(source(kind)))


def literals(kind: str) -> list[str]:
    return [t.text for t in tokens(kind) if t.kind == "string"]


def words(kind: str) -> list[str]:
    return [t.text for t in tokens(kind) if t.kind == "word"]


def case_labels(kind: str) -> set[str]:
    """Every string literal that is a CASE label of a TEST."""
    labels: set[str] = set()
    toks = tokens(kind)
    for i, tok in enumerate(toks):
        if tok.kind == "word" and tok.text == "CASE":
            for nxt in toks[i + 1 :]:
                if nxt.kind == "symbol" and nxt.text == ":":
                    break
                if nxt.kind == "string":
                    labels.add(nxt.text)
    return labels


def declarations(kind: str, storage: str) -> dict[str, tuple[str, str]]:
    """name -> (type with dimensions, initial value text) of the VAR/PERS/CONST declarations."""
    found: dict[str, tuple[str, str]] = {}
    pattern = rf"\b{storage} (\w+) (\w+)(\{{[^}}]*\}})? ?(?::= ?([^;]*))?;"
    for match in re.finditer(pattern, code(kind)):
        dtype, name, dims, init = match.groups()
        found[name] = (dtype + (dims or ""), (init or "").replace(" ", ""))
    return found


def routines(kind: str) -> list[tuple[str, str]]:
    """(PROC|FUNC|TRAP, name) of every routine."""
    found: list[tuple[str, str]] = []
    for match in re.finditer(r"\b(PROC|TRAP) (\w+)|\bFUNC \w+ (\w+)", code(kind)):
        if match.group(1):
            found.append((match.group(1), match.group(2)))
        else:
            found.append(("FUNC", match.group(3)))
    return found


def routine_body(kind: str, name: str) -> str:
    match = re.search(rf"\b(PROC|FUNC \w+|TRAP) {name}\b(.*?)\bEND(PROC|FUNC|TRAP)\b", code(kind))
    assert match, f"{name} not found in {MODULES[kind].name}"
    return match.group(2)


def pers_value(kind: str, name: str) -> str:
    return declarations(kind, "PERS")[name][1]


def const_value(kind: str, name: str) -> str:
    return declarations(kind, "CONST")[name][1]


def numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)]


# -- reading the Python side -------------------------------------------------------------------


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _fragments(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield value.value


def reason_fragments(module: object, calls: set[str], *, within: str | None = None) -> set[str]:
    """The literal pieces of the reasons `module` passes to `calls` (f-string parts included).

    `within` limits the search to one function. Pieces that are only punctuation or spaces say
    nothing and are dropped."""
    tree: ast.AST = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    if within is not None:
        tree = next(
            n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == within
        )
    found: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _call_name(node) in calls):
            continue
        args = node.args
        if args and isinstance(args[0], ast.Constant) and args[0].value == "support":
            continue  # physics' SUPPORT: not on a controller (NOT_ON_CONTROLLER)
        for arg in args:
            found.update(f for f in _fragments(arg) if re.search(r"[A-Za-z]", f))
    return found


def direction(message_type: type[object]) -> Literal["request", "reply"]:
    doc = message_type.__doc__ or ""
    if doc.startswith("Daemon -> controller"):
        return "request"
    if doc.startswith("Controller -> daemon"):
        return "reply"
    raise AssertionError(f"{message_type.__name__}: its docstring does not say its direction")


def keyword_messages() -> Iterator[tuple[str, str, Literal["request", "reply"]]]:
    """(keyword, channel, direction) of every message with a keyword of its own."""
    for message_type in MESSAGE_TYPES:
        spec = SPECS[message_type]
        if spec.keyword:
            yield spec.keyword, spec.channel, direction(message_type)


def line_error(line: str, channel: Literal["motion", "control"]) -> LineError:
    with pytest.raises(LineError) as info:
        parse_line(line, channel)
    return info.value


# -- the sources themselves --------------------------------------------------------------------


@pytest.mark.parametrize("kind", MODULES)
def test_module_is_ascii_with_its_file_name(kind: str) -> None:
    raw = MODULES[kind].read_bytes()
    assert all(b == 0x0A or 0x20 <= b <= 0x7E for b in raw), "printable ASCII and LF only"
    toks = tokens(kind)
    assert [toks[0].text, toks[1].text] == ["MODULE", MODULES[kind].stem]
    assert toks[-1].text == "ENDMODULE"


@pytest.mark.parametrize("kind", MODULES)
def test_blocks_balance_and_nest(kind: str) -> None:
    toks = tokens(kind)
    stack: list[tuple[str, int]] = []
    closers = {end: start for start, end in BLOCKS.items()}
    for i, tok in enumerate(toks):
        if tok.kind != "word":
            continue
        if tok.text == "IF":
            rest = (t for t in toks[i + 1 :] if t.text in ("THEN", ";"))
            assert next(rest).text == "THEN", f"line {tok.line}: write IF ... THEN ... ENDIF"
        if tok.text in BLOCKS:
            stack.append((tok.text, tok.line))
        elif tok.text in closers:
            assert stack, f"line {tok.line}: {tok.text} closes nothing"
            opened, line = stack.pop()
            assert opened == closers[tok.text], (
                f"line {tok.line}: {tok.text} closes {opened}@{line}"
            )
    assert not stack, f"unclosed: {stack}"


@pytest.mark.parametrize("kind", MODULES)
def test_identifiers_fit_rapid(kind: str) -> None:
    long = {w for w in words(kind) if len(w) > MAX_IDENTIFIER}
    assert not long, f"identifiers longer than {MAX_IDENTIFIER}: {long}"


@pytest.mark.parametrize("kind", MODULES)
def test_string_literals_fit_a_rapid_string(kind: str) -> None:
    long = [s for s in literals(kind) if len(s) > MAX_STRING]
    assert not long, f"string literals longer than {MAX_STRING} characters: {long}"


@pytest.mark.parametrize("kind", MODULES)
def test_source_lines_are_short(kind: str) -> None:
    long = [n for n, line in enumerate(source(kind).splitlines(), 1) if len(line) > MAX_SOURCE_LINE]
    assert not long, f"lines longer than {MAX_SOURCE_LINE}: {long}"


@pytest.mark.parametrize("kind", MODULES)
def test_names_are_declared_once_and_used_names_exist(kind: str) -> None:
    """RAPID names are case-insensitive; every vd*/Vd*/Vc* name used must be declared here."""
    declared = [name for _, name in routines(kind)]
    for storage in ("VAR", "PERS", "CONST"):
        declared += list(declarations(kind, storage))
    lowered = [name.lower() for name in declared]
    assert len(lowered) == len(set(lowered)), f"declared twice: {sorted(declared)}"
    ours = {w for w in words(kind) if w.lower().startswith(("vd", "vc"))}
    assert not {w for w in ours if w.lower() not in lowered}, "used but not declared"


def test_shared_persistent_data_is_declared_identically_in_both_tasks() -> None:
    motion, control = declarations("motion", "PERS"), declarations("control", "PERS")
    shared = set(motion) & set(control)
    for name in shared:
        assert motion[name] == control[name], f"{name} differs between the tasks"
    # what one task writes and the other reads must be declared in both
    written_by_motion = {"vdLastDone", "vdBusy", "vdStatusCount", "vdGripper", "vdToolName"}
    written_by_control = {"vdHalted", "vdHaltReason", "vdStopReason", "vdStopReq"}
    assert written_by_motion | written_by_control | {"vdStopAck", "vdTool", "vdWobj"} <= shared
    assert written_by_motion <= set(words("control"))
    assert written_by_control <= set(words("motion"))
    # the control task's own settings are not the motion task's to read
    assert not (set(control) - shared) & set(words("motion"))


# -- the protocol's vocabulary -----------------------------------------------------------------


def test_every_primitive_keyword_is_handled_by_the_motion_task() -> None:
    assert set(PRIMITIVE_KEYWORDS.values()) <= case_labels("motion")


def test_every_message_keyword_is_on_its_channels_task() -> None:
    for keyword, channel, way in keyword_messages():
        kind = "motion" if channel == "motion" else "control"
        uses = [s for s in literals(kind) if re.search(rf"(^|\s){keyword}(\s|$)", s)]
        assert uses, f"{keyword} ({channel}) never appears in {MODULES[kind].name}"
        if way == "reply" and keyword != "HELLO":
            # a reply is sent, and refused when a client sends it ("... is not a request")
            assert keyword in case_labels(kind), f"{keyword} sent to the controller is not refused"
            assert len(uses) >= 2, f"{keyword} is never sent by {MODULES[kind].name}"


def test_every_request_is_handled() -> None:
    for keyword, channel, way in keyword_messages():
        if way != "request":
            continue
        kind = "motion" if channel == "motion" else "control"
        handled = keyword in case_labels(kind) or f'kw="{keyword}"' in code(kind)
        assert handled, f"{keyword} is not handled by {MODULES[kind].name}"


def error_codes_sent(kind: str) -> set[str]:
    pattern = r'(?:VdRefuse [^,;]+,|VdSetFail |VdErrLine\([^,;]+,|VcErr |vFailCode:=)"([A-Z]+)"'
    return set(re.findall(pattern, code(kind)))


def test_every_error_code_a_controller_can_send_is_produced() -> None:
    assert set(NOT_ON_CONTROLLER) <= ERROR_CODES
    sent = error_codes_sent("motion")
    assert sent <= ERROR_CODES, f"codes the protocol does not know: {sent - ERROR_CODES}"
    assert sent == ERROR_CODES - set(NOT_ON_CONTROLLER)
    assert error_codes_sent("control") == {"PARSE", "RANGE", "AUTH"}


def test_reasons_match_the_simulators() -> None:
    """Every piece of text the simulator, the parser and the physics put in an ERR reason is in
    the RAPID literals (the STOPPED prefixes the daemon relies on among them)."""
    motion_text = literals("motion")
    control_text = literals("control")

    def missing(pieces: Iterable[str], texts: list[str]) -> set[str]:
        return {p for p in pieces if not any(p.strip() in t for t in texts)}

    motion_pieces = (
        reason_fragments(simcore, {"fitted", "refuse", "_clear_queue"})
        | reason_fragments(simulator, {"refuse"})
        | reason_fragments(physics, {"PhysicsError"})
        | reason_fragments(codec, {"LineError"})
        | reason_fragments(wire, {"FieldError"}, within="read_int")
        | reason_fragments(wire, {"FieldError"}, within="read_num")
        | reason_fragments(wire, {"FieldError"}, within="_read_pose")
        | reason_fragments(wire, {"FieldError"}, within="_word_wire")
    )
    assert {"interrupted by ", "cleared by "} <= motion_pieces
    assert not missing(motion_pieces, motion_text)
    control_pieces = (
        reason_fragments(simulator, {"fitted"})
        | reason_fragments(codec, {"LineError"})
        | reason_fragments(wire, {"FieldError"}, within="read_int")
    ) - {"no keyword after the seq"}  # seqs travel on the motion channel only
    assert not missing(control_pieces, control_text)


def test_stopped_reasons_start_with_the_words_the_daemon_relies_on() -> None:
    """docs/PROTOCOL.md: "interrupted ..." for the line cut, "cleared ..." for queued lines,
    "line N failed ..." for lines the latch refuses. Each RAPID STOPPED reason starts with the
    first piece of one of the simulator's."""
    tree = ast.parse(inspect.getsource(simcore))
    starts: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) in {"fitted", "refuse", "_clear_queue"}:
            reason = node.args[-1] if node.args else None
            if isinstance(reason, ast.JoinedStr) and isinstance(reason.values[0], ast.Constant):
                starts.add(str(reason.values[0].value))
    assert {"interrupted by ", "cleared by ", "cleared: line ", "line "} <= starts
    motion = code("motion")
    used = re.findall(r'"STOPPED", ?"([^"]*)"', motion) + re.findall(
        r'VdClearQueue "([^"]*)"', motion
    )
    assert used and set(used) <= starts, set(used) - starts
    assert {"interrupted by ", "cleared by ", "cleared: line ", "line "} <= set(used)


def test_statuses_tool_placeholder_and_halt_reasons() -> None:
    assert set(STATUSES) <= set(literals("control"))
    assert NO_TOOL in literals("control")
    reasons = {
        node.args[0].value
        for module in (simulator, simcontrol)
        for node in ast.walk(ast.parse(inspect.getsource(module)))
        if isinstance(node, ast.Call)
        and _call_name(node) in {"halt", "_lost_client", "lost"}
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    assert reasons == {"stop", "heartbeat", "disconnect"}
    assert reasons <= set(literals("control"))


# -- numbers: fields, limits, ports, timeouts --------------------------------------------------

RANGE_PROBES: list[tuple[str, Literal["motion", "control"]]] = [
    ("1 SPEED 0", "motion"),
    ("1 GRIP 1000", "motion"),
    ("1 MOVEL 0 0 0 1.5 0 0 0 100", "motion"),
    ("1 WAIT 3600001", "motion"),
    ("1000000 WAIT 0", "motion"),
    ("PING 1000000", "control"),
    ("WATCH 60001", "control"),
]
"""Lines just out of range; their reasons give each field's name and range."""
DECIMAL_PROBES = [
    "1 SPEED 1.25",
    "1 GRIP 1.25",
    "1 MOVEL 1.25 0 0 1 0 0 0 100",
    "1 MOVEL 0 0 0 1.00001 0 0 0 100",
]
"""Lines with one decimal too many; their reasons give each field's decimals."""


def decimal_readers(kind: str) -> dict[str, set[tuple[int, float, float, str]]]:
    """what -> {(decimals, low, high, range text)} of the VdReadDec calls (one per call site)."""
    pattern = r'VdReadDec\([^,]+, ?(\d+), ?(-?[\d.]+), ?(-?[\d.]+), ?"([^"]+)", ?"([^"]+)"'
    found: dict[str, set[tuple[int, float, float, str]]] = {}
    for dec, lo, hi, what, span in re.findall(pattern, code(kind)):
        found.setdefault(what, set()).add((int(dec), float(lo), float(hi), span))
    return found


def int_readers(kind: str) -> dict[str, set[tuple[int, int]]]:
    """what -> {(low, high)} of the VdReadInt/VcReadInt calls (CONST names resolved)."""

    def value(text: str) -> int:
        return int(const_value(kind, text)) if text.startswith("VD_") else int(text)

    pattern = r'V[dc]ReadInt\([^,]+, ?(\w+), ?(\w+), ?"([^"]+)"'
    found: dict[str, set[tuple[int, int]]] = {}
    for lo, hi, what in re.findall(pattern, code(kind)):
        found.setdefault(what, set()).add((value(lo), value(hi)))
    return found


@pytest.mark.parametrize(("line", "channel"), RANGE_PROBES)
def test_field_ranges_match_the_wire(line: str, channel: Literal["motion", "control"]) -> None:
    reason = line_error(line, channel).reason
    match = re.fullmatch(r"(.+) (\S+) outside (\S+)\.\.(\S+)", reason)
    assert match, reason
    what, _, low, high = match.groups()
    decimals, ints = decimal_readers(channel), int_readers(channel)
    if what in decimals:
        expected = (float(low), float(high), f"{low}..{high}")
        assert {reader[1:] for reader in decimals[what]} == {expected}, what
    else:
        assert ints[what] == {(int(low), int(high))}, what


@pytest.mark.parametrize("line", DECIMAL_PROBES)
def test_field_decimals_match_the_wire(line: str) -> None:
    reason = line_error(line, "motion").reason
    match = re.fullmatch(r"(.+) is not a number with at most (\d+) decimals", reason)
    assert match, reason
    readers = decimal_readers("motion")[match.group(1)]
    assert {reader[0] for reader in readers} == {int(match.group(2))}


def test_quaternion_tolerance_matches_the_wire() -> None:
    (python_tolerance,) = re.findall(r"- 1\.0\) > ([\d.]+)", inspect.getsource(wire))
    (rapid_tolerance,) = re.findall(r"Abs\(norm-1\)>([\d.]+)", code("motion"))
    assert float(rapid_tolerance) == float(python_tolerance)


@pytest.mark.parametrize("kind", MODULES)
def test_protocol_constants(kind: str) -> None:
    assert int(const_value(kind, "VD_MAX_SEQ")) == MAX_SEQ
    assert int(const_value(kind, "VD_MAX_LINE")) == MAX_LINE_BYTES - 1
    assert const_value(kind, "VD_NL") == '"\\0A"'
    # the printable set, in two literals because a string holds 80 characters
    toks = tokens(kind)
    parts = {
        toks[i].text: toks[i + 2].text
        for i in range(len(toks) - 2)
        if toks[i].text in ("VD_PRINT_A", "VD_PRINT_B") and toks[i + 2].kind == "string"
    }
    assert parts["VD_PRINT_A"] + parts["VD_PRINT_B"] == "".join(map(chr, range(0x20, 0x7F)))


def test_default_ports_match_the_python_side() -> None:
    port = int(pers_value("motion", "vdMotionPort"))
    assert port == cli._parser().parse_args(["sim"]).port == 1025
    assert pers_value("control", "vdMotionPort") == str(port)
    assert ControllerConfig().control_port_for(port) == port + 1
    assert ControllerLink("127.0.0.1", port).control_port == port + 1
    assert "SocketBind sockSrv,vdAddress,vdMotionPort;" in code("motion")
    assert "SocketBind sockSrv,vdAddress,vdMotionPort+1;" in code("control")


@pytest.mark.parametrize("kind", MODULES)
def test_the_address_is_a_real_one(kind: str) -> None:
    address = pers_value(kind, "vdAddress").strip('"')
    assert re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", address)
    assert address != "0.0.0.0", "RAPID cannot bind a wildcard address"


def test_heartbeat_and_stop_timeouts_fit_the_daemon() -> None:
    heartbeat = float(pers_value("control", "vdHeartbeatTimeout"))
    default = inspect.signature(Simulator).parameters["heartbeat_timeout"].default
    assert heartbeat == ControllerConfig().heartbeat_timeout == default
    # the daemon waits heartbeat_timeout for STOPPED: the halt must be confirmed sooner
    assert float(pers_value("control", "vdStopAckTimeout")) < ControllerConfig().heartbeat_timeout


def test_cell_limits_are_those_of_the_configured_cell() -> None:
    config = tomllib.loads((ROOT / "config.toml").read_text(encoding="utf-8"))
    name = config["cell"]["name"]
    cell = tomllib.loads((ROOT / "robot" / "cells" / f"{name}.toml").read_text(encoding="utf-8"))
    limits = cell["limits"]
    assert numbers(pers_value("motion", "vdWsMin")) == limits["workspace_min"]
    assert numbers(pers_value("motion", "vdWsMax")) == limits["workspace_max"]
    assert float(pers_value("motion", "vdMaxSpeed")) == limits["max_speed"]
    assert float(pers_value("motion", "vdGripMin")) == limits["gripper_min"]
    assert float(pers_value("motion", "vdGripMax")) == limits["gripper_max"]
    tools = cell.get("tools", {})
    names = [n.strip('"') for n in pers_value("motion", "vdToolNames").strip("[]").split(",")]
    assert sorted(n for n in names if n) == sorted(tools)
    routines_ = [
        n.strip('"') for n in pers_value("motion", "vdRoutineNames").strip("[]").split(",")
    ]
    assert sorted(n for n in routines_ if n) == sorted(cell.get("routines", {}))


# -- the mechanisms ----------------------------------------------------------------------------


def test_stop_interrupts_the_move_from_a_trap() -> None:
    motion = code("motion")
    assert "CONNECT irStop WITH trVoicedStop;" in motion
    assert "ISignalDO doVoicedStop,1,irStop;" in motion
    trap = routine_body("motion", "trVoicedStop")
    order = [trap.find(step) for step in ("StopMove;", "ClearPath;", "StartMove;", "ExitCycle;")]
    assert -1 not in order and order == sorted(order), trap
    # RAISE in a trap goes to the system error handler and stops the program
    for kind in MODULES:
        for routine, name in routines(kind):
            if routine == "TRAP":
                assert "RAISE" not in routine_body(kind, name)
    control = code("control")
    halt = routine_body("control", "VcHalt")
    assert (
        halt.index("SetDO doVoicedStop,1;")
        < halt.index("WaitUntil")
        < halt.index("SetDO doVoicedStop,0;")
    )
    # STOPPED goes out after the halt was confirmed
    assert re.search(r'VcHalt "stop"; VcSend "STOPPED "\+NumToStr\(vdLastDone,0\);', control)


def test_every_blocking_instruction_is_guarded_for_the_trap() -> None:
    perform = routine_body("motion", "VdPerform") + routine_body("motion", "VdCallRoutine")
    for instruction in ("MoveL ", "MoveJ ", "VdGripperMove ", "VdToolChanger ", "%name%"):
        before = perform[: perform.index(instruction)]
        guarded = before[before.rfind("bExecuting:=TRUE;") :]
        assert "bExecuting:=TRUE;" in guarded and "bExecuting:=FALSE;" not in guarded, instruction
        assert "IF vdStopReq=vdStopAck THEN" in guarded and "ENDIF" not in guarded, instruction
    assert "fine,vdTool\\WObj:=vdWobj;" in perform


def test_call_uses_late_binding_with_an_error_handler() -> None:
    body = routine_body("motion", "VdCallRoutine")
    assert "%name%;" in body
    assert "ERR_REFUNKPRC" in body.split("ERROR", 1)[1]
    # only names from the cell's list are called (VdCheck runs before VdPerform)
    assert 'VdSetFail "ROUTINE","there is no routine called "' in routine_body("motion", "VdCheck")


def test_timeouts_on_every_receive_and_accept() -> None:
    for kind in MODULES:
        calls = re.findall(r"Socket(?:Receive|Accept) [^;]*;", code(kind))
        assert calls and all("\\Time:=" in c for c in calls), calls  # default is 60 s, then ERR


def test_docs_describe_the_signals_and_the_unverified_points() -> None:
    signals = set()
    for kind in MODULES:
        signals |= set(re.findall(r"\b(?:SetDO|SetAO|ISignalDO) (\w+),", code(kind)))
    assert signals == {"doVoicedStop", "aoVoicedGrip", "doVoicedToolLock"}
    doc = (ROOT / "docs" / "RAPID.md").read_text(encoding="utf-8")
    for name in (*signals, MOTION.name, CONTROL.name, "Multitasking", "SafeMove"):
        assert name in doc, name
    assert "## What has not been verified" in doc
    assert "docs/RAPID.md" in (RAPID / "README.md").read_text(encoding="utf-8")
