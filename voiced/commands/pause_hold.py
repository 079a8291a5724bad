"""What a pause holds (see voiced/commands/pausing.py): plain data the belief keeps."""

from __future__ import annotations

from dataclasses import dataclass

from voiced.robot.sequence import SequenceStep


@dataclass(frozen=True)
class Held:
    """One command held by a pause: what was said and what it asked for."""

    text: str
    goals: tuple[SequenceStep, ...]
    serial: int = 0
    """Its place in the order things were said (`Ticket.serial`): held commands run in it."""


@dataclass(frozen=True)
class Hold:
    """A pause in force."""

    mark: int
    """Tickets said before the pause (serial below this) are held, never run, whatever point
    they had reached; what is said after it is a new command."""
    cut: str | None = None
    """The command halted part-way, if one ran (its rest is re-planned from the controller's
    report on "continue")."""
    held: tuple[Held, ...] = ()
    """Commands held before they started, in the order they were said (not the order the
    pause reached them: the one about to start is reached after the queued ones)."""
    runs: tuple[str, ...] = ()
    """The history rows marked paused: "continue" carries them to its own end, and a stop
    or a new command marks them dropped (the history never keeps a pause that is over)."""

    @property
    def texts(self) -> list[str]:
        """Everything held, as said, oldest first."""
        return ([self.cut] if self.cut else []) + [held.text for held in self.held]
