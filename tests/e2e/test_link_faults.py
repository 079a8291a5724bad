"""Issue 14 through the real daemon: after a link fault the controller's report is the truth.

The daemon (`voiced run --text -`) drives a simulator over real loopback TCP through a proxy
that can cut the network silently (`tests.faultproxy`), as a pulled cable does.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from robot.cell import load_cell
from robot.simulator import Simulator
from tests.e2e.helpers import voiced, voiced_env
from tests.faultproxy import FaultProxy

pytestmark = pytest.mark.slow

CONFIG = """
[controller]
address = "127.0.0.1:{motion}"
control_port = {control}
heartbeat_interval = 0.2
heartbeat_timeout = 1.0
connect_timeout = 1.0
"""


@dataclass
class Cell:
    """A simulator behind two fault proxies, and the daemon driving it."""

    sim: Simulator
    motion: FaultProxy
    control: FaultProxy
    proc: asyncio.subprocess.Process
    events: list[dict[str, Any]] = field(default_factory=list)

    def partition(self) -> None:
        self.motion.partition()
        self.control.partition()

    def heal(self) -> None:
        self.motion.heal()
        self.control.heal()

    async def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{line}\n\n".encode())
        await self.proc.stdin.drain()

    async def wait_for(self, test: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for event in self.events[seen:]:
                if test(event):
                    return event
            seen = len(self.events)
            await asyncio.sleep(0.05)
        shown = [(e["event"], e.get("text") or e.get("kind") or e.get("line")) for e in self.events]
        raise AssertionError(f"not seen in {timeout} s; events: {shown}")

    def said(self) -> list[str]:
        return [e["text"] for e in self.events if e["event"] == "feedback"]


@asynccontextmanager
async def cell_with_daemon(tmp: Path, name: str = "sandwich") -> AsyncIterator[Cell]:
    cell = load_cell(name)
    async with (
        Simulator(cell, cell.initial_scene, time_scale=1.0, heartbeat_timeout=1.0) as sim,
        FaultProxy(sim.motion_port) as motion,
        FaultProxy(sim.control_port) as control,
    ):
        config = tmp / "config.toml"
        config.write_text(CONFIG.format(motion=motion.port, control=control.port), "utf-8")
        cmd = voiced("run", "--config", str(config), "--cell", name, "--text", "-",
                     "--events", "-")  # fmt: skip
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=voiced_env(tmp),
        )  # fmt: skip
        running = Cell(sim, motion, control, proc)
        reader = asyncio.create_task(_read_events(running))
        try:
            await running.wait_for(lambda e: e["event"] == "reconciled")
            yield running
        finally:
            if proc.returncode is None:
                assert proc.stdin is not None
                proc.stdin.close()
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
            await reader


async def until(test: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.02)


async def _read_events(cell: Cell) -> None:
    assert cell.proc.stdout is not None
    async for raw in cell.proc.stdout:
        line = raw.decode().strip()
        if line.startswith("{"):
            cell.events.append(json.loads(line))


async def test_a_part_carried_through_a_partition_is_never_let_go_in_mid_air(
    tmp_path: Path,
) -> None:
    async with cell_with_daemon(tmp_path) as cell:
        await cell.say("computer add bread")
        while cell.sim.scene.holding != "bread":
            await asyncio.sleep(0.01)
        cell.partition()  # the arm carries the bread: 3 s of silence on both channels
        await cell.wait_for(lambda e: e["event"] == "error" and e.get("kind") == "link")
        await asyncio.sleep(2.0)
        held_in_the_air = cell.sim.scene
        assert held_in_the_air.holding == "bread"
        assert cell.sim.core.halted_reason == "heartbeat"
        cell.heal()

        # The daemon reconnects by itself, and the controller's report corrects its scene
        # before anything can move: the bread is still in the gripper, in mid-air.
        back = await cell.wait_for(lambda e: e["event"] == "reconciled" and e["why"] != "connected")
        assert back["holding"] == "bread"
        assert back["not_done"], back
        await cell.say("computer add cheese")
        await cell.wait_for(lambda e: e["event"] == "feedback" and "holding bread" in e["text"])
        assert cell.sim.scene.holding == "bread"
        assert cell.sim.scene.dropped == ()

        # "continue" re-plans the rest from there, asks first, and puts the bread down.
        await cell.say("computer continue")
        await cell.wait_for(lambda e: e["event"] == "feedback" and "Proceed?" in e["text"])
        await cell.say("yes")
        try:
            await until(lambda: cell.sim.scene.stacks["assembly_fixture"] == ("bread",))
        except AssertionError:
            shown = [(e["event"], e.get("text") or e.get("line")) for e in cell.events[-40:]]
            raise AssertionError(shown) from None
        world = cell.sim.scene
        assert world.holding is None
        assert world.dropped == ()
        assert world.stacks["assembly_fixture"] == ("bread",)
        assert any("The controller is back" in text for text in cell.said()), cell.said()
