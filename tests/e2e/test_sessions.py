"""Issue 4's sessions through `voiced run --text - --controller sim --events -`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.helpers import (
    fast_config,
    final_state,
    kinds,
    parse_events,
    run_text,
    start_daemon,
    stopped_while_moving,
    voiced,
    voiced_env,
    work_off_queue,
)


def notes(tmp: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(voiced("notes", "--json"), capture_output=True, text=True,
                          env=voiced_env(tmp), timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_wake_word_then_command_then_go(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer\nadd lettuce\ngo\n")
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["zones"]["assembly_fixture"] == ["lettuce"]


def test_dictation_moves_nothing_and_saves_the_note_verbatim(tmp_path: Path) -> None:
    session = "computer start dictation\nadd bread\ngo\nzero zero zero\n\nend dictation\n"
    events, proc = run_text(tmp_path, "sandwich", session)
    assert proc.returncode == 0, proc.stderr
    assert not kinds(events, "primitive")
    assert [n["text"] for n in notes(tmp_path)] == ["add bread go zero zero zero"]
    assert notes(tmp_path)[0]["source"] == "dictation"


def test_voice_picker_session(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "switch voice\nbanana\nAnnie\n")
    assert proc.returncode == 0, proc.stderr
    assert [e["voice"] for e in kinds(events, "voice")] == ["Annie"]
    assert "utterance dropped" in proc.stderr  # "banana" in the exclusive picker
    assert [f["frame"] for f in kinds(events, "frame")] == ["voice_picker", "voice_picker"]


def test_queue_target_then_queue_run(tmp_path: Path) -> None:
    config = fast_config(tmp_path, '[targets]\nquery = "queue"\n')
    env = voiced_env(tmp_path)
    first = subprocess.run(
        voiced("run", "--config", str(config), "--cell", "sandwich", "--text", "-",
               "--controller", "sim", "--events", "-"),
        input="computer add tomato\n\ncomputer add avocado\n\n", capture_output=True, text=True,
        env=env, timeout=120,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert not kinds(parse_events(first.stdout), "primitive"), "queued, not run"
    listed = subprocess.run(voiced("queue", "list"), capture_output=True, text=True, env=env)
    assert listed.stdout.count("pending") == 2
    worked = work_off_queue(config, env)
    assert worked.returncode == 0, worked.stderr
    events = parse_events(worked.stdout)
    assert final_state(events)["zones"]["assembly_fixture"] == ["tomato"]
    assert kinds(events, "queue")[0] == {**kinds(events, "queue")[0], "worked_off": 2, "ok": 1}
    listed = subprocess.run(voiced("queue", "list"), capture_output=True, text=True, env=env)
    assert listed.stdout.count("done") == 1 and listed.stdout.count("failed") == 1
    assert "avocado" in listed.stdout


def test_stop_inside_dictation_stops_the_arm_mid_motion(tmp_path: Path) -> None:
    proc = start_daemon(tmp_path, "sandwich")
    said = "computer add bread\n\nstart dictation\nshelf A3 has bolts\n"
    events = stopped_while_moving(proc, said, then="stop\nend dictation\n")
    assert kinds(events, "stopped")
    replies = [e["line"] for e in kinds(events, "controller") if e["direction"] == "rx"]
    assert any("ERR STOPPED interrupted" in line for line in replies), replies
    assert final_state(events)["zones"]["assembly_fixture"] == []
    assert [n["text"] for n in notes(tmp_path)] == ["shelf A3 has bolts"]


def test_history_do_that_again_and_replay_by_id(tmp_path: Path) -> None:
    events, proc = run_text(
        tmp_path, "sandwich", "computer add cheese\n\ncomputer do that again\n\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert final_state(events)["zones"]["assembly_fixture"] == ["cheese", "cheese"]
    sources = [e["source"] for e in kinds(events, "interpretation")]
    assert sources == ["grammar", "replay"]
    cids = [e["correlation_id"] for e in kinds(events, "interpretation")]
    assert cids[0] != cids[1], "a replay gets a new correlation id"
    env = voiced_env(tmp_path)
    listed = subprocess.run(voiced("history", "--json"), capture_output=True, text=True, env=env)
    runs = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [r["status"] for r in runs] == ["completed", "completed"]
    first = runs[-1]["run_id"]
    replayed = subprocess.run(
        voiced("replay", first[:8], "--config", str(fast_config(tmp_path)), "--cell", "sandwich",
               "--controller", "sim", "--events", "-"),
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    replay_events = parse_events(replayed.stdout)
    assert kinds(replay_events, "replay")[0]["ok"] is True
    assert final_state(replay_events)["zones"]["assembly_fixture"] == ["cheese"]


def test_do_that_again_with_nothing_done(tmp_path: Path) -> None:
    events, proc = run_text(tmp_path, "sandwich", "computer do that again\n\n")
    assert proc.returncode == 0, proc.stderr
    assert any("nothing" in e["text"].lower() for e in kinds(events, "feedback"))
    assert not kinds(events, "primitive")


def test_questions_produce_answers_and_no_primitives(tmp_path: Path) -> None:
    session = "computer where are you\n\ncomputer what tools do you have\n\n"
    events, proc = run_text(tmp_path, "weld", session)
    assert proc.returncode == 0, proc.stderr
    answers = [e["brief"] for e in kinds(events, "answer")]
    assert answers == ["I am at Home.", "The tools are Camera and Welder."]
    assert not kinds(events, "primitive")
