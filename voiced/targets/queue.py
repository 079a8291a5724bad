"""The deferred queue: text saved now and worked off later, in a SQLite database in WAL mode.

The daemon's queue target only adds items; `voiced queue run` takes each pending item in order
(`claims`, read by `voiced.inputs.sources.QueueInput`) and `record`s what became of it;
`work_off` does both around a handler. Every change is one committed
transaction with synchronous=FULL, so "Saved for later." survives kill -9 and a power cut, and a
killed writer leaves the database readable. An item's attempts are counted before its handler
runs, so an item whose handling keeps crashing the runner is given up after `MAX_ATTEMPTS`.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import sqlite3
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from voiced.notes import utc_now
from voiced.targets.base import (
    DEFAULT_SOURCE,
    QUEUE,
    TargetResult,
    failed,
    nothing_to_submit,
    succeeded,
)

log = structlog.get_logger(__name__)

PENDING = "pending"
DONE = "done"
FAILED = "failed"
STATUSES = (PENDING, DONE, FAILED)
"""Every status an item can have."""
MAX_ATTEMPTS = 3
"""Handler runs (interrupted ones included) after which a still-pending item is given up."""
BUSY_TIMEOUT = 5.0
"""Seconds to wait for another process's write lock before failing."""
SAVED = "Saved for later."
"""What the operator hears when the text is in the queue."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    correlation_id TEXT,
    status TEXT NOT NULL DEFAULT '{PENDING}' CHECK (status IN {STATUSES!r}),
    attempts INTEGER NOT NULL DEFAULT 0,
    finished_at TEXT,
    result TEXT
)
"""
_COLUMNS = "id, text, created_at, correlation_id, status, attempts, finished_at, result"


@dataclass(frozen=True)
class QueuedItem:
    """One row of the queue."""

    id: int
    """Assigned by the database, increasing: the order items are worked off in."""
    text: str
    """The text as submitted."""
    created_at: str
    """When it was queued (ISO 8601, UTC)."""
    correlation_id: str | None
    """The correlation id of the submission."""
    status: str
    """"pending", "done" or "failed"."""
    attempts: int
    """How many times a handler was started on it."""
    finished_at: str | None
    """When it became done or failed (ISO 8601, UTC); None while pending."""
    result: str | None
    """The handler's message (why it failed, or what it did)."""


class DeferredQueue:
    """The queue database. Each call opens its own connection, so any thread may use it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False

    def put(self, text: str, correlation_id: str | None) -> int:
        """Queue `text`; returns its id once committed. Raises sqlite3.Error or OSError."""
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO items (text, created_at, correlation_id) VALUES (?, ?, ?)",
                (text, _now(), correlation_id),
            )
            return int(cursor.lastrowid or 0)

    def pending(self) -> builtins.list[QueuedItem]:
        """Pending items, oldest first."""
        return self._select(f"WHERE status = '{PENDING}' ORDER BY id")

    def all(self) -> builtins.list[QueuedItem]:
        """Every item, oldest first."""
        return self._select("ORDER BY id")

    def get(self, item_id: int) -> QueuedItem | None:
        """The item with this id, or None."""
        found = self._select("WHERE id = ?", (item_id,))
        return found[0] if found else None

    def mark(self, item_id: int, status: str, result: str | None) -> None:
        """Set an item's status and result; done and failed also stamp finished_at.

        Marking an item pending again queues it for the next run. KeyError for an unknown id.
        """
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; expected one of {STATUSES}")
        finished = None if status == PENDING else _now()
        with self._connect() as db:
            cursor = db.execute(
                "UPDATE items SET status = ?, result = ?, finished_at = ? WHERE id = ?",
                (status, result, finished, item_id),
            )
            if cursor.rowcount == 0:
                raise KeyError(item_id)

    def start(self, item_id: int) -> QueuedItem | None:
        """Count an attempt on a pending item and return it; None if it is no longer pending."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            cursor = db.execute(
                f"UPDATE items SET attempts = attempts + 1 WHERE id = ? AND status = '{PENDING}'",
                (item_id,),
            )
            started = cursor.rowcount > 0
            row = db.execute(f"SELECT {_COLUMNS} FROM items WHERE id = ?", (item_id,)).fetchone()
            db.execute("COMMIT")
        return _item(row) if started else None

    def next_pending(self, after_id: int) -> QueuedItem | None:
        """The oldest pending item with an id above `after_id`."""
        found = self._select(
            f"WHERE status = '{PENDING}' AND id > ? ORDER BY id LIMIT 1", (after_id,)
        )
        return found[0] if found else None

    def journal_mode(self) -> str:
        """The database's journal mode ("wal" unless the file system cannot do WAL)."""
        with self._connect() as db:
            return str(db.execute("PRAGMA journal_mode").fetchone()[0])

    def _select(self, where: str, args: tuple[object, ...] = ()) -> builtins.list[QueuedItem]:
        with self._connect() as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM items {where}", args).fetchall()
        return [_item(row) for row in rows]

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # Autocommit: each statement commits on its own unless a BEGIN says otherwise.
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            # FULL: in WAL mode NORMAL may lose the last commits on a power cut.
            db.execute("PRAGMA synchronous = FULL")
            if not self._ready:
                self._create(db)
            yield db
        finally:
            db.close()

    def _create(self, db: sqlite3.Connection) -> None:
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            log.warning("queue database is not in WAL mode", path=str(self.path), mode=mode)
        db.execute(_SCHEMA)
        self._ready = True


