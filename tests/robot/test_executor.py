"""The executor against the simulator (and a hand-written misbehaving controller), over real
loopback sockets."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import structlog
from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.link import ControllerLink, backoff_delays
from voiced.robot.primitives import (
    CallRoutine,
    Grip,
    MoveJ,
    MoveL,
    Pose,
    Primitive,
    Speed,
    ToolAttach,
    ToolDetach,
    Wait,
)
from voiced.robot.runreport import RunReport
from voiced.robot.scene import Scene
from voiced.robot.simulator import Faults, Simulator

from tests.ports import free_port
from voiced.errors import ControllerConnectionError, ProtocolError

TIMEOUT = 5.0


@pytest.fixture(scope="module")
def weld() -> Cell:
    return load_cell("weld")


def expected_scene(cell: Cell, program: Sequence[Primitive], indexes: Sequence[int]) -> Scene:
    scene = cell.initial_scene
    for index in indexes:
        scene = physics.apply(cell, scene, program[index])
    return scene


def partition(report: RunReport) -> list[int]:
    """Every index exactly once across the outcomes."""
    failed = (
        []
        if report.error is None or report.error.index == report.interrupted
        else [report.error.index]
    )
    interrupted = [] if report.interrupted is None else [report.interrupted]
    every = [*report.completed, *interrupted, *failed, *report.not_run, *report.unknown]
    return sorted(i for i in every if i is not None)


class Wire:
    """Every line the link sends and receives, with its time, for on_line."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, str, str, str]] = []
        self.seen: dict[str, asyncio.Event] = {}

    def __call__(self, direction: str, channel: str, line: str) -> None:
        self.lines.append((asyncio.get_running_loop().time(), direction, channel, line))
        for text, event in self.seen.items():
            if line == text:
                event.set()

    def event(self, line: str) -> asyncio.Event:
        return self.seen.setdefault(line, asyncio.Event())

    def at(self, direction: str, line: str) -> float:
        return next(t for t, d, _, text in self.lines if d == direction and text == line)

    def sent(self, channel: str) -> list[str]:
        return [text for _, d, c, text in self.lines if d == "tx" and c == channel]


@pytest.fixture
async def sim(weld: Cell) -> AsyncIterator[Simulator]:
    async with Simulator(weld, weld.initial_scene, time_scale=0.02) as simulator:
        yield simulator


def make_link(sim: Simulator, wire: Wire | None = None, **options: float) -> ControllerLink:
    settings: dict[str, float] = {"heartbeat_interval": 0.05, "heartbeat_timeout": 0.5}
    settings.update(options)
    return ControllerLink(
        "127.0.0.1", sim.motion_port, sim.control_port,
        connect_timeout=float(settings.pop("connect_timeout", 2.0)),
        heartbeat_interval=settings["heartbeat_interval"],
        heartbeat_timeout=settings["heartbeat_timeout"],
        window=int(settings.get("window", 4)),
        on_line=wire,
    )  # fmt: skip


WELD_PROGRAM: list[Primitive] = [
    MoveL(Pose(400.0, -350.0, 200.0), 400.0),
    MoveL(Pose(400.0, -350.0, 120.0), 100.0),
    ToolAttach("Welder"),
    MoveJ(Pose(550.0, 300.0, 150.0), 500.0),
    Speed(300.0),
    CallRoutine("tack_weld"),
    Grip(0.5),
    Wait(250),
    MoveL(Pose(400.0, -350.0, 120.0), 500.0),
    ToolDetach(),
]


# -- running -------------------------------------------------------------------------------------


async def test_a_program_runs_to_the_end(weld: Cell, sim: Simulator, tmp_path: Path) -> None:
    wire = Wire()
    trace = tmp_path / "traces" / "tcp_commands.json"
    async with make_link(sim, wire) as link:
        report = await link.run(WELD_PROGRAM, trace_path=trace)
    assert report.complete and report.error is None and not report.stopped and not report.lost
    assert report.completed == tuple(range(len(WELD_PROGRAM)))
    assert report.seqs == tuple(range(1, len(WELD_PROGRAM) + 1))
    assert sim.scene == expected_scene(weld, WELD_PROGRAM, range(len(WELD_PROGRAM)))
    assert set(sim.executions.values()) == {1} and len(sim.executions) == len(WELD_PROGRAM)
    motion_lines = wire.sent("motion")
    assert motion_lines[:4] == ["AUTH -"] + [f"HELLO {link.session}"] * 2 + [
        "1 MOVEL 400 -350 200 0 1 0 0 400"
    ]
    assert "3 ATTACH Welder" in motion_lines and "10 DETACH" in motion_lines
    entries = json.loads(trace.read_text())
    assert [e["seq"] for e in entries] == list(report.seqs)
    assert entries[5]["line"] == "6 CALL tack_weld" and entries[5]["result"] == "6 DONE"
    assert all(0 <= e["sent_t"] <= e["ack_t"] <= e["done_t"] for e in entries)
    assert [p.name for p in trace.parent.iterdir()] == ["tcp_commands.json"]  # no temp left


