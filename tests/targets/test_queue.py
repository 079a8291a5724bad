"""The deferred queue: real SQLite, work_off with real handlers, a writer killed mid-transaction."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from tests.killing import run_and_kill as kill_writer
from voiced.targets.base import TargetResult, failed, succeeded
from voiced.targets.queue import (
    DONE,
    FAILED,
    MAX_ATTEMPTS,
    PENDING,
    SAVED,
    DeferredQueue,
    QueuedItem,
    QueueTarget,
    work_off,
)


@pytest.fixture
def queue(tmp_path: Path) -> DeferredQueue:
    return DeferredQueue(tmp_path / "queue.sqlite3")


def test_put_pending_and_all(queue: DeferredQueue) -> None:
    first = queue.put("pick up the bread", "cid-1")
    second = queue.put("zero zero zero", None)

    assert second > first
    pending = queue.pending()
    assert [(i.id, i.text, i.correlation_id) for i in pending] == [
        (first, "pick up the bread", "cid-1"),
        (second, "zero zero zero", None),
    ]
    item = pending[0]
    assert item.status == PENDING
    assert item.attempts == 0
    assert item.finished_at is None and item.result is None
    assert datetime.fromisoformat(item.created_at).utcoffset() is not None
    assert queue.all() == pending
    assert queue.get(first) == item
    assert queue.get(999) is None


def test_mark_records_status_result_and_time(queue: DeferredQueue) -> None:
    item_id = queue.put("x", None)
    queue.mark(item_id, FAILED, "The robot is not connected.")

    item = queue.get(item_id)
    assert item is not None
    assert (item.status, item.result) == (FAILED, "The robot is not connected.")
    assert item.finished_at is not None
    assert queue.pending() == []

    queue.mark(item_id, PENDING, None)  # queued again by hand
    again = queue.get(item_id)
    assert again is not None and again.status == PENDING and again.finished_at is None


def test_mark_rejects_unknown_ids_and_statuses(queue: DeferredQueue) -> None:
    item_id = queue.put("x", None)
    with pytest.raises(KeyError):
        queue.mark(item_id + 1, DONE, None)
    with pytest.raises(ValueError, match="unknown status 'running'"):
        queue.mark(item_id, "running", None)


def test_database_is_in_wal_mode(queue: DeferredQueue) -> None:
    queue.put("x", None)
    assert queue.journal_mode() == "wal"
    with sqlite3.connect(queue.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_survives_reopening(queue: DeferredQueue) -> None:
    ids = [queue.put(f"item {i}", f"cid-{i}") for i in range(5)]
    queue.mark(ids[1], DONE, "ok")
    reopened = DeferredQueue(queue.path)
    assert reopened.all() == queue.all()
    assert [item.id for item in reopened.pending()] == [ids[0], *ids[2:]]
    assert reopened.put("more", None) == ids[-1] + 1


async def test_target_saves_for_later(queue: DeferredQueue) -> None:
    result = await QueueTarget(queue).submit("weld seam four", "cid-4", source="dictation")
    assert result.ok
    assert result.message == SAVED
    [item] = queue.pending()
    assert (item.id, item.text, item.correlation_id) == (
        result.detail["item_id"],
        "weld seam four",
        "cid-4",
    )


async def test_target_failure_names_the_database(tmp_path: Path) -> None:
    directory = tmp_path / "queue.sqlite3"
    directory.mkdir()  # a directory where the database should be
    result = await QueueTarget(DeferredQueue(directory)).submit("x", None)
    assert not result.ok
    assert result.message == (
        f"Could not save it for later in {directory}: unable to open database file."
    )


async def test_work_off_in_order_recording_each_outcome(queue: DeferredQueue) -> None:
    ids = [queue.put(text, None) for text in ("one", "two", "three")]
    seen: list[str] = []

    async def handler(item: QueuedItem) -> TargetResult:
        seen.append(item.text)
        assert item.attempts == 1  # counted before the handler runs
        if item.text == "two":
            return failed("No such composite: two.")
        return succeeded(f"Did {item.text}.")

    outcomes = await work_off(queue, handler)

    assert seen == ["one", "two", "three"]
    assert [(item.id, item.status, result.ok) for item, result in outcomes] == [
        (ids[0], DONE, True),
        (ids[1], FAILED, False),
        (ids[2], DONE, True),
    ]
    by_id = {item.id: item for item in queue.all()}
    assert by_id[ids[1]].result == "No such composite: two."
    assert by_id[ids[0]].result == "Did one."
    assert all(item.finished_at is not None for item in by_id.values())
    assert all(item.attempts == 1 for item in by_id.values())
    # A failed item is not tried again.
    assert await work_off(queue, handler) == []
    assert seen == ["one", "two", "three"]


async def test_items_queued_while_working_off_are_done_too(queue: DeferredQueue) -> None:
    queue.put("first", None)

    async def handler(item: QueuedItem) -> TargetResult:
        if item.text == "first":
            queue.put("added meanwhile", None)
        return succeeded("ok")

    outcomes = await work_off(queue, handler)
    assert [item.text for item, _ in outcomes] == ["first", "added meanwhile"]


async def test_handler_error_marks_failed_and_propagates(queue: DeferredQueue) -> None:
    item_id = queue.put("x", None)
    queue.put("y", None)

    async def handler(item: QueuedItem) -> TargetResult:
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError, match="bug"):
        await work_off(queue, handler)
    item = queue.get(item_id)
    assert item is not None
    assert item.status == FAILED
    assert item.result == "handler error: RuntimeError('bug')"
    assert [i.text for i in queue.pending()] == ["y"]


async def test_interrupted_handler_leaves_the_item_pending(queue: DeferredQueue) -> None:
    item_id = queue.put("slow", None)
    started = asyncio.Event()

    async def handler(item: QueuedItem) -> TargetResult:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    task = asyncio.create_task(work_off(queue, handler))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    item = queue.get(item_id)
    assert item is not None
    assert (item.status, item.attempts) == (PENDING, 1)


async def test_item_that_keeps_being_interrupted_is_given_up(queue: DeferredQueue) -> None:
    item_id = queue.put("crashes the runner", None)
    for _ in range(MAX_ATTEMPTS):
        assert queue.start(item_id) is not None  # a runner started it, then died
    calls: list[int] = []

    async def handler(item: QueuedItem) -> TargetResult:
        calls.append(item.id)
        return succeeded("ok")

    [(item, result)] = await work_off(queue, handler)
    assert calls == []
    assert not result.ok
    assert item.status == FAILED
    assert item.result == f"Given up after {MAX_ATTEMPTS} interrupted attempts."


def test_start_only_starts_pending_items(queue: DeferredQueue) -> None:
    item_id = queue.put("x", None)
    queue.mark(item_id, DONE, "ok")
    assert queue.start(item_id) is None
    item = queue.get(item_id)
    assert item is not None and item.attempts == 0


# --- kill -9 ------------------------------------------------------------------------------------

BATCH = 50

WRITER = f"""
import sqlite3, sys
from pathlib import Path
from voiced.targets.queue import DeferredQueue, DONE

