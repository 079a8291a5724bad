"""What every part of the pipeline works with (see voiced/pipeline.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from voiced.belief import Belief
from voiced.events import EventLog
from voiced.pending import PendingWork
from voiced.runlog import RunLog
from voiced.workload import Workload


@dataclass(frozen=True)
class Shared:
    belief: Belief
    """The picture of the cell: the tracked and the planned scene."""
    pending: PendingWork
    """What was said and has not started to move, and the stop epoch."""
    workload: Workload
    """Where every command is."""
    runlog: RunLog
    """How every command ended."""
    events: EventLog
    speak: Callable[[str], None]


class Part:
    """A part of the pipeline: acceptance, asking, execution or the fault handling."""

    def __init__(self, shared: Shared) -> None:
        self.belief = shared.belief
        self.pending = shared.pending
        self.workload = shared.workload
        self.runlog = shared.runlog
        self.events = shared.events
        self.speak = shared.speak
