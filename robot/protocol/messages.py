"""The messages: one frozen dataclass per line type, each registered with its keyword and fields.

`_message(keyword, channel, *wires)` records how every field travels (one `Wire` per field, in
order); `codec.parse_line` and `codec.format_line` work from that record alone, so a field added to
a class without its wire is caught by the round-trip test over `MESSAGE_TYPES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from voiced.robot.primitives import (
    CallRoutine,
    Grip,
    MoveJ,
    MoveL,
    Pose,
    Primitive,
    Speed,
    ToolAttach,
    ToolDetach,
    Wait,
)
from voiced.robot.protocol.wire import (
    CODE,
    COUNT,
    ERR_SEQ,
    KIND,
    MAC,
    MS,
    NAME,
    NONCE,
    POSE,
    SEQ,
    SESSION,
    SPEED,
    STATUS,
    TOOL_OR_NONE,
    VERSION,
    WATCH_MS,
    WIDTH,
    WORDS,
    Channel,
    Wire,
    fit_reason,
)

_HELLO = "HELLO"
_ACK = "ACK"
_DONE = "DONE"
_ERR = "ERR"
_PING = "PING"
_PONG = "PONG"
_STOP = "STOP"
_STOPPED = "STOPPED"
_RESUME = "RESUME"
_RESUMED = "RESUMED"
_STATE = "STATE"
_POSE = "POSE"
_STATUS = "STATUS"
_HALT = "HALT"
_WATCH = "WATCH"


@dataclass(frozen=True)
class Spec:
    """Where a message (or primitive) travels and how each of its fields is written."""

    keyword: str
    channel: Channel
    seq: Wire | None
    """The leading seq of a numbered motion line (`<seq> KEYWORD ...`); None for `KEYWORD ...`."""
    wires: tuple[Wire, ...]
    """One per field after the seq."""


MESSAGE_TYPES: list[type[Any]] = []
"""Every message class, in declaration order (the round-trip test builds one of each)."""
SPECS: dict[type[Any], Spec] = {}
"""Message class -> spec; for `Command` the wires come from PRIMITIVE_SPECS instead."""
PRIMITIVE_SPECS: dict[type[Any], Spec] = {}
"""Primitive class -> the spec of its `<seq> KEYWORD ...` line."""
BY_KEYWORD: dict[tuple[Channel, bool, str], list[tuple[type[Any], Spec]]] = {}
"""(channel, seq_first, keyword) -> the classes that line may be (HELLO has two)."""

_T = TypeVar("_T")


def channel_of(message_type: type[Any]) -> Channel:
    """The channel a message class travels on."""
    return SPECS[message_type].channel


def _message(
    keyword: str, channel: Channel | tuple[Channel, ...], *wires: Wire
) -> Callable[[type[_T]], type[_T]]:
    """Register a message class; a tuple of channels for the handshake, sent on both (its spec
    names the first)."""
    channels = channel if isinstance(channel, tuple) else (channel,)

    def register(cls: type[_T]) -> type[_T]:
        seq = wires[0] if wires and wires[0] in (SEQ, ERR_SEQ) else None
        spec = Spec(keyword, channels[0], seq, wires[1:] if seq else wires)
        MESSAGE_TYPES.append(cls)
        SPECS[cls] = spec
        for each in channels if keyword else ():
            BY_KEYWORD.setdefault((each, seq is not None, keyword), []).append((cls, spec))
        return cls

    return register


def _primitive(keyword: str, kind: type[Any], *wires: Wire) -> None:
    spec = Spec(keyword, "motion", SEQ, wires)
    PRIMITIVE_SPECS[kind] = spec
    BY_KEYWORD[("motion", True, keyword)] = [(kind, spec)]


_primitive("MOVEL", MoveL, POSE, SPEED)
_primitive("MOVEJ", MoveJ, POSE, SPEED)
_primitive("GRIP", Grip, WIDTH)
_primitive("WAIT", Wait, MS)
_primitive("SPEED", Speed, SPEED)
_primitive("ATTACH", ToolAttach, NAME)
_primitive("DETACH", ToolDetach)
_primitive("CALL", CallRoutine, NAME)
PRIMITIVE_KEYWORDS = {kind: spec.keyword for kind, spec in PRIMITIVE_SPECS.items()}
"""Primitive class -> its keyword on the wire."""
# -- handshake, on both channels ----------------------------------------------------------------

BOTH: tuple[Channel, ...] = ("control", "motion")


@_message("VOICED", BOTH, VERSION, KIND, NAME, NONCE)
@dataclass(frozen=True)
class Greeting:
    """Controller -> daemon, first on every connection: who it is, and a challenge."""

    version: int
    """PROTOCOL_VERSION."""
    kind: str
    """sim or rapid (CONTROLLER_KINDS)."""
    controller: str
    """This controller's identity (saved state is kept per identity): the simulator's is new
    per process, a robot controller's its system name."""
    nonce: str | None
    """16 lowercase hex digits, new per connection; None ("-") when it checks no key."""


@_message("AUTH", BOTH, MAC)
@dataclass(frozen=True)
class Auth:
    """Daemon -> controller, the answer to the greeting (robot.auth.mac); None ("-") for none."""

    mac: str | None


@_message("AUTHOK", BOTH)
@dataclass(frozen=True)
class AuthOk:
    """Controller -> daemon: accepted; the channel is this client's until it closes."""


# -- motion channel ------------------------------------------------------------------------------


