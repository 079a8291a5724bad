"""The controller's sequence bookkeeping: the exactly-once and failure-latch rules, as pure state.

Kept apart from the simulator's I/O so that the rules the RAPID server must follow read in one
place (docs/PROTOCOL.md, "Sequence numbers"). Per session the controller knows which seqs
completed, which are pending (queued or executing) and the highest one queued.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Admission = Literal["new", "replay", "rejoin", "latched", "seq", "no_session"]
"""What to do with a numbered line:
new: queue it and ACK; replay: ACK and DONE at once (already completed, not executed again);
rejoin: ACK again, the terminal reply follows when it finishes (it is queued or executing);
latched: refuse with ERR STOPPED (an earlier line failed; the daemon has not sent HELLO since);
seq: refuse with ERR SEQ (not above the last queued and not completed); no_session: no HELLO yet."""


@dataclass
class Ledger:
    """Sequence state of the current session (mutable: it is the controller's memory)."""

    session: str | None = None
    """The session of the last HELLO; None before the first."""
    last_queued: int = 0
    """The highest seq ever queued in this session."""
    last_done: int = 0
    """The highest seq completed in this session."""
    completed: set[int] = field(default_factory=set)
    pending: set[int] = field(default_factory=set)
    """Queued or executing."""
    latched_by: int | None = None
    """The seq whose failure latched the channel (0 for an unreadable line), until HELLO."""

    def hello(self, session: str) -> bool:
        """Open `session`; True if it is a new one (everything about the old one is forgotten).
        Either way the latch is cleared: HELLO is the barrier after which lines are fresh."""
        fresh = session != self.session
        if fresh:
            self.session = session
            self.last_queued = self.last_done = 0
            self.completed.clear()
            self.pending.clear()
        self.latched_by = None
        return fresh

    def admit(self, seq: int) -> Admission:
        """The fate of line `seq` (checked in this order)."""
        if self.session is None:
            return "no_session"
        if seq in self.completed:
            return "replay"
        if seq in self.pending:
            return "rejoin"
        if self.latched_by is not None:
            return "latched"
        if seq <= self.last_queued:
            return "seq"
        return "new"

    def queue(self, seq: int) -> None:
        self.pending.add(seq)
        self.last_queued = max(self.last_queued, seq)

    def done(self, seq: int) -> None:
        self.pending.discard(seq)
        self.completed.add(seq)
        self.last_done = max(self.last_done, seq)

    def fail(self, seq: int) -> None:
        """Line `seq` got an ERR: nothing after it may run until the next HELLO."""
        self.pending.discard(seq)
        if self.latched_by is None:
            self.latched_by = seq
