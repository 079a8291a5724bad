"""The controller wire protocol (docs/PROTOCOL.md): messages, `parse_line` and `format_line`.

Two TCP channels: MOTION carries `HELLO` and the numbered primitive lines with their ACK/DONE/ERR
replies; CONTROL carries PING/PONG, STOP, RESUME, STATE and WATCH. Every line is printable ASCII,
single-space separated and at most 80 bytes with its newline, because the RAPID server keeps a
line in one `string` (80 characters) and splits it with `StrPart`/`StrToVal`.
"""

from __future__ import annotations

from robot.protocol.codec import format_line, parse_line
from robot.protocol.messages import (
    MESSAGE_TYPES,
    PRIMITIVE_KEYWORDS,
    Ack,
    Command,
    ControlErr,
    Done,
    Err,
    HaltReport,
    Hello,
    HelloReply,
    Message,
    Ping,
    Pong,
    PoseReport,
    Resume,
    Resumed,
    StateRequest,
    StatusReport,
    Stop,
    Stopped,
    Watch,
    channel_of,
)
from robot.protocol.wire import (
    ERROR_CODES,
    MAX_LINE_BYTES,
    MAX_SEQ,
    NO_TOOL,
    STATUSES,
    Channel,
    LineError,
    fit_reason,
)

__all__ = [
    "ERROR_CODES",
    "MAX_LINE_BYTES",
    "MAX_SEQ",
    "MESSAGE_TYPES",
    "NO_TOOL",
    "PRIMITIVE_KEYWORDS",
    "STATUSES",
    "Ack",
    "Channel",
    "Command",
    "ControlErr",
    "Done",
    "Err",
    "HaltReport",
    "Hello",
    "HelloReply",
    "LineError",
    "Message",
    "Ping",
    "Pong",
    "PoseReport",
    "Resume",
    "Resumed",
    "StateRequest",
    "StatusReport",
    "Stop",
    "Stopped",
    "Watch",
    "channel_of",
    "fit_reason",
    "format_line",
    "parse_line",
]