@_message(_HELLO, "motion", SESSION)
@dataclass(frozen=True)
class Hello:
    """Daemon -> controller, first on every motion connection; also the barrier after a failure."""

    session: str
    """Eight lowercase hex digits, new per executor; the same one again means a reconnect."""


@_message(_HELLO, "motion", SESSION, COUNT)
@dataclass(frozen=True)
class HelloReply:
    """Controller -> daemon: the session is open."""

    session: str
    """The session the controller now serves (echoed)."""
    last_done: int
    """The highest seq completed in this session (0 if none or a new session)."""


@_message("", "motion", SEQ)  # keyword and fields: PRIMITIVE_SPECS
@dataclass(frozen=True)
class Command:
    """Daemon -> controller: one numbered primitive, e.g. `12 MOVEL 400 0 300 0 1 0 0 250`."""

    seq: int
    """1..999999, increasing within a session."""
    primitive: Primitive
    """What to do; its keyword is in `PRIMITIVE_KEYWORDS`."""


@_message(_ACK, "motion", SEQ)
@dataclass(frozen=True)
class Ack:
    """Controller -> daemon: the line was parsed and queued (a terminal reply follows)."""

    seq: int
    """The acknowledged line."""


@_message(_DONE, "motion", SEQ)
@dataclass(frozen=True)
class Done:
    """Controller -> daemon: the line completed."""

    seq: int
    """The completed line."""


@_message(_ERR, "motion", ERR_SEQ, CODE, WORDS)
@dataclass(frozen=True)
class Err:
    """Controller -> daemon: the line was refused or did not complete; it had no further effect."""

    seq: int
    """The line (0 for a line whose seq could not be read)."""
    code: str
    """One of ERROR_CODES."""
    reason: str
    """Human-readable words (printable ASCII, single spaces; may be empty)."""

    @classmethod
    def fitted(cls, seq: int, code: str, reason: str) -> Err:
        """An Err whose reason is made ASCII and cut so that the line fits in 80 bytes."""
        return cls(seq, code, fit_reason(f"{seq} {_ERR} {code}", reason))


# -- control channel -----------------------------------------------------------------------------


@_message(_PING, "control", COUNT)
@dataclass(frozen=True)
class Ping:
    """Daemon -> controller heartbeat; the controller halts when none arrives for its timeout."""

    n: int
    """A counter the PONG echoes."""


@_message(_PONG, "control", COUNT)
@dataclass(frozen=True)
class Pong:
    """Controller -> daemon: the answer to `PING n`."""

    n: int
    """The PING's counter."""


@_message(_STOP, "control")
@dataclass(frozen=True)
class Stop:
    """Daemon -> controller: interrupt the move now, clear the queue and halt until RESUME."""


@_message(_STOPPED, "control", COUNT)
@dataclass(frozen=True)
class Stopped:
    """Controller -> daemon: halted; every cleared line already has its `ERR STOPPED`."""

    last_done: int
    """The highest seq completed in the session."""


@_message(_RESUME, "control")
@dataclass(frozen=True)
class Resume:
    """Daemon -> controller: clear the halt (nothing that was cleared runs again)."""


@_message(_RESUMED, "control")
@dataclass(frozen=True)
class Resumed:
    """Controller -> daemon: no longer halted."""


@_message(_STATE, "control")
@dataclass(frozen=True)
class StateRequest:
    """Daemon -> controller: answer with POSE, HALT (only while halted), then STATUS."""


@_message(_POSE, "control", POSE)
@dataclass(frozen=True)
class PoseReport:
    """Controller -> daemon: where the tool centre point is now."""

    pose: Pose
    """At wire precision."""


@_message(_HALT, "control", WORDS)
@dataclass(frozen=True)
class HaltReport:
    """Controller -> daemon: why it is halted (`stop`, `heartbeat`, `disconnect`).

    Sent only while halted, just before the STATUS line it explains."""

    reason: str
    """Words, as for Err."""


@_message(_STATUS, "control", STATUS, COUNT, WIDTH, TOOL_OR_NONE)
@dataclass(frozen=True)
class StatusReport:
    """Controller -> daemon: the last line of a STATE reply, and pushed at each status change."""

    status: str
    """idle, moving (a line is executing) or halted."""
    last_done: int
    """The highest seq completed in the session."""
    gripper: float
    """Gripper opening, mm."""
    tool: str | None
    """The tool on the flange (`-` on the wire for none)."""


@_message(_WATCH, "control", WATCH_MS)
@dataclass(frozen=True)
class Watch:
    """Daemon -> controller: push POSE+STATUS every `ms` while moving, STATUS on each change."""

    ms: int
    """The period; 0 turns pushing off. There is no reply."""


@_message(_ERR, BOTH, CODE, WORDS)
@dataclass(frozen=True)
class ControlErr:
    """Controller -> daemon: a control line could not be read (`ERR PARSE <reason>`), or, on
    either channel, the handshake refused (`ERR AUTH <reason>`, then the connection closes)."""

    code: str
    """One of ERROR_CODES (in practice PARSE or RANGE)."""
    reason: str
    """Words, as for Err."""

    @classmethod
    def fitted(cls, code: str, reason: str) -> ControlErr:
        """A ControlErr whose reason is made ASCII and cut so that the line fits."""
        return cls(code, fit_reason(f"{_ERR} {code}", reason))


Message = (
    Greeting | Auth | AuthOk | Hello | HelloReply | Command | Ack | Done | Err
    | Ping | Pong | Stop | Stopped | Resume | Resumed
    | StateRequest | PoseReport | HaltReport | StatusReport | Watch | ControlErr
)  # fmt: skip
"""Every line either side may send."""