@pytest.mark.parametrize("window", [1, 3])
async def test_no_more_than_window_lines_are_in_flight(sim: Simulator, window: int) -> None:
    program = [Wait(500) for _ in range(8)]
    async with make_link(sim, window=window) as link:
        report = await link.run(program)
    assert report.complete
    assert sim.max_in_flight == window


async def test_sequence_numbers_continue_across_runs(sim: Simulator) -> None:
    async with make_link(sim) as link:
        first = await link.run([Wait(0), Wait(0)])
        second = await link.run([Wait(0)])
        assert link.last_done == 2  # from the HELLO at the start of the second run
    assert (first.seqs, second.seqs) == ((1, 2), (3,))
    assert sim.last_done == 3


async def test_a_primitive_without_wire_form_fails_before_anything_is_sent(
    sim: Simulator,
) -> None:
    async with make_link(sim) as link:
        received = sim.lines_received
        with pytest.raises(ProtocolError):
            await link.run([Wait(0), MoveL(Pose(math.nan, 0.0, 0.0), 100.0)])
        assert sim.lines_received == received
        assert (await link.run([Wait(0)])).seqs == (1,)


# -- failure, stop ----------------------------------------------------------------------------


async def test_a_physics_error_ends_the_run_and_reports_it(weld: Cell, sim: Simulator) -> None:
    program: list[Primitive] = [
        Wait(100), MoveL(Pose(2000.0, 0.0, 500.0), 100.0), Wait(100), Grip(0.2)
    ]  # fmt: skip
    async with make_link(sim) as link:
        report = await link.run(program)
        assert report.error is not None
        assert (report.error.code, report.error.index, report.failed) == ("WORKSPACE", 1, 1)
        assert "outside the workspace (0 to 850 mm)" in str(report.error)
        assert (report.completed, report.not_run, report.interrupted) == ((0,), (2, 3), None)
        assert partition(report) == [0, 1, 2, 3]
        assert sim.scene == expected_scene(weld, program, [0])
        after = await link.run([Wait(0)])  # the next run's HELLO lifts the controller's latch
    assert after.complete
    assert set(sim.executions) == {(link.session, 1), (link.session, 5)}


async def test_stop_interrupts_a_long_move_within_50_ms(weld: Cell) -> None:
    program: list[Primitive] = [
        MoveL(Pose(800.0, 0.0, 500.0), 100.0),
        Wait(0),
        MoveL(Pose(400.0, 0.0, 300.0), 100.0),
    ]
    wire = Wire()
    sim = Simulator(weld, weld.initial_scene, time_scale=1.0)
    async with sim, make_link(sim, wire) as link:
        running = asyncio.create_task(link.run(program), name="test-run")
        await asyncio.wait_for(wire.event("1 ACK").wait(), TIMEOUT)
        await asyncio.sleep(0.1)  # 100 ms into a 4 s move: the moment to stop
        report = await asyncio.wait_for(link.stop(), TIMEOUT)
        assert await running is report
        latency = wire.at("rx", "STOPPED 0") - wire.at("tx", "STOP")
        assert latency < 0.05, latency
        assert sim.halted.is_set() and sim.halted_reason == "stop"
        assert report.stopped and report.error is None and not report.lost
        assert (report.completed, report.interrupted, report.not_run) == ((), 0, (1, 2))
        pose = sim.scene.pose
        assert 401.0 < pose.x < 450.0 and (pose.y, pose.z) == (0.0, 500.0)
        state = await link.state()
        assert (state.status, state.halt_reason, state.last_done) == ("halted", "stop", 0)
        assert state.pose == pose.rounded()
        await link.resume()
        assert (await link.run([Wait(0)])).complete


