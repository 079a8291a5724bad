"""The input loop's reader: one event at a time as they are handled, and while an utterance
waits for the interpreter, reading on for a stop (held events come back in order)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from voiced.inputs.sources import ReadAhead


async def counting(n: int, gap: float = 0.0) -> AsyncGenerator[int, None]:
    for i in range(n):
        if gap:
            await asyncio.sleep(gap)
        yield i


async def drain(reader: ReadAhead) -> list[int]:
    out = []
    while True:
        try:
            out.append(await reader.next())
        except StopAsyncIteration:
            return out


async def test_what_is_read_ahead_comes_back_in_order_when_the_wait_ends() -> None:
    reader = ReadAhead(counting(6, gap=0.01))
    assert await reader.next() == 0
    assert await reader.until_stop(asyncio.sleep(0.035), lambda e: e == 99) is None
    assert await drain(reader) == [1, 2, 3, 4, 5]


async def test_a_stop_ends_the_wait_and_comes_next_with_what_was_said_before_it() -> None:
    reader = ReadAhead(counting(8, gap=0.01))
    assert await reader.next() == 0
    found = await reader.until_stop(asyncio.sleep(10), lambda e: e == 3)
    assert found == ([1, 2], 3), "the wait did not last its 10 s"
    assert await drain(reader) == [3, 4, 5, 6, 7]


async def test_the_end_of_input_during_the_wait_ends_nothing_early() -> None:
    reader = ReadAhead(counting(2))
    assert await reader.until_stop(asyncio.sleep(0.05), lambda e: False) is None
    assert await drain(reader) == [0, 1]


async def test_a_read_in_progress_is_cancelled_at_the_end_of_the_run() -> None:
    async def never() -> AsyncGenerator[int, None]:
        await asyncio.Event().wait()
        yield 0

    reader = ReadAhead(never())
    assert await reader.until_stop(asyncio.sleep(0.01), lambda e: True) is None
    await asyncio.wait_for(reader.close(), 1)
