"""Logging set-up: structlog for our code, with the stdlib `logging` of libraries folded in.

Output is one JSON object per line when stderr is not a terminal (under systemd it is the
journal, and JSON keeps fields machine-readable), and human-friendly console lines when it
is. Every line carries the correlation id of the utterance being handled, if one is bound,
so a single command can be followed from audio through interpretation to the robot.

Each line carries its syslog priority, so `journalctl -p warning` filters: JSON lines have a
`priority` field, and under systemd every line starts with the `<N>` prefix of sd-daemon(3),
which journald reads off the line (SyslogLevelPrefix=yes, its default) as the entry's priority.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import uuid
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any, TextIO

import structlog
from structlog.typing import Processor

__all__ = [
    "FORMATS",
    "LEVELS",
    "PRIORITIES",
    "PRIORITY_PREFIXES",
    "bind_correlation_id",
    "clear_correlation_id",
    "configure_logging",
    "correlation",
]

LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
"""The accepted level names (case-insensitive) and their numeric values."""

FORMATS = ("auto", "json", "console")
"""The accepted output formats."""

PRIORITIES: dict[str, int] = {
    "debug": 7,
    "info": 6,
    "warning": 4,
    "error": 3,
    "exception": 3,
    "critical": 2,
}
"""syslog priority of each level name (sd-daemon(3): SD_DEBUG <7> ... SD_CRIT <2>)."""

PRIORITY_PREFIXES = ("auto", "always", "never")
"""When lines start with `<N>`: "auto" when stderr is the journal (systemd sets
$JOURNAL_STREAM to its device and inode), else as named."""

_CORRELATION_KEY = "correlation_id"

# The handler we put on the root logger, remembered so reconfiguring replaces it instead of
# stacking a second one (and so we never remove handlers that others, e.g. pytest, added).
_stdlib_handler: logging.Handler | None = None


def configure_logging(
    level: str = "info",
    fmt: str = "auto",
    stream: TextIO | None = None,
    prefix: str = "auto",
) -> None:
    """Configure structlog and the stdlib root logger to write to `stream` (default stderr).

    `level` is one of LEVELS; `fmt` is "json", "console" or "auto" (JSON unless `stream` is a
    terminal); `prefix` one of PRIORITY_PREFIXES. Library messages via stdlib `logging` appear
    at WARNING or above (or at `level`, if stricter). Safe to call again: the new settings
    replace the old ones.
    """
    out = sys.stderr if stream is None else stream
    min_level = _parse_level(level)
    tty = out.isatty()
    as_json = _wants_json(fmt, tty=tty)
    prefixed = _wants_prefix(prefix, out, os.environ)
    renderer = Prioritised(_renderer(as_json=as_json, colors=tty), prefix=prefixed, field=as_json)

    structlog.configure(
        processors=[*_shared_processors(), *_exception_processors(as_json), renderer],
        wrapper_class=structlog.make_filtering_bound_logger(min_level),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        # No caching: a logger cached on first use keeps the stream and level it was first
        # used with, so a later configure_logging (tests, a level change) would not reach it.
        cache_logger_on_first_use=False,
    )
    _route_stdlib(out, renderer, as_json=as_json, min_level=max(min_level, logging.WARNING))


def _parse_level(level: str) -> int:
    """Map a level name to its number; unknown names are an error, not a silent default."""
    try:
        return LEVELS[level.lower()]
    except KeyError:
        raise ValueError(
            f"unknown log level {level!r}; expected one of {', '.join(LEVELS)}"
        ) from None


def _wants_json(fmt: str, *, tty: bool) -> bool:
    """Decide between JSON and console output; "auto" means JSON unless a person is watching."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return fmt == "json" or (fmt == "auto" and not tty)


def _wants_prefix(prefix: str, out: TextIO, environ: Mapping[str, str]) -> bool:
    if prefix not in PRIORITY_PREFIXES:
        raise ValueError(
            f"unknown priority prefix {prefix!r}; expected one of {', '.join(PRIORITY_PREFIXES)}"
        )
    if prefix != "auto":
        return prefix == "always"
    return is_journal(out, environ.get("JOURNAL_STREAM", ""))


