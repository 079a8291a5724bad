"""The wire protocol: every message class round-trips, any input parses or raises ProtocolError."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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
from voiced.robot.protocol import (
    ERROR_CODES,
    MAX_LINE_BYTES,
    MESSAGE_TYPES,
    PRIMITIVE_KEYWORDS,
    STATUSES,
    Ack,
    Auth,
    AuthOk,
    Command,
    ControlErr,
    Done,
    Err,
    Greeting,
    HaltReport,
    Hello,
    HelloReply,
    LineError,
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
    fit_reason,
    format_line,
    parse_line,
)

from voiced.errors import ProtocolError

ROOT = Path(__file__).resolve().parents[2]
TILTED = Pose(412.35, -87.04, 250.0, (0.70711, 0.0, 0.70711, 0.0))

EXAMPLES: dict[type[Any], Message] = {
    Greeting: Greeting(1, "rapid", "GoFa_CRB15000_7", "0123456789abcdef"),
    Auth: Auth("0123456789abcdef0123456789abcdef"),
    AuthOk: AuthOk(),
    Hello: Hello("0badc0de"),
    HelloReply: HelloReply("0badc0de", 41),
    Command: Command(42, MoveL(TILTED, 250.0)),
    Ack: Ack(42),
    Done: Done(42),
    Err: Err(43, "WORKSPACE", "target x = 912.0 mm is outside the workspace"),
    Ping: Ping(7),
    Pong: Pong(7),
    Stop: Stop(),
    Stopped: Stopped(42),
    Resume: Resume(),
    Resumed: Resumed(),
    StateRequest: StateRequest(),
    PoseReport: PoseReport(TILTED),
    HaltReport: HaltReport("heartbeat"),
    StatusReport: StatusReport("halted", 42, 35.5, "Welder"),
    Watch: Watch(100),
    ControlErr: ControlErr("PARSE", "unknown keyword 'STAHP' on the control channel"),
}

PRIMITIVE_EXAMPLES: list[Primitive] = [
    MoveL(TILTED, 250.0),
    MoveJ(Pose(0.0, 0.0, 0.0), 0.1),
    Grip(0.0),
    Wait(1500),
    Speed(9999.9),
    ToolAttach("Welder"),
    ToolDetach(),
    CallRoutine("tack_weld"),
]


def on_wire(value: Any) -> Any:
    """`value` as it comes back from the wire: rounded numbers, single-spaced reasons."""
    if isinstance(value, Pose):
        return value.rounded()
    if isinstance(value, float):
        return round(value, 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: on_wire(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if "reason" in changes:
            changes["reason"] = " ".join(value.reason.split())  # type: ignore[attr-defined]
        return dataclasses.replace(value, **changes)
    return value


def round_trip(message: Message) -> tuple[str, Message]:
    line = format_line(message)
    assert len(line.encode("ascii")) + 1 <= MAX_LINE_BYTES
    return line, parse_line(line + "\n", channel_of(type(message)))


# -- every class, found through the registry -----------------------------------------------------


def test_every_registered_class_has_an_example() -> None:
    assert set(EXAMPLES) == set(MESSAGE_TYPES)
    assert all(dataclasses.is_dataclass(cls) for cls in MESSAGE_TYPES)


def test_every_primitive_has_a_keyword_and_an_example() -> None:
    every = set(typing.get_args(Primitive))
    assert set(PRIMITIVE_KEYWORDS) == every
    assert {type(p) for p in PRIMITIVE_EXAMPLES} == every


@pytest.mark.parametrize("cls", MESSAGE_TYPES, ids=lambda c: c.__name__)
def test_each_message_class_round_trips(cls: type[Any]) -> None:
    example = EXAMPLES[cls]
    line, parsed = round_trip(example)
    assert parsed == on_wire(example), line
    assert type(parsed) is cls


@pytest.mark.parametrize("primitive", PRIMITIVE_EXAMPLES, ids=lambda p: type(p).__name__)
def test_each_command_kind_round_trips(primitive: Primitive) -> None:
    line, parsed = round_trip(Command(999999, primitive))
    assert parsed == on_wire(Command(999999, primitive)), line
    assert line.split(" ")[1] == PRIMITIVE_KEYWORDS[type(primitive)]


@pytest.mark.parametrize(
    ("message", "line"),
    [
        (Command(12, MoveL(Pose(400.0, 0.0, 300.04), 250.0)), "12 MOVEL 400 0 300 0 1 0 0 250"),
        (Command(13, MoveJ(TILTED, 80.25)), "13 MOVEJ 412.4 -87 250 0.7071 0 0.7071 0 80.2"),
        (Command(14, Grip(-0.04)), "14 GRIP 0"),
        (Command(15, ToolDetach()), "15 DETACH"),
        (StatusReport("idle", 0, 110.0, None), "STATUS idle 0 110 -"),
        (Err(3, "HALTED", "  halted   by stop "), "3 ERR HALTED halted by stop"),
        (HaltReport(""), "HALT"),
    ],
)
def test_formatting_is_the_shortest_wire_form(message: Message, line: str) -> None:
    assert format_line(message) == line


def test_the_longest_primitive_line_fits() -> None:
    q4 = -math.sqrt(1 - 0.1234**2 - 0.2345**2 - 0.3456**2)
    far = Pose(-99_999.9, -99_999.9, -99_999.9, (-0.1234, -0.2345, -0.3456, q4))
    line = format_line(Command(999_999, MoveL(far, 9_999.9)))
    assert len(line) + 1 == MAX_LINE_BYTES - 1


def test_docs_examples_parse() -> None:
    """Every `M>`/`M<`/`C>`/`C<` example line in docs/PROTOCOL.md is a valid line."""
    text = (ROOT / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    examples = re.findall(r"^([MC])[<>] (.+)$", text, flags=re.MULTILINE)
    assert len(examples) > 20
    for channel, line in examples:
        parse_line(line, "motion" if channel == "M" else "control")


# -- properties ----------------------------------------------------------------------------------

seqs = st.integers(1, 999_999)
counts = st.integers(0, 999_999)
mm = st.floats(-99_999.0, 99_999.0)
names = st.from_regex(r"[A-Za-z0-9_]{1,32}", fullmatch=True)
reasons = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


@st.composite
def quaternions(draw: st.DrawFn) -> tuple[float, float, float, float]:
    q = draw(st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(lambda q: math.hypot(*q) > 0.1))
    norm = math.hypot(*q)
    return (q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm)


poses = st.builds(Pose, mm, mm, mm, quaternions())
speeds = st.floats(0.1, 9_999.0)
widths = st.floats(0.0, 999.0)
primitives = st.one_of(
    st.builds(MoveL, poses, speeds),
    st.builds(MoveJ, poses, speeds),
    st.builds(Grip, widths),
    st.builds(Wait, st.integers(0, 3_600_000)),
    st.builds(Speed, speeds),
    st.builds(ToolAttach, names),
    st.just(ToolDetach()),
    st.builds(CallRoutine, names),
)
codes = st.sampled_from(sorted(ERROR_CODES))
STRATEGIES: dict[type[Any], st.SearchStrategy[Any]] = {
    Greeting: st.builds(
        Greeting,
        st.integers(1, 99),
        st.sampled_from(["sim", "rapid"]),
        names,
        st.none() | st.from_regex(r"[0-9a-f]{16}", fullmatch=True),
    ),
    Auth: st.builds(Auth, st.none() | st.from_regex(r"[0-9a-f]{32}", fullmatch=True)),
    AuthOk: st.just(AuthOk()),
    Hello: st.builds(Hello, st.from_regex(r"[0-9a-f]{8}", fullmatch=True)),
    HelloReply: st.builds(HelloReply, st.from_regex(r"[0-9a-f]{8}", fullmatch=True), counts),
    Command: st.builds(Command, seqs, primitives),
    Ack: st.builds(Ack, seqs),
    Done: st.builds(Done, seqs),
    Err: st.builds(Err, st.integers(0, 999_999), codes, reasons),
    Ping: st.builds(Ping, counts),
    Pong: st.builds(Pong, counts),
    Stop: st.just(Stop()),
    Stopped: st.builds(Stopped, counts),
    Resume: st.just(Resume()),
    Resumed: st.just(Resumed()),
    StateRequest: st.just(StateRequest()),
    PoseReport: st.builds(PoseReport, poses),
    HaltReport: st.builds(HaltReport, reasons),
    StatusReport: st.builds(
        StatusReport, st.sampled_from(STATUSES), counts, widths, st.none() | names
    ),
    Watch: st.builds(Watch, st.integers(0, 60_000)),
    ControlErr: st.builds(ControlErr, codes, reasons),
}
messages = st.one_of(*STRATEGIES.values())


def test_every_class_has_a_strategy() -> None:
    assert set(STRATEGIES) == set(MESSAGE_TYPES)


@settings(max_examples=500)
@given(messages)
def test_parse_inverts_format_and_lines_fit(message: Message) -> None:
    line, parsed = round_trip(message)
    assert parsed == on_wire(message), line


@given(st.binary(max_size=120), st.sampled_from(["motion", "control"]))
def test_random_bytes_parse_or_raise_protocol_error(data: bytes, channel: str) -> None:
    with contextlib.suppress(ProtocolError):  # anything else fails the test
        parse_line(data, channel)  # type: ignore[arg-type]


@given(st.text(max_size=120), st.sampled_from(["motion", "control"]))
def test_random_text_parse_or_raise_protocol_error(text: str, channel: str) -> None:
    with contextlib.suppress(ProtocolError):  # anything else fails the test
        parse_line(text, channel)  # type: ignore[arg-type]


@settings(max_examples=300)
@given(messages, st.data())
def test_mutated_lines_parse_or_raise_protocol_error(message: Message, data: st.DataObject) -> None:
    line = format_line(message)
    at = data.draw(st.integers(0, len(line)))
    junk = data.draw(st.text(st.characters(max_codepoint=0x7F), max_size=4))
    cut = data.draw(st.integers(0, 3))
    mutated = line[:at] + junk + line[at + cut :]
    for channel in ("motion", "control"):
        try:
            parsed = parse_line(mutated, channel)
        except ProtocolError:
            continue
        assert format_line(parsed)  # whatever parses can be written back


@given(st.text(max_size=300), st.sampled_from(sorted(ERROR_CODES)), seqs)
def test_fitted_reasons_always_fit(reason: str, code: str, seq: int) -> None:
    _, parsed = round_trip(Err.fitted(seq, code, reason))
    assert isinstance(parsed, Err)
    _, parsed = round_trip(ControlErr.fitted(code, reason))
    assert isinstance(parsed, ControlErr)


def test_fitted_reason_keeps_meaning_of_typographic_text() -> None:
    assert fit_reason("1 ERR TOOL", "can’t reach — “Welder” stand") == "cant reach - Welder stand"


# -- malformed input -----------------------------------------------------------------------------

LONGEST_OK = "9 ERR WORKSPACE " + "x" * (MAX_LINE_BYTES - 1 - len("9 ERR WORKSPACE "))

MALFORMED: list[tuple[str | bytes, str, str, int, str]] = [
    # (line, channel, code, seq, words in the message)
    ("", "motion", "PARSE", 0, "empty line"),
    ("\n", "motion", "PARSE", 0, "empty line"),
    (LONGEST_OK + "x", "motion", "PARSE", 0, "longer than 80 bytes"),
    ("1 ACK\r", "motion", "PARSE", 0, "not printable ASCII"),
    ("1 ACK\n\n", "motion", "PARSE", 0, "not printable ASCII"),
    (b"\xff1 ACK", "motion", "PARSE", 0, "byte 0xff"),
    ("1 ACK é", "motion", "PARSE", 0, "not printable ASCII"),
    ("1\tACK", "motion", "PARSE", 0, "byte 0x09"),
    ("1  ACK", "motion", "PARSE", 0, "empty field"),
    (" 1 ACK", "motion", "PARSE", 0, "empty field"),
    ("1 ACK ", "motion", "PARSE", 0, "empty field"),
    ("0 ACK", "motion", "PARSE", 0, "seq 0 outside 1..999999"),
    ("1000000 ACK", "motion", "PARSE", 0, "seq 1000000 outside"),
    ("12345678 ACK", "motion", "PARSE", 0, "seq is not a whole number"),
    ("1x ACK", "motion", "PARSE", 0, "seq is not a whole number"),
    ("12", "motion", "PARSE", 12, "no keyword"),
    ("12 FOO", "motion", "PARSE", 12, "unknown keyword 'FOO'"),
    ("12 movel 1 2 3 0 1 0 0 9", "motion", "PARSE", 12, "unknown keyword 'movel'"),
    ("12 MOVEL 1 2 3 0 1 0 0", "motion", "PARSE", 12, "MOVEL takes 8 fields, not 7"),
    ("12 MOVEL 1 2 3 0 1 0 0 9 9", "motion", "PARSE", 12, "takes 8 fields, not 9"),
    ("12 MOVEL nan 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL inf 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL -inf 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL 1e3 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL +1 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL 1. 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL .5 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL 1.25 0 0 0 1 0 0 100", "motion", "PARSE", 12, "at most 1 decimals"),
    ("12 MOVEL 123456 0 0 0 1 0 0 100", "motion", "PARSE", 12, "position is not a number"),
    ("12 MOVEL 0 0 0 0 1 0 0.00001 100", "motion", "PARSE", 12, "at most 4 decimals"),
    ("12 MOVEL 0 0 0 0 0 0 0 100", "motion", "RANGE", 12, "not unit length"),
    ("12 MOVEL 0 0 0 0 1.5 0 0 100", "motion", "RANGE", 12, "quaternion 1.5 outside"),
    ("12 MOVEL 0 0 0 0 1 0 0 0", "motion", "RANGE", 12, "speed 0 outside"),
    ("12 MOVEL 0 0 0 0 1 0 0 10000", "motion", "RANGE", 12, "speed 10000 outside"),
    ("12 SPEED -5", "motion", "RANGE", 12, "speed -5 outside"),
    ("12 GRIP -1", "motion", "RANGE", 12, "gripper width -1 outside"),
    ("12 WAIT 1.5", "motion", "PARSE", 12, "milliseconds is not a whole number"),
    ("12 WAIT -1", "motion", "PARSE", 12, "milliseconds is not a whole number"),
    ("12 WAIT 3600001", "motion", "RANGE", 12, "outside 0..3600000"),
    ("12 ATTACH bad-name", "motion", "PARSE", 12, "name 'bad-name' does not match"),
    ("12 ATTACH " + "a" * 33, "motion", "PARSE", 12, "does not match"),
    ("12 CALL", "motion", "PARSE", 12, "CALL takes 1 fields, not 0"),
    ("12 DETACH now", "motion", "PARSE", 12, "DETACH takes 0 fields, not 1"),
    ("HELLO", "motion", "PARSE", 0, "HELLO takes 1 or 2 fields, not 0"),
    ("HELLO ABCDEF01", "motion", "PARSE", 0, "session 'ABCDEF01' does not match"),
    ("HELLO abc", "motion", "PARSE", 0, "session 'abc' does not match"),
    ("HELLO abcdef01 x", "motion", "PARSE", 0, "count is not a whole number"),
    ("5 ERR NOPE reason", "motion", "PARSE", 5, "unknown error code 'NOPE'"),
    ("5 ERR", "motion", "PARSE", 5, "ERR takes at least 1 fields, not 0"),
    ("STOP", "motion", "PARSE", 0, "unknown keyword 'STOP' on the motion channel"),
    ("1 ACK", "control", "PARSE", 0, "unknown keyword '1' on the control channel"),
    ("STOP now", "control", "PARSE", 0, "STOP takes 0 fields, not 1"),
    ("ping 1", "control", "PARSE", 0, "unknown keyword 'ping'"),
    ("PING -1", "control", "PARSE", 0, "count is not a whole number"),
    ("WATCH 60001", "control", "RANGE", 0, "watch period 60001 outside"),
    ("STATUS busy 1 0 -", "control", "PARSE", 0, "unknown status 'busy'"),
    ("STATUS idle 1 0", "control", "PARSE", 0, "STATUS takes 4 fields, not 3"),
    ("POSE 1 2 3 0 1 0", "control", "PARSE", 0, "POSE takes 7 fields, not 6"),
]


@pytest.mark.parametrize(
    ("line", "channel", "code", "seq", "words"), MALFORMED, ids=[repr(m[0])[:40] for m in MALFORMED]
)
def test_malformed_lines_are_refused(
    line: str | bytes, channel: str, code: str, seq: int, words: str
) -> None:
    with pytest.raises(LineError) as caught:
        parse_line(line, channel)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.seq) == (code, seq)
    assert words in str(caught.value)
    assert repr(line)[:20] in str(caught.value) or isinstance(line, bytes)


def test_the_longest_line_that_fits_parses() -> None:
    assert len(LONGEST_OK) + 1 == MAX_LINE_BYTES
    assert isinstance(parse_line(LONGEST_OK + "\n", "motion"), Err)


@pytest.mark.parametrize(
    "message",
    [
        Command(1, MoveL(Pose(math.nan, 0.0, 0.0), 100.0)),
        Command(1, MoveL(Pose(math.inf, 0.0, 0.0), 100.0)),
        Command(1, MoveL(Pose(1e9, 0.0, 0.0), 100.0)),
        Command(1, MoveL(Pose(0.0, 0.0, 0.0, (0.0, 0.0, 0.0, 0.0)), 100.0)),
        Command(1, Speed(0.0)),
        Command(0, Grip(1.0)),
        Command(1_000_000, Grip(1.0)),
        Command(1, Wait(1.5)),  # type: ignore[arg-type]
        Command(1, ToolAttach("two words")),
        Command(1, CallRoutine("x" * 33)),
        Command(1, "MOVEL 1 2 3"),  # type: ignore[arg-type]
        Err(1, "WORKSPACE", "word " * 20),
        Err(1, "OOPS", "unknown code"),
        HaltReport("naïve"),
        StatusReport("busy", 1, 0.0, None),
        Hello("NOT-HEX!"),
        "1 ACK",
    ],
    ids=repr,
)
def test_format_refuses_what_has_no_wire_form(message: Message) -> None:
    with pytest.raises(ProtocolError):
        format_line(message)
