"""History and robot state in SQLite (WAL): every command, its plan, and what became of it.

Every input the robot pipeline takes is a row with its intent (seed 001's router): an action
with its plan, a question with the answer given, or an unknown with what the operator was told.
A database from before the `answer` column is migrated when opened (one transaction, no row
lost; the rows keep the intent they had).

Seed 001's HistoryDB and StateDB in one file. A run row is written when a command is accepted
and updated as it runs, each change in its own committed transaction, so `kill -9` in the middle
of a run leaves every earlier row intact and this one saying how far it got ("running" rows left
by a crash are marked "interrupted" at the next start).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voiced.errors import StoreError

STATUSES = (
    "answered",  # a question, answered without motion
    "planned",  # accepted, waiting to run
    "running",
    "completed",
    "stopped",
    "failed",  # refused by the controller, or the link was lost
    "rejected",  # could not be interpreted or validated
    "declined",  # the operator said no (or nothing) when asked
    "dropped",  # queued behind a run that did not finish
    "paused",  # held by a pause in force; "continue" finishes it, a stop or new command drops it
    "interrupted",  # the daemon died while it ran
)
FINAL = frozenset(STATUSES) - {"planned", "running"}
INTENTS = ("action", "question", "unknown")
"""Seed 001's router classes: work for the arm (a yes or a revision settles the run it answers,
it is not a row of its own), a question (stored with its answer), or neither (what could not be
read; its row says what the operator was told)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    correlation_id TEXT,
    operator_input TEXT NOT NULL,
    intent TEXT NOT NULL,
    plan_json TEXT NOT NULL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    feedback TEXT,
    cell TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    answer TEXT DEFAULT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_time ON runs (created_at);
