"""A cell page served on a loopback port for tests, showing a fixed cell status (data, built by
hand) and the sandwich cell's drawing; STOP goes to a real `RemoteInbox`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import numpy as np
from voiced.audio.segmenter import Segment, VadStats
from voiced.robot.cellfile import load_cell

from voiced.events import EventLog
from voiced.page.drawing import cell_svg
from voiced.page.server import CellPage
from voiced.page.settings import PageSettings
from voiced.service.cellstatus import CellStatus, CommandOutcome, RemoteInbox

SANDWICH = load_cell("sandwich")
STATUS = CellStatus(
    cell="sandwich", mode="wake", frames=("base",), link="up", halted=False, halt_reason=None,
    holding=None, tool=None, state={"zones": {"assembly_fixture": ["bread"]}},
    commands=(CommandOutcome("add bread", "completed", "action", "Done.",
                             "2026-11-24T10:00:00+00:00", "r1", "c1"),),
)  # fmt: skip


@dataclass
class Served:
    page: CellPage
    events: EventLog
    inbox: RemoteInbox
    url: str
    port: int


@contextlib.asynccontextmanager
async def served(
    settings: PageSettings | None = None,
    token: str | None = None,
    status: Callable[[], CellStatus] = lambda: STATUS,
) -> AsyncIterator[Served]:
    events = EventLog()
    inbox = RemoteInbox()
    page = CellPage(settings or PageSettings(enabled=True, port=0), events, token)
    drawing = cell_svg(SANDWICH, SANDWICH.initial_scene)
    task = asyncio.create_task(page.serve(status, lambda: drawing, inbox))
    await asyncio.wait_for(page.bound.wait(), 5)
    try:
        yield Served(page, events, inbox, page.url, page.port)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def tone_segment(speech_end: float, seconds: float = 0.5, preroll: int = 4800) -> Segment:
    """A segment of a 440 Hz tone (int16), as the segmenter cuts one."""
    n = int(16000 * seconds)
    samples = (8000 * np.sin(2 * np.pi * 440 * np.arange(n) / 16000)).astype(np.int16)
    vad = VadStats(voiced_frames=10, total_frames=16, trigger_time=0.1, speech_end=speech_end,
                   rms=1000.0, silero_prob=0.9)  # fmt: skip
    return Segment(samples, preroll, speech_end - seconds + 0.3, speech_end + 0.3, vad)


async def exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as it is; the status, headers and body of the answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body
