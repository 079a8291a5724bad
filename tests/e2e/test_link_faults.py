"""Issue 14 through the real daemon: after a link fault the controller's report is the truth.

The daemon (`voiced run --text -`) drives a simulator over real loopback TCP through a proxy
that can cut the network silently (`tests.faultproxy`), as a pulled cable does.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from voiced.robot.cellfile import load_cell
from voiced.robot.simulator import Simulator

from tests.e2e.helpers import voiced, voiced_env
from tests.faultproxy import FaultProxy

pytestmark = pytest.mark.slow

KEY = b"5" * 64

CONFIG = """
[controller]
key_file = "{key}"
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
    reader: asyncio.Task[None] | None = None

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
        Simulator(cell, cell.initial_scene, time_scale=1.0, heartbeat_timeout=1.0, key=KEY) as sim,
        FaultProxy(sim.motion_port) as motion,
        FaultProxy(sim.control_port) as control,
    ):
        key = tmp / "controller.key"
        key.write_bytes(KEY)
        config = tmp / "config.toml"
        config.write_text(CONFIG.format(key=key, motion=motion.port, control=control.port), "utf-8")
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

        # The next command runs, nothing ran twice, and the daemon's picture is the world.
        await cell.say("computer add cheese")
        await until(lambda: cell.sim.scene.stacks["assembly_fixture"] == ("bread", "cheese"))
        assert max(cell.sim.executions.values()) == 1
        state = await end(cell)
        assert state["zones"] == {z: list(cell.sim.scene.stacks[z]) for z in state["zones"]}


async def test_a_second_client_on_either_port_is_refused_and_nothing_moves_for_it(
    tmp_path: Path,
) -> None:
    async with cell_with_daemon(tmp_path) as cell:
        await cell.say("computer add bread")
        while cell.sim.status != "moving":
            await asyncio.sleep(0.01)
        for port in (cell.sim.motion_port, cell.sim.control_port):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            greeting = (await reader.readline()).decode()
            assert greeting.startswith(f"VOICED 1 sim {cell.sim.name} ")
            # without the key, then as if it had one: refused either way, and closed
            writer.write(b"AUTH -\n1 MOVEL 700 300 600 0 1 0 0 250\nRESUME\n")
            assert (await reader.readline()).startswith(b"ERR AUTH")
            assert await reader.read() == b""
            writer.close()
        await until(lambda: cell.sim.scene.stacks["assembly_fixture"] == ("bread",))
        assert cell.sim.refused == ["a key is required", "a key is required"]
        assert cell.sim.halted_reason is None  # the daemon's link was never disturbed
        assert all(session != "00000bad" for session, _ in cell.sim.executions)
        assert not any(e["event"] == "error" for e in cell.events)


# -- the simulator as a process of its own: stalled (SIGSTOP) or killed and restarted ----------


@dataclass
class SimProcess:
    proc: asyncio.subprocess.Process
    world: Path

    async def stop(self) -> dict[str, Any]:
        """SIGTERM, then the world it wrote."""
        self.proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(self.proc.wait(), 20)
        return dict(json.loads(self.world.read_text(encoding="utf-8")))


async def start_sim(tmp: Path, port: int, name: str) -> SimProcess:
    world = tmp / f"world-{name}.json"
    proc = await asyncio.create_subprocess_exec(
        *voiced("sim", "--cell", "sandwich", "--port", str(port), "--name", name,
                "--world-out", str(world)),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env=voiced_env(tmp),
    )  # fmt: skip
    assert proc.stdout is not None
    assert b"motion port" in await asyncio.wait_for(proc.stdout.readline(), 30)
    return SimProcess(proc, world)


