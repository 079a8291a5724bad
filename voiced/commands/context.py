"""What every part of the pipeline works with (see voiced/commands/pipeline.py): its context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from voiced.commands.belief import Belief
from voiced.commands.pending import PendingWork
from voiced.commands.runlog import RunLog
from voiced.commands.workload import Workload
from voiced.events import EventLog


@dataclass(frozen=True)
class PipelineContext:
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


class PipelinePart:
    """A part of the pipeline: acceptance, asking, execution or the fault handling."""

    def __init__(self, context: PipelineContext) -> None:
        self.belief = context.belief
        self.pending = context.pending
        self.workload = context.workload
        self.runlog = context.runlog
        self.events = context.events
        self.speak = context.speak