async def test_stop_without_a_run_halts_the_controller(sim: Simulator) -> None:
    async with make_link(sim) as link:
        assert await link.stop() is None
        assert sim.halted.is_set()
        refused = await link.run([Wait(0)])
        assert refused.error is not None and refused.error.code == "HALTED"
        await link.resume()
        assert (await link.run([Wait(0)])).complete


# -- link loss, reconnect ----------------------------------------------------------------------


async def test_a_dropped_connection_is_reported_and_nothing_runs_twice(weld: Cell) -> None:
    # lines on the motion channel: the connect's HELLO, the run's HELLO, then seq 1, seq 2
    faults = Faults(drop_after_lines=4)
    program: list[Primitive] = [Wait(100), Wait(0), Wait(100), Wait(100), Speed(250.0)]
    sim = Simulator(weld, weld.initial_scene, time_scale=0.02, faults=faults)
    async with sim, make_link(sim, window=1) as link:
        report = await link.run(program)
        assert report.lost and "motion channel closed" in str(report.lost_reason)
        assert (report.completed, report.unknown, report.not_run) == ((0,), (1,), (2, 3, 4))
        await asyncio.wait_for(sim.halted.wait(), TIMEOUT)  # the link dropped: it halts
        assert set(sim.executions) == {(link.session, 1), (link.session, 2)}  # no more

        assert await link.reconnect() == 2  # seq 2 had completed before the drop
        assert link.last_report is not None
        assert link.last_report.completed == (0, 1)
        assert link.last_report.not_run == (2, 3, 4)
        assert set(sim.executions) == {(link.session, 1), (link.session, 2)}

        await link.resume()
        retried = await link.retry(program, report)  # seq 2 again: DONE, not run again
        assert retried.complete and retried.seqs == report.seqs
    assert max(sim.executions.values()) == 1 and len(sim.executions) == len(program)


async def test_heartbeat_loss_loses_the_link(weld: Cell) -> None:
    faults = Faults(ignore_pings=True)
    sim = Simulator(weld, weld.initial_scene, time_scale=0.02, faults=faults)
    async with sim, make_link(sim, heartbeat_timeout=0.3) as link:
        loop = asyncio.get_running_loop()
        started = loop.time()
        report = await asyncio.wait_for(link.run([Wait(100_000)]), TIMEOUT)
        assert report.lost and "no PONG in 0.3 s" in str(report.lost_reason)
        assert loop.time() - started < 0.3 + 0.1
        assert report.unknown == (0,)
        await asyncio.wait_for(sim.halted.wait(), TIMEOUT)
        assert sim.halted_reason == "disconnect"
        again = await link.run([Wait(0)])
        assert again.lost and again.not_run == (0,)


async def test_closing_the_link_ends_a_waiting_run(sim: Simulator) -> None:
    wire = Wire()
    link = make_link(sim, wire)
    await link.__aenter__()
    running = asyncio.create_task(link.run([Wait(100_000)]), name="test-run")
    await asyncio.wait_for(wire.event("1 ACK").wait(), TIMEOUT)
    await link.close()
    report = await asyncio.wait_for(running, TIMEOUT)
    assert report.lost and "closed" in str(report.lost_reason) and report.unknown == (0,)
    await asyncio.wait_for(sim.halted.wait(), TIMEOUT)  # the control link dropped


async def test_connect_failure_names_the_address(sim: Simulator) -> None:
    port = free_port()
    with pytest.raises(ControllerConnectionError, match=rf"127\.0\.0\.1:{port} \(motion channel\)"):
        async with ControllerLink("127.0.0.1", port, sim.control_port, connect_timeout=0.5):
            pass


async def test_reconnect_waits_for_a_restarted_controller(weld: Cell) -> None:
    async with Simulator(weld, weld.initial_scene, time_scale=0.02) as sim:
        ports = (sim.motion_port, sim.control_port)
        link = make_link(sim)
        await link.__aenter__()
    try:
        with pytest.raises(ControllerConnectionError):
            await link.reconnect(max_attempts=2)
        restarted = Simulator(weld, weld.initial_scene, "127.0.0.1", *ports, time_scale=0.02)
        reconnecting = asyncio.create_task(link.reconnect(), name="test-reconnect")
        await asyncio.sleep(0.3)  # the controller is still rebooting: a few attempts fail
        async with restarted:
            assert await asyncio.wait_for(reconnecting, TIMEOUT) == 0  # a new controller
            assert (await link.run([Wait(0)])).complete
    finally:
        await link.close()


