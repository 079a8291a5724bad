"""The daemon's link to the controller: one connection at a time, reconnected for the same session.

`ControllerLink` is the daemon's one object for the robot: `async with` connects (both channels,
HELLO, heartbeat: `robot.connection.Connection`); `reconnect` opens a new connection for the
same session with exponential backoff; `stop` sends STOP at once, even while a run is waiting;
`resume`, `state` and `watch` are the other control requests. `run` and `retry` hand the program
to its `robot.executor.Executor`, which streams it over the connection of the moment and reports
what really ran.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack
from pathlib import Path

import structlog
from voiced.robot.connection import Connection, ControllerState
from voiced.robot.executor import Executor
from voiced.robot.lines import OnLine, wait_event
from voiced.robot.primitives import Primitive
from voiced.robot.protocol import (
    Greeting,
    Resume,
    Resumed,
    StateRequest,
    StatusReport,
    Stop,
    Stopped,
    Watch,
)
from voiced.robot.runreport import RunReport

from voiced.errors import ControllerConnectionError

log = structlog.get_logger(__name__)


def backoff_delays(
    base: float = 0.2,
    factor: float = 2.0,
    cap: float = 5.0,
    jitter: float = 0.1,
    rand: Callable[[], float] = random.random,
) -> Iterator[float]:
    """Seconds to wait after each failed connection attempt: base·factor^k, at most `cap`, each
    scaled by a random factor in [1 - jitter, 1 + jitter] and then capped again."""
    delay = base
    while True:
        yield min(cap, delay * (1.0 + jitter * (2.0 * rand() - 1.0)))
        delay = min(cap, delay * factor)


class ControllerLink:
    """The link to one controller (or the simulator); `async with ControllerLink(...) as link`."""

    def __init__(
        self,
        host: str,
        motion_port: int,
        control_port: int | None = None,
        connect_timeout: float = 3.0,
        heartbeat_interval: float = 0.5,
        heartbeat_timeout: float = 2.0,
        window: int = 4,
        on_line: OnLine | None = None,
        key: bytes | None = None,
        allow_unauthenticated: bool = False,
    ) -> None:
        self.host = host
        self.motion_port = motion_port
        self.control_port = motion_port + 1 if control_port is None else control_port
        self.connect_timeout = connect_timeout
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_timeout = heartbeat_timeout
        self.on_line = on_line
        self.key = key
        self.allow_unauthenticated = allow_unauthenticated
        self.greeting: Greeting | None = None
        """Who the controller said it is at the last (re)connect."""
        self.replaced: str | None = None
        """The identity of the controller a reconnect found replaced by another (until the
        caller has dealt with it and cleared this)."""
        self._executor = Executor(
            lambda: self._conn,
            window=window,
            connect_timeout=connect_timeout,
            heartbeat_timeout=heartbeat_timeout,
        )
        self._conn: Connection | None = None
        self._stack = AsyncExitStack()
        self._closing = asyncio.Event()

    @property
    def session(self) -> str:
        """Eight hex digits, new per link; kept across reconnects so re-sent lines run once."""
        return self._executor.session

    @property
    def last_report(self) -> RunReport | None:
        """The latest run's report (settled by reconnect once last_done is known)."""
        return self._executor.last_report

    # -- connection --------------------------------------------------------------------------

    async def __aenter__(self) -> ControllerLink:
        await self._connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._conn is not None and not self._conn.lost.is_set()

    @property
    def closing(self) -> bool:
        """Whether `close` was called (the daemon is shutting down)."""
        return self._closing.is_set()

    async def wait_lost(self) -> str:
        """Until the current connection is lost (at once if there is none); why it was."""
        conn = self._conn
        if conn is None:
            return "not connected"
        await conn.lost.wait()
        return str(conn.lost_reason or "the link closed")

    @property
    def last_done(self) -> int:
        """The highest seq the controller said it completed in this session (HELLO replies)."""
        return 0 if self._conn is None else self._conn.last_done

    async def close(self) -> None:
        self._closing.set()
        await self._disconnect()

    async def reconnect(self, max_attempts: int | None = None) -> int:
        """Drop the connection and open a new one for the same session, retrying with
        `backoff_delays` until it works (or `max_attempts` failed: the last error is raised).
        Returns the controller's last_done; `last_report` is settled with it."""
        await self._disconnect()
        delays = backoff_delays()
        attempt = 0
        while True:
            attempt += 1
            try:
                conn = await self._connect()
                break
            except ControllerConnectionError as exc:
                if max_attempts is not None and attempt >= max_attempts:
                    raise
                delay = next(delays)
                log.warning("reconnect failed", attempt=attempt, retry_in=delay, error=str(exc))
            if await wait_event(self._closing, delay):
                raise ControllerConnectionError("the link was closed while reconnecting")
        self._executor.settle(conn.last_done)
        log.info("reconnected", attempts=attempt, last_done=conn.last_done)
        return conn.last_done

    async def _connect(self) -> Connection:
        stack = AsyncExitStack()
        conn = Connection(
            self.host, self.motion_port, self.control_port, session=self.session,
            connect_timeout=self.connect_timeout, heartbeat_interval=self.heartbeat_interval,
            heartbeat_timeout=self.heartbeat_timeout, on_line=self.on_line, key=self.key,
            allow_unauthenticated=self.allow_unauthenticated,
        )  # fmt: skip
        await stack.enter_async_context(conn)
        if (
            self.greeting is not None
            and conn.greeting is not None
            and (conn.greeting.controller != self.greeting.controller)
        ):
            # Another controller answers at this address (replaced, or a restarted simulator):
            # the caller must not take its picture of the cell for this one's.
            log.warning("a different controller answered", was=self.greeting.controller,
                        now=conn.greeting.controller)  # fmt: skip
            self.replaced = self.greeting.controller
        self.greeting = conn.greeting
        self._stack, self._conn = stack, conn
        return conn

    async def _disconnect(self) -> None:
        self._conn = None
        await self._stack.aclose()

    # -- control -----------------------------------------------------------------------------

    async def stop(self) -> RunReport | None:
        """STOP now: the controller interrupts the move, clears its queue and halts until
        `resume`. Returns the report of the run it stopped (None if none was running)."""
        run = self._executor.halt()
        conn = self._conn
        if conn is None or conn.lost.is_set():
            log.warning("stop: no link; the controller halts by itself when it loses the link")
        else:
            try:
                stopped = await conn.request(Stop(), Stopped, self.heartbeat_timeout)
            except ControllerConnectionError as exc:
                log.error(
                    "STOP not confirmed; link dropped so the controller halts", error=str(exc)
                )
            else:
                if run is not None:
                    run.stop_last_done = stopped.last_done
        if run is None:
            return None
        await run.finished.wait()
        return run.final

    async def resume(self) -> None:
        """Clear the controller's halt (after a STOP, heartbeat loss or reconnect)."""
        await _live(self._conn, f"{self.host}:{self.motion_port}").request(
            Resume(), Resumed, self.heartbeat_timeout
        )

    async def state(self) -> ControllerState:
        """Ask the controller where it is and what it is doing."""
        state: ControllerState = await _live(self._conn, f"{self.host}:{self.motion_port}").request(
            StateRequest(), StatusReport, self.heartbeat_timeout
        )
        return state

    def watch(self, ms: int) -> None:
        """Have the controller push its state every `ms` while moving (0 = off); the latest is
        in `latest_state`."""
        _live(self._conn, f"{self.host}:{self.motion_port}").send_control(Watch(ms))

    @property
    def latest_state(self) -> ControllerState | None:
        return None if self._conn is None else self._conn.state

    # -- runs --------------------------------------------------------------------------------

    async def run(
        self, program: Sequence[Primitive], *, trace_path: Path | None = None
    ) -> RunReport:
        """Stream `program` (robot.executor.Executor.run): never raises for an ERR, a STOP or a
        lost link (see the report); ProtocolError if a primitive has no wire form."""
        return await self._executor.run(program, trace_path=trace_path)

    async def retry(
        self, program: Sequence[Primitive], report: RunReport, *, trace_path: Path | None = None
    ) -> RunReport:
        """Re-send the latest run's lines not known to have completed, with their original seqs
        (robot.executor.Executor.retry)."""
        return await self._executor.retry(program, report, trace_path=trace_path)


def _live(conn: Connection | None, where: str) -> Connection:
    """`conn`, if it is up; else the error that says why not."""
    if conn is None:
        raise ControllerConnectionError(f"not connected to {where}")
    if conn.lost_reason is not None:
        raise conn.lost_reason
    return conn