def _item(row: Any) -> QueuedItem:
    item_id, text, created_at, correlation_id, status, attempts, finished_at, result = row
    return QueuedItem(
        int(item_id), text, created_at, correlation_id, status, int(attempts), finished_at, result
    )


def _now() -> str:
    return utc_now().isoformat(timespec="milliseconds")


class QueueTarget:
    """Saves each submission in the deferred queue."""

    def __init__(self, queue: DeferredQueue) -> None:
        self.queue = queue

    @property
    def name(self) -> str:
        return QUEUE

    async def submit(
        self, text: str, correlation_id: str | None, *, source: str = DEFAULT_SOURCE
    ) -> TargetResult:
        empty = nothing_to_submit(text)
        if empty is not None:
            return empty
        try:
            item_id = await asyncio.to_thread(self.queue.put, text, correlation_id)
        except (sqlite3.Error, OSError) as error:
            log.error("not queued", path=str(self.queue.path), error=str(error))
            return failed(
                f"Could not save it for later in {self.queue.path}: {error}.",
                path=str(self.queue.path),
                error=str(error),
            )
        return succeeded(SAVED, item_id=item_id, path=str(self.queue.path))


Handler = Callable[[QueuedItem], Awaitable[TargetResult]]
"""What `work_off` does with one item; its result decides done or failed."""


@dataclass(frozen=True)
class Claim:
    """A pending item this runner took: started (its attempt counted), or given up."""

    item: QueuedItem
    given_up: TargetResult | None = None
    """Why it is not to be run (interrupted too often); None: run it."""


async def claims(
    queue: DeferredQueue, *, max_attempts: int = MAX_ATTEMPTS
) -> AsyncGenerator[Claim, None]:
    """Every pending item, oldest first, items queued meanwhile too. The consumer `record`s
    each outcome before it asks for the next; an item it never records (the runner was
    interrupted) stays pending, given up after `max_attempts` starts."""
    last_id = 0
    while (item := await asyncio.to_thread(queue.next_pending, last_id)) is not None:
        last_id = item.id
        if item.attempts >= max_attempts:
            yield Claim(item, failed(f"Given up after {item.attempts} interrupted attempts."))
            continue
        started = await asyncio.to_thread(queue.start, item.id)
        if started is not None:  # else another runner got there first
            yield Claim(started)


async def record(queue: DeferredQueue, item: QueuedItem, result: TargetResult) -> QueuedItem:
    """Mark `item` done (an ok result) or failed; returns it as stored now."""
    status = DONE if result.ok else FAILED
    await asyncio.to_thread(queue.mark, item.id, status, result.message)
    log.info("queue item worked off", item_id=item.id, status=status, result=result.message)
    final: QueuedItem | None = await asyncio.to_thread(queue.get, item.id)
    return final or item


async def record_error(queue: DeferredQueue, item: QueuedItem, error: Exception) -> None:
    """A handler raised (a programming error): the item failed, and never runs again."""
    await asyncio.to_thread(queue.mark, item.id, FAILED, f"handler error: {error!r}")


async def work_off(
    queue: DeferredQueue, handler: Handler, *, max_attempts: int = MAX_ATTEMPTS
) -> builtins.list[tuple[QueuedItem, TargetResult]]:
    """Hand every pending item to `handler`, oldest first, and record each outcome.

    An ok result marks the item done, any other failed (with the result's message); a failed
    item is not tried again unless marked pending. Items queued meanwhile are worked off too. A
    handler that raises marks its item failed and the exception propagates (a programming error);
    one interrupted (cancelled, killed) leaves it pending, given up after `max_attempts` starts.
    """
    outcomes: list[tuple[QueuedItem, TargetResult]] = []
    async with contextlib.aclosing(claims(queue, max_attempts=max_attempts)) as pending:
        async for claim in pending:
            result = claim.given_up
            if result is None:
                result = await _run(queue, handler, claim.item)
            outcomes.append((await record(queue, claim.item, result), result))
    return outcomes


async def _run(queue: DeferredQueue, handler: Handler, item: QueuedItem) -> TargetResult:
    try:
        return await handler(item)
    except Exception as error:
        await record_error(queue, item, error)
        raise
