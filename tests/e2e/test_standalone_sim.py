"""`voiced sim` standalone, and `voiced run --controller HOST:PORT` against it: a restarted daemon
knows the real cell state from the scene it saved."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import final_state, parse_events, voiced, voiced_env

PORTS = re.compile(r"motion port (\d+), control port (\d+)")


@pytest.fixture
def standalone_sim(tmp_path: Path) -> Iterator[tuple[int, int]]:
    proc = subprocess.Popen(
        voiced("sim", "--cell", "sandwich", "--port", "0", "--time-scale", "0.02"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=voiced_env(tmp_path),
    )  # fmt: skip
    assert proc.stdout is not None
    found = PORTS.search(proc.stdout.readline())
    assert found, "voiced sim did not announce its ports"
    yield int(found.group(1)), int(found.group(2))
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def run_against(tmp: Path, ports: tuple[int, int], lines: str) -> subprocess.CompletedProcess[str]:
    config = tmp / "real.toml"
    config.write_text(f"[controller]\ncontrol_port = {ports[1]}\n", encoding="utf-8")
    cmd = voiced("run", "--config", str(config), "--cell", "sandwich", "--text", "-",
                 "--controller", f"127.0.0.1:{ports[0]}", "--events", "-")  # fmt: skip
    return subprocess.run(cmd, input=lines, capture_output=True, text=True,
                          env=voiced_env(tmp), timeout=120)  # fmt: skip


def test_a_restarted_daemon_continues_from_the_real_state(
    tmp_path: Path, standalone_sim: tuple[int, int]
) -> None:
    first = run_against(tmp_path, standalone_sim, "computer add bread\n\n")
    assert first.returncode == 0, first.stderr
    assert final_state(parse_events(first.stdout))["zones"]["assembly_fixture"] == ["bread"]
    second = run_against(tmp_path, standalone_sim, "computer add cheese\n\n")
    assert second.returncode == 0, second.stderr
    assert "restored the saved scene" in second.stderr
    state = final_state(parse_events(second.stdout))
    assert state["zones"]["assembly_fixture"] == ["bread", "cheese"]


def test_a_corrupt_saved_scene_is_refused_by_name(
    tmp_path: Path, standalone_sim: tuple[int, int]
) -> None:
    saved = tmp_path / "data" / "scene-sandwich.json"
    saved.parent.mkdir(parents=True)
    saved.write_text('{"stacks": {"assembly_fixture": ["avocado"]}, "pose": {"x": 0, "y": 0, '
                     '"z": 0}}', encoding="utf-8")  # fmt: skip
    proc = run_against(tmp_path, standalone_sim, "computer add bread\n\n")
    assert proc.returncode == 1
    assert str(saved) in proc.stderr
    assert "avocado" in proc.stderr
    assert saved.read_text(encoding="utf-8").count("avocado") == 1, "the file is left as it was"


def test_world_out_is_the_world_the_daemon_reports(tmp_path: Path) -> None:
    world_file = tmp_path / "world.json"
    proc = subprocess.Popen(
        voiced("sim", "--cell", "sandwich", "--port", "0", "--time-scale", "0.02",
               "--world-out", str(world_file)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=voiced_env(tmp_path),
    )  # fmt: skip
    assert proc.stdout is not None
    found = PORTS.search(proc.stdout.readline())
    assert found
    run = run_against(tmp_path, (int(found.group(1)), int(found.group(2))),
                      "computer add bread and cheese\n\n")  # fmt: skip
    assert run.returncode == 0, run.stderr
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 0
    world = json.loads(world_file.read_text(encoding="utf-8"))
    assert world["zones"] == final_state(parse_events(run.stdout))["zones"]
    assert world["zones"]["assembly_fixture"] == ["bread", "cheese"]
    assert world["holding"] is None and world["dropped"] == []
    assert set(world["pose"]) == {"x", "y", "z", "q"}
    assert world["gripper_mm"] >= 0


def test_an_unreachable_controller_is_named(tmp_path: Path) -> None:
    proc = run_against(tmp_path, (9, 10), "computer add bread\n\n")
    assert proc.returncode == 1
    assert "127.0.0.1:9" in proc.stderr
    assert "Traceback" not in proc.stderr
