"""One TCP stream of protocol lines, shared by the executor's link and the simulator.

`LineChannel` sends through a queue drained by its own named writer task, so `send` never blocks
and can be called while another task awaits a reply (STOP goes out the moment it is asked for);
`receive` returns the next parsed message, the LineError of a malformed line (the stream stays
usable), or None at end of stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog
from voiced.robot.protocol import Channel, LineError, Message, format_line, parse_line

log = structlog.get_logger(__name__)

READ_LIMIT = 1024
"""Reader buffer limit; a longer line is cut to this and refused as too long."""

OnLine = Callable[[str, str, str], None]
"""(direction "tx"|"rx", channel "motion"|"control", line without newline)."""


def shown(line: str | bytes | None) -> str:
    """A received line as printable text for logs and reports (bad bytes as \\xNN escapes)."""
    if isinstance(line, bytes):
        return line.rstrip(b"\n").decode("ascii", "backslashreplace")
    return "" if line is None else line.rstrip("\n")


async def wait_event(event: asyncio.Event, timeout: float) -> bool:
    """True if `event` was set within `timeout` seconds."""
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        return False
    return True


async def read_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next line with its newline, or None at end of stream.

    A line longer than the reader's limit comes back as its first part (the rest is skipped up to
    the newline), which `parse_line` refuses as too long; a last line without a newline is
    returned as it is."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial or None
    except asyncio.LimitOverrunError as exc:
        head = await reader.read(exc.consumed)
    while True:
        try:
            await reader.readuntil(b"\n")
            return head
        except asyncio.IncompleteReadError:
            return head
        except asyncio.LimitOverrunError as more:
            await reader.read(more.consumed)


class LineChannel:
    """One connection of the protocol: parsed lines in, formatted lines out."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        channel: Channel,
        name: str,
        on_line: OnLine | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.channel: Channel = channel
        self.name = name
        """For task names and logs, e.g. `sim-motion-3`."""
        self._reader = reader
        self._writer = writer
        self._on_line = on_line
        self._delay_s = delay_s
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.closed = asyncio.Event()
        """Set once the stream failed or was closed (by either side)."""
        self.error: BaseException | None = None
        """Why writing failed, if it did."""
        self._writer_task = asyncio.create_task(self._drain(), name=f"{name}-writer")

    @property
    def peer(self) -> str:
        address = self._writer.get_extra_info("peername")
        return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)

    def send(self, message: Message) -> str:
        """Queue `message` for sending; returns its line. Raises ProtocolError if unformattable."""
        line = format_line(message)
        self.send_line(line)
        return line

    def send_line(self, line: str) -> None:
        """Queue a line that is already formatted (without newline)."""
        if self.closed.is_set():
            log.debug("line not sent: channel closed", channel=self.name, line=line)
            return
        if self._on_line is not None:
            self._on_line("tx", self.channel, line)
        self._outbox.put_nowait(line.encode("ascii") + b"\n")

    async def receive(self) -> Message | LineError | None:
        """The next message, the LineError of a malformed line, or None at end of stream."""
        raw = await self._read()
        if raw is None:
            return None
        if self._on_line is not None:
            self._on_line("rx", self.channel, shown(raw))
        try:
            return parse_line(raw, self.channel)
        except LineError as exc:
            return exc

    async def flush(self, timeout: float = 1.0) -> None:
        """Wait (up to `timeout`) until every queued line has been handed to the socket, e.g.
        before closing after a last word (`ERR AUTH`)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not self._outbox.empty() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0)  # the writer task writes what it took last

    async def aclose(self) -> None:
        """Close the stream and wait for the writer task to end."""
        self.closed.set()
        self._writer_task.cancel()
        await asyncio.wait([self._writer_task])  # its CancelledError is its own, not ours
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError) as exc:
            log.debug("connection closed with an error", channel=self.name, error=repr(exc))
        except asyncio.CancelledError:
            # The stream's own close waiter is cancelled when the peer reset the connection
            # while another close was under way; only a cancellation of this task counts.
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            log.debug("connection close waiter cancelled", channel=self.name)

    async def _read(self) -> bytes | None:
        if self.closed.is_set():
            return None
        try:
            raw = await read_line(self._reader)
        except (ConnectionError, OSError) as exc:
            log.info("connection lost while reading", channel=self.name, error=repr(exc))
            self.error = self.error or exc
            raw = None
        if raw is None:
            self.closed.set()
        return raw

    async def _drain(self) -> None:
        while True:
            data = await self._outbox.get()
            if self._delay_s > 0:
                await asyncio.sleep(self._delay_s)  # a fault the tests inject on purpose
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, OSError) as exc:
                log.info("connection lost while writing", channel=self.name, error=repr(exc))
                self.error = exc
                self.closed.set()
                return
