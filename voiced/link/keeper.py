"""Keeps the controller link up in the background (issue 14).

When the link drops (heartbeat timeout, a closed socket, the controller restarting) the keeper
says so at once (an `error` event of kind `link`, `STATUS=`, the log), reconnects with backoff
for as long as it takes, and once it is back has the pipeline reconcile the scene with the
controller's report before anything else may move. A command that arrives meanwhile waits for
it (`wait_up`), up to a limit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import structlog

from voiced.errors import ControllerAuthError, ControllerConnectionError, VoicedError
from voiced.events import EventLog
from voiced.eventtypes import AuthRefused, LinkLost
from voiced.robot.link import ControllerLink, backoff_delays

log = structlog.get_logger(__name__)

STALL_S = 30.0
"""A keeper that has not tried to reach the controller for this long is wedged (watchdog)."""


class LinkKeeper:
    def __init__(
        self,
        link: ControllerLink,
        events: EventLog,
        reconcile: Callable[[str], Awaitable[None]],
        status: Callable[[str | None], None],
    ) -> None:
        self.link = link
        self.events = events
        self.reconcile = reconcile
        self.status = status
        """Called with "link lost, reconnecting" and the like; None when the link is up."""
        self.up = asyncio.Event()
        self.up.set()
        self.active = False
        """Whether `run` is keeping the link (otherwise the pipeline reconnects itself)."""
        self._last_try = time.monotonic()

    @property
    def healthy(self) -> bool:
        """Up, or still trying (for the systemd watchdog)."""
        return self.up.is_set() or time.monotonic() - self._last_try < STALL_S

    async def wait_up(self, timeout: float) -> bool:
        """Until the link is up and reconciled; False if it is not within `timeout`."""
        try:
            async with asyncio.timeout(timeout):
                await self.up.wait()
        except TimeoutError:
            return False
        return True

    async def run(self) -> None:
        """Forever: wait for the link to drop, bring it back, reconcile."""
        self.active = True
        try:
            await self._keep()
        finally:
            self.active = False

    async def _keep(self) -> None:
        while True:
            reason = await self.link.wait_lost()
            if self.link.closing:
                return
            self.up.clear()
            log.error("controller link lost", reason=reason)
            self.events.emit(LinkLost(reason))
            self.status("link lost, reconnecting")
            if not await self._reconnect():
                return
            self.status(None)
            self.up.set()

    async def _reconnect(self) -> bool:
        """Reconnect and reconcile, retrying both until it works; False when shutting down."""
        delays = backoff_delays()
        refused = ""
        while not self.link.closing:
            self._last_try = time.monotonic()
            try:
                await self.link.reconnect(max_attempts=1)
                await self.reconcile("reconnected")
                log.info("controller link back")
                return True
            except ControllerConnectionError as exc:
                if self.link.closing:
                    return False
                self._last_try = time.monotonic()
                log.warning("reconnect failed", error=str(exc))
                if isinstance(exc, ControllerAuthError) and str(exc) != refused:
                    refused = str(exc)  # once per reason, not at every attempt
                    self.events.emit(AuthRefused(refused))
                self.status(f"link lost, reconnecting ({exc})")
            except VoicedError as exc:
                log.warning("the controller did not report its state", error=str(exc))
            await asyncio.sleep(next(delays))
        return False
