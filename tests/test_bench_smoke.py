"""The benchmark harness runs and writes its JSON. A smoke check only: the figures themselves
depend on the machine and are never asserted (bench/README.md has the targets)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]

SUMMARY_KEYS = ("p50_us", "p95_us", "p99_us", "min_us", "mean_us")


def positive(data: dict[str, Any], *keys: str) -> None:
    for key in keys:
        value = data[key]
        assert isinstance(value, int | float) and not isinstance(value, bool), (key, value)
        assert value > 0, (key, value)


@pytest.mark.slow
def test_quick_benchmark_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.robot_link", "--quick", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "20-step sandwich" in proc.stdout

    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["mode"] == "quick"
    machine = figures["machine"]
    assert machine["cpu_model"] and machine["python"]
    positive(machine, "cores")

    compiled = figures["compile"]
    positive(compiled, "target_us")
    assert isinstance(compiled["pass"], bool)
    for name in ("twenty_step", "four_step"):
        positive(
            compiled[name], "steps", "primitives", "samples", "per_primitive_us", *SUMMARY_KEYS
        )
    assert compiled["twenty_step"]["steps"] == 20
    assert compiled["single_steps"]
    for single in compiled["single_steps"].values():
        positive(single, "samples", *SUMMARY_KEYS)

    round_trip = figures["round_trip"]
    assert round_trip["window"] == 1
    positive(round_trip, "samples", "ack_p50_us", "per_line_us", *SUMMARY_KEYS)

    for window in (1, 4, 16):
        rate = figures["throughput"][f"window_{window}"]
        assert rate["window"] == window
        positive(rate, "primitives", "repeats", "best_per_s", "median_per_s", "max_in_flight")
    positive(figures["program_stream"], "primitives", "best_per_s", "median_per_s")
