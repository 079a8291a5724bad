"""What a run did: per-line bookkeeping while it runs (`RunLog`), the immutable `RunReport`
after, and the JSON trace of the lines (`tcp_commands.json`).

Every primitive of a program ends in exactly one outcome: completed (DONE), interrupted (it was
executing when a STOP or halt cut it; the arm may be part-way), failed (the ERR that ended the
run), not run (never sent, cleared from the controller's queue, or refused after the failure) or
unknown (sent, and the link was lost before its reply; `RunReport.settled` resolves these with the
`last_done` a reconnect learns).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

Outcome = Literal["done", "interrupted", "failed", "not_run", "unknown"]


@dataclass(frozen=True)
class LineFailure:
    """Why a run failed: the controller's ERR, or PROTOCOL for a reply the executor can't use."""

    index: int | None
    """The primitive (index into the program); None when no one line is to blame."""
    seq: int
    """Its sequence number (0 if none)."""
    code: str
    """The ERR code (WORKSPACE, HALTED, ...) or PROTOCOL."""
    reason: str
    """The controller's words, or what was wrong with its reply."""

    def __str__(self) -> str:
        return self.reason or self.code

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "seq": self.seq, "code": self.code, "reason": self.reason}


@dataclass(frozen=True)
class RunReport:
    """The outcome of `ControllerLink.run` (or `stop`, `retry`) for every primitive."""

    run: int
    """The run's number on its link (retry() accepts only the latest)."""
    session: str
    """The session the lines were sent in."""
    seqs: tuple[int, ...]
    """The sequence number of each primitive, by index."""
    completed: tuple[int, ...]
    """Indexes that completed, in order."""
    interrupted: int | None
    """The index executing when a STOP or halt cut it short."""
    not_run: tuple[int, ...]
    """Indexes that did not run at all."""
    unknown: tuple[int, ...]
    """Indexes sent before the link was lost whose outcome is not known yet."""
    error: LineFailure | None
    """Why the run ended early, if a line failed (None for a STOP or a lost link alone)."""
    stopped: bool
    """stop() was called while it ran."""
    lost: bool
    """The link was lost while it ran."""
    lost_reason: str | None = None
    """How it was lost."""

    @property
    def complete(self) -> bool:
        """Every primitive completed."""
        return len(self.completed) == len(self.seqs)

    @property
    def failed(self) -> int | None:
        """The index whose ERR ended the run, if any."""
        return None if self.error is None else self.error.index

    def settled(self, last_done: int) -> RunReport:
        """Resolve the unknown outcomes with the controller's `last_done` after a reconnect.

        A line at or below last_done completed; one above it did not (the controller halts when
        the link drops and clears its queue, so it will not run later either)."""
        if not self.unknown:
            return self
        done = [i for i in self.unknown if self.seqs[i] <= last_done]
        not_done = [i for i in self.unknown if self.seqs[i] > last_done]
        return replace(
            self,
            completed=tuple(sorted((*self.completed, *done))),
            not_run=tuple(sorted((*self.not_run, *not_done))),
            unknown=(),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "session": self.session,
            "completed": list(self.completed),
            "interrupted": self.interrupted,
            "not_run": list(self.not_run),
            "unknown": list(self.unknown),
            "error": None if self.error is None else self.error.to_dict(),
            "stopped": self.stopped,
            "lost": self.lost,
            "lost_reason": self.lost_reason,
        }


@dataclass
class LineRecord:
    """One primitive's line during a run (mutable: filled in as replies arrive)."""

    index: int
    seq: int
    line: str
    sent_t: float | None = None
    """Seconds after the run started; None if never sent."""
    ack_t: float | None = None
    done_t: float | None = None
    """When the terminal reply (DONE or ERR) arrived."""
    result: str | None = None
    """The terminal reply line, or why there is none."""
    outcome: Outcome | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "line": self.line,
            "sent_t": _seconds(self.sent_t),
            "ack_t": _seconds(self.ack_t),
            "done_t": _seconds(self.done_t),
            "result": self.result,
        }


