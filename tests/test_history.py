"""The run history in SQLite: records, updates, replay lookups, crash safety."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.killing import run_and_kill
from voiced.errors import StoreError
from voiced.history import History
from voiced.intent import ReplayRequest, replay_request

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