CREATE TABLE IF NOT EXISTS robot_state (
    cell TEXT PRIMARY KEY,
    position TEXT,
    tool TEXT,
    updated_at TEXT NOT NULL
);
"""
_ADDED_COLUMNS = (("answer", "TEXT DEFAULT NULL"),)
"""Columns a database made by an older version lacks: added at open, existing rows keep theirs."""
_COLUMNS = ("run_id", "correlation_id", "operator_input", "intent", "plan_json", "status",
            "source", "feedback", "cell", "created_at", "updated_at", "answer")  # fmt: skip


@dataclass(frozen=True)
class Run:
    """One command and what became of it."""

    run_id: str
    """A UUID; `voiced replay RUN_ID` and "run task <id>" name it."""
    correlation_id: str | None
    """The correlation id of the utterance (replays get a new one)."""
    operator_input: str
    """What the operator said (or "replay of <run_id>")."""
    intent: str
    """action, question or unknown."""
    plan: list[dict[str, Any]]
    """The composite sequence, seed 000's format."""
    status: str
    """One of STATUSES."""
    source: str
    """Which tier produced the plan: phrase_bank, grammar, llm, replay, ..."""
    feedback: str | None
    """What the operator was told about it."""
    cell: str
    created_at: str
    updated_at: str
    answer: str | None = None
    """A question's full answer (`feedback` is what was said)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "correlation_id": self.correlation_id,
            "operator_input": self.operator_input,
            "intent": self.intent,
            "plan": self.plan,
            "status": self.status,
            "source": self.source,
            "feedback": self.feedback,
            "cell": self.cell,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "answer": self.answer,
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class History:
    """The run history and robot state of one data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._db() as db:
                db.execute("PRAGMA journal_mode=WAL")
                damage = db.execute("PRAGMA quick_check").fetchone()[0]
                if damage != "ok":
                    raise sqlite3.DatabaseError(damage)
                db.executescript(_SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as error:
            raise unreadable_store(path, error, "history") from None

    def _migrate(self) -> None:
        """Bring a database an older version made up to this schema, in one transaction: a
        crash leaves it as it was, and two processes opening it at once add a column once."""
        with closing(sqlite3.connect(self.path, timeout=5.0, isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                present = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
                for name, declaration in _ADDED_COLUMNS:
                    if name not in present:
                        db.execute(f"ALTER TABLE runs ADD COLUMN {name} {declaration}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        # One short connection per call: a crash can leave at most one uncommitted change.
        with closing(sqlite3.connect(self.path, timeout=5.0)) as db:
            db.execute("PRAGMA synchronous=FULL")
            db.row_factory = sqlite3.Row
            with db:
                yield db

    def record(
        self,
        operator_input: str,
        plan: Sequence[Mapping[str, Any]],
        *,
        cell: str,
        status: str = "planned",
        intent: str = "action",
        source: str = "grammar",
        correlation_id: str | None = None,
        feedback: str | None = None,
        answer: str | None = None,
    ) -> str:
        """A new run; returns its id."""
        _check_status(status)
        if intent not in INTENTS:
            raise ValueError(f"unknown intent {intent!r} (expected one of {', '.join(INTENTS)})")
        run_id = str(uuid.uuid4())
        now = _now()
        with self._db() as db:
            db.execute(
                f"INSERT INTO runs ({', '.join(_COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in _COLUMNS)})",
                (run_id, correlation_id, operator_input, intent, json.dumps(list(plan)),
                 status, source, feedback, cell, now, now, answer),
            )  # fmt: skip
        return run_id

    def update(self, run_id: str, status: str, feedback: str | None = None) -> None:
        _check_status(status)
        with self._db() as db:
            changed = db.execute(
                "UPDATE runs SET status = ?, feedback = COALESCE(?, feedback), updated_at = ? "
                "WHERE run_id = ?",
                (status, feedback, _now(), run_id),
            ).rowcount
        if not changed:
            raise KeyError(f"no run {run_id} in {self.path}")

    def replan(self, run_id: str, plan: Sequence[Mapping[str, Any]]) -> None:
        """The plan of a run changed (a revision during review)."""
        with self._db() as db:
            db.execute(
                "UPDATE runs SET plan_json = ?, updated_at = ? WHERE run_id = ?",
                (json.dumps(list(plan)), _now(), run_id),
            )

    def get(self, run_id: str) -> Run | None:
        with self._db() as db:
            row = db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else _run(row)

    def find(self, prefix: str) -> list[Run]:
        """Runs whose id starts with `prefix` (a spoken or typed id may be shortened)."""
        with self._db() as db:
            rows = db.execute(
                "SELECT * FROM runs WHERE run_id LIKE ? ORDER BY created_at", (prefix + "%",)
            ).fetchall()
        return [_run(row) for row in rows]

    def last(
        self,
        count: int = 10,
        *,
        offset: int = 0,
        cell: str | None = None,
        intent: str | None = None,
    ) -> list[Run]:
        """The most recent runs, newest first (of one cell, of one intent, when given)."""
        query = "SELECT * FROM runs {} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?"
        conditions = {"cell = ?": cell, "intent = ?": intent}
        where = [condition for condition, value in conditions.items() if value]
        args = [value for value in conditions.values() if value]
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self._db() as db:
            rows = db.execute(query.format(clause), (*args, count, offset)).fetchall()
        return [_run(row) for row in rows]

    def last_completed(self, cell: str) -> Run | None:
        """The newest run that completed, or is still going as planned ("do that again" right
        after a command means that command, even before the arm has finished it)."""
        with self._db() as db:
            row = db.execute(
                "SELECT * FROM runs WHERE cell = ? AND plan_json != '[]' "
                "AND status IN ('completed', 'running', 'planned') "
                "ORDER BY created_at DESC, rowid DESC LIMIT 1",
                (cell,),
            ).fetchone()
        return None if row is None else _run(row)

    def mark_interrupted(self) -> int:
        """Runs a crashed daemon left "planned" or "running" are marked "interrupted"."""
        with self._db() as db:
            return db.execute(
                "UPDATE runs SET status = 'interrupted', updated_at = ? "
                "WHERE status IN ('planned', 'running')",
                (_now(),),
            ).rowcount

    def save_state(self, cell: str, position: str | None, tool: str | None) -> None:
        with self._db() as db:
            db.execute(
                "INSERT INTO robot_state VALUES (?, ?, ?, ?) ON CONFLICT(cell) DO UPDATE SET "
                "position = excluded.position, tool = excluded.tool, "
                "updated_at = excluded.updated_at",
                (cell, position, tool, _now()),
            )

    def state(self, cell: str) -> tuple[str | None, str | None] | None:
        with self._db() as db:
            row = db.execute(
                "SELECT position, tool FROM robot_state WHERE cell = ?", (cell,)
            ).fetchone()
        return None if row is None else (row["position"], row["tool"])


def unreadable_store(path: Path, error: sqlite3.Error, what: str) -> StoreError:
    """A SQLite file voiced cannot use, named, with what to do: voiced never deletes or
    overwrites it (it may be all the user has). A file that cannot be opened (permissions, a
    lock held too long) is not called damaged."""
    if isinstance(error, sqlite3.OperationalError):
        return StoreError(
            str(path),
            f"cannot be opened ({error})",
            "check that the daemon's user may read and write it and its directory, and that no "
            "other process holds it",
        )
    return StoreError(
        str(path),
        f"not a usable SQLite database ({error})",
        f"it was left as it is: move it aside with its -wal and -shm files (e.g. `mv {path} "
        f"{path}.broken`) to start a new {what}, or restore it from a backup",
    )


def _check_status(status: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"unknown run status {status!r} (expected one of {', '.join(STATUSES)})")


def _run(row: sqlite3.Row) -> Run:
    return Run(
        run_id=row["run_id"],
        correlation_id=row["correlation_id"],
        operator_input=row["operator_input"],
        intent=row["intent"],
        plan=json.loads(row["plan_json"]),
        status=row["status"],
        source=row["source"],
        feedback=row["feedback"],
        cell=row["cell"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        answer=row["answer"],
    )
