"""One connection to a controller: both channels of one connection attempt.

`Connection` is used as `async with`: it opens the motion and control channels (each with a
timeout), says HELLO, and runs the two readers and the heartbeat as named tasks it owns. Motion
replies go to `inbox` in order; control replies resolve `request()`. Losing either channel, or a
PONG, loses the whole connection and closes both channels, so the controller halts (it halts when
its control connection drops). The reconnect loop lives outside (`robot.link.ControllerLink`).
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

import structlog
from voiced.robot.auth import mac
from voiced.robot.lines import READ_LIMIT, LineChannel, OnLine, shown, wait_event
from voiced.robot.primitives import Pose
from voiced.robot.protocol import (
    MAX_SEQ,
    PROTOCOL_VERSION,
    Auth,
    AuthOk,
    Channel,
    ControlErr,
    Greeting,
    HaltReport,
    Hello,
    HelloReply,
    LineError,
    Message,
    Ping,
    Pong,
    PoseReport,
    Resumed,
    StatusReport,
    format_line,
)

from voiced.errors import ControllerAuthError, ControllerConnectionError

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class ControllerState:
    """What the controller reported last (a STATE reply or a WATCH push)."""

    pose: Pose | None
    """Where the tool centre point is (None for a pushed STATUS without a POSE before it)."""
    status: str
    """idle, moving or halted."""
    last_done: int
    """The highest seq completed in the session."""
    gripper: float
    """Gripper opening, mm."""
    tool: str | None
    """The tool on the flange."""
    halt_reason: str | None = None
    """Why it is halted (stop, heartbeat, disconnect); None unless halted."""


MotionItem = Message | LineError | ControllerConnectionError
"""What the motion inbox holds: replies, unreadable lines, and finally why the link was lost."""


class Connection:
    """Both channels to one controller, opened as one: `async with Connection(...) as conn`."""

    def __init__(
        self,
        host: str,
        motion_port: int,
        control_port: int,
        *,
        session: str,
        connect_timeout: float,
        heartbeat_interval: float,
        heartbeat_timeout: float,
        on_line: OnLine | None = None,
        key: bytes | None = None,
        allow_unauthenticated: bool = False,
    ) -> None:
        self.host = host
        self.key = key
        """The shared secret for the handshake (None: answer no challenge)."""
        self.allow_unauthenticated = allow_unauthenticated
        """With a key: still drive a controller that checks none (RAPID; docs/RAPID.md)."""
        self.greeting: Greeting | None = None
        """Who the controller said it is (the motion channel's greeting)."""
        self.ports = (motion_port, control_port)
        self.session = session
        self.connect_timeout = connect_timeout
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_timeout = heartbeat_timeout
        self._on_line = on_line
        self.last_done = 0
        """From the HELLO reply: the highest seq the controller completed in this session."""
        self.inbox: asyncio.Queue[MotionItem] = asyncio.Queue()
        """Everything received on the motion channel, in order."""
        self.lost = asyncio.Event()
        self.lost_reason: ControllerConnectionError | None = None
        self.state: ControllerState | None = None
        """The last state the controller reported."""
        self._motion: LineChannel | None = None
        self._control: LineChannel | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._waiters: deque[tuple[type[Any], asyncio.Future[Any]]] = deque()
        self._pose: Pose | None = None
        self._halt: str | None = None
        self._ping = 0
        self._ponged = asyncio.Event()
        self._closing = asyncio.Event()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.ports[0]}/{self.ports[1]}"

    async def __aenter__(self) -> Connection:
        try:
            self._motion = await self._open("motion", self.ports[0])
            self._control = await self._open("control", self.ports[1])
            self.last_done = await self._hello()
        except BaseException:
            await self._close_channels()
            raise
        for coro, name in (
            (self._read_motion(), "link-motion-reader"),
            (self._read_control(), "link-control-reader"),
            (self._heartbeat(), "link-heartbeat"),
        ):
            task = asyncio.create_task(coro, name=name)
            self._tasks.add(task)
            task.add_done_callback(functools.partial(_task_ended, self._tasks))
        log.info(
            "controller link up",
            address=self.address,
            session=self.session,
            last_done=self.last_done,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close both channels and end the readers and the heartbeat (awaited). Whoever waits
        on the inbox or a reply learns that the link is gone."""
        error = self.lost_reason or ControllerConnectionError(f"link {self.address} closed")
        if not self.lost.is_set():
            self.lost_reason = error
            self.lost.set()
            self.inbox.put_nowait(error)
        self._closing.set()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        await self._close_channels()
        _fail(self._waiters, error)

    def send_motion(self, message: Message) -> str:
        return self._channel(self._motion).send(message)

    def send_motion_line(self, line: str) -> None:
        self._channel(self._motion).send_line(line)

    def send_control(self, message: Message) -> str:
        return self._channel(self._control).send(message)

    async def request(self, message: Message, reply: type[Any], timeout: float) -> Any:
        """Send a control line and wait for its reply (`StatusReport` gives a ControllerState).

        A reply that does not come within `timeout` loses the link: a controller that does not
        answer STOP must not be trusted to be moving."""
        channel = self._channel(self._control)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters.append((reply, future))
        if reply is StatusReport:
            self._pose = self._halt = None  # only a POSE sent after this request counts
        channel.send(message)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            await self.lose(f"no {reply.__name__} reply to {format_line(message)} in {timeout:g} s")
            assert self.lost_reason is not None
            raise self.lost_reason from None
        finally:
            if (reply, future) in self._waiters:
                self._waiters.remove((reply, future))

    async def lose(self, reason: str) -> None:
        """Declare the link lost: wake whoever waits, close both channels (the controller halts
        when its control connection drops)."""
        if self.lost.is_set() or self._closing.is_set():
            return
        error = ControllerConnectionError(f"controller link {self.address} lost: {reason}")
        log.error("controller link lost", address=self.address, reason=reason)
        self.lost_reason = error
        self.lost.set()
        self.inbox.put_nowait(error)
        _fail(self._waiters, error)
        await self._close_channels()

    def _channel(self, channel: LineChannel | None) -> LineChannel:
        if self.lost_reason is not None:
            raise self.lost_reason
        if channel is None or channel.closed.is_set():
            raise ControllerConnectionError(f"controller link {self.address} is not open")
        return channel

    async def _open(self, kind: Channel, port: int) -> LineChannel:
        where = f"{self.host}:{port} ({kind} channel)"
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, port, limit=READ_LIMIT), self.connect_timeout
            )
        except TimeoutError:
            raise ControllerConnectionError(
                f"cannot connect to {where}: no answer in {self.connect_timeout:g} s"
            ) from None
        except OSError as exc:
            raise ControllerConnectionError(f"cannot connect to {where}: {exc}") from exc
        channel = LineChannel(
            reader, writer, channel=kind, name=f"link-{kind}", on_line=self._on_line
        )
        try:
            greeting = await self._handshake(channel, kind, where)
        except BaseException:
            await channel.aclose()
            raise
        if kind == "motion":
            self.greeting = greeting
        elif self.greeting is not None and greeting.controller != self.greeting.controller:
            await channel.aclose()
            raise ControllerConnectionError(
                f"{where}: the control channel is controller {greeting.controller}, the motion "
                f"channel {self.greeting.controller}"
            )
        return channel

    async def _handshake(self, channel: LineChannel, kind: Channel, where: str) -> Greeting:
        """Read the greeting, answer its challenge, wait to be accepted."""
        greeting = await _receive(channel, where, "greeting", self.connect_timeout)
        if not isinstance(greeting, Greeting):
            raise ControllerConnectionError(
                f"{where} is not a voiced controller: it sent {greeting!r} instead of VOICED"
            )
        if greeting.version != PROTOCOL_VERSION:
            raise ControllerConnectionError(
                f"{where} speaks protocol version {greeting.version}, not {PROTOCOL_VERSION}"
            )
        answer: str | None = None
        if greeting.nonce is not None and self.key is not None:
            answer = mac(self.key, kind, greeting.controller, greeting.nonce)
        elif greeting.nonce is None and self.key is not None and not self.allow_unauthenticated:
            raise ControllerAuthError(
                f"{where}: controller {greeting.controller} ({greeting.kind}) checks no key; set "
                "[controller] allow_unauthenticated = true to drive it anyway"
            )
        channel.send(Auth(answer))
        reply = await _receive(channel, where, "AUTHOK", self.connect_timeout)
        if isinstance(reply, ControlErr) and reply.code == "AUTH":
            hint = "" if self.key is not None else " (it wants a key: set [controller] key_file)"
            raise ControllerAuthError(f"{where} refused this client: {reply.reason}{hint}")
        if not isinstance(reply, AuthOk):
            raise ControllerConnectionError(f"{where} did not accept the handshake: {reply!r}")
        if greeting.nonce is None:
            log.warning("the controller link is not authenticated", address=where,
                        controller=greeting.controller)  # fmt: skip
        return greeting

    async def _hello(self) -> int:
        motion = self._channel(self._motion)
        motion.send(Hello(self.session))
        where = f"{self.host}:{self.ports[0]} (motion channel)"
        try:
            reply = await _receive(
                motion, where, f"HELLO {self.session} reply", self.connect_timeout
            )
        except ControllerConnectionError:
            reply = None
        if not isinstance(reply, HelloReply) or reply.session != self.session:
            raise ControllerConnectionError(
                f"controller at {self.address} did not answer HELLO {self.session}: {reply!r}"
            )
        return reply.last_done

    async def _close_channels(self) -> None:
        for channel in (self._motion, self._control):
            if channel is not None:
                await channel.aclose()

    async def _read_motion(self) -> None:
        channel = self._channel(self._motion)
        while (item := await channel.receive()) is not None:
            self.inbox.put_nowait(item)
        await self.lose(f"motion channel closed ({channel.error or 'end of stream'})")

    async def _read_control(self) -> None:
        channel = self._channel(self._control)
        while (item := await channel.receive()) is not None:
            self._on_control(item)
        await self.lose(f"control channel closed ({channel.error or 'end of stream'})")

    def _on_control(self, item: Message | LineError) -> None:
        match item:
            case Pong(n=n):
                if n == self._ping:
                    self._ponged.set()
            case PoseReport(pose=pose):
                self._pose = pose
            case HaltReport(reason=reason):
                self._halt = reason
            case StatusReport():
                self.state = ControllerState(
                    self._pose, item.status, item.last_done, item.gripper, item.tool,
                    self._halt if item.status == "halted" else None,
                )  # fmt: skip
                if self._pose is not None:
                    self._resolve(StatusReport, self.state)
                self._halt = None
            case Resumed():
                # The controller says it is no longer halted: the last report must not go on
                # saying it is until the next one (a run may end before any is pushed).
                if self.state is not None and self.state.status == "halted":
                    self.state = replace(self.state, status="idle", halt_reason=None)
                self._resolve(Resumed, item)
            case LineError() | ControlErr():
                log.error(
                    "controller sent an error or unreadable line on the control channel",
                    line=shown(item.line) if isinstance(item, LineError) else format_line(item),
                )
            case _:
                self._resolve(type(item), item)

    def _resolve(self, kind: type[Any], value: object) -> None:
        for waiter in self._waiters:
            if waiter[0] is kind and not waiter[1].done():
                waiter[1].set_result(value)
                self._waiters.remove(waiter)
                return
        log.warning("unexpected control line ignored", message=repr(value))

    async def _heartbeat(self) -> None:
        """PING every heartbeat_interval; no PONG within heartbeat_timeout loses the link."""
        loop = asyncio.get_running_loop()
        channel = self._channel(self._control)
        while True:
            self._ping = self._ping % MAX_SEQ + 1
            sent_at = loop.time()
            self._ponged.clear()
            channel.send(Ping(self._ping))
            if not await wait_event(self._ponged, self.heartbeat_timeout):
                await self.lose(f"no PONG in {self.heartbeat_timeout:g} s")
                return
            rest = self.heartbeat_interval - (loop.time() - sent_at)
            if rest > 0 and await wait_event(self._closing, rest):
                return


async def _receive(channel: LineChannel, where: str, wanted: str, timeout: float) -> object:
    """The next item on `channel` during the handshake, or the error naming what did not come."""
    try:
        item = await asyncio.wait_for(channel.receive(), timeout)
    except TimeoutError:
        raise ControllerConnectionError(f"{where}: no {wanted} in {timeout:g} s") from None
    if item is None:
        raise ControllerConnectionError(f"{where} closed the connection before {wanted}")
    return item


def _fail(waiters: deque[tuple[type[Any], asyncio.Future[Any]]], error: Exception) -> None:
    """Every request still waiting for its reply gets `error` instead."""
    while waiters:
        _, future = waiters.popleft()
        if not future.done():
            future.set_exception(error)


def _task_ended(tasks: set[asyncio.Task[None]], task: asyncio.Task[None]) -> None:
    tasks.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("link task failed", task=task.get_name(), error=repr(task.exception()))
