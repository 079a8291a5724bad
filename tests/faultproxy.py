"""A TCP proxy in front of one port that can cut the network silently, for fault tests.

`partition()` is what a pulled cable or a dead switch does: from then on nothing passes either
way and neither side is told (no FIN, no RST); a side that gives up and closes is not seen by
the other. New connections are accepted and then ignored, as if the packets never arrived.
`heal()` restores the network: the connections that were open across the partition are reset
(as TCP would once the peers talk again), and new ones pass.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType


class FaultProxy:
    """`async with FaultProxy(target_port) as proxy:` then connect to `proxy.port`."""

    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.host = host
        self.target_port = target_port
        self.port = 0
        self.partitioned = False
        self.connections = 0
        """How many connections were forwarded."""
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._client, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        self._reset_all()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def partition(self) -> None:
        self.partitioned = True

    def heal(self) -> None:
        self.partitioned = False
        self._reset_all()

    def _reset_all(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.partitioned:
            self._writers.add(writer)  # held open and ignored until healed
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self.connections += 1
        self._writers.update((writer, up_writer))
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while True:
                data = await source.read(4096)
                if self.partitioned:
                    if not data:
                        return  # the closing side is not seen across the partition
                    continue  # lost on the wire
                if not data:
                    sink.close()
                    return
                sink.write(data)
                await sink.drain()
