"""The simulator, driven with raw protocol lines over real loopback sockets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from voiced.robot.auth import mac
from voiced.robot.cell import Cell
from voiced.robot.cellfile import load_cell
from voiced.robot.physics import PhysicsError
from voiced.robot.primitives import Grip, Pose, Primitive
from voiced.robot.scene import Scene
from voiced.robot.simledger import Ledger
from voiced.robot.simmotion import Profile
from voiced.robot.simulator import Faults, Simulator, serve_forever

REPLY_TIMEOUT = 2.0
SESSION = "5e55101a"


@pytest.fixture(scope="module")
def weld() -> Cell:
    return load_cell("weld")


class Raw:
    """A client that speaks raw lines (no help from voiced.robot.protocol)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int, answer: str | None = "AUTH -") -> Raw:
        """Connect and (unless `answer` is None) read the greeting and answer it."""
        client = cls(*await asyncio.open_connection("127.0.0.1", port))
        if answer is not None:
            client.greeting = await client.recv()
            assert client.greeting.startswith("VOICED 1 sim "), client.greeting
            assert await client.ask(answer) == "AUTHOK"
        return client

    greeting = ""

    def send(self, *lines: str | bytes) -> None:
        for line in lines:
            self.writer.write(line if isinstance(line, bytes) else line.encode() + b"\n")

    async def recv(self, timeout: float = REPLY_TIMEOUT) -> str:
        line = await asyncio.wait_for(self.reader.readline(), timeout)
        assert line.endswith(b"\n"), f"connection closed: {line!r}"
        assert len(line) <= 80
        return line.decode("ascii").rstrip("\n")

    async def expect(self, *lines: str) -> None:
        for line in lines:
            assert await self.recv() == line

    async def ask(self, line: str) -> str:
        self.send(line)
        return await self.recv()

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


@pytest.fixture
async def sim(weld: Cell) -> AsyncIterator[Simulator]:
    async with Simulator(weld, weld.initial_scene, time_scale=0.02, heartbeat_timeout=0.3) as s:
        yield s


@pytest.fixture
async def motion(sim: Simulator) -> AsyncIterator[Raw]:
    client = await Raw.connect(sim.motion_port)
    assert await client.ask(f"HELLO {SESSION}") == f"HELLO {SESSION} 0"
    yield client
    await client.close()


@pytest.fixture
async def control(sim: Simulator) -> AsyncIterator[Raw]:
    client = await Raw.connect(sim.control_port)
    yield client
    await client.close()


# -- motion channel ------------------------------------------------------------------------------


async def test_a_program_runs_and_changes_the_scene(sim: Simulator, motion: Raw) -> None:
    motion.send("1 MOVEL 500 100 300 0 1 0 0 250", "2 GRIP 0.5", "3 MOVEJ 400 0 500 0 1 0 0 400")
    await motion.expect("1 ACK", "2 ACK", "3 ACK", "1 DONE", "2 DONE", "3 DONE")
    assert sim.scene.pose == Pose(400.0, 0.0, 500.0)
    assert sim.scene.gripper == 0.5
    assert sim.executions == {(SESSION, 1): 1, (SESSION, 2): 1, (SESSION, 3): 1}
    assert sim.max_in_flight == 3
    await asyncio.wait_for(sim.idle.wait(), REPLY_TIMEOUT)


async def test_garbage_gets_parse_error_and_the_connection_survives(
    sim: Simulator, motion: Raw
) -> None:
    motion.send(b"\xff\xfe garbage\n")
    assert (await motion.recv()).startswith("0 ERR PARSE byte 0xff is not printable ASCII")
    motion.send(b"x" * 300 + b"\n")
    assert await motion.recv() == "0 ERR PARSE longer than 80 bytes with its newline"
    assert (await motion.ask("7 MOVEL 1 2")) == "7 ERR PARSE MOVEL takes 8 fields, not 2"
    assert (await motion.ask("8 GRIP -1")).startswith("8 ERR RANGE gripper width -1 outside")
    assert (await motion.ask("9 DONE")) == "9 ERR PARSE Done is not a request"
    # an unreadable line may have been part of the program: nothing more runs until HELLO
    assert (await motion.ask("10 WAIT 0")) == "10 ERR STOPPED line 0 failed: send HELLO first"
    assert await motion.ask(f"HELLO {SESSION}") == f"HELLO {SESSION} 0"
    motion.send("11 WAIT 0")
    await motion.expect("11 ACK", "11 DONE")
    assert sim.executions == {(SESSION, 11): 1}


