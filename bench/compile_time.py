"""Compile-time benchmarks: `voiced.robot.compiler.compile_sequence` on the sandwich cell."""

from __future__ import annotations

import gc
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voiced.robot.cell import Cell
from voiced.robot.compiler import compile_sequence
from voiced.robot.sequence import SequenceStep

from bench.stats import Summary, summarise

TARGET_US = 1000.0
"""The 20-step sequence must compile in at most this (p50), so a spoken command feels instant."""


def step(instruction: str, **params: Any) -> SequenceStep:
    return SequenceStep(instruction, params)


_ITEMS = ("bread", "meat", "cheese", "lettuce", "tomato")

TWENTY_STEP: tuple[SequenceStep, ...] = (
    *(step("add_layer", item=item) for item in _ITEMS * 3),
    step("set_active_zone", zone="left"),
    step("add_layer", item="bread"),
    step("set_speed", speed="fast"),
    step("go_home"),
    step("wait", seconds=1),
)
"""16 layers over two zones plus speed, home and wait: 147 primitives, valid from the sandwich
cell's initial scene (its supplies hold 8 of each item). The same sequence as the compiler's
speed test in tests/robot/test_compiler.py."""

FOUR_STEP: tuple[SequenceStep, ...] = (
    step("set_active_zone", zone="right"),
    step("add_layer", item="bread"),
    step("add_layer", item="cheese"),
    step("go_home"),
)
"""A typical spoken command: 19 primitives."""

SINGLE_STEPS: Mapping[str, SequenceStep] = {
    "go_home": step("go_home"),
    "move_relative": step("move_relative", direction="up", distance="a bit"),
    "set_speed": step("set_speed", speed="slow"),
    "wait": step("wait", seconds=0.5),
    "set_active_zone": step("set_active_zone", zone="left"),
    "add_layer": step("add_layer", item="tomato"),
}
"""One-step sequences: the cost of each kind of primitive (MoveJ, MoveL, Speed, Wait), of a step
that emits none, and of a whole pick-and-place (9 primitives)."""


@dataclass(frozen=True)
class CompileFigures:
    """Timings of one sequence."""

    name: str
    steps: int
    primitives: int
    summary: Summary

    @property
    def per_primitive_us(self) -> float:
        """p50 divided by the primitives it produced (the whole p50 for an empty program)."""
        return self.summary.p50_us / max(self.primitives, 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "primitives": self.primitives,
            **self.summary.to_dict(),
            "per_primitive_us": round(self.per_primitive_us, 3),
        }


def measure(
    cell: Cell, name: str, sequence: Sequence[SequenceStep], repetitions: int
) -> CompileFigures:
    """Compile `sequence` from the cell's initial scene `repetitions` times (after a warm-up)."""
    scene = cell.initial_scene
    result = compile_sequence(cell, scene, sequence)
    if result.program is None:
        raise RuntimeError(f"{name} does not compile: {result.errors}")
    for _ in range(max(10, repetitions // 10)):
        compile_sequence(cell, scene, sequence)
    gc.collect()
    samples: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(repetitions):
        began = clock()
        compile_sequence(cell, scene, sequence)
        samples.append(clock() - began)
    primitives = len(result.program.primitives)
    return CompileFigures(name, len(sequence), primitives, summarise(samples))


@dataclass(frozen=True)
class CompileReport:
    """Every compile benchmark."""

    twenty_step: CompileFigures
    four_step: CompileFigures
    single_steps: Mapping[str, CompileFigures]

    @property
    def meets_target(self) -> bool:
        return self.twenty_step.summary.p50_us <= TARGET_US

    def to_dict(self) -> dict[str, Any]:
        return {
            "target_us": TARGET_US,
            "pass": self.meets_target,
            "twenty_step": self.twenty_step.to_dict(),
            "four_step": self.four_step.to_dict(),
            "single_steps": {name: f.to_dict() for name, f in self.single_steps.items()},
        }


def run_all(cell: Cell, repetitions: int) -> CompileReport:
    """The 20-step and 4-step sequences, then each single step (at a third of the reps)."""
    singles = max(100, repetitions // 3)
    return CompileReport(
        twenty_step=measure(cell, "20-step sandwich", TWENTY_STEP, repetitions),
        four_step=measure(cell, "4-step sandwich", FOUR_STEP, repetitions),
        single_steps={
            name: measure(cell, name, (single,), singles) for name, single in SINGLE_STEPS.items()
        },
    )
