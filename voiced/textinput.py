"""`--text PATH|-`: typed lines enter the frame router exactly as transcripts would.

Time on this input is virtual, so a session gives the same result however fast it is fed: each
line moves the clock on by a few milliseconds, a blank line by more than the query frame's silence
timer (it stands for a pause), and the end of input by more than every timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path

LINE_STEP = 0.05
"""Seconds of input clock between two lines typed one after the other."""


@dataclass(frozen=True)
class Line:
    """One typed utterance at input time `t`."""

    text: str
    t: float


@dataclass(frozen=True)
class Pause:
    """A blank line: silence until input time `t`."""

    t: float


TextEvent = Line | Pause


class TextInput:
    """Reads lines from a file or stdin and turns them into timed events."""

    def __init__(self, source: str, pause: float) -> None:
        self.source = source
        self.pause = pause
        self.clock = 0.0

    async def events(self) -> AsyncGenerator[TextEvent, None]:
        async with contextlib.aclosing(self._lines()) as lines:
            async for raw in lines:
                text = raw.strip()
                if text:
                    self.clock += LINE_STEP
                    yield Line(text, self.clock)
                else:
                    self.clock += self.pause
                    yield Pause(self.clock)

    async def _lines(self) -> AsyncGenerator[str, None]:
        if self.source != "-":
            for line in Path(self.source).read_text(encoding="utf-8").splitlines():
                yield line
            return
        if _is_regular_file(sys.stdin.fileno()):
            # epoll cannot watch regular files; a redirected file is read in one go.
            for line in sys.stdin.read().splitlines():
                yield line
            return
        # Closed when the reader stops, so stdin's pipe transport closes then, not at exit.
        async with contextlib.aclosing(_stream_lines()) as lines:
            async for line in lines:
                yield line


def _is_regular_file(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


async def _stream_lines() -> AsyncGenerator[str, None]:
    """Lines from a pipe or terminal on stdin without a blocking thread (so SIGTERM never waits on
    a read that cannot be cancelled)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    )
    try:
        while raw := await reader.readline():
            yield raw.decode("utf-8", errors="replace")
    finally:
        transport.close()
