"""Loopback benchmarks: the real executor (`ControllerLink`) streaming to the real simulator
over TCP on 127.0.0.1, both in this process and on one event loop.

The probe is `WAIT 0`: the protocol allows it (WAIT ms is 0..3600000), physics leaves the scene
as it is, and the simulator answers it without sleeping, so what is measured is the link itself:
formatting, the writer tasks, the sockets, parsing, the simulator's ledger and queue, and the
executor's window. The simulator runs at a tiny time scale, so the one real program streamed
(the 20-step sandwich) moves almost instantly too.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.lines import OnLine
from voiced.robot.link import ControllerLink
from voiced.robot.primitives import Primitive, Wait
from voiced.robot.simulator import Simulator

from bench.stats import Summary, summarise

TIME_SCALE = 0.0001
"""Real seconds per simulated second: a 2 s move takes 0.2 ms."""
HOST = "127.0.0.1"


class WireClock:
    """An `on_line` callback noting when each numbered motion line left and its replies came
    back (time.perf_counter_ns at the executor's channel: sent when queued for writing, received
    when parsed)."""

    def __init__(self) -> None:
        self.sent: dict[int, int] = {}
        self.acked: dict[int, int] = {}
        self.done: dict[int, int] = {}

    def __call__(self, direction: str, channel: str, line: str) -> None:
        if channel != "motion":
            return
        now = time.perf_counter_ns()
        head, _, rest = line.partition(" ")
        if not head.isdigit():
            return  # HELLO and its reply
        if direction == "tx":
            self.sent[int(head)] = now
        elif rest == "ACK":
            self.acked[int(head)] = now
        elif rest == "DONE":
            self.done[int(head)] = now

    def clear(self) -> None:
        self.sent.clear()
        self.acked.clear()
        self.done.clear()

    def since_sent(self, replies: dict[int, int]) -> list[int]:
        """Reply time minus send time, per seq that has both."""
        return [replies[seq] - sent for seq, sent in self.sent.items() if seq in replies]


@dataclass(frozen=True)
class RoundTrip:
    """Send-to-reply times with window 1 (one line in flight at a time)."""

    done: Summary
    """Send to DONE: the figure that bounds how fast lines can follow each other."""
    ack: Summary
    """Send to ACK."""
    per_line_us: float
    """Wall time of the whole run divided by its lines (the executor's own overhead included)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": 1,
            **self.done.to_dict(),
            "ack_p50_us": round(self.ack.p50_us, 3),
            "per_line_us": round(self.per_line_us, 3),
        }


@dataclass(frozen=True)
class Rate:
    """Lines per second sustained over a run of `primitives` lines."""

    label: str
    window: int
    primitives: int
    rates: tuple[float, ...]
    """One per repetition, lines per second."""
    max_in_flight: int
    """The most lines the simulator ever had ACKed and unanswered (proves the window was used)."""

    @property
    def best(self) -> float:
        return max(self.rates)

    @property
    def median(self) -> float:
        return statistics.median(self.rates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "primitives": self.primitives,
            "repeats": len(self.rates),
            "best_per_s": round(self.best, 1),
            "median_per_s": round(self.median, 1),
            "max_in_flight": self.max_in_flight,
        }


@asynccontextmanager
async def linked(
    cell: Cell, window: int, on_line: OnLine | None = None
) -> AsyncIterator[tuple[Simulator, ControllerLink]]:
    """A fresh simulator (initial scene) and a link to it with `window`."""
    async with (
        Simulator(cell, cell.initial_scene, HOST, time_scale=TIME_SCALE) as sim,
        ControllerLink(
            HOST, sim.motion_port, sim.control_port, window=window, on_line=on_line
        ) as link,
    ):
        yield sim, link


async def stream(link: ControllerLink, program: Sequence[Primitive]) -> int:
    """Run `program`; the nanoseconds it took. Raises if any line did not complete."""
    began = time.perf_counter_ns()
    report = await link.run(program)
    elapsed = time.perf_counter_ns() - began
    if not report.complete:
        raise RuntimeError(f"benchmark run did not complete: {report.to_dict()}")
    return elapsed


def waits(count: int) -> list[Primitive]:
    return [Wait(0)] * count


async def round_trip(cell: Cell, samples: int) -> RoundTrip:
    """`samples` WAIT 0 lines with window 1, timed at the wire."""
    clock = WireClock()
    async with linked(cell, 1, clock) as (_, link):
        await stream(link, waits(min(samples, 200)))  # warm-up: sockets, caches, allocator
        clock.clear()
        elapsed = await stream(link, waits(samples))
    return RoundTrip(
        done=summarise(clock.since_sent(clock.done)),
        ack=summarise(clock.since_sent(clock.acked)),
        per_line_us=elapsed / samples / 1e3,
    )


async def rate(cell: Cell, window: int, count: int, repeats: int) -> Rate:
    """Stream `count` WAIT 0 lines `repeats` times with `window` lines in flight."""
    async with linked(cell, window) as (sim, link):
        await stream(link, waits(min(count, 200)))
        rates = []
        for _ in range(repeats):
            elapsed = await stream(link, waits(count))
            rates.append(count / (elapsed / 1e9))
        return Rate(f"WAIT 0 x {count}", window, count, tuple(rates), sim.max_in_flight)


async def program_rate(cell: Cell, program: Sequence[Primitive], window: int, repeats: int) -> Rate:
    """Stream a real compiled program (moves, grips) `repeats` times, each into a fresh
    simulator, since the program only makes sense from the initial scene."""
    rates = []
    in_flight = 0
    for _ in range(repeats):
        async with linked(cell, window) as (sim, link):
            elapsed = await stream(link, program)
            in_flight = max(in_flight, sim.max_in_flight)
        rates.append(len(program) / (elapsed / 1e9))
    label = f"sandwich program x {len(program)}"
    return Rate(label, window, len(program), tuple(rates), in_flight)
