"""The link keeper against a real simulator over loopback: it reports a lost link, reconnects by
itself, has the scene reconciled, and reports a refused handshake once (issue 14)."""

from __future__ import annotations

import asyncio
from typing import Any

from voiced.robot.cellfile import load_cell
from voiced.robot.link import ControllerLink
from voiced.robot.simulator import Simulator

from voiced.events import EventLog
from voiced.link.keeper import LinkKeeper

KEY = b"k" * 32
TIMEOUT = 10.0


async def _until(test: Any) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not test():
            await asyncio.sleep(0.01)


async def test_a_lost_link_is_reported_brought_back_and_reconciled() -> None:
    weld = load_cell("weld")
    events = EventLog()
    seen: list[dict[str, Any]] = []
    events.subscribe(lambda record: seen.append(record.to_dict()))
    statuses: list[str | None] = []
    reconciled: list[str] = []

    async def reconcile(why: str) -> None:
        reconciled.append(why)

    async with Simulator(weld, weld.initial_scene, time_scale=0.02, key=KEY) as sim:
        link = ControllerLink("127.0.0.1", sim.motion_port, sim.control_port,
                              connect_timeout=1.0, heartbeat_interval=0.05,
                              heartbeat_timeout=0.5, key=KEY)  # fmt: skip
        async with link:
            keeper = LinkKeeper(link, events, reconcile, statuses.append)
            task = asyncio.create_task(keeper.run())
            await _until(lambda: keeper.active)

            sim.key = b"x" * 32  # the controller now wants another key
            await sim._lost_client("disconnect")  # and drops the client
            await _until(lambda: any(e.get("kind") == "auth" for e in seen))
            assert not keeper.up.is_set() and keeper.healthy  # down, but still trying
            assert statuses[0] == "link lost, reconnecting"
            assert [e["kind"] for e in seen if e["event"] == "error"][:2] == ["link", "auth"]

            sim.key = KEY  # the right key again: it comes back by itself
            assert await keeper.wait_up(TIMEOUT)
            assert link.connected and reconciled == ["reconnected"]
            assert statuses[-1] is None
            auth_errors = [e for e in seen if e.get("kind") == "auth"]
            assert len(auth_errors) == 1, "reported once, not at every attempt"
            assert "wrong key" in auth_errors[0]["reason"]
            assert sim.halted_reason == "disconnect"  # found halted: nothing resumed by itself
        await asyncio.wait_for(task, TIMEOUT)  # closing the link ends the keeper