def is_journal(out: TextIO, journal_stream: str) -> bool:
    """Whether `out` is the stream systemd connected to the journal: $JOURNAL_STREAM names its
    device and inode (a child's stderr redirected elsewhere keeps the variable, not the file)."""
    device, _, inode = journal_stream.partition(":")
    try:
        found = os.fstat(out.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return f"{found.st_dev}:{found.st_ino}" == f"{device}:{inode}"


class Prioritised:
    """Wraps the final renderer: the level's syslog priority as a `priority` field (JSON) and
    as the `<N>` line prefix (under systemd)."""

    def __init__(self, renderer: Processor, *, prefix: bool, field: bool) -> None:
        self.renderer = renderer
        self.prefix = prefix
        self.field = field

    def __call__(self, logger: Any, name: str, event_dict: MutableMapping[str, Any]) -> Any:
        priority = PRIORITIES.get(str(event_dict.get("level", name)).lower(), 6)
        if self.field:
            event_dict["priority"] = priority
        line = self.renderer(logger, name, event_dict)
        if not self.prefix:
            return line
        if isinstance(line, bytes):  # a renderer may write bytes (orjson)
            return b"<%d>" % priority + line
        return f"<{priority}>{line}"


def _shared_processors() -> list[Processor]:
    """Processors that run for every message, ours and the libraries' alike."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]


def _exception_processors(as_json: bool) -> list[Processor]:
    """Turn exc_info into text for JSON; the console renderer prints tracebacks itself."""
    return [structlog.processors.format_exc_info] if as_json else []


def _renderer(*, as_json: bool, colors: bool) -> Processor:
    """The final processor, producing the output line."""
    if as_json:
        return structlog.processors.JSONRenderer()
    return structlog.dev.ConsoleRenderer(colors=colors)


def _route_stdlib(out: TextIO, renderer: Processor, *, as_json: bool, min_level: int) -> None:
    """Send stdlib `logging` records to `out`, formatted like our own lines.

    Rendering library records with the same renderer keeps a JSON stream pure JSON, so a
    log shipper never trips over a plain-text line from anthropic or asyncio.
    """
    global _stdlib_handler
    root = logging.getLogger()
    if _stdlib_handler is not None:
        root.removeHandler(_stdlib_handler)
    foreign_pre_chain: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handler = logging.StreamHandler(out)
    handler.setLevel(min_level)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=foreign_pre_chain,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                *_exception_processors(as_json),
                renderer,
            ],
        )
    )
    # The root logger's level is left alone (its default, WARNING, passes all we want); the
    # handler's level does the filtering, so we do not change what other handlers receive.
    root.addHandler(handler)
    _stdlib_handler = handler


def bind_correlation_id(cid: str | None = None) -> str:
    """Bind a correlation id (a fresh uuid4 if None) to the current context and return it.

    The binding lives in a contextvar, so asyncio tasks created afterwards inherit it while
    tasks that bind their own do not affect the caller.
    """
    value = str(uuid.uuid4()) if cid is None else cid
    structlog.contextvars.bind_contextvars(**{_CORRELATION_KEY: value})
    return value


def clear_correlation_id() -> None:
    """Remove the correlation id from the current context."""
    structlog.contextvars.unbind_contextvars(_CORRELATION_KEY)


@contextmanager
def correlation(cid: str | None = None) -> Iterator[str]:
    """Bind a correlation id for the duration of a `with` block, then restore the previous one.

    Yields the id (generated when `cid` is None). Must be exited in the context it was
    entered in, which is what a `with` block in one coroutine does.
    """
    value = str(uuid.uuid4()) if cid is None else cid
    tokens = structlog.contextvars.bind_contextvars(**{_CORRELATION_KEY: value})
    try:
        yield value
    finally:
        structlog.contextvars.reset_contextvars(**tokens)