async def test_commands_before_the_handshake_are_refused(sim: Simulator) -> None:
    client = await Raw.connect(sim.motion_port, answer=None)
    assert (await client.recv()).startswith("VOICED 1 sim sim_weld_")
    assert await client.ask("1 WAIT 0") == "ERR AUTH expected AUTH first"
    assert sim.executions == {}
    await client.close()


async def test_commands_before_hello_are_refused(sim: Simulator) -> None:
    client = await Raw.connect(sim.motion_port)
    assert await client.ask("1 WAIT 0") == "1 ERR SEQ no session: send HELLO first"
    await client.close()


async def test_a_completed_line_is_acknowledged_again_but_never_rerun(
    sim: Simulator, motion: Raw
) -> None:
    motion.send("1 WAIT 10", "2 SPEED 200")
    await motion.expect("1 ACK", "2 ACK", "1 DONE", "2 DONE")
    motion.send("1 WAIT 10")
    await motion.expect("1 ACK", "1 DONE")
    await motion.close()  # the link drops: the controller halts
    await asyncio.wait_for(sim.halted.wait(), REPLY_TIMEOUT)
    control = await _connect_when_free(sim.control_port)
    assert await control.ask("RESUME") == "RESUMED"
    again = await _connect_when_free(sim.motion_port)
    assert await again.ask(f"HELLO {SESSION}") == f"HELLO {SESSION} 2"
    again.send("2 SPEED 200", "1 WAIT 10", "3 WAIT 10")
    await again.expect("2 ACK", "2 DONE", "1 ACK", "1 DONE", "3 ACK", "3 DONE")
    assert sim.executions == {(SESSION, 1): 1, (SESSION, 2): 1, (SESSION, 3): 1}
    # a new session forgets: seq 1 is a new line there
    assert await again.ask("HELLO 0000000b") == "HELLO 0000000b 0"
    again.send("1 WAIT 10")
    await again.expect("1 ACK", "1 DONE")
    assert sim.executions[("0000000b", 1)] == 1
    await again.close()
    await control.close()


async def _connect_when_free(port: int) -> Raw:
    """Connect once the controller has let go of the last client of this channel."""
    for _ in range(50):
        client = Raw(*await asyncio.open_connection("127.0.0.1", port))
        await client.recv()
        client.send("AUTH -")
        if (reply := await client.recv()) == "AUTHOK":
            return client
        assert reply.startswith("ERR AUTH busy"), reply
        await client.close()
        await asyncio.sleep(0.02)
    raise AssertionError("the channel was never free")


async def test_a_second_client_is_refused_and_the_first_keeps_the_arm(weld: Cell) -> None:
    async with Simulator(weld, weld.initial_scene, time_scale=1.0) as sim:
        first = await Raw.connect(sim.motion_port)
        await first.ask(f"HELLO {SESSION}")
        await first.ask("1 WAIT 300")
        second = await Raw.connect(sim.motion_port, answer=None)
        assert (await second.recv()).startswith("VOICED 1 sim ")
        assert await second.ask("AUTH -") == "ERR AUTH busy: another client holds this channel"
        assert await second.reader.read() == b""  # and it is closed
        await first.expect("1 DONE")  # the first client's line ran on, to it
        assert sim.executions == {(SESSION, 1): 1}
        assert sim.refused == ["busy: another client holds this channel"]
        assert sim.halted_reason is None
        await first.close()


