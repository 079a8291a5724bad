"""Where every live command is: the one state machine behind "busy", "moving" and "idle".

A command (its `Ticket`) goes

    SUBMITTED -> INTERPRETING -> [ASKING ->] QUEUED -> RUNNING -> (gone)

and leaves at any point when it is settled: refused, answered, declined, dropped by a stop, or
run. A revision asks again (ASKING -> ASKING). The daemon waits on this state and nothing else:
`wait_accepted` (nothing submitted is still being understood) before the next typed line,
`wait_idle` (nothing at all) at the end of input.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import Enum

from voiced.commands.pending import Ticket
from voiced.interpreter.result import Interpretation
from voiced.interpreter.tiers import Understood
from voiced.robot.compiler import Program
from voiced.robot.sequence import SequenceStep


class Phase(Enum):
    SUBMITTED = "submitted"
    """Waiting in the inbox for the acceptance worker."""
    INTERPRETING = "interpreting"
    ASKING = "asking"
    """A question about it is open (read-back, learning)."""
    QUEUED = "queued"
    """Accepted, waiting for the arm."""
    RUNNING = "running"


UNACCEPTED = frozenset((Phase.SUBMITTED, Phase.INTERPRETING))


@dataclass(frozen=True)
class Job:
    """One accepted command, waiting to run."""

    ticket: Ticket
    """What was said, its outcome, its history row and its stop epoch."""
    interpretation: Interpretation
    program: Program
    """Compiled when the command was accepted, from the planned scene (`program.start`): it runs
    as it is when the arm starts from that scene, and is compiled again only from another."""
    goals: tuple[SequenceStep, ...] = ()
    """What the operator asked for, before navigation and tool changes were added: what is
    read back, revised, recorded and replayed."""
    understood: Understood | None = None
    """How it was understood (a verb the LLM resolved is learned once the job has run)."""
    said: str | None = None
    """What the job does in the operator's words, when not what was said for it (a
    "continue" after a pause carries out the commands it held)."""

    @property
    def text(self) -> str:
        return self.said if self.said is not None else self.ticket.text

    @property
    def correlation_id(self) -> str | None:
        return self.ticket.correlation_id


class Workload:
    """The phase of every command that is not settled yet."""

    def __init__(self) -> None:
        self._phases: dict[Ticket, Phase] = {}
        self._idle = asyncio.Event()
        self._accepted = asyncio.Event()
        self._still = asyncio.Event()
        self._interpretation: asyncio.Task[None] | None = None
        self._changed()

    def enter(self, ticket: Ticket, phase: Phase) -> None:
        self._phases[ticket] = phase
        self._changed()

    def leave(self, ticket: Ticket) -> None:
        """`ticket` is settled (or withdrawn): it no longer counts."""
        self._phases.pop(ticket, None)
        self._changed()

    def phase(self, ticket: Ticket) -> Phase | None:
        return self._phases.get(ticket)

    def withdraw(self) -> None:
        """A stop: everything not yet moving is gone, and the interpretation in progress is
        cancelled (what it was interpreting is withdrawn)."""
        if self._interpretation is not None:
            self._interpretation.cancel()
        for ticket, phase in list(self._phases.items()):
            if phase is not Phase.RUNNING:
                del self._phases[ticket]
        self._changed()

    def set_interpretation(self, task: asyncio.Task[None] | None) -> None:
        """The task interpreting the current command (None when it is done)."""
        self._interpretation = task

    def any_in(self, *phases: Phase) -> bool:
        return any(phase in phases for phase in self._phases.values())

    @property
    def busy(self) -> bool:
        return bool(self._phases)

    @property
    def moving(self) -> bool:
        return self.any_in(Phase.RUNNING)

    def running(self) -> list[str]:
        """What the operator said for the commands the arm is working on, oldest first."""
        return [t.text for t, phase in self._phases.items() if phase is Phase.RUNNING]

    @property
    def accepted(self) -> bool:
        return not self.any_in(*UNACCEPTED)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def wait_accepted(self) -> None:
        await self._accepted.wait()

    async def wait_still(self) -> None:
        """Until no command runs (a paused run has reported how far it got)."""
        await self._still.wait()

    def _changed(self) -> None:
        for event, holds in (
            (self._idle, not self.busy),
            (self._accepted, self.accepted),
            (self._still, not self.moving),
        ):
            if holds:
                event.set()
            else:
                event.clear()
