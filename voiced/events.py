"""The event stream: one JSON object per line, each with "event" and "t" (seconds since start).

Everything the daemon does that a user or a test may want to see goes through here: utterances,
frame pushes and pops, interpretations, every primitive sent, feedback, errors and the final
state. Lines are flushed one by one so a crash loses nothing already emitted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TextIO

import structlog

from voiced.eventtypes import AnyEvent, Record

log = structlog.get_logger(__name__)

Listener = Callable[[Record], None]


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

    def emit(self, event: AnyEvent, correlation_id: str | None = None) -> Record:
        """Write `event` and hand it to the listeners. It belongs to `correlation_id`, else to
        the utterance being handled (the logging context's id), if any."""
        if correlation_id is None:
            correlation_id = structlog.contextvars.get_contextvars().get("correlation_id")
        record = Record(event, round(self.elapsed(), 4), correlation_id)
        if self._stream is not None:
            try:
                self._stream.write(json.dumps(record.to_dict(), default=str) + "\n")
                self._stream.flush()
            except (OSError, ValueError) as exc:
                # A closed pipe (the reader went away) must not take the daemon down.
                log.warning("event stream closed", error=str(exc))
                self._stream = None
        for listener in list(self._listeners):
            listener(record)
        return record

    def __call__(self, event: AnyEvent) -> None:
        self.emit(event)
