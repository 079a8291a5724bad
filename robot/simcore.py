"""The simulated controller's core: the queue of ACKed lines, the runner that executes them with
realistic timing against the cell's physics, and halting. No sockets: replies go to whatever
`Replier` sent (or last re-sent) each line; `voiced.robot.simulator` puts TCP around it.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import structlog
from voiced.robot.cell import Cell
from voiced.robot.lines import wait_event
from voiced.robot.physics import PhysicsError
from voiced.robot.primitives import MoveJ, MoveL, Primitive
from voiced.robot.protocol import ERROR_CODES, Ack, Done, Err, HelloReply, Message
from voiced.robot.scene import Scene
from voiced.robot.simledger import Ledger
from voiced.robot.simmotion import Motion, dwell_seconds, move_profile

log = structlog.get_logger(__name__)

Physics = Callable[[Cell, Scene, Primitive], Scene]
"""`robot.physics.apply` or a test's stand-in: the scene after a primitive, or PhysicsError."""


class Replier(Protocol):
    """Where replies to a line go (a `voiced.robot.lines.LineChannel`)."""

    def send(self, message: Message) -> str: ...


@dataclass
class _Line:
    """An ACKed line waiting or executing; `reply_to` moves to the connection that re-sent it."""

    seq: int
    primitive: Primitive
    session: str
    reply_to: Replier