@pytest.mark.parametrize(
    ("rand", "expected"),
    [
        (0.5, [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]),
        (0.0, [0.18, 0.36, 0.72, 1.44, 2.88, 4.5, 4.5, 4.5]),
        (1.0, [0.22, 0.44, 0.88, 1.76, 3.52, 5.0, 5.0, 5.0]),
    ],
)
def test_backoff_delays(rand: float, expected: list[float]) -> None:
    delays = backoff_delays(rand=lambda: rand)
    assert [next(delays) for _ in expected] == pytest.approx(expected)


def test_backoff_delays_with_other_settings() -> None:
    delays = backoff_delays(base=1.0, factor=3.0, cap=10.0, jitter=0.0)
    assert [next(delays) for _ in range(4)] == [1.0, 3.0, 9.0, 10.0]


# -- a controller that breaks the protocol -------------------------------------------------------


class BadController:
    """Answers HELLO, PING and STOP properly; answers seq 1 with `reply` and may send garbage
    on the control channel."""

    def __init__(self, reply: bytes, control_garbage: bytes = b"") -> None:
        self.reply = reply
        self.control_garbage = control_garbage
        self.servers: list[asyncio.Server] = []
        self.writers: list[asyncio.StreamWriter] = []
        self.handlers: set[asyncio.Task[object]] = set()

    async def __aenter__(self) -> BadController:
        for handler in (self._motion, self._control):
            self.servers.append(await asyncio.start_server(handler, "127.0.0.1", 0))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for writer in self.writers:
            writer.close()
        if self.handlers:  # they end once their connection is closed
            await asyncio.wait(self.handlers, timeout=TIMEOUT)
        for server in self.servers:
            server.close()
            await server.wait_closed()

    @property
    def ports(self) -> tuple[int, int]:
        motion, control = (s.sockets[0].getsockname()[1] for s in self.servers)
        return motion, control

    async def _own(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Track the connection and do the handshake (no key)."""
        self.writers.append(writer)
        task = asyncio.current_task()
        if task is not None:
            self.handlers.add(task)
        writer.write(b"VOICED 1 sim bad_controller -\n")
        assert (await reader.readline()) == b"AUTH -\n"
        writer.write(b"AUTHOK\n")

    async def _motion(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._own(reader, writer)
        while line := (await reader.readline()).decode().strip():
            head, _, rest = line.partition(" ")
            if head == "HELLO":
                writer.write(f"HELLO {rest} 0\n".encode())
            elif head == "1":
                writer.write(b"1 ACK\n" + self.reply)
            else:
                writer.write(f"{head} ACK\n{head} DONE\n".encode())

    async def _control(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._own(reader, writer)
        writer.write(self.control_garbage)
        while line := (await reader.readline()).decode().strip():
            if line.startswith("PING"):
                writer.write(f"PONG {line.split()[1]}\n".encode())
            elif line == "STOP":
                writer.write(b"STOPPED 0\n")


@pytest.mark.parametrize(
    ("reply", "shown"),
    [(b"1 DONX\n", "1 DONX"), (b"\xff\xfe\n", "\\xff\\xfe"), (b"7 DONE\n", "7 DONE")],
)
async def test_a_garbage_reply_fails_the_run_cleanly(reply: bytes, shown: str) -> None:
    garbage = b"NONSENSE 1 2 3\n\x00\x01\n"
    async with BadController(reply, control_garbage=garbage) as bad:
        link = ControllerLink(
            "127.0.0.1", *bad.ports, heartbeat_interval=0.05, heartbeat_timeout=0.3, window=1
        )
        async with link:
            with structlog.testing.capture_logs() as logs:
                report = await asyncio.wait_for(link.run([Wait(0), Wait(0)]), TIMEOUT)
            assert report.error is not None and report.error.code == "PROTOCOL"
            assert shown in report.error.reason
            assert not report.lost and report.not_run == (0, 1)  # settled by STOPPED 0
            assert any(e["log_level"] == "error" and shown in e.get("line", "") for e in logs)
            assert link.connected  # control-channel garbage was logged and ignored
            assert (await link.run([Speed(100.0)])).complete
