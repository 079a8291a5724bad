"""Words from outside join the input between its events, and the input is asked for its next
event only once the one before was handled (as when the daemon iterates it directly)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import pytest

from voiced.inputs.sources import InputEvent, Tick, with_remote
from voiced.service.cellstatus import STOP_WORD, RemoteInbox, RemoteWords


class Steps:
    """An input of ticks that records when it was asked for each."""

    def __init__(self, count: int, gate: asyncio.Event | None = None) -> None:
        self.count = count
        self.asked: list[int] = []
        self.gate = gate

    async def __aiter__(self) -> AsyncGenerator[InputEvent, None]:
        for n in range(self.count):
            self.asked.append(n)
            if self.gate is not None and n == 1:
                await self.gate.wait()
            yield Tick(float(n))


async def test_outside_words_arrive_between_events_and_the_input_is_not_read_ahead() -> None:
    inbox = RemoteInbox()
    gate = asyncio.Event()
    source = Steps(3, gate)
    seen: list[object] = []
    async for event in with_remote(source, inbox):
        seen.append(event)
        if event == Tick(0.0):
            await asyncio.sleep(0.01)
            assert source.asked == [0], "asked for the next event before this one was handled"
            inbox.stop("page")
            inbox.say("computer go home", "mqtt")
        elif isinstance(event, RemoteWords) and event.source == "mqtt":
            gate.set()
    assert seen == [
        Tick(0.0),
        RemoteWords(STOP_WORD, "page"),
        RemoteWords("computer go home", "mqtt"),
        Tick(1.0),
        Tick(2.0),
    ]


async def test_outside_words_arrive_while_the_input_waits() -> None:
    inbox = RemoteInbox()
    never = asyncio.Event()
    source = Steps(2, never)
    seen: list[object] = []

    async def consume() -> None:
        async for event in with_remote(source, inbox):
            seen.append(event)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.01)
    inbox.stop("mqtt")
    await asyncio.sleep(0.01)
    assert seen == [Tick(0.0), RemoteWords(STOP_WORD, "mqtt")]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_input_error_reaches_the_loop() -> None:
    class Broken:
        async def __aiter__(self) -> AsyncGenerator[InputEvent, None]:
            yield Tick(0.0)
            raise OSError("microphone gone")

    with pytest.raises(OSError, match="microphone gone"):
        async for _ in with_remote(Broken(), RemoteInbox()):
            pass