class SimCore:
    """Queue, runner, ledger and halt state of one simulated controller."""

    def __init__(
        self,
        cell: Cell,
        scene: Scene,
        physics: Physics,
        *,
        time_scale: float,
        accel: float,
        err_on_seq: Mapping[int, tuple[str, str]],
        on_status: Callable[[], None],
    ) -> None:
        self.cell = cell
        self.time_scale = time_scale
        self.accel = accel
        self._physics = physics
        self._err_on_seq = err_on_seq
        self._on_status = on_status
        self._routine_ms = {name: r.duration_ms for name, r in cell.routines.items()}
        self.executions: Counter[tuple[str, int]] = Counter()
        self.max_in_flight = 0
        self.status = "idle"
        self.halted_reason: str | None = None
        self.idle = asyncio.Event()
        self.idle.set()
        self.halted = asyncio.Event()
        self.ledger = Ledger()
        self._scene = scene
        self._queue: deque[_Line] = deque()
        self._current: _Line | None = None
        self._motion: Motion | None = None
        self._cut = asyncio.Event()
        self._work = asyncio.Event()

    # -- state -------------------------------------------------------------------------------

    @property
    def scene(self) -> Scene:
        """The scene now; mid-move the pose is where the arm is at this instant."""
        if self._motion is None:
            return self._scene
        now = asyncio.get_running_loop().time()
        return self._scene.with_changes(pose=self._motion.pose_at(now))

    def halt(self, reason: str) -> None:
        """Interrupt the line executing (the pose stays part-way), clear the queue, halt."""
        line, self._current = self._current, None
        if self.halted_reason is None:
            self.halted_reason = reason
            # Halting an idle arm (a client saying goodbye) is routine; cutting motion is not.
            busy = line is not None or bool(self._queue)
            (log.warning if busy else log.info)("simulator halted", reason=reason, busy=busy)
        if line is not None:
            if self._motion is not None:
                now = asyncio.get_running_loop().time()
                self._scene = self._scene.with_changes(pose=self._motion.pose_at(now))
                self._motion = None
            self._cut.set()
            self._answer(line, Err.fitted(line.seq, "STOPPED", f"interrupted by {reason}"))
        self._clear_queue(f"cleared by {reason}")
        self._set_status("halted")

    def resume(self) -> None:
        """Clear the halt; nothing that was cleared runs again."""
        self.halted_reason = None
        self._set_status("idle")

    def _set_status(self, status: str) -> None:
        if status == "idle" and (self._queue or self._current or self.halted_reason):
            status = "halted" if self.halted_reason else "moving"
        if status == self.status:
            return
        self.status = status
        (self.halted.set if status == "halted" else self.halted.clear)()
        (self.idle.set if status == "idle" else self.idle.clear)()
        self._on_status()

    # -- lines in ----------------------------------------------------------------------------

    def hello(self, session: str, reply_to: Replier) -> None:
        if self.ledger.hello(session) and self._queue:
            log.warning("new session: dropping queued lines", count=len(self._queue))
            self._queue.clear()
            self._set_status("idle")
        reply_to.send(HelloReply(session, self.ledger.last_done))

    def admit(self, reply_to: Replier, seq: int, primitive: Primitive) -> None:
        """Apply the sequence rules (docs/PROTOCOL.md) to a received command line."""
        verdict = self.ledger.admit(seq)
        if verdict == "no_session":
            reply_to.send(Err.fitted(seq, "SEQ", "no session: send HELLO first"))
        elif verdict == "replay":
            reply_to.send(Ack(seq))
            reply_to.send(Done(seq))
        elif verdict == "rejoin":
            for line in (self._current, *self._queue):
                if line is not None and line.seq == seq:
                    line.reply_to = reply_to
            reply_to.send(Ack(seq))
        elif self.halted_reason is not None:
            self.refuse(reply_to, seq, "HALTED", f"halted by {self.halted_reason}: send RESUME")
        elif verdict == "latched":
            latched = self.ledger.latched_by
            self.refuse(reply_to, seq, "STOPPED", f"line {latched} failed: send HELLO first")
        elif verdict == "seq":
            self.refuse(reply_to, seq, "SEQ", f"not above {self.ledger.last_queued}")
        else:
            self._enqueue(reply_to, seq, primitive)

    def refuse(self, reply_to: Replier, seq: int, code: str, reason: str) -> None:
        """ERR for a line that will never run; it latches the channel (see Ledger.fail)."""
        if self.ledger.session is not None:
            self.ledger.fail(seq)
            self._clear_queue(f"cleared: line {seq} was refused")
        reply_to.send(Err.fitted(seq, code, reason))

    def _enqueue(self, reply_to: Replier, seq: int, primitive: Primitive) -> None:
        session = self.ledger.session
        assert session is not None  # admit() only says "new" within a session
        self.ledger.queue(seq)
        self._queue.append(_Line(seq, primitive, session, reply_to))
        self.max_in_flight = max(self.max_in_flight, len(self.ledger.pending))
        reply_to.send(Ack(seq))
        self._set_status("moving")
        self._work.set()

    def _answer(self, line: _Line, reply: Done | Err) -> None:
        """Record a terminal reply and send it to whoever sent (or re-sent) the line last."""
        if line.session != self.ledger.session:
            return  # a line of a session that a new HELLO replaced: nobody to tell
        if isinstance(reply, Done):
            self.ledger.done(line.seq)
        else:
            self.ledger.fail(line.seq)
        line.reply_to.send(reply)

    def _clear_queue(self, reason: str) -> None:
        while self._queue:
            line = self._queue.popleft()
            self._answer(line, Err.fitted(line.seq, "STOPPED", reason))

    # -- execution ---------------------------------------------------------------------------

    async def run(self) -> None:
        """The runner: execute queued lines one at a time, forever."""
        while True:
            await self._work.wait()
            if not self._queue or self.halted_reason is not None:
                self._work.clear()
                self._set_status("idle")
                continue
            await self._execute(self._queue.popleft())

    async def _execute(self, line: _Line) -> None:
        self._current = line
        self._cut = asyncio.Event()
        failure = self._err_on_seq.get(line.seq)
        if failure is not None:
            self._finish(line, Err.fitted(line.seq, *failure))
            return
        try:
            after = self._physics(self.cell, self._scene, line.primitive)
        except PhysicsError as exc:
            log.info("physics refused a line", seq=line.seq, code=exc.code, reason=exc.message)
            self._finish(line, Err.fitted(line.seq, _wire_code(exc.code), exc.message))
            return
        self.executions[(line.session, line.seq)] += 1
        seconds = self._start(line.primitive)
        if seconds > 0:
            await wait_event(self._cut, seconds)
        if self._current is not line:
            return  # halted meanwhile; halt() has answered it
        self._motion = None
        self._scene = after
        self._finish(line, Done(line.seq))

    def _start(self, primitive: Primitive) -> float:
        """Begin `primitive`; the real seconds it takes."""
        if isinstance(primitive, MoveL | MoveJ):
            profile = move_profile(self._scene.pose, primitive, self.accel)
            now = asyncio.get_running_loop().time()
            self._motion = Motion(self._scene.pose, primitive.target, profile, now, self.time_scale)
            return self._motion.real_duration
        return dwell_seconds(primitive, self._routine_ms) * self.time_scale

    def _finish(self, line: _Line, reply: Done | Err) -> None:
        self._current = None
        self._answer(line, reply)
        if isinstance(reply, Err):
            self._clear_queue(f"cleared: line {line.seq} failed")
        self._set_status("idle")


def _wire_code(code: str) -> str:
    wire = code.upper()
    if wire not in ERROR_CODES:
        log.error("physics error code has no wire code; sent as RANGE", code=code)
        return "RANGE"
    return wire
