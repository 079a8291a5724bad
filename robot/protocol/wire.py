"""Field codecs: how each kind of value is read from and written to wire tokens.

Readers are strict (the grammar in docs/PROTOCOL.md): plain decimals only, no exponent, sign `-`
only, at most the wire's decimals, so `nan`, `inf`, `1e3` and `+5` are all refused. A token that
reads but lies outside its range is a RANGE error; anything else is PARSE.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from voiced.robot.primitives import Pose

from voiced.errors import ProtocolError

Channel = Literal["motion", "control"]
MAX_LINE_BYTES = 80
"""Including the terminating newline."""
MAX_SEQ = 999_999
ERROR_CODES = frozenset(
    {
        "PARSE",
        "RANGE",
        "WORKSPACE",
        "SPEED",
        "GRIPPER",
        "TOOL",
        "ROUTINE",
        "SUPPORT",
        "HALTED",
        "STOPPED",
        "SEQ",
        "AUTH",
    }
)
"""Every ERR code (docs/PROTOCOL.md); SUPPORT is physics refusing to pick what holds others up,
AUTH a client refused at the handshake."""
PROTOCOL_VERSION = 1
CONTROLLER_KINDS = ("sim", "rapid")
"""What a controller says it is in its greeting."""
NO_CHALLENGE = "-"
"""The greeting's nonce, or AUTH's answer, when there is no key to use."""
STATUSES = ("idle", "moving", "halted")
NO_TOOL = "-"
"""The STATUS tool field when no tool is on the flange."""


class LineError(ProtocolError):
    """A line that breaks the protocol, and what a controller answers (`<seq> ERR <code> ...`)."""

    def __init__(
        self, message: str, line: str | bytes, *, code: str = "PARSE", seq: int = 0
    ) -> None:
        self.code = code
        """PARSE (unreadable) or RANGE (readable, value out of range)."""
        self.seq = seq
        """The line's sequence number; 0 when it could not be read."""
        self.reason = message
        """What is wrong, without the line."""
        super().__init__(message, line)


class FieldError(Exception):
    """Raised by the field readers; `parse_line` turns it into a LineError naming the line."""

    def __init__(self, message: str, code: str = "PARSE") -> None:
        self.code = code
        super().__init__(message)


@dataclass(frozen=True)
class Wire:
    """How one dataclass field travels: its token count (-1 = the rest of the line) and codec."""

    tokens: int
    read: Callable[[Sequence[str]], Any]
    """Tokens -> value; raises FieldError."""
    write: Callable[[Any], list[str]]
    """Value -> tokens; raises TypeError/ValueError for values that have no wire form."""


_INT = re.compile(r"\d{1,7}")
_NAME = re.compile(r"[A-Za-z0-9_]{1,32}")
_SESSION = re.compile(r"[0-9a-f]{8}")
_NONCE = re.compile(r"[0-9a-f]{16}")
_MAC = re.compile(r"[0-9a-f]{32}")
_DECIMALS = {d: re.compile(rf"-?\d{{1,5}}(?:\.\d{{1,{d}}})?") for d in (1, 4)}


def is_name(text: str) -> bool:
    """Whether `text` is a NAME on the wire (tool, routine, controller identity)."""
    return _NAME.fullmatch(text) is not None


def read_int(token: str, low: int, high: int, what: str) -> int:
    if not _INT.fullmatch(token):
        raise FieldError(f"{what} is not a whole number")
    value = int(token)
    if not low <= value <= high:
        raise FieldError(f"{what} {value} outside {low}..{high}", "RANGE")
    return value


def read_num(token: str, decimals: int, low: float, high: float, what: str) -> float:
    if not _DECIMALS[decimals].fullmatch(token):
        raise FieldError(f"{what} is not a number with at most {decimals} decimals")
    value = float(token)
    if not low <= value <= high:
        raise FieldError(f"{what} {token} outside {low:g}..{high:g}", "RANGE")
    return value