async def test_losing_the_motion_client_interrupts_and_halts(weld: Cell) -> None:
    async with Simulator(weld, weld.initial_scene, time_scale=1.0) as sim:
        first = await Raw.connect(sim.motion_port)
        await first.ask(f"HELLO {SESSION}")
        await first.ask("1 WAIT 3000")
        await first.close()
        await asyncio.wait_for(sim.halted.wait(), REPLY_TIMEOUT)
        assert sim.halted_reason == "disconnect"
        second = await _connect_when_free(sim.motion_port)
        assert await second.ask(f"HELLO {SESSION}") == f"HELLO {SESSION} 0"
        assert await second.ask("1 WAIT 3000") == "1 ERR HALTED halted by disconnect: send RESUME"
        assert sim.executions == {(SESSION, 1): 1}
        await second.close()


async def test_a_client_without_the_key_is_refused(weld: Cell) -> None:
    key = b"0123456789abcdef0123456789abcdef"
    async with Simulator(weld, weld.initial_scene, key=key) as sim:
        client = await Raw.connect(sim.motion_port, answer=None)
        greeting = await client.recv()
        _, _, kind, name, nonce = greeting.split(" ")
        assert (kind, name == sim.name, len(nonce)) == ("sim", True, 16)
        assert await client.ask("AUTH -") == "ERR AUTH a key is required"
        wrong = await Raw.connect(sim.control_port, answer=None)
        await wrong.recv()
        assert await wrong.ask("AUTH " + "0" * 32) == "ERR AUTH wrong key"
        # the answer for one channel is no good on the other, nor for another nonce
        right = await Raw.connect(sim.motion_port, answer=None)
        _, _, _, _, fresh = (await right.recv()).split(" ")
        assert await right.ask("AUTH " + mac(key, "control", sim.name, fresh)) == (
            "ERR AUTH wrong key"
        )
        good = await Raw.connect(sim.motion_port, answer=None)
        _, _, _, _, nonce = (await good.recv()).split(" ")
        assert await good.ask("AUTH " + mac(key, "motion", sim.name, nonce)) == "AUTHOK"
        assert sim.refused == ["a key is required", "wrong key", "wrong key"]
        for each in (client, wrong, right, good):
            await each.close()


async def test_a_seq_not_above_the_last_queued_is_refused(sim: Simulator, motion: Raw) -> None:
    motion.send("5 WAIT 0")
    await motion.expect("5 ACK", "5 DONE")
    assert await motion.ask("3 WAIT 0") == "3 ERR SEQ not above 5"


async def test_a_failed_line_clears_the_queue_and_latches_until_hello(
    sim: Simulator, motion: Raw
) -> None:
    motion.send("1 WAIT 2000", "2 MOVEL 2000 0 500 0 1 0 0 100", "3 WAIT 0")
    await motion.expect("1 ACK", "2 ACK", "3 ACK", "1 DONE")
    assert await motion.recv() == (
        "2 ERR WORKSPACE target x = 2000.0 mm is outside the workspace (0 to 850 mm)"
    )
    await motion.expect("3 ERR STOPPED cleared: line 2 failed")
    assert await motion.ask("4 WAIT 0") == "4 ERR STOPPED line 2 failed: send HELLO first"
    assert await motion.ask(f"HELLO {SESSION}") == f"HELLO {SESSION} 1"
    motion.send("5 WAIT 0")
    await motion.expect("5 ACK", "5 DONE")
    assert (SESSION, 2) not in sim.executions


async def test_a_new_session_drops_the_old_sessions_queue(sim: Simulator, motion: Raw) -> None:
    motion.send("1 WAIT 500", "2 WAIT 0")
    await motion.expect("1 ACK", "2 ACK")
    assert await motion.ask("HELLO 00000002") == "HELLO 00000002 0"
    motion.send("1 WAIT 0")
    await motion.expect("1 ACK", "1 DONE")  # nothing of the old session is answered
    assert (SESSION, 2) not in sim.executions


# -- control channel -----------------------------------------------------------------------------


