"""`voiced sim` standalone, and `voiced run --controller HOST:PORT` against it: a restarted daemon
knows the real cell state from the scene it saved."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.helpers import final_state, parse_events, voiced, voiced_env

PORTS = re.compile(r"motion port (\d+), control port (\d+)")


SIM_NAME = "test_cell_a"


@contextmanager
def running_sim(tmp: Path, *extra: str) -> Iterator[tuple[int, int]]:
    """`voiced sim` on free ports (named SIM_NAME); yields (motion, control)."""
    proc = subprocess.Popen(
        voiced("sim", "--cell", "sandwich", "--port", "0", "--time-scale", "0.02",
               "--name", SIM_NAME, *extra),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=voiced_env(tmp),
    )  # fmt: skip
    assert proc.stdout is not None
    found = PORTS.search(proc.stdout.readline())
    assert found, "voiced sim did not announce its ports"
    try:
        yield int(found.group(1)), int(found.group(2))
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


@pytest.fixture
def standalone_sim(tmp_path: Path) -> Iterator[tuple[int, int]]:
    with running_sim(tmp_path) as ports:
        yield ports


def run_against(
    tmp: Path, ports: tuple[int, int], lines: str, config: str = ""
) -> subprocess.CompletedProcess[str]:
    path = tmp / "real.toml"
    path.write_text(f"[controller]\ncontrol_port = {ports[1]}\n{config}", encoding="utf-8")
    cmd = voiced("run", "--config", str(path), "--cell", "sandwich", "--text", "-",
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


def test_a_saved_scene_the_controller_contradicts_is_corrected_at_start(tmp_path: Path) -> None:
    # The same controller (by name) restarted with the arm back home: what was saved said
    # otherwise, and the controller's report wins before anything moves.
    with running_sim(tmp_path) as ports:
        first = run_against(tmp_path, ports, "computer add bread\n\n")
    assert first.returncode == 0, first.stderr
    with running_sim(tmp_path) as ports:
        second = run_against(tmp_path, ports, "computer add cheese\n\n")
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in second.stderr
    events = parse_events(second.stdout)
    start = next(e for e in events if e["event"] == "reconciled")
    assert start["why"] == "connected" and start["changes"], start
    said = [e["text"] for e in events if e["event"] == "feedback"]
    assert any(text.startswith("The controller's report differs from what I saved.")
               for text in said), said  # fmt: skip


def test_a_corrupt_saved_scene_is_refused_by_name(
    tmp_path: Path, standalone_sim: tuple[int, int]
) -> None:
    saved = tmp_path / "data" / f"scene-sandwich@{SIM_NAME}.json"
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


def test_world_out_into_a_missing_directory_is_refused_at_once(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "world.json"
    proc = subprocess.run(voiced("sim", "--port", "0", "--world-out", str(missing)),
                          capture_output=True, text=True, env=voiced_env(tmp_path),
                          timeout=30)  # fmt: skip
    assert proc.returncode == 2
    assert f"--world-out {missing}: {missing.parent} is no directory" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_unreachable_controller_is_named(tmp_path: Path) -> None:
    proc = run_against(tmp_path, (9, 10), "computer add bread\n\n")
    assert proc.returncode == 1
    assert "127.0.0.1:9" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_simulated_run_is_never_restored_for_another_controller(tmp_path: Path) -> None:
    sim_run = subprocess.run(
        voiced("run", "--cell", "sandwich", "--text", "-", "--controller", "sim",
               "--events", "-"),
        input="computer add bread\n\n", capture_output=True, text=True,
        env=voiced_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert sim_run.returncode == 0, sim_run.stderr
    with running_sim(tmp_path) as ports:
        real = run_against(tmp_path, ports, "computer add cheese\n\n")
    assert real.returncode == 0, real.stderr
    assert "restored the saved scene" not in real.stderr
    assert final_state(parse_events(real.stdout))["zones"]["assembly_fixture"] == ["cheese"]
    saved = sorted(p.name for p in (tmp_path / "data").glob("scene-*.json"))
    assert saved == [f"scene-sandwich@{SIM_NAME}.json"]  # one simulator's kept, the latest


def test_a_keyed_controller_takes_only_a_client_with_its_key(tmp_path: Path) -> None:
    key = tmp_path / "controller.key"
    made = subprocess.run(voiced("keygen", str(key)), capture_output=True, text=True,
                          env=voiced_env(tmp_path), timeout=30)  # fmt: skip
    assert made.returncode == 0 and key.stat().st_mode & 0o077 == 0
    other = tmp_path / "other.key"
    other.write_text("f" * 64 + "\n", encoding="ascii")
    with running_sim(tmp_path, "--key-file", str(key)) as ports:
        keyless = run_against(tmp_path, ports, "computer add bread\n\n")
        wrong = run_against(tmp_path, ports, "computer add bread\n\n", f'key_file = "{other}"\n')
        right = run_against(tmp_path, ports, "computer add bread\n\n", f'key_file = "{key}"\n')
    assert keyless.returncode == 1
    assert "refused this client: a key is required" in keyless.stderr
    (refusal,) = [e for e in parse_events(keyless.stdout) if e["event"] == "error"]
    assert refusal["kind"] == "auth" and "a key is required" in refusal["reason"]
    assert "set [controller] key_file" in keyless.stderr
    assert wrong.returncode == 1 and "refused this client: wrong key" in wrong.stderr
    assert right.returncode == 0, right.stderr
    assert final_state(parse_events(right.stdout))["zones"]["assembly_fixture"] == ["bread"]
    for proc in (keyless, wrong, right):
        assert "Traceback" not in proc.stderr


def test_with_a_key_the_daemon_refuses_a_controller_that_checks_none(
    tmp_path: Path, standalone_sim: tuple[int, int]
) -> None:
    key = tmp_path / "controller.key"
    key.write_text("a" * 64, encoding="ascii")
    refused = run_against(tmp_path, standalone_sim, "computer add bread\n\n",
                          f'key_file = "{key}"\n')  # fmt: skip
    assert refused.returncode == 1
    assert "checks no key" in refused.stderr and "allow_unauthenticated" in refused.stderr
    allowed = run_against(tmp_path, standalone_sim, "computer add bread\n\n",
                          f'key_file = "{key}"\nallow_unauthenticated = true\n')  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
