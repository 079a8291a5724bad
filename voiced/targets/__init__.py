"""Dispatch targets: where submitted text goes besides the robot (seed 002's "Dispatch targets").

`build_targets` creates every configured target; each result is also written to the event log as
a "target" event. The robot is not one of these: `DaemonServices` hands it to the pipeline.
"""

from __future__ import annotations

import structlog

from voiced.config import Config
from voiced.events import EventLog
from voiced.eventtypes import TargetDone
from voiced.notes import NoteStore
from voiced.paths import DataDir
from voiced.targets.base import DEFAULT_SOURCE, SubmitTarget, TargetResult
from voiced.targets.local_model import LocalModelTarget, ModelSettings
from voiced.targets.note import NoteTarget
from voiced.targets.queue import DeferredQueue, QueuedItem, QueueTarget, work_off
from voiced.targets.retry import RetryPolicy
from voiced.targets.task_api import TaskApiTarget

__all__ = [
    "DeferredQueue",
    "LocalModelTarget",
    "NoteTarget",
    "QueueTarget",
    "QueuedItem",
    "ReportedTarget",
    "SubmitTarget",
    "TargetResult",
    "TaskApiTarget",
    "build_targets",
    "work_off",
]

log = structlog.get_logger(__name__)

"""The event every submission's result is reported as."""


class ReportedTarget:
    """A target whose every result is logged and emitted as a "target" event."""

    def __init__(self, inner: SubmitTarget, events: EventLog) -> None:
        self.inner = inner
        self.events = events

    @property
    def name(self) -> str:
        return self.inner.name

    async def submit(
        self, text: str, correlation_id: str | None, *, source: str = DEFAULT_SOURCE
    ) -> TargetResult:
        result = await self.inner.submit(text, correlation_id, source=source)
        done = TargetDone(self.name, source, result.ok, result.message, dict(result.detail))
        self.events.emit(done, correlation_id)
        level = log.info if result.ok else log.warning
        level("target result", target=self.name, ok=result.ok, message=result.message)
        return result


def build_targets(config: Config, data_dir: DataDir, events: EventLog) -> dict[str, SubmitTarget]:
    """Every configured target by name: note and queue always, task_api and local_model when
    their URL is set. Creates nothing on disk until a target is used."""
    settings = config.targets
    notes = NoteStore(data_dir.notes)
    targets: list[SubmitTarget] = [NoteTarget(notes), QueueTarget(DeferredQueue(data_dir.queue))]
    task_api = settings.task_api
    if task_api.url:
        policy = RetryPolicy(retries=task_api.retries)
        targets.append(TaskApiTarget(task_api.url, timeout=task_api.timeout, policy=policy))
    model = settings.local_model
    if model.url:
        model_settings = ModelSettings(
            model.url, model.kind, model.model, model.system_prompt, model.timeout
        )
        policy = RetryPolicy(retries=model.retries)
        targets.append(LocalModelTarget(model_settings, notes, policy=policy))
    return {target.name: ReportedTarget(target, events) for target in targets}
