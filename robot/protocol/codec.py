"""`parse_line` and `format_line`: generic over the registered specs in `messages`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from voiced.robot.protocol.messages import BY_KEYWORD, PRIMITIVE_SPECS, SPECS, Command, Message
from voiced.robot.protocol.wire import (
    MAX_LINE_BYTES,
    MAX_SEQ,
    Channel,
    FieldError,
    LineError,
    Wire,
    read_int,
)

from voiced.errors import ProtocolError


def parse_line(line: str | bytes, channel: Channel) -> Message:
    """The message in `line` (with or without its "\\n") as received on `channel`.

    Raises LineError (a ProtocolError) for anything else, never another exception."""
    tokens = _decode(line).split(" ")
    if "" in tokens:
        raise LineError("empty field (leading, trailing or double space)", line)
    seq = 0
    seq_first = channel == "motion" and tokens[0][:1].isdigit()
    seq_token = tokens[0]
    if seq_first:
        try:
            seq = read_int(seq_token, 0, MAX_SEQ, "seq")
        except FieldError as exc:
            raise LineError(str(exc), line) from None
        tokens = tokens[1:]
        if not tokens:
            raise LineError("no keyword after the seq", line, seq=seq)
    keyword, args = tokens[0], tokens[1:]
    candidates = BY_KEYWORD.get((channel, seq_first, keyword), [])
    if not candidates:
        raise LineError(f"unknown keyword {keyword!r} on the {channel} channel", line, seq=seq)
    for cls, spec in candidates:
        if _fits(spec.wires, len(args)):
            if spec.seq is not None:
                _check_seq(spec.seq, seq_token, line)
            try:
                values = _read_fields(spec.wires, args)
            except FieldError as exc:
                raise LineError(str(exc), line, code=exc.code, seq=seq) from None
            return _build(cls, seq, values)
    wanted = " or ".join(_field_count(spec.wires) for _, spec in candidates)
    raise LineError(f"{keyword} takes {wanted} fields, not {len(args)}", line, seq=seq)


def format_line(message: Message) -> str:
    """The line for `message`, without the newline, rounded to wire precision.

    Raises ProtocolError when it has no wire form (non-finite number, value out of range, bad
    name, not a message) or would not fit in 80 bytes with its newline."""
    try:
        line, channel = _write(message)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"cannot format {message!r}: {exc}") from exc
    if len(line.encode("utf-8", "surrogatepass")) + 1 > MAX_LINE_BYTES:
        raise ProtocolError(f"line would exceed {MAX_LINE_BYTES} bytes", line)
    parse_line(line, channel)  # so that we never send what the other side cannot read
    return line


def _check_seq(wire: Wire, token: str, line: str | bytes) -> None:
    try:
        wire.read([token])
    except FieldError as exc:  # a seq this kind of line may not carry (0) is unusable: PARSE
        raise LineError(str(exc), line) from None


def _decode(line: str | bytes) -> str:
    raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if len(raw) + 1 > MAX_LINE_BYTES:
        raise LineError(f"longer than {MAX_LINE_BYTES} bytes with its newline", line)
    if not raw:
        raise LineError("empty line", line)
    bad = next((b for b in raw if not 0x20 <= b <= 0x7E), None)
    if bad is not None:
        raise LineError(f"byte 0x{bad:02x} is not printable ASCII", line)
    return raw.decode("ascii")


def _fits(wires: Sequence[Wire], count: int) -> bool:
    fixed = sum(w.tokens for w in wires if w.tokens >= 0)
    return count >= fixed if any(w.tokens < 0 for w in wires) else count == fixed


def _field_count(wires: Sequence[Wire]) -> str:
    fixed = sum(w.tokens for w in wires if w.tokens >= 0)
    return f"at least {fixed}" if any(w.tokens < 0 for w in wires) else str(fixed)


def _read_fields(wires: Sequence[Wire], args: Sequence[str]) -> list[Any]:
    values: list[Any] = []
    at = 0
    for wire in wires:
        end = len(args) if wire.tokens < 0 else at + wire.tokens
        values.append(wire.read(args[at:end]))
        at = end
    return values


def _build(cls: type[Any], seq: int, values: list[Any]) -> Message:
    if cls in PRIMITIVE_SPECS:
        return Command(seq, cls(*values))
    message: Message = cls(seq, *values) if SPECS[cls].seq is not None else cls(*values)
    return message


def _write(message: Message) -> tuple[str, Channel]:
    spec = SPECS.get(type(message))
    if spec is None:
        raise TypeError(f"{type(message).__name__} is not a protocol message")
    values = [getattr(message, f.name) for f in fields(message)]
    tokens: list[str] = []
    if spec.seq is not None:
        tokens.extend(spec.seq.write(values.pop(0)))
    if isinstance(message, Command):
        primitive = message.primitive
        spec = PRIMITIVE_SPECS.get(type(primitive), spec)
        if not spec.keyword:
            raise TypeError(f"{primitive!r} is not a primitive")
        values = [getattr(primitive, f.name) for f in fields(primitive)]
    tokens.append(spec.keyword)
    for wire, value in zip(spec.wires, values, strict=True):
        tokens.extend(wire.write(value))
    return " ".join(tokens), spec.channel
