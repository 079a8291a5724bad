"""Everything the operator said that has not started to move yet, and the line a stop draws.

A command is pending from the moment it is submitted until its first line goes to the
controller: while it waits to be interpreted, while a language model thinks about it, while it
waits for a yes, and while it waits in the queue. A stop (or SIGTERM, or a fault that cut a run
short) withdraws all of it at once and starts a new epoch: a ticket from an older epoch never
moves the arm, whatever point it had reached when the stop came. Work said after the stop
belongs to the new epoch and runs normally.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from voiced.targets.base import TargetResult

Outcome = asyncio.Future[TargetResult]
"""What became of a submitted command: ran to completion (ok), or why not."""

Withdraw = Callable[[], None]
"""Takes back a question put to the operator (pops its frame)."""


@dataclass(eq=False)
class Ticket:
    """One submitted command, from submission until it starts to move or is settled."""

    text: str
    """What the operator said (after the wake word)."""
    correlation_id: str | None
    outcome: Outcome
    epoch: int
    """The stop epoch it was said in."""
    serial: int = 0
    """Its place in the order things were said (a pause holds what came before it)."""
    run_id: str | None = None
    """Its row in the history, once it has one."""
    carries: tuple[str, ...] = ()
    """History rows that end as this one ends ("continue" finishes what a pause held)."""
    withdraw: Withdraw | None = field(default=None, repr=False)
    """While a question about it is open: how to take the question back."""
    doubt: str | None = None
    """Why the recogniser was not sure of `text`: it is read back before anything moves."""
    level_db: float | None = None
    """How loud it was said at the microphone (dBFS; None: typed or sent): a question about it
    is answered in that voice, not by one far quieter (`voiced.frames.confirm.FarTalk`)."""


class PendingWork:
    """The tickets not yet moving, in the order they were said, and the current epoch."""

    def __init__(self) -> None:
        self.epoch = 0
        self.issued = 0
        """How many tickets were ever issued (the next one's serial)."""
        self._tickets: dict[int, Ticket] = {}

    def issue(
        self,
        text: str,
        correlation_id: str | None,
        outcome: Outcome,
        doubt: str | None = None,
        level_db: float | None = None,
    ) -> Ticket:
        ticket = Ticket(text, correlation_id, outcome, self.epoch, self.issued, doubt=doubt,
                        level_db=level_db)  # fmt: skip
        self.issued += 1
        self._tickets[id(ticket)] = ticket
        return ticket

    def current(self, ticket: Ticket) -> bool:
        """Whether no stop has come since `ticket` was said."""
        return ticket.epoch == self.epoch

    def release(self, ticket: Ticket) -> None:
        """`ticket` starts moving or was settled otherwise: no longer pending."""
        self._tickets.pop(id(ticket), None)

    def withdraw_all(self) -> list[Ticket]:
        """Start a new epoch; the tickets that were pending, oldest first. Their questions are
        taken back here; settling their outcomes is the caller's."""
        self.epoch += 1
        dropped = [t for t in self._tickets.values() if not t.outcome.done()]
        self._tickets.clear()
        for ticket in dropped:
            withdraw, ticket.withdraw = ticket.withdraw, None
            if withdraw is not None:
                withdraw()
        return dropped

    def __len__(self) -> int:
        return len(self._tickets)


MAX_LISTED = 3
"""Dropped commands read out by name; more are counted."""


_DANGLING = re.compile(r"(?:[\s,]+(?:and|then|or|and then|but))+[\s,]*$", re.IGNORECASE)
"""A joining word the stop cut off at the end of a command."""


def as_listed(said: str) -> str:
    """A command as it is read out inside a sentence: its own sentences run together, the
    capital each of them starts with gone ("Add bread. And cheese." -> "add bread and cheese");
    a capital elsewhere is a name's ("put the Reuben on the left") and stays, as do "I", "BLT"
    and "Safe_Pos_1"."""
    sentences = [s for s in re.split(r"[.!?]+(?:\s+|$)", said.strip()) if s.strip(" ,;:")]
    listed = " ".join(_uncapitalised(s.strip(" ,;:")) for s in sentences)
    return _DANGLING.sub("", listed)  # "add tomato and, stop": not "I dropped: add tomato and."


def _uncapitalised(sentence: str) -> str:
    first, _, rest = sentence.partition(" ")
    if len(first) > 1 and first[1:].isalpha() and first[1:].islower():
        first = first[0].lower() + first[1:]
    return f"{first} {rest}".strip()


def dropped_sentence(texts: list[str], lead: str = "Stopped.", cut: Sequence[str] = ()) -> str:
    """What the operator hears after a stop or a fault: `lead`, what it cut short (the arm may
    not have started it, or stopped half-way: "continue" finishes it), then what will now
    never run ("Stopped. Not finished: go to the welder. I dropped: add bread.")."""
    cut, texts = [as_listed(t) for t in cut], [as_listed(t) for t in texts]
    if cut:
        lead = f"{lead} Not finished: {'; '.join(cut[:MAX_LISTED])}."
    if not texts:
        return lead
    if len(texts) == 1:
        return f"{lead} I dropped: {texts[0]}."
    listed = "; ".join(texts[:MAX_LISTED])
    more = len(texts) - MAX_LISTED
    rest = f"; and {more} more" if more > 0 else ""
    return f"{lead} I dropped {len(texts)} commands: {listed}{rest}."
