"""The controller simulator: a TCP server speaking the wire protocol (docs/PROTOCOL.md) on both
channels, executing primitives with realistic timing against the cell's physics.

It does what the RAPID server on the GoFa does, minus the arm: a queue of ACKed lines executed in
order (`robot.simcore`), a control channel that can STOP mid-move (the pose stays where the arm
was at that instant), a heartbeat watchdog, and the session ledger that makes re-sent lines run
exactly once. `Faults` injects the failures the executor must survive.

The control channel's requests and the heartbeat watchdog are `robot.simcontrol`'s. Losing the
control connection halts the simulator whether or not the watchdog was armed, as the RAPID
control task does.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from voiced.robot import physics as physics_module
from voiced.robot.auth import new_nonce, verify
from voiced.robot.cell import Cell
from voiced.robot.lines import READ_LIMIT, LineChannel, shown
from voiced.robot.protocol import (
    PROTOCOL_VERSION,
    Ack,
    Auth,
    AuthOk,
    Command,
    ControlErr,
    Done,
    Err,
    Greeting,
    Hello,
    LineError,
    Message,
)
from voiced.robot.scene import Scene
from voiced.robot.simcontrol import SimControl
from voiced.robot.simcore import Physics, SimCore

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Faults:
    """Failures to inject (tests only)."""

    drop_after_lines: int | None = None
    """Close the motion connection right after handling the N-th line received on the motion
    channel since start (HELLO included); it happens once."""
    delay_s: float = 0.0
    """Added before every line the simulator sends, on both channels."""
    err_on_seq: Mapping[int, tuple[str, str]] = field(default_factory=dict)
    """seq -> (code, reason): when its turn comes, answer ERR instead of executing it."""
    ignore_pings: bool = False
    """Neither answer PINGs nor count them for the watchdog (the daemon sees a dead link)."""


class Simulator:
    """A simulated controller; `async with Simulator(...) as sim:` or `start()` / `close()`."""

    def __init__(
        self,
        cell: Cell,
        scene: Scene,
        host: str = "127.0.0.1",
        motion_port: int = 0,
        control_port: int = 0,
        time_scale: float = 1.0,
        heartbeat_timeout: float = 2.0,
        physics: Physics = physics_module.apply,
        accel: float = 1500.0,
        faults: Faults | None = None,
        key: bytes | None = None,
        name: str | None = None,
    ) -> None:
        self.host = host
        self.key = key
        """The shared secret clients must prove (None: any client may connect)."""
        self.name = name or _sim_name(cell.name)
        """Its identity in the greeting: new per simulator, so that saved state of one simulated
        world is never taken for another's (or a real cell's)."""
        self.refused: list[str] = []
        """Why each refused client was refused (the controller reports it; tests look)."""
        self.motion_port = motion_port
        """The bound port once started (the requested one before; 0 = any)."""
        self.control_port = control_port
        self.heartbeat_timeout = heartbeat_timeout
        self.faults = faults or Faults()
        self.core = SimCore(
            cell, scene, physics, time_scale=time_scale, accel=accel,
            err_on_seq=self.faults.err_on_seq, on_status=lambda: self.control.status_changed(),
        )  # fmt: skip
        self.control = SimControl(
            self.core, lambda: self._control_ch, self._lost_client, heartbeat_timeout,
            self.faults.ignore_pings,
        )  # fmt: skip
        self.lines_received = 0
        """Lines received on the motion channel since start (for Faults.drop_after_lines)."""
        self.closed = asyncio.Event()
        self._motion_ch: LineChannel | None = None
        self._control_ch: LineChannel | None = None
        self._servers: list[asyncio.Server] = []
        self._tasks = _Tasks()

    # -- what tests and the CLI look at ------------------------------------------------------

    @property
    def scene(self) -> Scene:
        """The scene now; mid-move the pose is where the arm is at this instant."""
        return self.core.scene

    @property
    def status(self) -> str:
        """idle, moving or halted."""
        return self.core.status

    @property
    def halted_reason(self) -> str | None:
        """stop, heartbeat or disconnect while halted; None otherwise."""
        return self.core.halted_reason

    @property
    def executions(self) -> Counter[tuple[str, int]]:
        """(session, seq) -> how many times it started executing (never more than once)."""
        return self.core.executions

    @property
    def max_in_flight(self) -> int:
        """The most lines ever ACKed and not yet answered at one time."""
        return self.core.max_in_flight

    @property
    def last_done(self) -> int:
        return self.core.ledger.last_done

    @property
    def idle(self) -> asyncio.Event:
        """Set while nothing is queued or executing and not halted."""
        return self.core.idle

    @property
    def halted(self) -> asyncio.Event:
        return self.core.halted

    def halt(self, reason: str) -> None:
        """Halt as on STOP (an emergency stop pressed at the cell, say)."""
        self.core.halt(reason)

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Bind both ports and start the runner, watchdog and watch tasks."""
        for handler, port in (
            (self._serve_motion, self.motion_port),
            (self._serve_control, self.control_port),
        ):
            try:
                server = await asyncio.start_server(handler, self.host, port, limit=READ_LIMIT)
            except OSError:
                await self.close()
                raise
            self._servers.append(server)
        self.motion_port = self._servers[0].sockets[0].getsockname()[1]
        self.control_port = self._servers[1].sockets[0].getsockname()[1]
        self._tasks.spawn(self.core.run(), "sim-runner")
        self._tasks.spawn(self.control.watchdog(), "sim-watchdog")
        self._tasks.spawn(self.control.watcher(), "sim-watch")
        log.info(
            "simulator listening", host=self.host, motion_port=self.motion_port,
            control_port=self.control_port, time_scale=self.core.time_scale,
        )  # fmt: skip

    async def close(self) -> None:
        """Stop serving, close both connections and end every task (awaited)."""
        for server in self._servers:
            server.close()
        for channel in (self._motion_ch, self._control_ch):
            if channel is not None:
                await channel.aclose()
        await self._tasks.end()
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()
        self.closed.set()

    # -- handshake ---------------------------------------------------------------------------

    async def _admit(self, channel: LineChannel, current: LineChannel | None) -> bool:
        """Greet, check the answer to the challenge, and take the client only if the channel
        is free: a second client never displaces the first. A refusal is answered `ERR AUTH`,
        logged, and kept in `refused`."""
        nonce = new_nonce() if self.key is not None else None
        channel.send(Greeting(PROTOCOL_VERSION, "sim", self.name, nonce))
        try:
            answer = await asyncio.wait_for(channel.receive(), HANDSHAKE_TIMEOUT_S)
        except TimeoutError:
            answer = None
        why = None
        if not isinstance(answer, Auth):
            why = "expected AUTH first"
        elif (
            nonce is not None
            and self.key is not None
            and not verify(self.key, channel.channel, self.name, nonce, answer.mac)
        ):
            why = "wrong key" if answer.mac is not None else "a key is required"
        elif current is not None and not current.closed.is_set():
            why = "busy: another client holds this channel"
        if why is not None:
            log.warning("refused a client", channel=channel.channel, peer=channel.peer, why=why)
            self.refused.append(why)
            channel.send(ControlErr.fitted("AUTH", why))
            await channel.flush()
            return False
        channel.send(AuthOk())
        return True

    async def _lost_client(self, reason: str) -> None:
        """Either channel of the client is gone: halt, and let go of the other channel too, so
        that the client can come back (it is halted then, and nothing runs until RESUME)."""
        self.control.armed.clear()
        self.core.halt(reason)
        for channel in (self._motion_ch, self._control_ch):
            if channel is not None:
                await channel.aclose()

    # -- motion channel ----------------------------------------------------------------------

    async def _serve_motion(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        name = self._tasks.own_handler("motion")
        channel = LineChannel(
            reader, writer, channel="motion", name=name, on_line=_log_line,
            delay_s=self.faults.delay_s,
        )  # fmt: skip
        if not await self._admit(channel, self._motion_ch):
            await channel.aclose()
            return
        self._motion_ch = channel
        log.info("motion client connected", peer=channel.peer)
        try:
            while (item := await channel.receive()) is not None:
                self.lines_received += 1
                self._on_motion(channel, item)
                if self.lines_received == self.faults.drop_after_lines:
                    log.warning("fault: dropping the motion connection", after=self.lines_received)
                    break
        finally:
            await channel.aclose()
            log.info("motion client disconnected", channel=name)
            if self._motion_ch is channel:  # the client's link is gone: halt, drop its control
                self._motion_ch = None
                await self._lost_client("disconnect")

    def _on_motion(self, channel: LineChannel, item: Message | LineError) -> None:
        match item:
            case LineError(seq=seq, code=code, reason=reason):
                log.warning("unreadable motion line", line=shown(item.line), reason=reason)
                self.core.refuse(channel, seq, code, reason)
            case Hello(session=session):
                self.core.hello(session, channel)
            case Command(seq=seq, primitive=primitive):
                self.core.admit(channel, seq, primitive)
            case Ack(seq=seq) | Done(seq=seq) | Err(seq=seq):
                self.core.refuse(channel, seq, "PARSE", f"{type(item).__name__} is not a request")
            case _:
                self.core.refuse(channel, 0, "PARSE", f"{type(item).__name__} is not a request")

    # -- control channel ---------------------------------------------------------------------

    async def _serve_control(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        name = self._tasks.own_handler("control")
        channel = LineChannel(
            reader, writer, channel="control", name=name, on_line=_log_line,
            delay_s=self.faults.delay_s,
        )  # fmt: skip
        if not await self._admit(channel, self._control_ch):
            await channel.aclose()
            return
        self._control_ch = channel
        log.info("control client connected", peer=channel.peer)
        try:
            while (item := await channel.receive()) is not None:
                if isinstance(item, LineError):
                    log.warning(
                        "unreadable control line", line=shown(item.line), reason=item.reason
                    )
                self.control.on_line(channel, item)
        finally:
            await channel.aclose()
            if self._control_ch is channel:  # the client's link is gone
                self._control_ch = None
                await self._lost_client("disconnect")
            log.info("control client disconnected", channel=name)


class _Tasks:
    """The simulator's own tasks and its clients' server tasks, ended together by `end()`."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._connections = 0

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._ended)

    def own_handler(self, kind: str) -> str:
        """Name the server's task for this client and track it, so `end()` can end it."""
        self._connections += 1
        name = f"sim-{kind}-{self._connections}"
        task = asyncio.current_task()
        if task is not None:
            task.set_name(name)
            self._handlers.add(task)
            task.add_done_callback(self._ended)
        return name

    async def end(self) -> None:
        # A client's task ends by itself once its channel is closed; cancelling it instead
        # makes asyncio's own done-callback log a spurious error on Python 3.11.
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=1.0)
        tasks = [*self._tasks, *self._handlers]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._handlers.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("simulator task failed", task=task.get_name(), error=repr(task.exception()))


HANDSHAKE_TIMEOUT_S = 5.0
"""How long a new connection may take to answer the greeting."""


def _sim_name(cell: str) -> str:
    """`sim_<cell>_<8 hex>`: a NAME on the wire ([A-Za-z0-9_], at most 32)."""
    tidy = re.sub(r"[^A-Za-z0-9_]", "_", cell)[:19]
    return f"sim_{tidy}_{secrets.token_hex(4)}"


def _log_line(direction: str, channel: str, line: str) -> None:
    log.debug("sim line", direction=direction, channel=channel, line=line)


async def serve_forever(
    cell: Cell,
    scene: Scene,
    host: str,
    port: int,
    time_scale: float = 1.0,
    heartbeat_timeout: float = 2.0,
    *,
    accel: float = 1500.0,
    on_ready: Callable[[Simulator], None] | None = None,
    key: bytes | None = None,
    name: str | None = None,
) -> None:
    """Serve the motion channel on `port` and the control channel on `port + 1` until cancelled
    (`voiced sim --cell NAME --port P`; port 0 = any two free ports). `on_ready` is called once
    both are bound, e.g. to print them."""
    simulator = Simulator(
        cell, scene, host, port, port + 1 if port else 0, time_scale, heartbeat_timeout,
        accel=accel, key=key, name=name,
    )  # fmt: skip
    async with simulator:
        if on_ready is not None:
            on_ready(simulator)
        await simulator.closed.wait()
