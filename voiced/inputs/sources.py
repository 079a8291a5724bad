"""What the daemon listens to: each input is an async iterator of what the operator said.

One loop in the daemon reads whichever input the session has (`voiced.service.input_loop`): an
`Utterance` goes to the frame router, a `Tick` or an `Activity` moves the frames' timers on the
input's own clock, and the iterator ending is the end of input. The inputs:

- `TextInput`: typed lines (`--text FILE|-`), on a virtual clock (`voiced.inputs.typed`);
- `AudioInput`: what the listener hears (`--audio mic|FILE|-`), on the audio clock; barge-ins
  and rejected audio are the audio front end's business and stay here;
- `QueueInput` (`voiced queue run`) and `ReplayInput` (`voiced replay`): commands that went
  through the frames when they were first said, so they go to the robot pipeline as they are,
  and each one's result comes back to its input (`Utterance.result`);
- `NoInput`: nothing to hear; the daemon runs until a signal.

A remote source (a satellite streaming transcripts) is one more class with `__aiter__`. Words from
outside the input (the cell page's STOP button, an MQTT `stop` or `say`) join whichever input
runs through `with_remote`, between its events, as if said.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from voiced import eventtypes as ev
from voiced.audio.listener import BargeIn, Heard, KeywordHeard
from voiced.audio.listener import Tick as AudioTick
from voiced.audio.segmenter import Activity as AudioActivity
from voiced.audio.stopspot import Spotted
from voiced.events import EventLog
from voiced.inputs.audio import (
    AudioFrontEnd,
    heard_event,
    heard_level,
    keyword_event,
    spotted_event,
)
from voiced.inputs.typed import Line, Unusable
from voiced.inputs.typed import TextInput as TextLines
from voiced.service.cellstatus import RemoteInbox, RemoteWords
from voiced.targets import DeferredQueue, TargetResult
from voiced.targets.queue import claims, record, record_error


@dataclass(frozen=True)
class Utterance:
    """One thing the operator said or typed, as an input hands it over (the daemon makes the
    router's `voiced.rules.Utterance` from it, with its correlation id)."""

    text: str
    """What was said (as transcribed) or typed."""
    t: float = 0.0
    """When it ended on the input clock (seconds): for speech the end of the last word, when
    the operator stopped talking (timers count from there, not from the end of the hangover).
    0.0 for a command with no clock of its own (queued, replayed)."""
    correlation_id: str | None = None
    """The id bound to everything it causes; None: a new one."""
    start: float | None = None
    """For speech, when it began on the input clock (the segment's first live sample); None:
    typed, or not known."""
    announce: ev.Utterance | ev.Spotted | None = None
    """The event that announces it (docs/EVENTS.md); None: an `utterance` with its text."""
    spotted: bool = False
    """The stop spotter already stopped the arm on this speech: if it is a stop, it is
    announced and not dispatched again."""
    level_db: float | None = None
    """How loud the speech was at the microphone (its loudest 30 ms, dBFS); None if typed."""
    doubt: str | None = None
    """Why the recogniser is not sure of `text` (`voiced.audio.transcribe.Transcript.doubt`):
    a command made of it is read back before it runs. None: heard plainly, or typed."""
    source: str = ""
    """Who sent it from outside ("page", "mqtt"); "": the operator, spoken or typed."""
    result: asyncio.Future[TargetResult] | None = None
    """Set for a command that went through the frames when it was first said (queued,
    replayed): it goes to the robot pipeline as it is, and its result (or error) is set here
    before the input is asked for more."""


@dataclass(frozen=True)
class Tick:
    """The input clock moved on to `t` (seconds): timers that listen to the operator fire."""

    t: float


@dataclass(frozen=True)
class Activity:
    """Speech started (`voiced`) or ended at `t` on the audio clock, for silence timers."""

    t: float
    voiced: bool


InputEvent = Utterance | Tick | Activity | Unusable
"""`Unusable`: a line that cannot be an utterance (too long, not UTF-8); the daemon says so."""


class Input(Protocol):
    """A source of what the operator says, in order; ending means the end of input."""

    def __aiter__(self) -> AsyncGenerator[InputEvent, None]: ...


class TextInput:
    """Typed lines (`--text FILE|-`): each line an utterance, a blank line a pause."""

    def __init__(self, lines: TextLines) -> None:
        self.lines = lines

    async def __aiter__(self) -> AsyncGenerator[InputEvent, None]:
        async with contextlib.aclosing(self.lines.events()) as lines:
            async for line in lines:
                if isinstance(line, Line):
                    yield Utterance(line.text, line.t)
                elif isinstance(line, Unusable):
                    yield line
                yield Tick(line.t)


class AudioInput:
    """What the listener hears (`--audio mic|FILE|-`), on the audio clock. Speech over the
    daemon's own reply cuts the reply off here, and rejected audio is reported here: neither
    reaches the router."""

    def __init__(self, front: AudioFrontEnd, events: EventLog) -> None:
        self.front = front
        self.events = events

    async def __aiter__(self) -> AsyncGenerator[InputEvent, None]:
        async with contextlib.aclosing(self.front.listener.events()) as heard:
            async for event in heard:
                if isinstance(event, Heard):
                    yield Utterance(
                        event.text,
                        event.segment.vad.speech_end,
                        start=event.segment.start,
                        announce=heard_event(event),
                        spotted=event.spotted,
                        level_db=heard_level(event),
                        doubt=event.transcript.doubt,
                    )
                    yield Tick(event.t)
                elif isinstance(event, Spotted):
                    yield Utterance(event.text, event.speech_end, announce=spotted_event(event))
                elif isinstance(event, KeywordHeard):
                    self.events.emit(keyword_event(event))
                elif isinstance(event, BargeIn):
                    cut = self.front.feedback.interrupt(event.position, "barge-in")
                    self.events.emit(ev.BargeIn(round(event.t, 3), cut))
                elif isinstance(event, AudioActivity):
                    yield Activity(event.t, event.voiced)
                elif isinstance(event, AudioTick):
                    yield Tick(event.t)
                else:
                    self.front.describe(event)


class QueueInput:
    """The deferred queue (`voiced queue run`): each pending command in turn, its outcome
    recorded in the queue; then a `queue` event with the count."""

    def __init__(self, queue: DeferredQueue, events: EventLog) -> None:
        self.queue = queue
        self.events = events

    async def __aiter__(self) -> AsyncGenerator[InputEvent, None]:
        results: list[TargetResult] = []
        async with contextlib.aclosing(claims(self.queue)) as pending:
            async for claim in pending:
                item, result = claim.item, claim.given_up
                if result is None:
                    reply = _reply()
                    yield Utterance(
                        item.text,
                        correlation_id=item.correlation_id,
                        announce=ev.Utterance(item.text, queued=item.id),
                        result=reply,
                    )
                    try:
                        result = reply.result()
                    except Exception as error:
                        await record_error(self.queue, item, error)
                        raise
                results.append(result)
                await record(self.queue, item, result)
        ok = sum(1 for result in results if result.ok)
        self.events.emit(ev.QueueWorkedOff(len(results), ok))


class ReplayInput:
    """One earlier run again (`voiced replay RUN_ID`); then a `replay` event with its result."""

    def __init__(self, run_id: str, events: EventLog) -> None:
        self.run_id = run_id
        self.events = events

    async def __aiter__(self) -> AsyncGenerator[InputEvent, None]:
        run_id = self.run_id
        text, reply = f"run task {run_id}", _reply()
        yield Utterance(text, announce=ev.Utterance(text, replay=run_id), result=reply)
        result = reply.result()
        self.events.emit(ev.Replayed(run_id, result.ok, result.message))


class NoInput:
    """Nothing to hear: the input never ends, and the daemon runs until a signal."""

    async def __aiter__(self) -> AsyncGenerator[InputEvent, None]:
        never = asyncio.Event()
        while True:
            await never.wait()  # the shutdown cancels this wait
            yield Tick(0.0)  # never reached: the yield makes this an async iterator


def _reply() -> asyncio.Future[TargetResult]:
    """Where the daemon puts a routed command's result."""
    return asyncio.get_running_loop().create_future()


async def with_remote(
    source: Input, inbox: RemoteInbox
) -> AsyncGenerator[InputEvent | RemoteWords, None]:
    """`source`'s events, and between them the words that came from outside (`RemoteInbox`),
    each as soon as the daemon has finished with the event before it; ends when `source` ends.

    `source` is driven by one task of its own, and asked for its next event only once the one
    before has been handled, exactly as when the daemon iterates it directly: an audio source
    judges the next segment with the frames the last one left."""
    slot: asyncio.Queue[InputEvent | _End] = asyncio.Queue(maxsize=1)
    handled = asyncio.Event()

    async def pump() -> None:
        try:
            async with contextlib.aclosing(aiter(source)) as events:
                async for event in events:
                    await slot.put(event)
                    await handled.wait()
                    handled.clear()
        except Exception as error:  # re-raised in the daemon's loop, not lost in this task
            await slot.put(_End(error))
            return
        await slot.put(_End(None))

    pumping = asyncio.create_task(pump(), name="input-source")
    from_source = asyncio.ensure_future(slot.get())
    from_outside = asyncio.ensure_future(inbox.next())
    try:
        while True:
            await asyncio.wait({from_source, from_outside}, return_when=asyncio.FIRST_COMPLETED)
            if from_outside.done():
                yield from_outside.result()
                from_outside = asyncio.ensure_future(inbox.next())
                continue
            event = from_source.result()
            if isinstance(event, _End):
                if event.error is not None:
                    raise event.error
                return
            yield event
            handled.set()
            from_source = asyncio.ensure_future(slot.get())
    finally:
        for task in (from_source, from_outside, pumping):
            task.cancel()
        await asyncio.gather(from_source, from_outside, pumping, return_exceptions=True)


@dataclass(frozen=True)
class _End:
    """The source ended, by itself (None) or with an error."""

    error: Exception | None


class ReadAhead:
    """The daemon's input loop reads its events through this. Normally one at a time, as they
    are handled; but while an utterance waits for the interpreter (a model may take seconds),
    `until_stop` reads on, holding what it reads in order, so that a stop said meanwhile is
    acted on at once instead of after the wait. What was held is given back by `next` after.
    """

    def __init__(self, events: AsyncIterator[Any]) -> None:
        self._events = events
        self._held: deque[Any] = deque()
        self._next: asyncio.Future[Any] | None = None
        self.ahead = False
        """True while reading ahead (what is read is judged before the wait ends)."""

    async def next(self) -> Any:
        """The next event; raises StopAsyncIteration at the end of input."""
        if self._held:
            return self._held.popleft()
        fetch = self._fetch()
        try:
            return await fetch
        finally:
            if fetch.done():
                self._next = None if not _ended(fetch) else fetch

    async def until_stop(
        self, waiting: Awaitable[None], is_stop: Callable[[Any], bool]
    ) -> tuple[list[Any], Any] | None:
        """Read ahead until `waiting` is done. None when it was done first (what was read is
        held for `next`); when a stop came first: what was read before it (taken out), and the
        stop (held, so `next` gives it first)."""
        done = asyncio.ensure_future(waiting)
        self.ahead = True
        try:
            while not done.done():
                fetch = self._fetch()
                if _ended(fetch):
                    await done
                    break
                await asyncio.wait({done, fetch}, return_when=asyncio.FIRST_COMPLETED)
                if not fetch.done() or _ended(fetch):
                    continue
                self._next = None
                event = fetch.result()
                if is_stop(event):
                    before = list(self._held)
                    self._held.clear()
                    self._held.append(event)
                    return before, event
                self._held.append(event)
            return None
        finally:
            self.ahead = False
            if not done.done():
                done.cancel()

    async def close(self) -> None:
        """Cancel a read in progress (the end of the run)."""
        if self._next is not None and not self._next.done():
            self._next.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await self._next

    def _fetch(self) -> asyncio.Future[Any]:
        if self._next is None:
            self._next = asyncio.ensure_future(_anext(self._events))
        return self._next


async def _anext(events: AsyncIterator[Any]) -> Any:
    return await anext(events)


def _ended(fetch: asyncio.Future[Any]) -> bool:
    """The read finished with the end of input."""
    return (
        fetch.done() and not fetch.cancelled() and isinstance(fetch.exception(), StopAsyncIteration)
    )


class InputReader(ReadAhead):
    """The one reader of the daemon's input: the source's events with the words from outside
    between them (`with_remote`), read ahead for a stop while a line waits (`ReadAhead`).
    `close()` ends both."""

    def __init__(self, source: Input, inbox: RemoteInbox) -> None:
        self._merged = with_remote(source, inbox)
        super().__init__(self._merged)

    async def close(self) -> None:
        await super().close()
        await self._merged.aclose()
