"""Running a compiled program on the controller and reporting what really ran.

`Executor` streams a program over the link's connection of the moment with at most `window`
lines in flight and returns a `RunReport`. It never re-sends anything by itself: after a
failure, a STOP or a lost link the caller decides (`retry` re-sends a run's remaining lines with
their original seqs, which the controller runs at most once). `robot.link.ControllerLink` owns
one, and the connection it runs over.

Every run starts with HELLO on the motion channel. The controller refuses every line after a
failed one until the next HELLO (docs/PROTOCOL.md), so lines a failed run had already pipelined
can never run behind its back, and the HELLO reply keeps `last_done` current.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

import structlog
from voiced.robot.connection import Connection, MotionItem
from voiced.robot.lines import shown
from voiced.robot.primitives import Primitive
from voiced.robot.protocol import (
    MAX_SEQ,
    Ack,
    Command,
    Done,
    Err,
    Hello,
    HelloReply,
    LineError,
    Stop,
    Stopped,
    format_line,
)
from voiced.robot.runreport import LineRecord, RunLog, RunReport, write_trace

from voiced.errors import ControllerConnectionError, ProtocolError

log = structlog.get_logger(__name__)


def _new_session() -> str:
    return secrets.token_hex(4)


class Executor:
    """The runs of one link: their session and sequence numbers, the run in progress (for a
    STOP to settle) and the latest report."""

    def __init__(
        self,
        connection: Callable[[], Connection | None],
        *,
        window: int,
        connect_timeout: float,
        heartbeat_timeout: float,
    ) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, not {window}")
        self._connection = connection
        """The link's connection when a run starts (a reconnect replaces it)."""
        self.window = window
        self.connect_timeout = connect_timeout
        self.heartbeat_timeout = heartbeat_timeout
        self.session = _new_session()
        """Eight hex digits, new per link; kept across reconnects so re-sent lines run once."""
        self.last_report: RunReport | None = None
        """The latest run's report (settled once a reconnect knows last_done)."""
        self._next_seq = 1
        self._runs = 0
        self._active: RunLog | None = None
        self._run_lock = asyncio.Lock()

    def halt(self) -> RunLog | None:
        """A STOP is going out: the run in progress sends nothing more. That run, or None."""
        run = self._active
        if run is not None:
            run.stop_requested = run.halting = True
        return run

    def settle(self, last_done: int) -> None:
        """The controller's last_done after a reconnect settles the latest run of this session."""
        if self.last_report is not None and self.last_report.session == self.session:
            self.last_report = self.last_report.settled(last_done)

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
        conn = self._connection()
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
