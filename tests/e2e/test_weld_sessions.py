"""Issue 7's weld sessions through `voiced run --cell weld --text - --controller sim --events -`."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.helpers import (
    fast_config,
    final_state,
    kinds,
    parse_events,
    run_text,
    say_and_wait_for_motion,
    start_daemon,
    voiced,
    voiced_env,
)


def lines(events: list[dict[str, Any]]) -> list[str]:
    return [e["line"] for e in kinds(events, "primitive")]


def tool_lines(events: list[dict[str, Any]]) -> list[str]:
    return [line for line in lines(events) if " ATTACH " in line or line.endswith(" DETACH")]


def test_weld_at_position_1_and_2_attaches_the_welder_automatically(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "weld", "computer weld at position 1 and 2\n\n")
    assert proc.returncode == 0, proc.stderr
    state = final_state(events)
    assert state["log"] == [{"routine": "tack_weld", "position": "Pos_1"},
                            {"routine": "tack_weld", "position": "Pos_2"}]  # fmt: skip
    assert state["tool"] == "Welder"
    assert [line.split(" ", 1)[1] for line in tool_lines(events)] == ["ATTACH Welder"]


def test_inspect_all_positions(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "weld", "computer inspect all positions\n\n")
    assert proc.returncode == 0, proc.stderr
    log = final_state(events)["log"]
    assert [(e["routine"], e["position"]) for e in log] == [
        ("camera_inspection", "Pos_1"), ("camera_inspection", "Pos_2"),
        ("camera_inspection", "Pos_3"),
    ]  # fmt: skip


def test_go_to_position_3_touches_no_tool(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "weld", "computer go to position 3\n\n")
    assert proc.returncode == 0, proc.stderr
    assert tool_lines(events) == []
    assert final_state(events) == {"position": "Pos_3", "tool": None, "log": []}


def test_visit_all_positions(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "weld", "computer visit all positions\n\n")
    assert proc.returncode == 0, proc.stderr
    assert tool_lines(events) == []
    assert final_state(events)["position"] == "Pos_3"


def test_return_the_tool_and_go_home(tmp_path: Path) -> None:
    session = "computer grab the camera\n\ncomputer return the tool and go home\n\n"
    events, proc = run_text(tmp_path, "weld", session)
    assert proc.returncode == 0, proc.stderr
    assert final_state(events) == {"position": "Home", "tool": None, "log": []}


def test_weld_at_position_4_is_refused_aloud(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "weld", "computer weld at position 4\n\n")
    assert proc.returncode == 0, proc.stderr
    assert not kinds(events, "primitive")
    assert any("4" in e["text"] for e in kinds(events, "feedback"))


def test_do_that_again_reruns_the_same_plan(tmp_path: Path) -> None:
    session = "computer weld at position 2\n\ncomputer do that again\n\n"
    events, proc = run_text(tmp_path, "weld", session)
    assert proc.returncode == 0, proc.stderr
    log = final_state(events)["log"]
    assert [(e["routine"], e["position"]) for e in log] == [("tack_weld", "Pos_2")] * 2
    assert [e["source"] for e in kinds(events, "interpretation")][-1] == "replay"


def test_replay_by_id(tmp_path: Path) -> None:
    _, proc = run_text(tmp_path, "weld", "computer inspect position 1\n\n")
    assert proc.returncode == 0, proc.stderr
    env = voiced_env(tmp_path)
    listed = subprocess.run(voiced("history", "--json"), capture_output=True, text=True, env=env)
    run_id = json.loads(listed.stdout.splitlines()[0])["run_id"]
    replay = subprocess.run(
        voiced("run", "--config", str(fast_config(tmp_path)), "--cell", "weld", "--text", "-",
               "--controller", "sim", "--events", "-"),
        input=f"computer run task {run_id[:8]}\n\n", capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    log = final_state(parse_events(replay.stdout))["log"]
    assert log == [{"routine": "camera_inspection", "position": "Pos_1"}]


def test_review_revise_changes_the_plan(tmp_path: Path) -> None:
    config = fast_config(tmp_path, '[review]\ncells = ["weld"]\n')
    proc = subprocess.run(
        voiced("run", "--config", str(config), "--cell", "weld", "--text", "-",
               "--controller", "sim", "--events", "-"),
        input="computer weld at positions 1, 2 and 3\n\nrevise: skip position 2\nyes\n",
        capture_output=True, text=True, env=voiced_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    events = parse_events(proc.stdout)
    questions = [e["text"] for e in kinds(events, "feedback") if e["text"].endswith("Proceed?")]
    assert questions == [
        "I will tack weld at Pos 1, then tack weld at Pos 2, then tack weld at Pos 3. Proceed?",
        "I will tack weld at Pos 1, then tack weld at Pos 3. Proceed?",
    ]
    log = final_state(events)["log"]
    assert [e["position"] for e in log] == ["Pos_1", "Pos_3"]
    history = subprocess.run(voiced("history", "--json"), capture_output=True, text=True,
                             env=voiced_env(tmp_path))  # fmt: skip
    plan = json.loads(history.stdout.splitlines()[0])["plan"]
    assert [s["params"]["position"] for s in plan] == ["Pos_1", "Pos_3"]


def test_history_survives_kill_9_in_the_middle_of_a_run(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path, "weld")
    say_and_wait_for_motion(proc, "computer go to position 1\n\ncomputer inspect all positions\n\n")
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    db = tmp_path / "data" / "history.sqlite3"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT operator_input, status FROM runs ORDER BY rowid").fetchall()
    assert rows == [("go to position 1", "running"), ("inspect all positions", "planned")]
    # The next start marks them and carries on.
    events, again = run_text(tmp_path, "weld", "computer what did you do\n\n")
    assert again.returncode == 0, again.stderr
    assert "it was cut off when I last stopped running" in kinds(events, "answer")[0]["brief"]