async def test_stop_mid_move_halts_at_once_part_way(weld: Cell) -> None:
    async with Simulator(weld, weld.initial_scene, time_scale=1.0) as sim:
        motion = await Raw.connect(sim.motion_port)
        control = await Raw.connect(sim.control_port)
        await motion.ask(f"HELLO {SESSION}")
        motion.send("1 MOVEL 800 0 500 0 1 0 0 100", "2 WAIT 0")
        await motion.expect("1 ACK", "2 ACK")
        await asyncio.sleep(0.1)  # the arm is under way: this is the moment we stop it
        loop = asyncio.get_running_loop()
        sent = loop.time()
        assert await control.ask("STOP") == "STOPPED 0"
        assert loop.time() - sent < 0.05
        assert sim.status == "halted" and sim.halted_reason == "stop"
        await motion.expect("1 ERR STOPPED interrupted by stop", "2 ERR STOPPED cleared by stop")
        x = sim.scene.pose.x
        assert 401.0 < x < 450.0, x  # part-way: about 7 mm after 0.1 s
        control.send("STATE")
        assert await control.recv() == f"POSE {round(x, 1):g} 0 500 0 1 0 0"
        await control.expect("HALT stop", "STATUS halted 0 1 -")
        assert (await motion.ask("3 WAIT 0")).startswith("3 ERR HALTED halted by stop")
        assert await control.ask("RESUME") == "RESUMED"
        await motion.ask(f"HELLO {SESSION}")
        motion.send("4 WAIT 0")
        await motion.expect("4 ACK", "4 DONE")
        await motion.close()
        await control.close()


async def test_ping_pong_state_and_control_garbage(sim: Simulator, control: Raw) -> None:
    assert await control.ask("PING 41") == "PONG 41"
    control.send("STATE")
    await control.expect("POSE 400 0 500 0 1 0 0", "STATUS idle 0 1 -")
    assert await control.ask("STAHP") == "ERR PARSE unknown keyword 'STAHP' on the control channel"
    assert await control.ask("PONG 1") == "ERR PARSE Pong is not a request"
    assert await control.ask("PING 42") == "PONG 42"


async def test_watch_pushes_state_while_moving(sim: Simulator, motion: Raw, control: Raw) -> None:
    control.send("WATCH 20")
    motion.send("1 WAIT 10000")  # 200 ms at time_scale 0.02
    await motion.expect("1 ACK")
    pushed: list[str] = []
    while (line := await control.recv()) != "STATUS idle 1 1 -":
        pushed.append(line)
        assert len(pushed) < 100
    assert pushed[0] == "STATUS moving 0 1 -"
    assert sum(line.startswith("POSE 400 0 500 ") for line in pushed) >= 3
    await motion.expect("1 DONE")


async def test_heartbeat_loss_halts_within_the_timeout(sim: Simulator, control: Raw) -> None:
    assert await control.ask("PING 1") == "PONG 1"
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.wait_for(sim.halted.wait(), 1.0)
    assert sim.halted_reason == "heartbeat"
    assert 0.25 < loop.time() - started < 0.45  # heartbeat_timeout = 0.3


async def test_no_ping_ever_means_no_watchdog(sim: Simulator, control: Raw) -> None:
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(sim.halted.wait(), 0.5)


async def test_losing_the_control_connection_halts(sim: Simulator, control: Raw) -> None:
    await control.close()
    await asyncio.wait_for(sim.halted.wait(), REPLY_TIMEOUT)
    assert sim.halted_reason == "disconnect"


# -- faults and injected physics -----------------------------------------------------------------


async def test_faults_err_on_seq_delay_and_ignored_pings(weld: Cell) -> None:
    faults = Faults(delay_s=0.05, err_on_seq={2: ("GRIPPER", "jammed")}, ignore_pings=True)
    async with Simulator(weld, weld.initial_scene, time_scale=0.02, faults=faults) as sim:
        motion, control = await Raw.connect(sim.motion_port), await Raw.connect(sim.control_port)
        loop = asyncio.get_running_loop()
        sent = loop.time()
        await motion.ask(f"HELLO {SESSION}")
        assert loop.time() - sent >= 0.05
        motion.send("1 WAIT 0", "2 GRIP 0.5")
        await motion.expect("1 ACK", "2 ACK", "1 DONE", "2 ERR GRIPPER jammed")
        control.send("PING 1")
        with pytest.raises(TimeoutError):
            await control.recv(timeout=0.3)
        assert (SESSION, 2) not in sim.executions
        await motion.close()
        await control.close()


