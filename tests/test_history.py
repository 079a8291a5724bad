"""The run history in SQLite: records, updates, replay lookups, crash safety."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.killing import run_and_kill
from voiced.errors import StoreError
from voiced.history import History
from voiced.words.replay import ReplayRequest, replay_request

PLAN = [{"instruction": "add_layer", "params": {"item": "bread"}}]


def test_record_update_and_read_back(tmp_path: Path) -> None:
    history = History(tmp_path / "history.sqlite3")
    run_id = history.record("add bread", PLAN, cell="sandwich", correlation_id="c1")
    history.update(run_id, "running")
    history.update(run_id, "completed", "Done.")
    run = history.get(run_id)
    assert run is not None
    assert (run.status, run.feedback, run.plan, run.correlation_id) == (
        "completed", "Done.", PLAN, "c1"
    )  # fmt: skip


def test_wal_mode(tmp_path: Path) -> None:
    History(tmp_path / "h.sqlite3")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_last_and_last_completed(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    first = history.record("add bread", PLAN, cell="sandwich", status="completed")
    history.record("add avocado", [], cell="sandwich", status="rejected")
    history.record("go to position 1", PLAN, cell="weld", status="completed")
    assert [r.operator_input for r in history.last(2)] == ["go to position 1", "add avocado"]
    completed = history.last_completed("sandwich")
    assert completed is not None and completed.run_id == first
    assert [r.run_id for r in history.find(first[:8])] == [first]


def test_unknown_status_and_run_are_refused(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    with pytest.raises(ValueError, match="unknown run status"):
        history.record("x", [], cell="sandwich", status="done-ish")
    with pytest.raises(KeyError, match="no run"):
        history.update("nope", "completed")


def test_runs_left_running_by_a_crash_are_marked_interrupted(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record("add bread", PLAN, cell="sandwich")
    history.update(run_id, "running")
    assert History(tmp_path / "h.sqlite3").mark_interrupted() == 1
    run = history.get(run_id)
    assert run is not None and run.status == "interrupted"


def test_questions_and_unknowns_are_stored_with_their_intent(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    history.record("add bread", PLAN, cell="sandwich", status="completed")
    asked = history.record(
        "what tools are there", [], cell="weld", intent="question", status="answered",
        feedback="The tools are Camera and Welder.", answer="Camera, Welder",
    )  # fmt: skip
    history.record("asdfgh", [], cell="sandwich", intent="unknown", status="rejected")
    run = history.get(asked)
    assert run is not None
    assert (run.intent, run.status, run.plan) == ("question", "answered", [])
    assert (run.feedback, run.answer) == ("The tools are Camera and Welder.", "Camera, Welder")
    assert [r.operator_input for r in history.last(intent="action")] == ["add bread"]
    assert [r.intent for r in history.last()] == ["unknown", "question", "action"]
    with pytest.raises(ValueError, match="unknown intent 'chat'"):
        history.record("hi", [], cell="sandwich", intent="chat")


OLD_SCHEMA = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, correlation_id TEXT, operator_input TEXT NOT NULL,
    intent TEXT NOT NULL, plan_json TEXT NOT NULL, status TEXT NOT NULL, source TEXT NOT NULL,
    feedback TEXT, cell TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX runs_by_time ON runs (created_at);
CREATE TABLE robot_state (
    cell TEXT PRIMARY KEY, position TEXT, tool TEXT, updated_at TEXT NOT NULL
);
"""
"""The schema before questions were stored with their answer."""


def test_a_database_in_the_old_schema_is_migrated_without_losing_a_row(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(OLD_SCHEMA)
        for i in range(3):
            db.execute(
                "INSERT INTO runs VALUES (?, ?, ?, 'action', ?, 'completed', 'grammar', 'Done.', "
                "'sandwich', ?, ?)",
                (f"run-{i}", f"c{i}", f"add bread {i}", json.dumps(PLAN), f"2026-01-0{i + 1}",
                 f"2026-01-0{i + 1}"),
            )  # fmt: skip
        db.execute("INSERT INTO robot_state VALUES ('weld', 'Pos_1', 'Camera', '2026-01-01')")
    history = History(path)
    runs = history.last(10)
    assert [r.operator_input for r in runs] == ["add bread 2", "add bread 1", "add bread 0"]
    assert all((r.intent, r.plan, r.answer) == ("action", PLAN, None) for r in runs)
    assert history.state("weld") == ("Pos_1", "Camera")
    new = history.record("what is on the left", [], cell="sandwich", intent="question",
                         status="answered", answer="bread")  # fmt: skip
    again = History(path)  # opening a migrated database again changes nothing
    assert len(again.last(10)) == 4
    question = again.get(new)
    assert question is not None and question.answer == "bread"
    with closing(sqlite3.connect(path)) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        assert columns.count("answer") == 1


WRITER = """
import sys
from pathlib import Path
from voiced.errors import StoreError
from voiced.history import History
history = History(Path(sys.argv[1]))
print("ready", flush=True)
i = 0
while True:
    run = history.record(f"command {i}", [{"instruction": "go_home", "params": {}}] * 50,
                         cell="sandwich")
    history.update(run, "running")
    history.update(run, "completed", "Done.")
    i += 1
"""


def test_history_survives_kill_9_mid_run(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    for after in (0.3, 0.07, 0.15):
        run_and_kill(WRITER, [str(path)], after)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    history = History(path)
    runs = history.last(100000)
    assert len(runs) > 3
    assert all(r.status in ("planned", "running", "completed") for r in runs)
    assert sum(r.status != "completed" for r in runs) <= 3, "at most one unfinished per kill"


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("do that again", ReplayRequest(None)),
        ("Do it again.", ReplayRequest(None)),
        ("repeat the last one", ReplayRequest(None)),
        ("run task 1b2c3d4e", ReplayRequest("1b2c3d4e")),
        ("run task 1b2c3d4e-aaaa-bbbb-cccc-123456789abc", ReplayRequest(
            "1b2c3d4e-aaaa-bbbb-cccc-123456789abc")),
        ("add bread again", None),
        ("go home", None),
    ],
)  # fmt: skip
def test_replay_requests(said: str, expected: ReplayRequest | None) -> None:
    assert replay_request(said) == expected


def test_a_damaged_history_is_named_and_never_touched(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    garbage = b"SQLite format 3\x00" + bytes(range(256)) * 16
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as raised:
        History(path)
    assert raised.value.path == str(path)
    assert raised.value.reason.startswith("not a usable SQLite database")
    assert f"mv {path} {path}.broken" in raised.value.advice
    assert path.read_bytes() == garbage


def test_a_history_that_cannot_be_opened_is_not_called_damaged(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.mkdir()  # in the way of the file
    with pytest.raises(StoreError) as raised:
        History(path)
    assert raised.value.reason.startswith("cannot be opened")
    assert "mv" not in raised.value.advice