def _seconds(t: float | None) -> float | None:
    return None if t is None else round(t, 4)


class RunLog:
    """The bookkeeping of one run while it streams."""

    def __init__(self, run: int, session: str, records: Sequence[LineRecord]) -> None:
        self.run = run
        self.session = session
        self.records = list(records)
        self.by_seq = {r.seq: r for r in self.records}
        self.pending = [r for r in self.records if r.outcome is None]
        """Records still to send, in order."""
        self.in_flight: dict[int, LineRecord] = {}
        """seq -> record: sent, no terminal reply yet."""
        self.error: LineFailure | None = None
        self.stop_requested = False
        """stop() was called: send nothing more."""
        self.halting = False
        """A STOP went out (stop() or a protocol violation): HALTED replies are expected."""
        self.lost_reason: str | None = None
        self.stop_last_done: int | None = None
        """The STOPPED reply's last_done, once it came."""
        self.final: RunReport | None = None
        self.finished = asyncio.Event()
        """Set when the run has returned; `final` is its report."""

    @property
    def sending(self) -> bool:
        """More lines may be sent."""
        return bool(self.pending) and not (self.halting or self.stop_requested or self.ended)

    @property
    def ended(self) -> bool:
        """A failure or a lost link ended the run (in-flight replies may still come)."""
        return self.error is not None or self.lost_reason is not None

    def fail(self, index: int | None, seq: int, code: str, reason: str) -> None:
        """Record the run's failure; only the first one counts."""
        if self.error is None:
            self.error = LineFailure(index, seq, code, reason)

    def finish(self, record: LineRecord, outcome: Outcome, result: str, t: float | None) -> None:
        self.in_flight.pop(record.seq, None)
        record.outcome, record.result, record.done_t = outcome, result, t

    def settle_in_flight(self, outcome: Outcome, result: str) -> None:
        for record in list(self.in_flight.values()):
            self.finish(record, outcome, result, None)

    def settle_by_last_done(self, last_done: int) -> None:
        """After STOPPED: a line still owed a reply completed iff it is at or below last_done."""
        for record in list(self.in_flight.values()):
            done = record.seq <= last_done
            result = f"settled by STOPPED {last_done}"
            self.finish(record, "done" if done else "not_run", result, None)

    def refused(self, record: LineRecord, code: str, reason: str, result: str, t: float) -> None:
        """Record an ERR for `record` (`result` is the ERR line)."""
        if code == "STOPPED":
            cut = reason.startswith("interrupted")
            self.finish(record, "interrupted" if cut else "not_run", result, t)
            if not self.halting:  # a halt we did not ask for, or a line refused after a failure
                self.fail(record.index, record.seq, code, reason)
        elif code == "HALTED" and self.halting:
            self.finish(record, "not_run", result, t)  # it arrived after our own STOP
        else:
            self.finish(record, "failed" if self.error is None else "not_run", result, t)
            self.fail(record.index, record.seq, code, reason)

    def report(self) -> RunReport:
        for record in self.pending:
            record.outcome, record.result = "not_run", "not sent"
        self.pending = []
        by_outcome: dict[str, list[int]] = {}
        for r in self.records:
            by_outcome.setdefault(r.outcome or "unknown", []).append(r.index)
        interrupted = by_outcome.get("interrupted", [])
        return RunReport(
            run=self.run,
            session=self.session,
            seqs=tuple(r.seq for r in self.records),
            completed=tuple(by_outcome.get("done", [])),
            interrupted=interrupted[0] if interrupted else None,
            not_run=tuple(by_outcome.get("not_run", [])),
            unknown=tuple(by_outcome.get("unknown", [])),
            error=self.error,
            stopped=self.stop_requested,
            lost=self.lost_reason is not None,
            lost_reason=self.lost_reason,
        )


def write_trace(path: Path, records: Iterable[LineRecord]) -> None:
    """The run's lines as a JSON list, written atomically (temp file, fsync, rename)."""
    text = json.dumps([r.to_dict() for r in records], indent=2) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
