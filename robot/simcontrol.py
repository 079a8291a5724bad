"""The simulator's control channel: PING and the heartbeat watchdog, STOP and RESUME, state
reports and WATCH pushes (docs/PROTOCOL.md, "Control channel"); what the RAPID control task does.

The watchdog arms only once the control client has sent a PING: a simulator nobody pings (a test
talking raw lines, `voiced sim` before the daemon connects) must not halt on its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog
from voiced.robot.lines import LineChannel, shown, wait_event
from voiced.robot.protocol import (
    ControlErr,
    HaltReport,
    LineError,
    Message,
    Ping,
    Pong,
    PoseReport,
    Resume,
    Resumed,
    StateRequest,
    StatusReport,
    Stop,
    Stopped,
    Watch,
)
from voiced.robot.simcore import SimCore

log = structlog.get_logger(__name__)


class SimControl:
    """Answers the control client's requests and keeps its heartbeat and WATCH running.

    `channel` is the control client's channel now (None: no client); `lost` halts and drops
    the client (a heartbeat missed)."""

    def __init__(
        self,
        core: SimCore,
        channel: Callable[[], LineChannel | None],
        lost: Callable[[str], Awaitable[None]],
        heartbeat_timeout: float,
        ignore_pings: bool = False,
    ) -> None:
        self.core = core
        self.channel = channel
        self.lost = lost
        self.heartbeat_timeout = heartbeat_timeout
        self.ignore_pings = ignore_pings
        self.armed = asyncio.Event()
        """Set from the first PING until the client is lost."""
        self._pinged = asyncio.Event()
        self._last_ping = 0.0
        self._watch_ms = 0
        self._watch_changed = asyncio.Event()

    def on_line(self, channel: LineChannel, item: Message | LineError) -> None:
        match item:
            case LineError(code=code, reason=reason):
                log.warning("unreadable control line", line=shown(item.line), reason=reason)
                channel.send(ControlErr.fitted(code, reason))
            case Ping(n=n):
                if self.ignore_pings:
                    return
                self._last_ping = asyncio.get_running_loop().time()
                self.armed.set()
                self._pinged.set()
                channel.send(Pong(n))
            case Stop():
                self.core.halt("stop")
                channel.send(Stopped(self.core.ledger.last_done))
            case Resume():
                self.core.resume()
                channel.send(Resumed())
            case StateRequest():
                self.send_state(channel)
            case Watch(ms=ms):
                self._watch_ms = ms
                self._watch_changed.set()
            case _:
                channel.send(ControlErr.fitted("PARSE", f"{type(item).__name__} is not a request"))

    def send_state(self, channel: LineChannel, *, with_pose: bool = True) -> None:
        """POSE, then HALT while halted, then STATUS: STATUS always ends a state report."""
        scene = self.core.scene
        if with_pose:
            channel.send(PoseReport(scene.pose))
        if self.core.halted_reason is not None:
            channel.send(HaltReport(self.core.halted_reason))
        channel.send(
            StatusReport(self.core.status, self.core.ledger.last_done, scene.gripper, scene.tool)
        )

    def status_changed(self) -> None:
        """The core's status changed: a watching client hears it at once."""
        self._watch_changed.set()
        channel = self.channel()
        if self._watch_ms > 0 and channel is not None:
            self.send_state(channel, with_pose=False)

    async def watchdog(self) -> None:
        """Halt when no PING came for heartbeat_timeout, once the control client has pinged."""
        loop = asyncio.get_running_loop()
        while True:
            await self.armed.wait()
            remaining = self._last_ping + self.heartbeat_timeout - loop.time()
            if remaining <= 0:
                # A client that stopped pinging is gone (a dead network does not close
                # sockets): halt and drop it, so that it can reconnect.
                await self.lost("heartbeat")
                continue
            self._pinged.clear()
            await wait_event(self._pinged, remaining)

    async def watcher(self) -> None:
        """WATCH: push POSE and STATUS every period while moving."""
        while True:
            self._watch_changed.clear()
            channel = self.channel()
            if self._watch_ms <= 0 or self.core.status != "moving" or channel is None:
                await self._watch_changed.wait()
                continue
            self.send_state(channel)
            await wait_event(self._watch_changed, self._watch_ms / 1000.0)