def write_num(value: float, decimals: int) -> str:
    """Shortest fixed-point form at the wire precision: 100.0 -> "100", -0.04 -> "0"."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{value!r} is not a number")
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _int_wire(low: int, high: int, what: str) -> Wire:
    def write(value: int) -> list[str]:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{what} must be an int, not {value!r}")
        return [str(value)]

    return Wire(1, lambda t: read_int(t[0], low, high, what), write)


def _num_wire(decimals: int, low: float, high: float, what: str) -> Wire:
    return Wire(
        1, lambda t: read_num(t[0], decimals, low, high, what), lambda v: [write_num(v, decimals)]
    )


def _word_wire(pattern: re.Pattern[str], what: str, none: str | None = None) -> Wire:
    """A single token matching `pattern`; `none` is the token that stands for None."""

    def read(tokens: Sequence[str]) -> str | None:
        if none is not None and tokens[0] == none:
            return None
        if not pattern.fullmatch(tokens[0]):
            raise FieldError(f"{what} {tokens[0]!r} does not match {pattern.pattern}")
        return tokens[0]

    def write(value: str | None) -> list[str]:
        if value is None and none is not None:
            return [none]
        if not isinstance(value, str):
            raise TypeError(f"{what} must be a str, not {value!r}")
        return [value]

    return Wire(1, read, write)


def _choice_wire(choices: Sequence[str] | frozenset[str], what: str) -> Wire:
    def read(tokens: Sequence[str]) -> str:
        if tokens[0] not in choices:
            raise FieldError(f"unknown {what} {tokens[0]!r}")
        return tokens[0]

    return Wire(1, read, lambda v: [str(v)])


def _read_pose(tokens: Sequence[str]) -> Pose:
    x, y, z = (read_num(t, 1, -99999.9, 99999.9, "position") for t in tokens[:3])
    q1, q2, q3, q4 = (read_num(t, 4, -1.0, 1.0, "quaternion") for t in tokens[3:])
    # RAPID refuses an unnormalised orientation; 4 decimals leave an error of about 1e-4.
    if abs(math.sqrt(q1 * q1 + q2 * q2 + q3 * q3 + q4 * q4) - 1.0) > 0.002:
        raise FieldError("quaternion is not unit length", "RANGE")
    return Pose(x, y, z, (q1, q2, q3, q4))


def _write_pose(pose: Pose) -> list[str]:
    if not isinstance(pose, Pose):
        raise TypeError(f"{pose!r} is not a Pose")
    p = pose.rounded()
    return [write_num(v, 1) for v in (p.x, p.y, p.z)] + [write_num(v, 4) for v in p.q]


def _write_words(text: str) -> list[str]:
    if not isinstance(text, str):
        raise TypeError(f"reason must be a str, not {text!r}")
    return text.split()


SEQ = _int_wire(1, MAX_SEQ, "seq")
ERR_SEQ = _int_wire(0, MAX_SEQ, "seq")
"""An ERR's seq: 0 answers a line whose own seq could not be read."""
COUNT = _int_wire(0, MAX_SEQ, "count")
MS = _int_wire(0, 3_600_000, "milliseconds")
WATCH_MS = _int_wire(0, 60_000, "watch period")
SPEED = _num_wire(1, 0.1, 9999.9, "speed")
WIDTH = _num_wire(1, 0.0, 999.9, "gripper width")
POSE = Wire(7, _read_pose, _write_pose)
NAME = _word_wire(_NAME, "name")
TOOL_OR_NONE = _word_wire(_NAME, "tool", none=NO_TOOL)
SESSION = _word_wire(_SESSION, "session")
CODE = _choice_wire(ERROR_CODES, "error code")
STATUS = _choice_wire(STATUSES, "status")
VERSION = _int_wire(1, 99, "protocol version")
KIND = _choice_wire(CONTROLLER_KINDS, "controller kind")
NONCE = _word_wire(_NONCE, "nonce", none=NO_CHALLENGE)
MAC = _word_wire(_MAC, "mac", none=NO_CHALLENGE)
WORDS = Wire(-1, " ".join, _write_words)
"""Free text to the end of the line: any printable ASCII words (possibly none)."""


def fit_reason(prefix: str, reason: str) -> str:
    """`reason` as printable ASCII words, cut at a word so that `prefix reason\\n` fits in 80 bytes.

    Reasons come from physics and cell files, which may hold typographic dashes and accents."""
    text = unicodedata.normalize("NFKD", reason.replace("\u2014", "-").replace("\u2013", "-"))
    words = "".join(c for c in text if " " <= c <= "~" or c.isspace()).split()
    room = MAX_LINE_BYTES - 1 - len(prefix) - 1
    kept: list[str] = []
    used = -1
    for word in words:
        if used + 1 + len(word) > room:
            break
        kept.append(word)
        used += 1 + len(word)
    return " ".join(kept)