@dataclass
class FakePhysics:
    """Refuses every grip with `code`; everything else only moves the pose."""

    code: str
    calls: int = 0

    def __call__(self, cell: Cell, scene: Scene, primitive: Primitive) -> Scene:
        self.calls += 1
        if isinstance(primitive, Grip):
            raise PhysicsError(self.code, "the cheese is holding up the bread")
        target = getattr(primitive, "target", scene.pose)
        return scene.with_changes(pose=target)


@pytest.mark.parametrize(("code", "wire"), [("support", "SUPPORT"), ("made_up", "RANGE")])
async def test_physics_is_injectable_and_its_codes_go_on_the_wire(
    weld: Cell, code: str, wire: str
) -> None:
    fake = FakePhysics(code)
    async with Simulator(weld, weld.initial_scene, time_scale=0.02, physics=fake) as sim:
        motion = await Raw.connect(sim.motion_port)
        await motion.ask(f"HELLO {SESSION}")
        motion.send("1 MOVEL 9000 0 0 0 1 0 0 5000", "2 GRIP 1")
        await motion.expect("1 ACK", "2 ACK", "1 DONE")
        assert await motion.recv() == f"2 ERR {wire} the cheese is holding up the bread"
        assert sim.scene.pose.x == 9000.0 and fake.calls == 2
        await motion.close()


async def test_serve_forever_serves_until_cancelled(weld: Cell) -> None:
    ready: asyncio.Queue[Simulator] = asyncio.Queue()
    task = asyncio.create_task(
        serve_forever(weld, weld.initial_scene, "127.0.0.1", 0, 0.02, on_ready=ready.put_nowait),
        name="test-serve-forever",
    )
    sim = await asyncio.wait_for(ready.get(), REPLY_TIMEOUT)
    control = await Raw.connect(sim.control_port)
    assert await control.ask("PING 1") == "PONG 1"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sim.closed.is_set()
    await control.close()


# -- pure parts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("distance", "speed", "accel", "duration"),
    [
        (0.0, 100.0, 1500.0, 0.0),
        (400.0, 100.0, 1500.0, 400 / 100 + 100 / 1500),  # trapezoid: d/v + v/a
        (6.0, 100.0, 1500.0, 2 * (6.0 / 1500) ** 0.5),  # triangle: never reaches 100 mm/s
        (100.0, 500.0, 1000.0, 2 * (100.0 / 1000) ** 0.5),
    ],
)
def test_trapezoid_durations(distance: float, speed: float, accel: float, duration: float) -> None:
    profile = Profile(distance, speed, accel)
    assert profile.duration == pytest.approx(duration)
    samples = [profile.covered(profile.duration * k / 50) for k in range(51)]
    assert samples == sorted(samples)
    assert samples[0] == 0.0 and samples[-1] == pytest.approx(distance)


LEDGER_STEPS: list[tuple[str, int, str]] = [
    # (action, seq, expected admission before the action)
    ("queue", 1, "new"),
    ("done", 1, "rejoin"),
    ("queue", 2, "new"),
    ("none", 1, "replay"),
    ("fail", 2, "rejoin"),
    ("none", 3, "latched"),
    ("hello", 0, "latched"),
    ("none", 2, "seq"),
    ("queue", 3, "new"),
]


def test_ledger_rules() -> None:
    ledger = Ledger()
    assert ledger.admit(1) == "no_session"
    assert ledger.hello(SESSION) is True
    for action, seq, expected in LEDGER_STEPS:
        assert ledger.admit(seq or 3) == expected, (action, seq)
        match action:
            case "queue":
                ledger.queue(seq)
            case "done":
                ledger.done(seq)
            case "fail":
                ledger.fail(seq)
            case "hello":
                assert ledger.hello(SESSION) is False
    assert (ledger.last_done, ledger.last_queued) == (1, 3)
