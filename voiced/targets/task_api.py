"""The task_api target: POSTs the text as JSON to the task list, retrying what is worth retrying.

The body is {"text", "correlation_id", "timestamp" (ISO 8601, UTC), "source": "voiced"}; any 2xx
answer means the task list has it. Connection errors, timeouts, 429 and 5xx are retried as
`retry.retry_delay` says; any other status is a refusal and is not.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from datetime import datetime

from voiced.notes import utc_now
from voiced.targets.base import (
    DEFAULT_SOURCE,
    TASK_API,
    TargetResult,
    failed,
    nothing_to_submit,
    succeeded,
)
from voiced.targets.retry import HttpFailure, JsonPoster, RetryPolicy, Sleep

SENT = "Sent to the task list."
"""What the operator hears when the task list accepted the text."""
PAYLOAD_SOURCE = "voiced"
"""The "source" field of every request: the task list sees which system sent the task."""


class TaskApiTarget:
    """Sends each submission to the task list."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float,
        policy: RetryPolicy,
        sleep: Sleep = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self._poster = JsonPoster(policy, sleep, rand)
        self._clock = clock

    @property
    def name(self) -> str:
        return TASK_API

    async def submit(
        self, text: str, correlation_id: str | None, *, source: str = DEFAULT_SOURCE
    ) -> TargetResult:
        empty = nothing_to_submit(text)
        if empty is not None:
            return empty
        payload = {
            "text": text,
            "correlation_id": correlation_id,
            "timestamp": self._clock().isoformat(timespec="milliseconds"),
            "source": PAYLOAD_SOURCE,
        }
        outcome = await self._poster.post(self.url, payload, self.timeout)
        if isinstance(outcome, HttpFailure):
            return _failed(self.url, outcome)
        return succeeded(SENT, url=self.url, status=outcome.status, attempts=outcome.attempts)


def _failed(url: str, failure: HttpFailure) -> TargetResult:
    if failure.refused:
        message = f"The task list refused the text: {failure.reason}."
    else:
        message = f"The task list did not answer: {failure.reason}."
    return failed(
        message, url=url, status=failure.status, attempts=failure.attempts, body=failure.body
    )