async def start_daemon(tmp: Path, port: int) -> Cell:
    config = tmp / "config.toml"
    config.write_text(
        f'[controller]\naddress = "127.0.0.1:{port}"\nheartbeat_interval = 0.2\n'
        "heartbeat_timeout = 1.0\nconnect_timeout = 1.0\n",
        "utf-8",
    )
    proc = await asyncio.create_subprocess_exec(
        *voiced("run", "--config", str(config), "--cell", "sandwich", "--text", "-",
                "--events", "-"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=voiced_env(tmp),
    )  # fmt: skip
    cell = Cell(None, None, None, proc)  # type: ignore[arg-type]
    cell.reader = asyncio.create_task(_read_events(cell))
    await cell.wait_for(lambda e: e["event"] == "reconciled")
    return cell


async def end(cell: Cell) -> dict[str, Any]:
    """Close the daemon's input; its final state once it has finished."""
    assert cell.proc.stdin is not None
    cell.proc.stdin.close()
    await asyncio.wait_for(cell.proc.wait(), 60)
    if cell.reader is not None:
        await cell.reader
    assert cell.proc.returncode == 0
    (final,) = [e for e in cell.events if e["event"] == "final_state"]
    return dict(final["state"])


def _free_port_pair() -> int:
    for _ in range(50):
        with socket.socket() as one, socket.socket() as two:
            one.bind(("127.0.0.1", 0))
            port = int(one.getsockname()[1])
            try:
                two.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    raise AssertionError("no two free ports in a row")


def _done(seq: int) -> Any:
    return lambda e: e["event"] == "controller" and e.get("line") == f"{seq} DONE"


async def test_a_stalled_controller_is_reconciled_and_the_part_put_down(tmp_path: Path) -> None:
    port = _free_port_pair()
    sim = await start_sim(tmp_path, port, "stalled")
    cell = await start_daemon(tmp_path, port)
    await cell.say("computer add bread")
    await cell.wait_for(_done(4))  # the gripper closed on the bread
    sim.proc.send_signal(signal.SIGSTOP)  # the controller stalls, bread in the gripper
    await cell.wait_for(lambda e: e["event"] == "error" and e.get("kind") == "link")
    await asyncio.sleep(3.0)
    sim.proc.send_signal(signal.SIGCONT)
    back = await cell.wait_for(lambda e: e["event"] == "reconciled" and e["why"] != "connected")
    assert back["holding"] == "bread" and back["halt_reason"] in ("heartbeat", "disconnect")
    await cell.say("computer continue")
    await cell.wait_for(lambda e: e["event"] == "feedback" and "Proceed?" in e["text"])
    await cell.say("yes")
    state = await end(cell)
    world = await sim.stop()
    assert world["zones"] == state["zones"]
    assert world["zones"]["assembly_fixture"] == ["bread"]
    assert world["holding"] is None and world["dropped"] == []


async def test_a_killed_controller_replaced_by_another_is_not_taken_for_it(
    tmp_path: Path,
) -> None:
    port = _free_port_pair()
    first = await start_sim(tmp_path, port, "first")
    cell = await start_daemon(tmp_path, port)
    await cell.say("computer add bread")
    await cell.wait_for(_done(4))
    first.proc.kill()
    await first.proc.wait()
    await cell.wait_for(lambda e: e["event"] == "error" and e.get("kind") == "link")
    second = await start_sim(tmp_path, port, "second")
    back = await cell.wait_for(lambda e: e["event"] == "reconciled" and e["why"] != "connected")
    assert any("another controller answered (second)" in c for c in back["changes"]), back
    await cell.say("computer add cheese")
    state = await end(cell)
    world = await second.stop()
    assert world["zones"] == state["zones"]
    assert world["zones"]["assembly_fixture"] == ["cheese"]
    assert world["dropped"] == []


async def test_a_stop_while_a_command_waits_for_the_link_means_it_never_moves(
    tmp_path: Path,
) -> None:
    async with cell_with_daemon(tmp_path) as cell:
        cell.partition()
        await cell.wait_for(lambda e: e["event"] == "error" and e.get("kind") == "link")
        await cell.say("computer go home")
        await cell.wait_for(lambda e: e["event"] == "feedback" and "Waiting" in e["text"])
        await cell.say("stop")
        stopped = await cell.wait_for(lambda e: e["event"] == "stopped")
        assert stopped["dropped"] == ["go home"]
        cell.heal()
        await cell.wait_for(lambda e: e["event"] == "reconciled" and e["why"] != "connected")
        await asyncio.sleep(1.0)
        assert not any(e["event"] == "primitive" for e in cell.events)
        assert cell.sim.executions == {}
