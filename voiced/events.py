"""The event stream: one JSON object per line, each with "event" and "t" (seconds since start).

Everything the daemon does that a user or a test may want to see goes through here: utterances,
frame pushes and pops, interpretations, every primitive sent, feedback, errors and the final
state. Lines are flushed one by one so a crash loses nothing already emitted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TextIO

import structlog

log = structlog.get_logger(__name__)

Listener = Callable[[dict[str, Any]], None]


class EventLog:
    """Writes events to an optional stream and hands them to in-process listeners."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic):
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns a function that removes it again."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def elapsed(self) -> float:
        return self._clock() - self._start

    def emit(self, event: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
        record: dict[str, Any] = {"event": event, "t": round(self.elapsed(), 4)}
        cid = structlog.contextvars.get_contextvars().get("correlation_id")
        if cid is not None:
            record["correlation_id"] = cid
        record.update(fields or {})
        if self._stream is not None:
            try:
                self._stream.write(json.dumps(record, default=str) + "\n")
                self._stream.flush()
            except (OSError, ValueError) as exc:
                # A closed pipe (the reader went away) must not take the daemon down.
                log.warning("event stream closed", error=str(exc))
                self._stream = None
        for listener in list(self._listeners):
            listener(record)
        return record

    def __call__(self, event: str, fields: dict[str, Any]) -> None:
        self.emit(event, fields)
