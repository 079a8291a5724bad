"""The command line contract: check-config, cells, interpret, errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import REPO, voiced, voiced_env


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(voiced(*args), capture_output=True, text=True, env=voiced_env(tmp),
                          timeout=60)  # fmt: skip


def test_check_config_accepts_the_shipped_file(tmp_path: Path) -> None:
    proc = run(tmp_path, "check-config", str(REPO / "config.toml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("OK")


def test_check_config_names_an_unknown_key_and_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[controller]\nheartbeat_intervall = 1.0\n", encoding="utf-8")
    proc = run(tmp_path, "check-config", str(bad))
    assert proc.returncode == 1
    assert str(bad) in proc.stdout
    assert "controller.heartbeat_intervall" in proc.stdout
    assert "unknown key" in proc.stdout


def test_check_config_names_the_expected_type(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[query]\nsilence_timeout = "fast"\n', encoding="utf-8")
    proc = run(tmp_path, "check-config", str(bad))
    assert proc.returncode == 1
    assert "query.silence_timeout" in proc.stdout
    assert "expected a number" in proc.stdout


def test_check_config_reports_every_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[daemon]\nmode = 3\nbogus = 1\n[query]\nsilence_timeout = 99\n',
                   encoding="utf-8")  # fmt: skip
    proc = run(tmp_path, "check-config", str(bad))
    assert proc.returncode == 1
    assert len(proc.stdout.strip().splitlines()) == 3


def test_check_config_uses_voiced_config_env(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[nope]\n", encoding="utf-8")
    proc = subprocess.run(voiced("check-config"), capture_output=True, text=True,
                          env=voiced_env(tmp_path, VOICED_CONFIG=str(bad)), timeout=60)  # fmt: skip
    assert proc.returncode == 1
    assert "unknown section" in proc.stdout


def test_cells_lists_the_four_cells(tmp_path: Path) -> None:
    proc = run(tmp_path, "cells")
    assert proc.returncode == 0
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names == ["barista", "blocks", "sandwich", "weld"]


def test_a_cell_with_an_unknown_primitive_is_rejected_naming_the_composite(tmp_path: Path) -> None:
    source = (REPO / "robot" / "cells" / "sandwich.toml").read_text(encoding="utf-8")
    broken = source.replace('op = "gripper_set"', 'op = "gripper_slam"', 1)
    assert broken != source
    cell = tmp_path / "broken.toml"
    cell.write_text(broken, encoding="utf-8")
    proc = run(tmp_path, "interpret", "--cell", str(cell), "add bread")
    assert proc.returncode == 1
    assert str(cell) in proc.stderr
    assert "gripper_slam" in proc.stderr
    assert "composites." in proc.stderr


def test_interpret_prints_the_seed_result_dict(tmp_path: Path) -> None:
    proc = run(tmp_path, "interpret", "--cell", "sandwich", "add bread and cheese")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert set(result) >= {
        "interpretation", "sequence", "pass1_sequence", "composite_name", "confidence",
        "validated", "validation_issues", "user_feedback", "is_creative", "creative_reasoning",
        "raw_response", "source", "correlation_id",
    }  # fmt: skip
    assert [s["params"]["item"] for s in result["sequence"]] == ["bread", "cheese"]


def test_interpret_checks_against_the_given_scene(tmp_path: Path) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text('{"holding": "bread"}', encoding="utf-8")
    proc = run(tmp_path, "interpret", "--cell", "sandwich", "--scene", str(scene), "add cheese")
    assert proc.returncode == 3, proc.stderr  # printed, and refused: not carried out
    result = json.loads(proc.stdout)
    assert result["validated"] is False
    assert result["validation_issues"]


def test_a_malformed_scene_file_is_named(tmp_path: Path) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text('{"zones": {"assembly_middle": []}}', encoding="utf-8")
    proc = run(tmp_path, "interpret", "--cell", "sandwich", "--scene", str(scene), "add cheese")
    assert proc.returncode == 1
    assert str(scene) in proc.stderr
    assert "assembly_middle" in proc.stderr


def test_run_without_a_microphone_says_what_to_do(tmp_path: Path) -> None:
    """With no input named the daemon listens to the microphone; this machine has none."""
    proc = run(tmp_path, "run", "--controller", "sim")
    assert proc.returncode == 1
    assert "cannot open the microphone" in proc.stderr
    assert "--text" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_unreadable_audio_file_is_named_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_text("not audio", encoding="utf-8")
    for args in (
        ("run", "--audio", str(bad), "--fast", "--controller", "sim"),
        ("transcribe", str(bad)),
        ("run", "--audio", str(tmp_path / "missing.wav"), "--fast", "--controller", "sim"),
    ):
        proc = run(tmp_path, *args)
        assert proc.returncode == 1, args
        assert "cannot read audio" in proc.stderr or "missing.wav: no such file" in proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("stop", {"behaviour": "stop", "sends": "STOP", "said": "Stopped."}),
        ("oh no, stop it", {"behaviour": "stop", "sends": "STOP", "said": "Stopped."}),
        ("computer stop", {"behaviour": "stop", "sends": "STOP", "said": "Stopped."}),
        (
            "computer add bread, stop",
            {"behaviour": "stop", "sends": "STOP", "said": "Stopped. I dropped: add bread."},
        ),
        ("computer", {"behaviour": "listen", "waits_for": "the command"}),
    ],
)
def test_interpret_shows_what_the_daemon_does_with_a_stop_or_the_wake_word_alone(
    tmp_path: Path, said: str, shown: dict[str, str]
) -> None:
    proc = run(tmp_path, "interpret", said)
    assert (proc.returncode, json.loads(proc.stdout)) == (0, shown), proc.stderr


@pytest.mark.parametrize(
    "said",
    [
        "computer add bread",
        "Computer, add bread.",
        "compute her add bread",
        "computer computer add bread",
    ],
)
def test_interpret_takes_the_wake_word_off_as_the_daemon_does(tmp_path: Path, said: str) -> None:
    proc = run(tmp_path, "interpret", said)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert [s["params"]["item"] for s in result["sequence"]] == ["bread"]


def test_interpret_splits_at_the_wake_word_said_again_as_the_daemon_does(tmp_path: Path) -> None:
    """It read "add bread. Computer, add meat on the left" as one command: "I don't have
    computer"."""
    proc = run(tmp_path, "interpret", "computer add bread. Computer, add meat on the left")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    commands = json.loads(proc.stdout)["commands"]
    assert [[s["instruction"] for s in c["sequence"]] for c in commands] == [
        ["add_layer"],
        ["set_active_zone", "add_layer"],
    ]
    failed = run(tmp_path, "interpret", "computer add bread. Computer, add avocado")
    assert failed.returncode == 3, "one of them would not be done"


@pytest.mark.parametrize("said", ["", "   "])
def test_interpret_refuses_nothing_to_interpret(tmp_path: Path, said: str) -> None:
    proc = run(tmp_path, "interpret", said)
    assert proc.returncode == 2
    assert "give the command to interpret" in proc.stderr