queue = DeferredQueue(Path(sys.argv[1]))
round_ = sys.argv[2]
queue.put("warm up", None)
print("ready", flush=True)
batch = 0
while True:
    item = queue.put(f"single {{batch}}", None)
    queue.mark(item, DONE, "x" * 2000)
    # A long transaction, so that the kill often lands inside one.
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("PRAGMA synchronous = FULL")
    db.execute("BEGIN IMMEDIATE")
    for i in range({BATCH}):
        db.execute(
            "INSERT INTO items (text, created_at) VALUES (?, '2024-01-01T00:00:00+00:00')",
            (f"batch {{round_}}.{{batch}} row {{i}}",),
        )
    db.execute("COMMIT")
    db.close()
    batch += 1
"""


def run_and_kill(path: Path, round_: int, after: float) -> None:
    kill_writer(WRITER, [str(path), str(round_)], after)


def test_kill_mid_transaction_leaves_a_readable_database(tmp_path: Path) -> None:
    path = tmp_path / "queue.sqlite3"
    for round_, after in enumerate((0.3, 0.11, 0.2)):
        run_and_kill(path, round_, after)

    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    items = DeferredQueue(path).all()
    assert items, "the writer saved nothing"
    assert {item.status for item in items} <= {PENDING, DONE}
    # A transaction is all or nothing: every batch that made it has all its rows.
    batches: dict[str, int] = {}
    for item in items:
        if item.text.startswith("batch "):
            key = " ".join(item.text.split()[:2])
            batches[key] = batches.get(key, 0) + 1
    assert batches
    assert set(batches.values()) == {BATCH}
    # The queue still works.
    queue = DeferredQueue(path)
    new_id = queue.put("after the crash", None)
    assert queue.get(new_id) is not None
