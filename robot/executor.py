"""The executor: streams a compiled program to the controller and reports what really ran.

`ControllerLink` is the daemon's one object for the robot: `async with` connects (both channels,
HELLO, heartbeat); `run` streams a program with at most `window` lines in flight and returns a
`RunReport`; `stop` sends STOP at once, even while `run` is waiting; `reconnect` opens a new
connection for the same session with exponential backoff. It never re-sends anything by itself:
after a failure, a STOP or a lost link the caller decides (`retry` re-sends a run's remaining
lines with their original seqs, which the controller runs at most once).

Every run starts with HELLO on the motion channel. The controller refuses every line after a
failed one until the next HELLO (docs/PROTOCOL.md), so lines a failed run had already pipelined
can never run behind its back, and the HELLO reply keeps `last_done` current.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack
from pathlib import Path

import structlog
from voiced.robot.lines import OnLine, shown, wait_event
from voiced.robot.link import Connection, ControllerState, MotionItem
from voiced.robot.primitives import Primitive
from voiced.robot.protocol import (
    MAX_SEQ,
    Ack,
    Command,
    Done,
    Err,
    Greeting,
    Hello,
    HelloReply,
    LineError,
    Resume,
    Resumed,
    StateRequest,
    StatusReport,
    Stop,
    Stopped,
    Watch,
    format_line,
)
from voiced.robot.runreport import LineFailure, LineRecord, RunLog, RunReport, write_trace

from voiced.errors import ControllerConnectionError, ProtocolError

__all__ = ["ControllerLink", "ControllerState", "LineFailure", "RunReport", "backoff_delays"]

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


def _new_session() -> str:
    return secrets.token_hex(4)


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
        if window < 1:
            raise ValueError(f"window must be at least 1, not {window}")
        self.host = host
        self.motion_port = motion_port
        self.control_port = motion_port + 1 if control_port is None else control_port
        self.connect_timeout = connect_timeout
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_timeout = heartbeat_timeout
        self.window = window
        self.on_line = on_line
        self.key = key
        self.allow_unauthenticated = allow_unauthenticated
        self.greeting: Greeting | None = None
        """Who the controller said it is at the last (re)connect."""
        self.replaced: str | None = None
        """The identity of the controller a reconnect found replaced by another (until the
        caller has dealt with it and cleared this)."""
        self.session = _new_session()
        """Eight hex digits, new per link; kept across reconnects so re-sent lines run once."""
        self.last_report: RunReport | None = None
        """The latest run's report (settled by reconnect once last_done is known)."""
        self._conn: Connection | None = None
        self._stack = AsyncExitStack()
        self._next_seq = 1
        self._runs = 0
        self._active: RunLog | None = None
        self._run_lock = asyncio.Lock()
        self._closing = asyncio.Event()

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
        if self.last_report is not None and self.last_report.session == self.session:
            self.last_report = self.last_report.settled(conn.last_done)
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
        run = self._active
        if run is not None:
            run.stop_requested = run.halting = True
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
        await self._require().request(Resume(), Resumed, self.heartbeat_timeout)

    async def state(self) -> ControllerState:
        """Ask the controller where it is and what it is doing."""
        state: ControllerState = await self._require().request(
            StateRequest(), StatusReport, self.heartbeat_timeout
        )
        return state

    def watch(self, ms: int) -> None:
        """Have the controller push its state every `ms` while moving (0 = off); the latest is
        in `latest_state`."""
        self._require().send_control(Watch(ms))

    @property
    def latest_state(self) -> ControllerState | None:
        return None if self._conn is None else self._conn.state

    def _require(self) -> Connection:
        if self._conn is None:
            raise ControllerConnectionError(f"not connected to {self.host}:{self.motion_port}")
        if self._conn.lost_reason is not None:
            raise self._conn.lost_reason
        return self._conn

    # -- runs --------------------------------------------------------------------------------

    async def run(
        self, program: Sequence[Primitive], *, trace_path: Path | None = None
    ) -> RunReport:
        """Stream `program` and wait until every line sent has its reply. Stops sending at the
        first ERR, a STOP or a lost link; never raises for those (see the report). Raises
        ProtocolError before sending anything if a primitive has no wire form."""
        async with self._run_lock:
            if self._next_seq + len(program) - 1 > MAX_SEQ:
                self.session, self._next_seq = _new_session(), 1  # the HELLO opens it
                log.info("sequence numbers used up: new session", session=self.session)
            first = self._next_seq
            records = [
                LineRecord(i, first + i, format_line(Command(first + i, primitive)))
                for i, primitive in enumerate(program)
            ]
            return await self._stream(records, trace_path)

    async def retry(
        self, program: Sequence[Primitive], report: RunReport, *, trace_path: Path | None = None
    ) -> RunReport:
        """Re-send the lines of the latest run from the first one not known to have completed,
        with their original seqs: a line the controller already completed is answered DONE
        without running again. The report covers the whole program."""
        async with self._run_lock:
            if report.run != self._runs or report.session != self.session:
                raise ProtocolError("retry() takes the latest run's report of this session")
            if len(program) != len(report.seqs):
                raise ProtocolError("retry() needs the program the report is about")
            done = set(report.completed)
            start = next((i for i in range(len(program)) if i not in done), len(program))
            records = []
            for i, (seq, primitive) in enumerate(zip(report.seqs, program, strict=True)):
                record = LineRecord(i, seq, format_line(Command(seq, primitive)))
                if i < start:
                    record.outcome, record.result = "done", "DONE in an earlier run"
                records.append(record)
            return await self._stream(records, trace_path)

    async def _stream(self, records: list[LineRecord], trace_path: Path | None) -> RunReport:
        self._runs += 1
        run = RunLog(self._runs, self.session, records)
        self._active = run
        try:
            await self._drive(run)
        finally:
            self._active = None
            sent = [r.seq for r in records if r.sent_t is not None]
            self._next_seq = max(self._next_seq, max(sent, default=0) + 1)
            report = run.report()
            self.last_report = run.final = report
            run.finished.set()
        log.info("run ended", **report.to_dict())
        if trace_path is not None:
            try:
                write_trace(trace_path, records)
            except OSError as exc:  # the report matters more than its trace: keep it, say so
                log.error("could not write the run trace", path=str(trace_path), error=str(exc))
        return report

    async def _drive(self, run: RunLog) -> None:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        conn = self._conn
        if conn is None or conn.lost_reason is not None:
            run.lost_reason = str(conn.lost_reason if conn else "not connected")
            return
        self._drain_stale(conn)
        if not await self._hello(conn, run):
            return
        while True:
            while run.sending and len(run.in_flight) < self.window:
                self._send(conn, run, loop.time() - t0)
            if not run.in_flight:
                return
            # once a STOP is out, replies still owed are waited for only so long
            timeout = self.heartbeat_timeout if run.halting else None
            item = await _next(conn, timeout)
            if item is not None:
                await self._handle(conn, run, item, loop.time() - t0)
            elif run.stop_last_done is not None:
                run.settle_by_last_done(run.stop_last_done)
                return

    async def _hello(self, conn: Connection, run: RunLog) -> bool:
        """HELLO: the barrier after which this run's lines are fresh; False if the run ends."""
        try:
            conn.send_motion(Hello(self.session))
        except ControllerConnectionError as exc:
            run.lost_reason = str(exc)
            return False
        reply = await _next(conn, self.connect_timeout)
        while isinstance(reply, Ack | Done | Err):  # owed to a run that gave up waiting
            log.warning("late reply before HELLO ignored", line=_shown(reply))
            reply = await _next(conn, self.connect_timeout)
        if isinstance(reply, HelloReply) and reply.session == self.session:
            conn.last_done = reply.last_done
            return True
        if isinstance(reply, ControllerConnectionError):
            run.lost_reason = str(reply)
        elif reply is None:
            await conn.lose(f"no reply to HELLO in {self.connect_timeout:g} s")
            run.lost_reason = str(conn.lost_reason)
        else:
            run.fail(None, 0, "PROTOCOL", f"expected the HELLO reply, got {_shown(reply)}")
        return False

    def _send(self, conn: Connection, run: RunLog, t: float) -> None:
        record = run.pending[0]
        try:
            conn.send_motion_line(record.line)
        except ControllerConnectionError as exc:
            run.lost_reason = str(exc)
            run.settle_in_flight("unknown", "link lost")
            return
        run.pending.pop(0)
        record.sent_t = t
        run.in_flight[record.seq] = record

    async def _handle(self, conn: Connection, run: RunLog, item: MotionItem, t: float) -> None:
        match item:
            case ControllerConnectionError():
                run.lost_reason = str(item)
                run.settle_in_flight("unknown", "link lost")
            case Ack(seq=seq) if seq in run.in_flight:
                run.in_flight[seq].ack_t = t
            case Done(seq=seq) if seq in run.in_flight:
                run.finish(run.in_flight[seq], "done", format_line(item), t)
            case Err(seq=seq) if seq in run.in_flight:
                run.refused(run.in_flight[seq], item.code, item.reason, format_line(item), t)
            case _:
                await self._violation(conn, run, item)

    async def _violation(self, conn: Connection, run: RunLog, item: MotionItem) -> None:
        """A reply we cannot account for: fail the run and STOP, so that nothing runs that the
        report would not know about; STOPPED's last_done then settles the lines in flight."""
        shown = _shown(item)
        log.error("protocol violation on the motion channel", line=shown)
        run.fail(None, getattr(item, "seq", 0), "PROTOCOL", f"unexpected reply {shown}")
        if run.halting:
            return
        run.halting = True
        try:
            stopped = await conn.request(Stop(), Stopped, self.heartbeat_timeout)
        except ControllerConnectionError:
            return  # the lost link reaches the run through the inbox
        run.stop_last_done = stopped.last_done

    def _drain_stale(self, conn: Connection) -> None:
        """Lines that arrived between runs belong to none (a late reply after a lost run)."""
        while not conn.inbox.empty():
            item = conn.inbox.get_nowait()
            if not isinstance(item, ControllerConnectionError):
                log.warning("line from the controller between runs ignored", line=_shown(item))


async def _next(conn: Connection, timeout: float | None) -> MotionItem | None:
    """The next motion item, or None after `timeout` seconds."""
    try:
        return await asyncio.wait_for(conn.inbox.get(), timeout)
    except TimeoutError:
        return None


def _shown(item: object) -> str:
    if isinstance(item, LineError):
        return shown(item.line)
    try:
        return format_line(item)  # type: ignore[arg-type]  # any message; else repr below
    except (ProtocolError, TypeError):
        return repr(item)
