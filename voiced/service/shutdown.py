"""How a run ends, in stages and bounded: at end of input the robot finishes what was asked
and the targets deliver what was said; on SIGTERM (or when the robot cannot be waited for)
input stops, dictation is handed on, the arm stops safely, the pipeline records what really
ran, and nothing waits longer than `daemon.shutdown_timeout`."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import structlog

from voiced.config import Config
from voiced.robot.cell import Cell
from voiced.robot.view import state_view
from voiced.service.parts import Parts
from voiced.service.sdnotify import Notifier

log = structlog.get_logger(__name__)

DRAIN_POLL_S = 0.2
"""How often the end-of-input wait looks at the controller link."""


class Shutdown:
    """The end of one run (`requested`: set by a signal)."""

    def __init__(
        self, config: Config, notifier: Notifier, cell: Cell, requested: asyncio.Event
    ) -> None:
        self.config = config
        self.notifier = notifier
        self.cell = cell
        self.requested = requested

    async def wait_for_end(self, feeder: asyncio.Task[None]) -> bool:
        """Wait until the input ends or a signal arrives; True for a signal."""
        await self._until_signalled(feeder)
        return self.requested.is_set()

    async def finish(self, feeder: asyncio.Task[None], parts: Parts, by_signal: bool) -> None:
        # End of input: let the robot finish what was asked and the targets deliver what was
        # said, unless a signal comes first.
        if not by_signal and await self._unless_signalled(self._drain(parts)):
            return  # everything said was done or delivered
        self.notifier.stopping()
        feeder.cancel()
        # Before the arm is stopped: handing dictation on only starts its write, and that write
        # must not depend on how long stopping takes. It is awaited with the other deliveries.
        await parts.router.end()
        try:
            async with asyncio.timeout(self.config.daemon.shutdown_timeout):
                await self._stop_motion(parts)
                await parts.services.flush()
        except TimeoutError:
            log.error("shutdown took too long; abandoning the controller link",
                      timeout=self.config.daemon.shutdown_timeout)  # fmt: skip

    def final_state(self, parts: Parts) -> dict[str, Any]:
        scene = parts.pipeline.belief.scene
        sim = parts.controller.sim
        if sim is not None:
            # The simulator's scene is the ground truth; only the active zone is logical.
            scene = sim.scene.with_changes(active_zone=scene.active_zone)
        return state_view(self.cell, scene)

    async def _until_signalled(self, task: asyncio.Task[Any]) -> None:
        """Until `task` ends or a shutdown signal arrives (`task` is left as it is)."""
        stopper = asyncio.create_task(self.requested.wait(), name="shutdown-wait")
        try:
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel(stopper)

    async def _drain(self, parts: Parts) -> bool:
        """True once everything said was done and delivered; False if the robot could not be
        waited for (then the shutdown that follows drops, and names, what still waits)."""
        await parts.router.end()
        if not await self._idle_unless_link_down(parts):
            return False
        await parts.services.flush()
        return True

    async def _idle_unless_link_down(self, parts: Parts) -> bool:
        """Until the robot is idle (True). With the controller link down, work may wait for a
        controller that is gone: after the shutdown timeout without a link the daemon stops
        waiting (False)."""
        idle = asyncio.ensure_future(parts.pipeline.wait_idle())
        keeper, loop = parts.pipeline.keeper, asyncio.get_running_loop()
        patience = self.config.daemon.shutdown_timeout
        down_since: float | None = None
        try:
            while not (await asyncio.wait({idle}, timeout=DRAIN_POLL_S))[0]:
                if keeper.up.is_set():
                    down_since = None
                elif down_since is None:
                    down_since = loop.time()
                elif loop.time() - down_since > patience:
                    log.warning("end of input with the controller link down: not waiting for "
                                "the robot", timeout=patience)  # fmt: skip
                    return False
            return True
        finally:
            idle.cancel()

    async def _unless_signalled(self, work: Coroutine[Any, Any, bool]) -> bool:
        """Run `work` until it finishes (its answer) or a shutdown signal arrives (False: it
        is cancelled, and awaited)."""
        task = asyncio.create_task(work, name="drain")
        try:
            await self._until_signalled(task)
        finally:
            finished = task.done()
            await cancel(task)
        # Its error, if it had one, is not lost.
        return task.result() if finished else False

    async def _stop_motion(self, parts: Parts) -> None:
        """Nothing said before SIGTERM moves after it: pending work is dropped, motion stops."""
        pipeline = parts.pipeline
        moving = pipeline.workload.moving
        await pipeline.shutdown()
        await pipeline.wait_idle()
        if moving:
            log.warning("stopped for shutdown", state=self.final_state(parts))


async def cancel(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancel each task still running and wait until every one has ended: nothing cancelled is
    left pending. Their errors are not raised here (the task group reports its own)."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
