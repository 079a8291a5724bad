"""What the operator hears instead of protocol and identifiers.

The controller refuses a line with a code and its own words (`ERR HALTED halted by stop: send
RESUME`); those are for the event log and the integrator. The operator hears what happened to
the arm and what to say next, in words the daemon accepts ("continue" is one of the words that
finish a command cut short: voiced.commands.early.CONTINUE).
"""

from __future__ import annotations

import re

from voiced.errors import ControllerAuthError, ProtocolError, VoicedError
from voiced.robot.runreport import LineFailure

GO_ON = "Say continue to finish it, or give a new command."

_BY_CODE = {
    "WORKSPACE": "The controller would not move there: it is outside the arm's reach.",
    "SPEED": "The controller would not move that fast: it is above the arm's speed limit.",
    "GRIPPER": "The controller would not open the gripper that wide.",
    "SUPPORT": "The controller would not lift that part: it holds others up.",
    "TOOL": "The controller could not change the tool.",
    "ROUTINE": "The controller could not run that routine.",
    "STOPPED": "The controller cut the command short.",
}
"""Codes from docs/PROTOCOL.md that say something about the cell; the rest (PARSE, RANGE,
SEQ, PROTOCOL and codes this daemon does not know) are a fault between the two programs."""

_HALTED_BY = {
    "stop": "by a stop",
    "heartbeat": "because it stopped hearing from me",
    "disconnect": "because the connection dropped",
}
"""The halt reasons of docs/PROTOCOL.md ("halted by <reason>: send RESUME")."""
_HALT_REASON = re.compile(r"halted by (?P<why>[^:]+)")
_FILE_PATH = re.compile(r" (?:in|to|from|at) /[^\s:]+(?=[:.,;]|$)")
_COMPOSITE_PREFIX = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*: ")
"""A compiler finding's composite ("add_layer: ", "put: "), written in lower case."""
_IDENTIFIER = re.compile(r"(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])")
_HTTP_STATUS = re.compile(
    r"answered HTTP (?P<code>\d{3})(?: [A-Z][A-Za-z' -]*?)?(?= after|[.,;:]|$)"
)
"""A task service's refusal as the retry policy logs it ("answered HTTP 503 Service
Unavailable"): said as what happened, the number kept for whoever looks it up."""


_OUT_OF_REACH = re.compile(
    r"target (?P<axis>[xyz]) = (?P<value>-?[\d.]+) mm is outside the workspace "
    r"\((?P<lo>-?[\d.]+) to (?P<hi>-?[\d.]+) mm\)",
    re.IGNORECASE,
)
"""The compiler's and controller's workspace finding, said as what it means for the arm."""
_HOLDING = re.compile(r"Already holding (?:the )?[\w ]+", re.IGNORECASE)
"""A command that needs the gripper empty, refused because something is in it."""
_AXIS_SAID = {"x": "across", "y": "forward", "z": "high"}
_TOO_FAST = re.compile(
    r"speed (?P<speed>[\d.]+) mm/s is outside \(0, (?P<limit>[\d.]+)\] mm/s", re.IGNORECASE
)


def _reach(found: re.Match[str]) -> str:
    axis = found.group("axis").lower()
    lo, hi = float(found.group("lo")), float(found.group("hi"))
    value = float(found.group("value"))
    way = "beyond" if value > hi else "short of"
    edge = hi if value > hi else lo
    return (f"That would take the arm out of its reach: {value:g} mm {_AXIS_SAID[axis]}, "
            f"{way} its limit of {edge:g} mm")  # fmt: skip


def _speed(found: re.Match[str]) -> str:
    return (f"That is faster than the arm may go: {float(found.group('speed')):g} mm/s, "
            f"at most {float(found.group('limit')):g} mm/s")  # fmt: skip


RUN_STATUS = {
    "planned": "it is waiting to run",
    "running": "I am doing it now",
    "completed": "it is done",
    "stopped": "it was stopped",
    "failed": "it did not finish",
    "rejected": "I could not do it",
    "declined": "you said no to it",
    "dropped": "it was dropped",
    "paused": "it is paused",
    "interrupted": "it was cut off when I last stopped running",
    "answered": "I answered it",
}
"""A history status (voiced.history.STATUSES) as the operator hears it."""


def run_status(status: str) -> str:
    return RUN_STATUS.get(status, f"it is {status}")


def controller_refusal(failure: LineFailure) -> str:
    """One or two sentences for a run the controller ended with an ERR."""
    if failure.code == "HALTED":
        found = _HALT_REASON.search(failure.reason)
        why = _HALTED_BY.get(found.group("why").strip(), "") if found else ""
        stopped = f"The arm is stopped {why}".rstrip() + ", so the command did not finish."
        return f"{stopped} {GO_ON}"
    said = _BY_CODE.get(failure.code)
    if said is None:
        return "The controller did not accept what I sent. The log says why."
    return f"{said} {GO_ON}" if failure.code == "STOPPED" else said


def command_failure(error: VoicedError) -> str:
    """A command that raised: wire lines and handshake details stay in the log."""
    if isinstance(error, ProtocolError):
        return "The controller sent a reply I could not read, so the command did not finish."
    if isinstance(error, ControllerAuthError):
        return "The controller would not let me in: check the controller key."
    return f"That failed: {error}"


def as_words(text: str) -> str:
    """Names written as identifiers (`Safe_Pos_1`, `assembly_fixture`) as words, for people."""
    return _IDENTIFIER.sub(" ", text)


def spoken(text: str) -> str:
    """The last step before speech: a file's path is left to the log ("Could not save the
    note in /var/lib/voiced/notes.jsonl: ..."), a compiler finding loses the composite it names
    ("add_layer: the bread supply is empty"), a web service's status line is said as what
    happened ("did not take it (error 503)"), a limit of the arm is said as what it means
    ("out of its reach: 727.5 mm high"), and a name written as an identifier
    (`Safe_Pos_1`, `assembly_fixture`) is read as words, not as "underscore"."""
    text = _FILE_PATH.sub("", text)
    text = _HTTP_STATUS.sub(r"did not take it (error \g<code>)", text)
    found = _COMPOSITE_PREFIX.match(text)
    if found is not None and found.end() < len(text):
        rest = text[found.end() :]
        text = rest[0].upper() + rest[1:]
    if _HOLDING.fullmatch(text):
        # After a stop mid-pick the part is still in the gripper: say what frees it.
        text += '. Say "put it back" first, or "continue" to finish what was cut short'
    text = _OUT_OF_REACH.sub(_reach, text)
    text = _TOO_FAST.sub(_speed, text)
    return as_words(text)
